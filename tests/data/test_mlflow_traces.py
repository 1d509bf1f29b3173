"""``--input mlflow:EXPERIMENT`` against a local ``sqlite:///`` store (no server): the traces and
assessments mlflow's own API logs (:mod:`tests.data.mlflow_experiment`) give the numbers the
same data gives as a canonical JSONL file with a judges' CSV, in ``meta-eval``, ``judge card``,
``calibrate estimate`` and ``data agreement``; the card goes back into MLflow
(``--log-to-mlflow``: read back through ``MlflowClient``) and ``calibrate plan`` tags the traces
it selects. The same against a real tracking server: ``test_mlflow_server_slow.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mlflow")

from metajudge.cli import main
from metajudge.errors import InputError
from tests.data.mlflow_experiment import log_experiment

EXPERIMENT = "summaries"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mp = pytest.MonkeyPatch()
    mp.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    root = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    mp.chdir(root)  # mlflow's artifact folder (./mlruns) lands here
    made = log_experiment(uri, EXPERIMENT, root / "canonical")
    yield {"uri": uri, "root": root, **made}
    mp.undo()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def same_numbers(a: Any, b: Any) -> bool:
    """Equal, dataset names and paths aside."""
    drop = {"dataset", "input", "source", "command", "reason", "path", "name", "data", "options"}
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) - drop
        return keys == set(b) - drop and all(same_numbers(a[k], b[k]) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_numbers(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check_commands(store: dict[str, Any], tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """meta-eval, judge card (--log-to-mlflow), calibrate estimate and data agreement on
    ``mlflow:EXPERIMENT`` and on the canonical files; the card read back from MLflow."""
    from mlflow import MlflowClient

    uri, src, labels, judges = (
        store["uri"],
        f"mlflow:{EXPERIMENT}",
        store["labels"],
        store["judges"],
    )
    root = ["--tracking-uri", uri]
    for name, args in (("m", [src, "shipped"]), ("c", [str(labels), str(judges)])):
        run(
            [
                "meta-eval",
                "--input",
                args[0],
                "--scores",
                args[1],
                "--out",
                str(tmp / f"me_{name}"),
                *root,
            ],
            capsys,
        )
    got, want = (json.loads((tmp / f"me_{n}" / "result.json").read_text()) for n in "mc")
    assert got["rows"] and same_numbers(got["rows"], want["rows"])
    assert {r["metric"] for r in got["rows"]} == {"judge-a", "judge-b"}

    est = [
        json.loads(
            run(
                ["calibrate", "estimate", "--input", s, "--scores", sc, "--format", "json", *root],
                capsys,
            )
        )
        for s, sc in ((src, "shipped:judge-a"), (str(labels), f"{judges}:judge-a"))
    ]
    assert same_numbers(est[0], est[1])
    agree = [
        run(["data", "agreement", "--input", s, "--format", "json", *root], capsys)
        for s in (src, str(labels))
    ]
    assert same_numbers(json.loads(agree[0]), json.loads(agree[1]))

    card_args = [
        "judge",
        "card",
        "--judge",
        "judge-a",
        "--n-boot",
        "200",
        "--repeats",
        "5",
        "--format",
        "json",
    ]
    card = json.loads(
        run(
            [*card_args, "--input", src, "--out", str(tmp / "card_m"), "--log-to-mlflow", *root],
            capsys,
        )
    )
    canon = json.loads(
        run(
            [
                *card_args,
                "--input",
                str(labels),
                "--scores",
                str(judges),
                "--out",
                str(tmp / "card_c"),
            ],
            capsys,
        )
    )
    part = card["parts"]["agreement"]["result"]["rows"]
    assert part and same_numbers(part, canon["parts"]["agreement"]["result"]["rows"])

    mlc = MlflowClient(tracking_uri=uri)
    exp = mlc.get_experiment_by_name(EXPERIMENT).experiment_id
    (logged,) = mlc.search_runs([exp], filter_string="tags.`metajudge.command` = 'judge card'")
    assert {a.path for a in mlc.list_artifacts(logged.info.run_id)} == {"card.json", "card.html"}
    row = next(r for r in part if r["metric"] == "judge-a")
    assert logged.data.metrics["accuracy"] == pytest.approx(row["accuracy"])
    assert logged.data.metrics["cohen_kappa"] == pytest.approx(row["cohen_kappa"])
    sig = card["signature"]
    assert logged.data.tags["metajudge.signature.data_sha256"] == sig["data_sha256"]
    assert logged.data.tags["metajudge.signature.judge"] == "judge-a"
    back = Path(mlc.download_artifacts(logged.info.run_id, "card.json", str(tmp / "dl")))
    assert json.loads(back.read_text())["signature"] == sig


def test_commands_give_the_canonical_numbers(
    store: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check_commands(store, tmp_path, capsys)


def test_what_the_reader_finds(store: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge.data.loading import load

    monkeypatch.setenv("MLFLOW_TRACKING_URI", store["uri"])
    ds = load(f"mlflow:{EXPERIMENT}")
    assert ds.kind == "binary" and ds.card.scale.labels == ("no", "yes")
    assert ds.card.counts["traces"] == 24 and ds.card.counts["unlabelled"] == 6
    assert ds.card.counts["reviewers"] == ["alice", "bob"]
    assert ds.card.counts["judges"] == ["judge-a", "judge-b"]
    assert ds.card.counts["judge_unparsed"] == 1  # the AssessmentError: counted, not dropped
    assert [r.id for r in ds.records] == store["ids"]
    assert ds.records[0].meta["item"] == "doc01" and "mlflow.traceName" not in ds.records[0].meta
    assert {r.system for r in ds.records} == {"abstractive", "lead", "hallucinating"}
    from metajudge.scores.shipped import shipped_scores

    rows = shipped_scores(ds, metrics=["judge-b"])
    assert len(rows) == 24 and sum(r["error"] is not None for r in rows) == 1
    assert "RATE_LIMIT" in next(r["error"] for r in rows if r["error"])


def test_doctor_and_plan(
    store: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow import MlflowClient

    root = ["--tracking-uri", store["uri"]]
    out = run(["data", "doctor", f"mlflow:{EXPERIMENT}", *root], capsys)
    assert "traces: 24 (18 with a human assessment, 6 without" in out
    assert "reviewers (annotators): alice, bob" in out and "(1 unparsed" in out
    plan = ["calibrate", "plan", "--input", f"mlflow:{EXPERIMENT}", "--scores", "shipped:judge-a"]
    assert (
        main([*plan, "--budget", "3", "--out", str(tmp_path / "p"), "--log-to-mlflow", *root]) == 0
    )
    err = capsys.readouterr().err
    picked = [
        line.split(",")[1].split("::")[0]
        for line in (tmp_path / "p" / "selection.csv").read_text().splitlines()[1:]
        if line.endswith(",1")
    ]
    assert picked and f"tagged {len(picked)} traces" in err
    mlc = MlflowClient(tracking_uri=store["uri"])
    exp = mlc.get_experiment_by_name(EXPERIMENT).experiment_id
    tagged = mlc.search_traces(
        locations=[exp], filter_string="tags.`metajudge.label_plan` = 'selected'"
    )
    assert sorted(t.info.trace_id for t in tagged) == sorted(picked)


def test_value_kinds() -> None:
    from metajudge.data.mlflow_traces import _kind, _mapped

    assert _kind([True, "No", "yes"]) == "binary" and _mapped(True, "binary") == "yes"
    assert _kind([1, 2.5, 5]) == "likert" and _mapped("3", "likert") is None
    assert _kind(["good", "bad"]) == "categorical" and _mapped(3, "categorical") is None
    with pytest.raises(InputError, match="several kinds"):
        _kind([1, "good"])


def test_a_missing_mlflow_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge.data.loading import load

    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(InputError, match=r"pip install metajudge\[mlflow\]"):
        load("mlflow:anything")


def test_log_to_mlflow_needs_an_mlflow_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "byod"
    argv = ["calibrate", "plan", "--input", str(fixture / "partial.jsonl"), "--scores"]
    argv += [str(fixture / "partial_judge.csv"), "--budget", "2", "--out", str(tmp_path / "p")]
    assert main([*argv, "--log-to-mlflow"]) == 2
    assert "give --input mlflow:EXPERIMENT" in capsys.readouterr().err


def test_numbers_and_categories_as_dimensions(
    store: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graded and a categorical assessment name on the same traces: their kinds differ, so
    ``--dimension`` picks one; numbers are a likert scale (the range seen), strings the labels
    seen, a judge's value of another kind unparsed."""
    import mlflow
    from mlflow.entities import AssessmentSource

    from metajudge.data.loading import load
    from metajudge.data.source import DataSource

    monkeypatch.setenv("MLFLOW_TRACKING_URI", store["uri"])
    mlflow.set_tracking_uri(store["uri"])
    mlflow.set_experiment("kinds")
    human = AssessmentSource(source_type="HUMAN", source_id="carol")
    judge = AssessmentSource(source_type="LLM_JUDGE", source_id="j")

    @mlflow.trace
    def app(question: str) -> str:
        return question.upper()

    for grade, tone, judged in ((2, "terse", 3), (5, "warm", "five"), (4, "warm", 4.5)):
        app(f"q{grade}")
        tid = mlflow.get_last_active_trace_id()
        mlflow.log_feedback(trace_id=tid, name="quality", value=grade, source=human)
        mlflow.log_feedback(trace_id=tid, name="tone", value=tone, source=human)
        mlflow.log_feedback(trace_id=tid, name="quality", value=judged, source=judge)
    with pytest.raises(InputError, match="several kinds.*give --dimension"):
        load("mlflow:kinds")
    ds = DataSource(path="mlflow:kinds", dimension="quality").load()
    assert ds.kind == "likert" and (ds.card.scale.min, ds.card.scale.max) == (2.0, 5.0)
    assert ds.records[0].input.question == "q2" and ds.records[0].response == "Q2"
    from metajudge.scores.shipped import shipped_scores

    rows = shipped_scores(ds)
    assert [r["score"] for r in rows] == [3.0, None, 4.5]
    assert "unparsed value 'five'" in rows[1]["error"]
    tone = load("mlflow:kinds", dimension="tone")
    assert tone.kind == "categorical" and tone.card.scale.labels == ("terse", "warm")
    assert tone.card.shipped_scores == ()  # the judge assessed only quality
