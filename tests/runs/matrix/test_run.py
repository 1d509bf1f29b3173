"""`metajudge matrix run`: the cell runner on a tiny canonical file with a real lexical metric
(no LLM), the cell schema, the stored cells, the dry run; one slow end-to-end LLM cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.errors import InputError
from metajudge.runs.matrix.cell import check_cell, write_cell
from metajudge.runs.matrix.prepare import CellOptions
from metajudge.runs.matrix.run import run_cell
from metajudge.runs.matrix.table import build_matrix, read_cell

FIXTURE = Path(__file__).parents[2] / "fixtures" / "byod" / "pairwise.jsonl"  # 8 pairs, references
REPO_BASELINES = Path(__file__).resolve().parents[3] / "baselines"


def _opts(tmp_path: Path, **kw: object) -> CellOptions:
    base = {"metric": "bleu", "input": str(FIXTURE), "n_boot": 50, "baselines": str(tmp_path)}
    return CellOptions(**{**base, **kw, "progress": False})  # type: ignore[arg-type]


def test_run_cell_stores_a_valid_cell(tmp_path: Path) -> None:
    _, path = run_cell(_opts(tmp_path, limit=5, seed=3))
    assert path == tmp_path / "judges" / "bleu__byod_prefs.json"
    stored = read_cell(path)  # schema-checked on read
    assert stored == json.loads(path.read_text()) and stored["metric"] == "bleu"
    sub = stored["subset"]
    assert (sub["n"], sub["N"], sub["unit"], sub["seed"], len(sub["ids"])) == (5, 8, "pairs", 3, 5)
    assert stored["protocol"]["correlate"] == "pairwise-difference"
    assert stored["backbone"] is None and stored["ledger"]["calls"] == 0
    assert stored["headline"] == {"dimension": "overall", "statistic": "pearson"}
    pearson = next(r for r in stored["results"] if r["statistic"] == "pearson")
    assert pearson["n"] == 5 and pearson["value"] is not None and len(pearson["ci"]) == 2
    assert stored["signature"].startswith("bleu|")
    assert stored["command"].startswith("metajudge matrix run --metric bleu --input ")


def test_subset_is_seeded(tmp_path: Path) -> None:
    a, _ = run_cell(_opts(tmp_path / "a", limit=4, seed=1))
    b, _ = run_cell(_opts(tmp_path / "b", limit=4, seed=1))
    c, _ = run_cell(_opts(tmp_path / "c", limit=4, seed=2))
    assert a["subset"]["ids"] == b["subset"]["ids"] != c["subset"]["ids"]
    full, _ = run_cell(_opts(tmp_path / "d"))
    assert full["subset"]["n"] == full["subset"]["N"] == 8 and full["subset"]["how"] == "all items"


def test_matrix_reads_the_stored_cell_of_an_input_file(tmp_path: Path) -> None:
    run_cell(_opts(tmp_path, limit=5))
    m = build_matrix(inputs=[FIXTURE], baselines=tmp_path, metrics=["bleu", "pairwise_judge"])
    c = m.cell("bleu", "byod_prefs")
    assert c.status == "stored (subset n=5/8 pairs, seeded)" and c.n == 5 and c.ci
    assert m.cell("pairwise_judge", "byod_prefs").status.startswith("not run")


def test_cells_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not apply"):
        run_cell(CellOptions("bleu", dataset="pandalm_testset", baselines=str(tmp_path)))
    with pytest.raises(InputError, match="unknown matrix row"):
        run_cell(_opts(tmp_path, metric="geval"))  # a family: its members are the rows


def test_cell_schema_rejects_a_broken_cell(tmp_path: Path) -> None:
    cell, _ = run_cell(_opts(tmp_path, limit=3))
    bad = {**cell, "subset": {**cell["subset"], "n": 0}}
    with pytest.raises(InputError, match="subset"):
        write_cell(tmp_path / "x.json", bad)
    assert not (tmp_path / "x.json").exists()  # nothing written
    with pytest.raises(InputError, match="ledger"):
        check_cell({k: v for k, v in cell.items() if k != "ledger"})


def test_every_stored_judge_cell_is_valid() -> None:
    """The cells the lead stores in baselines/judges/ (read as the matrix reads them)."""
    for p in sorted((REPO_BASELINES / "judges").glob("*__*.json")):
        cell = read_cell(p)
        assert p.name == f"{cell['metric']}__{cell['dataset']}.json"
        assert cell["subset"]["n"] <= cell["subset"]["N"]


def test_dry_run_of_a_deterministic_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["matrix", "run", "--metric", "bleu", "--input", str(FIXTURE), "--limit", "4"]
    assert main([*argv, "--dry-run", "--baselines", str(tmp_path), "--format", "json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["calls"] == 0 and est["items"] == 4 and est["of"] == 8
    assert not (tmp_path / "judges").exists()  # a dry run stores nothing


def test_cli_run_prints_the_headline_and_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["matrix", "run", "--metric", "rouge_l", "--input", str(FIXTURE), "--n-boot", "20"]
    assert main([*argv, "--baselines", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "rouge_l × byod_prefs (no backbone): pearson (overall)" in out
    assert out.strip().endswith("rouge_l__byod_prefs.json")


@pytest.mark.slow
@pytest.mark.llm
def test_llm_cell_end_to_end_and_dry_run_tokens(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 3-pair answer-equivalence cell on RAGChecker with smollm2-135m, stored and read back;
    the dry run's prompt tokens equal what the server counted; a rerun is answered from the cache
    and keeps the measured cost."""
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] not installed")
    from metajudge.runs.matrix.cost import estimate_cell

    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    opts = CellOptions(
        "answer_equivalence",
        dataset="ragchecker_meta_eval",
        backbone="smollm2-135m",
        limit=3,
        n_boot=50,
        data_dir=str(data_dir),
        baselines=str(tmp_path),
        progress=False,
    )
    est = estimate_cell(opts)
    _, path = run_cell(opts)
    stored = read_cell(path)
    led = stored["ledger"]
    assert stored["backbone"] == "smollm2-135m" and stored["subset"]["n"] == 3
    assert led["calls"] == est.calls > 0 and led["cached"] == 0
    assert led["prompt_tokens"] == est.prompt_tokens  # the tokenizer count is exact
    assert stored["measured"]["calls"] == led["calls"] and stored["measured"]["prompt_chars"] > 0
    again, _ = run_cell(opts)
    assert again["ledger"]["calls"] == 0 and again["ledger"]["cached"] == led["requests"]
    assert again["measured"] == stored["measured"]
    assert again["results"] == stored["results"]
    assert estimate_cell(opts).wall_s is not None  # now measured in a stored cell


@pytest.mark.parametrize(
    ("metric", "per_pair"), [("pairwise_judge", 2), ("answer_equivalence", None)]
)
def test_dry_run_of_a_judge_calls_no_model(
    metric: str, per_pair: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge runs in export mode: its requests are recorded and counted, none is sent (a
    request reaching the embedded backend would start a llama.cpp server: it is refused here)."""
    from metajudge.backends.embedded import EmbeddedBackend
    from metajudge.runs.matrix.cost import estimate_cell

    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("a dry run called the model")

    monkeypatch.setattr(EmbeddedBackend, "complete", refuse)
    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    est = estimate_cell(_opts(tmp_path, metric=metric, backbone="smollm2-135m"))
    assert est.items == 8 and est.cached == 0 and est.prompt_tokens > 0
    if per_pair:
        assert est.calls == per_pair * 8 and est.calls_source == "recorded in export mode"
    else:  # the numeric fast path decides none of these word answers; distinct responses once
        assert 0 < est.calls <= 16
    assert est.wall_s is None and est.wall_source.startswith("unknown")
    assert "calls/item" in est.to_text()


def test_limit_cells_name_their_small_n_ci_method(tmp_path: Path) -> None:
    """Issue 25 item 4: a ``--limit`` cell below 20 pairs stores the rule's interval and its
    method: Fisher z on 5 pairs, no CI on 4."""
    from metajudge.runs.matrix.run import cell_summary
    from metajudge.stats import fisher_z_ci

    five, _ = run_cell(_opts(tmp_path / "five", limit=5, seed=3))
    r = next(r for r in five["results"] if r["statistic"] == "pearson")
    assert r["n"] == 5 and r["ci_method"] == "Fisher z"
    assert r["ci"] == list(fisher_z_ci(r["value"], 5))
    assert "(Fisher z)" in cell_summary(five)
    four, _ = run_cell(_opts(tmp_path / "four", limit=4, seed=3))
    for r in four["results"]:
        if r["value"] is not None:
            assert r["ci"] is None and r["ci_method"] == "none (n < 5)", r


def test_pairwise_accuracy_ci_small_n_wilson_and_percentile_unchanged_from_20() -> None:
    """The pairwise judge cell's accuracy CI: from 20 pairs the same percentile interval as
    before the rule (``bootstrap_mean_ci`` of the 0/1 vector, same seed); Wilson on 17 pairs
    (the stored lftqa_mitigation_pradhumant cell: 1 of 17 right, stored percentile
    [0.0, 0.176471]); none on 4."""
    import numpy as np

    from metajudge.runs.matrix.pairwise import _accuracy_ci
    from metajudge.stats import bootstrap_mean_ci

    ci, how = _accuracy_ci(0.25, 40, 0, 1000)
    before = bootstrap_mean_ci([1.0] * 10 + [0.0] * 30, np.random.default_rng(0), n_resamples=1000)
    assert how == "percentile bootstrap" and ci == [round(b, 6) for b in before]
    ci, how = _accuracy_ci(1 / 17, 17, 0, 1000)
    assert how == "Wilson score" and ci == [0.01046, 0.26982]
    assert _accuracy_ci(0.5, 4, 0, 1000) == (None, "none (n < 5)")


def test_cli_run_writes_a_run_folder_outside_the_source_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26 item 2: without --out or --baselines the cell and its table.md go into a run
    folder under the user cache (written as a set, with a manifest); the source tree's
    baselines/ is not touched."""
    from metajudge.paths import default_run_dir, user_cache_dir

    stored = REPO_BASELINES / "judges" / "bleu__byod_prefs.json"
    before = stored.exists()
    argv = ["matrix", "run", "--metric", "bleu", "--input", str(FIXTURE), "--limit", "4"]
    assert main([*argv, "--n-boot", "20", "--quiet"]) == 0
    run = default_run_dir("matrix", "bleu__byod_prefs")
    assert run.is_relative_to(user_cache_dir())
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-2:] == [f"report: {run / 'table.md'}", str(run / "cell.json")]
    assert sorted(p.name for p in run.iterdir()) == ["cell.json", "manifest.json", "table.md"]
    cell = read_cell(run / "cell.json")
    table = (run / "table.md").read_text()
    assert table.startswith("# bleu × byod_prefs\n")
    assert f"Subset: 4 of 8 pairs, {cell['subset']['how']} (seed 0)" in table
    pearson = next(r for r in cell["results"] if r["statistic"] == "pearson")
    assert f"| overall | pearson | {pearson['value']:.3f}" in table
    assert f"`{cell['command']}`" in table and "--limit 4" in cell["command"]
    assert stored.exists() == before  # nothing written into the source tree


def test_cli_run_out_and_baselines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--out names the run folder; --baselines DIR also stores the cell where `matrix` reads it;
    --first N (the first N pairs) is recorded in the cell's command."""
    argv = ["matrix", "run", "--metric", "bleu", "--input", str(FIXTURE), "--first", "5"]
    out, base = tmp_path / "run", tmp_path / "base"
    argv += ["--n-boot", "20", "--quiet", "--out", str(out), "--baselines", str(base)]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip().endswith(str(base / "judges" / "bleu__byod_prefs.json"))
    a, b = read_cell(out / "cell.json"), read_cell(base / "judges" / "bleu__byod_prefs.json")
    assert a == b and a["subset"]["how"] == "the first N items in dataset order"
    assert a["subset"]["ids"] == ["qa1", "qa2", "qa3", "qa4", "qa5"]
    assert "--first 5" in a["command"] and (out / "table.md").is_file()
    m = build_matrix(inputs=[FIXTURE], baselines=base, metrics=["bleu"])
    assert m.cell("bleu", "byod_prefs").status.startswith("stored (subset n=5/8")
