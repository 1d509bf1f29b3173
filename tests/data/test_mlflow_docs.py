"""docs/frameworks.md's "Judges you log in MLflow" example, run exactly as written: its
``app.py`` (the python block) and its shell lines (``export``, ``python app.py``, ``metajudge
...``) in a fresh folder; then what they wrote, read back."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mlflow")

from metajudge.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"


def _blocks() -> tuple[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Judges you log in MLflow") :]
    app = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    shell = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert app and shell
    return app.group(1), shell.group(1).strip().splitlines()


def test_the_mlflow_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    app, lines = _blocks()
    (tmp_path / "app.py").write_text(app, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for line in lines:
        argv = shlex.split(line)
        if argv[0] == "export":
            for kv in argv[1:]:
                monkeypatch.setenv(*kv.split("=", 1))
        elif argv[0] == "python":
            subprocess.run([sys.executable, *argv[1:]], check=True, cwd=tmp_path)
        else:
            assert argv[0] == "metajudge"
            assert main(argv[1:]) == 0, (line, capsys.readouterr().err)
            out = capsys.readouterr().out
            if argv[1:3] == ["data", "doctor"]:
                assert "traces: 12 (10 with a human assessment, 2 without" in out
                assert "reviewers (annotators): alice, bob" in out
    result = json.loads((tmp_path / "runs/support-bot/result.json").read_text())
    (row,) = result["rows"]
    assert (row["metric"], row["n"]) == ("gpt-judge", 10)
    assert row["accuracy"] == pytest.approx(0.7)  # 7 of the 10 reviewed answers agree
    from mlflow import MlflowClient

    mlc = MlflowClient(tracking_uri=os.environ["MLFLOW_TRACKING_URI"])  # as the example set it
    exp = mlc.get_experiment_by_name("support-bot").experiment_id
    (run,) = mlc.search_runs([exp])
    assert run.data.metrics["accuracy"] == pytest.approx(0.7)
    assert {a.path for a in mlc.list_artifacts(run.info.run_id)} == {"card.json", "card.html"}
    tagged = mlc.search_traces(
        locations=[exp], filter_string="tags.`metajudge.label_plan` = 'selected'"
    )
    plan = (tmp_path / "runs/support-bot-plan/selection.csv").read_text().splitlines()[1:]
    picked = sorted(line.split(",")[1].split("::")[0] for line in plan if line.endswith(",1"))
    assert len(plan) == 2 and picked  # the 2 unreviewed traces, the plan's draw among them
    assert sorted(t.info.trace_id for t in tagged) == picked
