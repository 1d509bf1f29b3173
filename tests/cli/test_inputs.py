"""Every ``--input FILE`` takes the same three file kinds (issue 24): a JUDGE-BENCH file, a
canonical JSONL file and a built-in dataset's upstream file, all loaded by
:func:`metajudge.data.loading.load`; the HTML step uses the run's dataset (or the source the run
folder records), never the input's name; a command that cannot apply to a kind says so, naming
the file and why. No model is called: scores come from score files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.loading import load

ROOT = Path(__file__).resolve().parents[2]
BYOD = ROOT / "tests" / "fixtures" / "byod"
KINDS = ("judge_bench", "jsonl", "upstream")
RECIPES = "dmg_judge_bench/data/recipe_crowd_sourcing_data/meta_evaluation_recipes.json"
# the metric each file's judge columns stand for (it names the human dimension compared with)
METRIC = {"jsonl": "geval_completeness", "upstream": "geval_faithfulness"}


def _file(kind: str, data_dir: Path) -> Path:
    return {
        "judge_bench": data_dir / RECIPES,
        "jsonl": BYOD / "graded.jsonl",
        "upstream": data_dir / "summeval_ppairs" / "summeval.jsonl",
    }[kind]


def _first_annotator(ds, dim: str, path: Path) -> Path:  # type: ignore[no-untyped-def]
    """Score file: each response's first and last human label as judges ``j1`` and ``j2``."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "system", "j1", "j2"])
        for r in ds.records:
            v = [x for x in r.scores[dim] if x is not None]
            w.writerow([r.id, r.system, v[0], v[-1]])
    return path


def _items_shown(page: Path) -> bool:
    return '"items":[{' in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", KINDS)
def test_meta_eval_pointwise_writes_report_html(
    kind: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = _file(kind, data_dir)
    if kind == "jsonl":  # a score file made by `metajudge metrics run`
        scores = tmp_path / "bleu.jsonl"
        assert (
            main(["metrics", "run", "--input", str(f), "--metrics", "bleu", "-o", str(scores)]) == 0
        )
    else:
        ds = load(f)
        scores = _first_annotator(ds, ds.card.dimensions[0], tmp_path / "s.csv")
    out = tmp_path / "run"
    argv = ["meta-eval", "--input", str(f), "--scores", str(scores), "--protocol", "pointwise"]
    argv += ["--out", str(out), "--n-boot", "50", "--no-plots"]
    assert main(argv) == 0
    assert _items_shown(out / "report.html")
    run = json.loads((out / "result.json").read_text())["run"]
    assert run["source"] == {"input": str(f.resolve())}
    # `metajudge report render DIR` re-renders from the recorded source, from any working directory
    (out / "report.html").unlink()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["report", "render", str(out), "--format", "html"]) == 0
    assert _items_shown(out / "report.html")


def _single_dimension_recipes(data_dir: Path, tmp_path: Path) -> Path:
    """The real recipe file with its ``overall`` annotations only (``calibrate estimate --method ppi`` finds the
    dimension from the metric name, or the only one)."""
    obj = json.loads((data_dir / RECIPES).read_text(encoding="utf-8"))
    obj["annotations"] = [a for a in obj["annotations"] if a["metric"] == "overall"]
    for inst in obj["instances"]:
        inst["annotations"] = {"overall": inst["annotations"]["overall"]}
    p = tmp_path / "recipes_overall.json"
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


def test_judge_bench_file_swap_and_decisions(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JUDGE-BENCH file has one response per input: the commands that decide between pairs of
    responses refuse it, naming the file and why; ``calibrate estimate --method ppi`` takes it."""
    f = _single_dimension_recipes(data_dir, tmp_path)
    s = _first_annotator(load(f), "overall", tmp_path / "s.csv")
    ext = ["--metric", "geval_faithfulness", "--n-boot", "50", "--format", "json"]
    pair = [*ext, "--scores", f"j1={s}:j1", "--scores", f"j2={s}:j2"]
    for argv in (
        ["judge", "swap", "--input", str(f), *pair],
        ["judge", "swap", "--input", str(f), *pair, "--x", "j1", "--y", "j2"],
        [
            "decide",
            "drift",
            "--input",
            str(f),
            *ext,
            "--scores",
            f"b={s}:j1",
            "--scores",
            f"a={s}:j2",
        ],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert str(f) in err and "has one response" in err and "Traceback" not in err
    ppi = [
        "calibrate",
        "estimate",
        "--method",
        "ppi",
        "--input",
        str(f),
        *ext,
        "--scores",
        f"j1={s}:j1",
    ]
    assert main([*ppi, "--n-labelled", "10"]) == 0
    assert json.loads(capsys.readouterr().out)["dataset"] == "recipes_overall"


@pytest.mark.parametrize("kind", ["jsonl", "upstream"])
def test_swap_and_decisions_take_the_file(
    kind: str, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from metajudge.reports.html_views import run_dataset

    f = _file(kind, data_dir)
    ds = load(f)
    dim = {"jsonl": "relevance", "upstream": "consistency"}[kind]
    s = _first_annotator(ds, dim, tmp_path / "s.csv")
    ext = ["--metric", METRIC[kind], "--n-boot", "50", "--format", "json", "--limit", "30"]
    pair = [*ext, "--scores", f"j1={s}:j1", "--scores", f"j2={s}:j2"]
    swap = tmp_path / "swap"
    assert main(["judge", "swap", "--input", str(f), *pair, "--no-plots", "--out", str(swap)]) == 0
    doc = json.loads((swap / "swap.json").read_text())
    assert doc["source"] == {"input": str(f.resolve())} and (swap / "report.html").is_file()
    again = run_dataset(
        doc, None, None
    )  # what `metajudge report render DIR` loads, with no --input
    assert [(r.id, r.system) for r in again.records] == [(r.id, r.system) for r in ds.records]
    dec = tmp_path / "decide"
    argv = ["judge", "swap", "--input", str(f), *pair, "--x", "j1", "--y", "j2", "--out", str(dec)]
    assert main(argv) == 0
    assert _items_shown(dec / "report.html")
    assert json.loads((dec / "decision.json").read_text())["source"] == doc["source"]
    drift = [
        "decide",
        "drift",
        "--input",
        str(f),
        *ext,
        "--scores",
        f"b={s}:j1",
        "--scores",
        f"a={s}:j2",
    ]
    assert main(drift) in (0, 1)  # the gate's verdict; 2 would be a refused input
    capsys.readouterr()
    ppi = [
        "calibrate",
        "estimate",
        "--method",
        "ppi",
        "--input",
        str(f),
        *ext,
        "--scores",
        f"j1={s}:j1",
    ]
    assert main([*ppi, "--n-labelled", "6"]) == 0
    assert json.loads(capsys.readouterr().out)["dataset"] == ds.name


@pytest.mark.parametrize("kind", KINDS)
def test_judge_diagnostics_refuses_pointwise_files(
    kind: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _file(kind, data_dir)  # all three hold Likert (pointwise) data
    assert main(["judge", "diagnostics", "--input", str(f), "--backbones", "x"]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "need a pairwise dataset" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", ["jsonl", "upstream"])
def test_judge_diagnostics_on_pairwise_files(kind: str, data_dir: Path) -> None:
    from metajudge.runs.judge_diagnostics import run_judge_diagnostics
    from tests.analyses.test_swap_pairwise import _ScriptedBackend

    f = {
        "jsonl": BYOD / "pairwise.jsonl",
        "upstream": data_dir / "ragchecker_meta_eval" / "human_labeled_data.json",
    }[kind]
    be = _ScriptedBackend(["A", "B", "B", "A"])
    diag = run_judge_diagnostics(
        None,
        ["scripted"],
        input_file=f,
        limit=2,
        data_dir=data_dir,
        judge_options={"backend": be, "constrained": False},
    )
    assert diag["n_pairs"] == 2 and diag["source"] == {"input": str(f.resolve())}
    assert len(be.requests) == 4  # both pairs in both orders


def test_data_commands_take_every_kind(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for kind, what in (
        ("judge_bench", "JUDGE-BENCH format, 52 likert records"),
        ("jsonl", "12 likert records"),
        ("upstream", "upstream file of summeval_ppairs, 1600 likert records"),
    ):
        f = _file(kind, data_dir)
        assert main(["data", "validate", str(f)]) == 0
        assert what in capsys.readouterr().out
        assert main(["data", "show", "--input", str(f), "-n", "1"]) == 0
        assert json.loads(capsys.readouterr().out.split("\n{")[0])["card"]["kind"] == "likert"


def test_judge_bench_refuses_other_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    f = BYOD / "graded.jsonl"
    argv = ["judge", "run-bench", "--input", str(f), "--backbone", "x", "-o", "/dev/null"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "JUDGE-BENCH unified-format file; this is a jsonl file" in err
