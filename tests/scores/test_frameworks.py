"""Judge frameworks' files read as they are (issue 39): each fixture was produced by running the
framework itself (its README says how, with the version). ``meta-eval --scores <that file>``
gives the same correlations, CIs and significance as the same scores written as a plain score
CSV (extracted here by plain dict walking, independent of the readers); ``data doctor`` names
the format and prints a command that works; bad files exit 2 naming file and field."""

from __future__ import annotations

import json
import shlex
import zipfile
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from tests.scores.framework_helpers import FIX, LABELS, _run, _same_as_plain

pytest.importorskip("inspect_ai")  # the extra metajudge[inspect] (in dev): the logs need it


# --- the files each framework wrote, walked by hand ------------------------------------------


def _inspect_rows(path: Path) -> list[tuple[str, str, str, float | None]]:
    """The log's scores through inspect_ai's reader, letter grades as inspect maps them, the
    epochs averaged by hand."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    got: dict[tuple[str, str], list[float]] = {}
    for s in read_eval_log(str(path)).samples or ():
        for name, score in (s.scores or {}).items():
            got.setdefault((str(s.id), name), []).append(to_float(score.value))
    out = []
    for (sid, name), vals in got.items():
        item, _, system = sid.partition("::")
        out.append((item, system, name, sum(vals) / len(vals)))
    return out


def test_inspect_log_same_numbers_as_plain_csv(tmp_path: Path) -> None:
    log = FIX / "inspect" / "graded.eval"
    res = _same_as_plain(tmp_path, log, _inspect_rows(log))
    sig = res["metrics"][0]["signatures"]
    assert any("epochs:mean(2)" in s for v in sig.values() for s in v)  # the report says which


def test_inspect_json_log_reads_as_the_eval_log(tmp_path: Path) -> None:
    log = FIX / "inspect" / "graded.json"
    _same_as_plain(tmp_path, log, _inspect_rows(FIX / "inspect" / "graded.eval"))


def test_inspect_epochs_kept_one_column_each(tmp_path: Path) -> None:
    res = _run(tmp_path, "each", str(FIX / "inspect" / "graded.eval"), extra=("--epochs", "each"))
    names = {c["metric"] for c in res["cells"]}
    assert {"model_graded_qa@1", "model_graded_qa@2"} <= names
    assert res["run"]["reading"]["epochs"] == "each"


#: the inspect_ai fixture (promptfoo's, deepeval's and ragas': test_framework_files.py)
FIXTURES = {"inspect": FIX / "inspect" / "graded.eval"}


@pytest.mark.parametrize("fmt", sorted(FIXTURES))
def test_doctor_names_the_format_and_prints_a_command_that_works(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = FIXTURES[fmt]
    assert main(["data", "doctor", str(f), "--input", str(LABELS)]) == 0
    out = capsys.readouterr().out
    assert f"format: {fmt} (" in out
    assert "6 of 12 responses scored" in out  # the fixture grades the first 3 items
    cmd = next(line for line in out.splitlines() if line.startswith("command: "))
    argv = shlex.split(cmd.removeprefix("command: "))
    assert argv[:2] == ["metajudge", "meta-eval"]
    argv[argv.index("--out") + 1] = str(tmp_path / "run")
    assert main([*argv[1:], "--no-plots", "--n-boot", "100"]) == 0
    assert (tmp_path / "run" / "report.html").is_file()


def test_format_forced_by_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = FIX / "inspect" / "graded.json"
    res = _run(tmp_path, "forced", f"inspect:{f}")
    assert any(c["metric"] == "model_graded_qa" for c in res["cells"])
    capsys.readouterr()
    assert "field results" in _refused(tmp_path, capsys, f, "--scores", f"promptfoo:{f}")


# --- bad input: exit 2 naming the file and the field, no traceback --------------------------------


def _refused(tmp: Path, capsys: pytest.CaptureFixture[str], f: Path, *more: str) -> str:
    argv = ["meta-eval", "--input", str(LABELS), "--scores", str(f), "--out", str(tmp / "x")]
    assert main([*argv, "--no-plots", *more]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f.name in err, err
    return err


def test_truncated_and_corrupt_inspect_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (FIX / "inspect" / "graded.eval").read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 2])
    assert "field log" in _refused(tmp_path, capsys, cut)
    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"PK\x03\x04 not a zip at all")
    assert "corrupt or truncated zip" in _refused(tmp_path, capsys, junk)
    text = (FIX / "inspect" / "graded.json").read_text(encoding="utf-8")
    half = tmp_path / "half.json"
    half.write_text(text[: len(text) // 2], encoding="utf-8")
    _refused(tmp_path, capsys, half, "--scores", f"inspect:{half}")


def test_unknown_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = json.loads((FIX / "inspect" / "graded.json").read_text(encoding="utf-8"))
    log["version"] = 99
    f = tmp_path / "v99.json"
    f.write_text(json.dumps(log), encoding="utf-8")
    assert "field version" in _refused(tmp_path, capsys, f)
    with (
        zipfile.ZipFile(FIX / "inspect" / "graded.eval") as z,
        zipfile.ZipFile(tmp_path / "v99.eval", "w") as w,
    ):
        for name in z.namelist():
            raw = z.read(name)
            if name in ("header.json", "_journal/start.json"):
                raw = json.dumps({**json.loads(raw), "version": 99}).encode()
            w.writestr(name, raw)
    assert "field version" in _refused(tmp_path, capsys, tmp_path / "v99.eval")


def _log_json(tmp: Path, name: str, change: Any) -> Path:
    log = json.loads((FIX / "inspect" / "graded.json").read_text(encoding="utf-8"))
    change(log)
    f = tmp / name
    f.write_text(json.dumps(log), encoding="utf-8")  # json writes NaN as NaN
    return f


def test_no_id_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(tmp_path, capsys, FIX / "inspect" / "graded.eval", "--id-field", "nosuch")
    assert "--id-field" in err and "field nosuch" in err


def test_ids_matching_no_labelled_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def other(log: dict) -> None:
        for s in log["samples"]:
            s["id"] = "other-" + str(s["id"])

    err = _refused(tmp_path, capsys, _log_json(tmp_path, "other.json", other))
    assert "names an item" in err and "--id-field" in err


def test_inspect_no_grade_is_a_missing_score(tmp_path: Path) -> None:
    """inspect_ai writes NaN where the grader's reply held no grade (as it did for 8 of the 12
    replies before the fixture's grader was held to a grade line): a missing score, counted."""

    def no_grade(log: dict) -> None:
        for s in log["samples"]:
            if s["id"] == "news3::extractive":  # both epochs
                s["scores"]["model_graded_qa"].update(
                    value=float("nan"), explanation="Grade not found in model output: 1."
                )

    f = _log_json(tmp_path, "nograde.json", no_grade)
    res = _run(tmp_path, "nograde", str(f))
    missing = res["metrics"][0]["missing"]["model_graded_qa"]
    assert (missing["responses_unscored"], missing["responses_absent"]) == (1, 6), missing
    assert next(c for c in res["cells"] if c["metric"] == "model_graded_qa")["n_responses"] == 5


def test_explanations_shown_beside_the_human_label(tmp_path: Path) -> None:
    _run(tmp_path, "expl", str(FIX / "inspect" / "graded.eval"), extra=("--epochs", "each"))
    page = (tmp_path / "expl" / "report.html").read_text(encoding="utf-8")
    log = json.loads((FIX / "inspect" / "graded.json").read_text(encoding="utf-8"))
    said = {s["scores"]["model_graded_qa"]["explanation"] for s in log["samples"]}
    assert said and said <= set(page_explanations(page))  # in the page's data
    assert "the judge's explanation" in page  # and the browser draws it beside the labels


def test_frameworks_not_imported_at_import_metajudge() -> None:
    import subprocess
    import sys

    code = "import sys, metajudge; print(sorted(m for m in sys.modules if m.split('.')[0] in ('inspect_ai', 'ragas', 'deepeval')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def page_explanations(page: str) -> list[str]:
    """Every judge explanation the report page's browser holds (its JSON payload)."""
    start = page.index('<script type="application/json" id="data">') + len(
        '<script type="application/json" id="data">'
    )
    data = json.loads(page[start : page.index("</script>", start)])
    return [
        d["explanation"]
        for r in data.get("resp", [])
        for d in (r.get("det") or {}).values()
        if d.get("explanation")
    ]
