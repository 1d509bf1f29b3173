"""issue 14: `meta-eval --level global|item|system-grouped|system` on the Likert datasets with
system ids, every level named in the output with its missing-cell rule, the trivial baseline rows
by default (--no-baselines turns them off), and every level from one run folder's scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from metajudge.analyses.metric_vs_human.levels import LEVEL_NAMES, MISSING_CELLS
from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.cli import main
from metajudge.data.registry import Dataset
from tests.conftest import Load


def test_level_aliases() -> None:
    assert Protocol(correlate="pointwise", level="system-level").level == "system"
    assert Protocol(correlate="pointwise", level="item-grouped").level == "item"
    assert set(LEVEL_NAMES) == set(MISSING_CELLS) == {"global", "item", "system-grouped", "system"}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("level", ["global", "item", "system-grouped", "system"])
def test_levels_on_lftqa_from_one_run_folder(
    level: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path_factory.getbasetemp() / "lftqa_levels"
    base = ["meta-eval", "--dataset", "lftqa_eval", "--protocol", "pointwise", "--scores", "shipped",
            "--metrics", "bleu,rouge", "--n-boot", "10", "--no-plots", "--out", str(out)]  # fmt: skip
    text = _run([*base, "--level", level], capsys)
    assert f"level: {LEVEL_NAMES[level]}" in text and "missing cells:" in text
    res = json.loads((out / "result.json").read_text())
    assert res["protocol"]["correlation_level"] == level
    assert res["protocol"]["missing_cells"] == MISSING_CELLS[level]
    names = [m["name"] for m in res["metrics"]]
    assert names == ["bleu", "rouge", "trivial.length_words", "trivial.random"]
    assert "trivial.length_words" in text


def test_level_system_rows_are_the_run_folders_scores(
    load: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scores computed once (length via the registry-free trivial rows + a cached score file)."""
    out = tmp_path / "run"
    base = ["meta-eval", "--dataset", "lftqa_eval", "--protocol", "pointwise", "--scores", "shipped",
            "--metrics", "bleu", "--n-boot", "10", "--no-plots", "--out", str(out)]  # fmt: skip
    _run([*base, "--level", "item"], capsys)
    item = json.loads((out / "result.json").read_text())
    text = _run([*base, "--level", "system"], capsys)
    system = json.loads((out / "result.json").read_text())
    assert "systems' mean scores" in text
    assert item["run"] == {**system["run"], "seconds": item["run"]["seconds"]}
    # the system level is one Pearson over the 10 systems' means
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.scores.shipped import shipped_scores

    ds = load("lftqa_eval")
    dims = [c["dimension"] for c in system["cells"] if c["metric"] == "bleu"]
    sm = score_matrices(ds.records, shipped_scores(ds, metrics=["bleu"]), dims[0], ["bleu"])
    ok = np.isfinite(sm.human) & np.isfinite(sm.metrics["bleu"])
    mx = [sm.metrics["bleu"][i][ok[i]].mean() for i in range(len(sm.systems))]
    my = [sm.human[i][ok[i]].mean() for i in range(len(sm.systems))]
    cell = next(c for c in system["cells"] if c["metric"] == "bleu" and c["dimension"] == dims[0])
    assert cell["stats"]["pearson"]["value"] == pytest.approx(np.corrcoef(mx, my)[0, 1], abs=1e-9)


@pytest.mark.parametrize(
    ("dataset", "extra"),
    [("hanna", ["--scores", "shipped", "--metrics", "hanna.bleu"]),
     ("unieval_topicalchat_sfres_sfhot", ["--subset", "topical_chat", "--chars"])],
)  # fmt: skip
@pytest.mark.parametrize("level", ["item", "system-grouped", "system"])
def test_levels_on_hanna_and_topicalchat(
    dataset: str, extra: list[str], level: str, load: Load, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    if "--chars" in extra:  # a custom score file: response length in characters
        f = _chars_file(load(dataset, subset="topical_chat"), tmp_path)
        extra = [*extra[: extra.index("--chars")], "--scores", f]
    argv = ["meta-eval", "--dataset", dataset, "--protocol", "pointwise", *extra, "--n-boot",
            "10", "--no-plots", "--no-compare", "--out", str(tmp_path / "r"), "--level", level]  # fmt: skip
    text = _run(argv, capsys)
    assert f"level: {LEVEL_NAMES[level]}" in text
    res = json.loads((tmp_path / "r" / "result.json").read_text())
    lengths = [c for c in res["cells"] if c["metric"] == "trivial.length_words"]
    assert any(c["stats"]["pearson"]["value"] is not None for c in lengths)
    for c in lengths:  # undefined only with its reason (e.g. a constant human scale per input)
        p = c["stats"]["pearson"]
        assert p["value"] is not None or p["undefined"]


def _chars_file(ds: Dataset, tmp_path: Path) -> str:
    from metajudge.analyses.metric_vs_human.trivial import trivial_rows

    rows = [r for r in trivial_rows(ds.records, 0) if r["score"] is not None]
    p = tmp_path / "chars.jsonl"
    p.write_text("".join(json.dumps({**r, "metric": "chars", "signature": "chars"}) + "\n"
                         for r in rows if r["metric"].endswith("length_words")))  # fmt: skip
    return str(p)


def test_no_baselines_turns_the_rows_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["meta-eval", "--dataset", "lftqa_eval", "--protocol", "pointwise", "--scores", "shipped",
            "--metrics", "bleu", "--n-boot", "10", "--no-plots", "--no-baselines", "--out",
            str(tmp_path / "r")]  # fmt: skip
    _run(argv, capsys)
    res = json.loads((tmp_path / "r" / "result.json").read_text())
    assert [m["name"] for m in res["metrics"]] == ["bleu"]
    assert res["run"]["trivial_baselines"] == []


def test_meta_eval_marks_bootstrap_p_at_its_floor(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25 item 10: LFTQA-Eval, 3 metrics, 2 statistics, 2 dimensions = 12 comparisons with
    200 resamples: the floor 2/201 = 0.00995 is printed as ≤. Issue 64: Holm's family is one
    dimension and statistic (3 tests), so Holm's floor 0.0299 can reach 0.05."""

    argv = ["meta-eval", "--dataset", "lftqa_eval", "--scores", "shipped", "--metrics"]
    argv += ["bleu,rouge,bertscore", "--protocol", "pointwise", "--n-boot", "200", "--no-plots"]
    argv += ["--no-baselines", "--quiet", "--out", str(tmp_path), "--data-dir", str(data_dir)]
    assert main(argv) == 0
    j = json.loads((tmp_path / "result.json").read_text())
    f = j["p_floors"]["p_bootstrap"]
    assert f["floor"] == pytest.approx(2 / 201) and f["n_tests"] == 3
    assert f["family"] == "per dimension and statistic" and len(j["comparisons"]) == 12
    assert f["holm_floor"] == pytest.approx(6 / 201) and f["note"] is None
    at = [c for c in j["comparisons"] if c["p_bootstrap_at_floor"]]
    assert at and all(c["p_bootstrap"] == pytest.approx(2 / 201) for c in at)
    md = (tmp_path / "table.md").read_text()
    assert "≤0.00995 (≤0.0299)" in md
    assert "after Holm over 3 tests (per dimension and statistic), 0.0299" in md
