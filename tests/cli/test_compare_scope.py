"""issue 42: metric-vs-metric comparisons are never skipped silently. A pointwise run of 15
metrics says the max_compare cap (and how to lift it) on the terminal, in table.md and in
report.html; ``--compare-to METRIC`` tests every metric against one reference (14 tests per
dimension and statistic) with Williams, the paired bootstrap and the permutation test; when Holm
over the resamples cannot reach significance, the terminal gives the resamples needed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from metajudge.cli import main

METRICS = [
    "hanna.bertscore_f1", "hanna.bertscore_precision", "hanna.bertscore_recall", "hanna.bleu",
    "hanna.chrf", "hanna.cider", "hanna.meteor", "hanna.rouge-1_f-score", "hanna.rouge-2_f-score",
    "hanna.rouge-l_f-score", "hanna.bartscore-sh", "hanna.coverage", "hanna.density",
    "hanna.compression", "hanna.depthscore",
]  # fmt: skip
REF = "hanna.bertscore_precision"


def _run(out: Path, caplog: pytest.LogCaptureFixture, *extra: str) -> tuple[dict, str]:
    """The run's result.json and what it warned on the terminal (stderr, via logging)."""
    caplog.clear()
    argv = ["meta-eval", "--dataset", "hanna", "--scores", "shipped:" + ",".join(METRICS),
            "--aggregation", "mean", "--no-baselines", "--n-boot", "50", "--no-plots",
            "--out", str(out), *extra]  # fmt: skip
    assert main(argv) == 0
    return json.loads((out / "result.json").read_text()), caplog.text


@pytest.mark.slow
def test_cap_said_everywhere_and_compare_to(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    res, err = _run(tmp_path / "all", caplog)
    assert len(res["metrics"]) == 15 and res["comparisons"] == []
    said = "skipped: 15 metrics, more than max_compare=12"
    assert said in err and "--compare-to METRIC" in err and "--max-compare 15" in err
    assert said in (tmp_path / "all" / "table.md").read_text()
    assert said in (tmp_path / "all" / "report.html").read_text()

    res, err = _run(tmp_path / "ref", caplog, "--compare-to", REF)
    comps = res["comparisons"]
    per = Counter((c["dimension"], c["statistic"]) for c in comps)
    assert set(per.values()) == {14} and len(per) == 6 * 2  # 6 dimensions x Pearson, Spearman
    assert all(c["metric_a"] == REF and c["metric_b"] != REF for c in comps)
    pearson = [c for c in comps if c["statistic"] == "pearson" and c.get("diff") is not None]
    assert pearson and all(c["p_williams"] is not None for c in pearson)  # pointwise: Williams
    assert all(
        c.get("p_bootstrap") is not None and c.get("p_permutation") is not None for c in pearson
    )
    # Holm over the 14 tests of a dimension and statistic with 50 resamples: unreachable, the
    # number needed is given, and --compare-to (given) is not suggested again
    assert "Holm over 14 tests (per dimension and statistic)" in err
    assert "use at least 560 resamples (meta-eval: --n-boot 560)" in err
    assert f"each metric against {REF}" in (tmp_path / "ref" / "table.md").read_text()


def test_compare_to_an_unknown_metric_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["meta-eval", "--dataset", "lftqa_eval", "--subset", "fetaqa", "--scores", "shipped",
            "--metrics", "bleu,rouge", "--protocol", "pointwise", "--n-boot", "10", "--no-plots",
            "--compare-to", "meteor", "--out", str(tmp_path / "x")]  # fmt: skip
    assert main(argv) == 2
    assert "--compare-to 'meteor' is not a compared metric" in capsys.readouterr().err
