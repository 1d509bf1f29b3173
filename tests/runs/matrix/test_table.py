"""`metajudge matrix`: every metric × built-in dataset cell has a status; applicability rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.registry import list_datasets
from metajudge.runs.matrix.table import (
    PAIRWISE_JUDGE,
    Matrix,
    applicability,
    build_matrix,
    dataset_facts,
    matrix_rows,
    natural_protocol,
)
from tests.conftest import Load

REPO_BASELINES = Path(__file__).resolve().parents[3] / "baselines"


@pytest.fixture(scope="module")
def matrix(data_dir: Path) -> Matrix:
    return build_matrix(data_dir=data_dir, baselines=REPO_BASELINES)


def test_every_metric_times_every_builtin_dataset_has_a_status(matrix: Matrix) -> None:
    rows = matrix_rows()
    assert PAIRWISE_JUDGE in rows and "bleu" in rows and "geval" not in rows  # families expanded
    assert {d.name for d in matrix.datasets} == set(list_datasets())
    assert len(matrix.cells) == len(rows) * len(list_datasets())
    for c in matrix.cells:
        assert c.status.split(":")[0].split(" (")[0] in ("stored", "n/a", "not run"), c
        if not c.stored:
            assert ": " in c.status and c.status.split(": ", 1)[1].strip(), c


def test_every_applicable_cell_has_a_stored_result_or_a_reason(matrix: Matrix) -> None:
    """Issue 19's 'no applicable cell is empty': reads baselines/ours_*.json and baselines/judges/."""
    empty = [
        f"{c.metric} × {c.dataset}"
        for c in matrix.cells
        if c.applies and not c.stored and c.status.endswith("no stored result and no reason given")
    ]
    assert not empty, f"applicable cells with neither a stored result nor a reason: {empty}"
    # a reason says why the cell is not run, not that it waits for a run
    queued = [f"{c.metric} × {c.dataset}" for c in matrix.cells if "queued" in c.status]
    assert not queued, f"cells still marked queued: {queued}"


def test_the_issues_headline_cells_are_stored(matrix: Matrix) -> None:
    """Answer equivalence on RAGChecker's pairs vs the correctness labels, all four SummEval
    G-Eval dimensions, the pairwise judge on the four preference benchmarks."""
    want = [("answer_equivalence", "ragchecker_meta_eval")]
    want += [(f"geval_{d}", "summeval_ppairs") for d in ("coherence", "consistency")]
    want += [(f"geval_{d}", "summeval_ppairs") for d in ("fluency", "relevance")]
    want += [("pairwise_judge", d) for d in ("pandalm_testset", "autoj_pairwise_test")]
    want += [("pairwise_judge", d) for d in ("llmbar", "judgebench")]
    for metric, ds in want:
        c = matrix.cell(metric, ds)
        assert c.stored and c.value is not None and c.ci is not None, c
        assert c.backbone and c.calls and c.tokens, c  # the cost of the run that computed it
    eq = matrix.cell("answer_equivalence", "ragchecker_meta_eval")
    assert (eq.dimension, eq.statistic, eq.n) == ("correctness", "pearson", 280)
    assert matrix.cell("geval_coherence", "summeval_ppairs").published == 0.582


def test_applicability_reasons(matrix: Matrix) -> None:
    assert (
        matrix.cell("bleu", "pandalm_testset").status
        == "n/a: no reference answers (input.reference)"
    )
    assert matrix.cell("bleu", "mudabench").status.startswith("n/a: benchmark dataset")
    assert matrix.cell("bleu", "lftqa_eval").status == "n/a: no response texts"
    assert "not a pairwise" in matrix.cell(PAIRWISE_JUDGE, "summeval_ppairs").status
    assert "long texts" in matrix.cell("answer_equivalence", "hanna").status
    assert matrix.cell("answer_equivalence", "ragchecker_meta_eval").applies
    assert matrix.cell("geval_faithfulness", "summeval_ppairs").status.startswith(
        "n/a: no source tables"
    )
    assert matrix.cell("mtraig_faithfulness", "lftqa_mitigation_pradhumant").applies
    assert matrix.cell("number_match", "ragchecker_meta_eval").status == (
        "n/a: reference answers are not numbers"
    )


def test_deterministic_baselines_are_stored_cells(matrix: Matrix) -> None:
    stored = json.loads((REPO_BASELINES / "ours_ragchecker_meta_eval.json").read_text())
    want = next(
        e["pearson"]
        for e in stored["entries"]
        if e["metric"] == "bleu" and e["dimension"] == "correctness"
    )
    c = matrix.cell("bleu", "ragchecker_meta_eval")
    assert c.status == "stored" and c.dimension == "correctness" and c.value == want
    # LFTQA-Eval's bleu file is the dataset's own score column, not ours: noted, not a cell
    assert "shipped" in matrix.notes["lftqa_eval"]


def test_natural_protocols(load: Load) -> None:
    rag = dataset_facts(load("ragchecker_meta_eval"))
    summ = dataset_facts(load("summeval_ppairs"))
    summac = dataset_facts(load("summeval_summac_consistency"))
    assert natural_protocol("answer_equivalence", rag)["correlate"] == "pairwise-difference"
    assert natural_protocol("bleu", summ) == {
        "correlate": "pointwise",
        "level": "item",
        "statistic": "spearman",
    }
    assert natural_protocol("bleu", summac)["level"] == "global"  # one response per document
    assert natural_protocol(PAIRWISE_JUDGE, rag)["correlate"] == "judge-diagnostics"
    assert applicability("bleu", summ) == "no reference answers (input.reference)"


@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
def test_cli_prints_the_matrix(
    fmt: str, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"m.{fmt}"
    argv = ["matrix", "list", "--format", fmt, "--data-dir", str(data_dir), "-o", str(out)]
    assert main([*argv, "--baselines", str(REPO_BASELINES)]) == 0
    text = out.read_text()
    assert "ragchecker_meta_eval" in text and "pairwise_judge" in text
    if fmt == "md":
        assert "## Cells that apply" in text and "| bleu |" in text


def test_the_papers_value_stands_beside_a_stored_cell() -> None:
    """G-Eval on SummEval: the G-Eval paper's Table 1 value of the same statistic and dimension
    (a family entry, ``geval``, matches the member named for the dimension)."""
    from metajudge.runs.matrix.table import Cell, attach_published_values

    base = Path(__file__).resolve().parents[3] / "baselines"
    cells = [
        Cell("geval_coherence", "summeval_ppairs", "stored", "coherence", "spearman", 0.1),
        Cell("geval_fluency", "summeval_ppairs", "stored", "fluency", "kendall", 0.1),
        Cell("geval_coherence", "summeval_ppairs", "stored", "coherence", "pearson", 0.1),
        Cell("bleu", "summeval_ppairs", "stored", "coherence", "spearman", 0.1),
    ]
    attach_published_values(cells, base)
    assert [c.published for c in cells] == [0.582, 0.455, None, None]
    assert "published_geval.json" in (cells[0].published_source or "")


def test_a_cell_stored_with_a_non_default_option_says_so(matrix: Matrix) -> None:
    """Issue 25 item 2: the MT-RAIG faithfulness cell was computed with batched verification
    (its signature says so); per_claim is the default now, so the cell is marked, not presented
    as the default, and a dry run does not size per-claim calls from it."""
    from metajudge.runs.matrix.cost import _calls
    from metajudge.runs.matrix.table import non_default_options, read_cell

    c = matrix.cell("mtraig_faithfulness", "lftqa_mitigation_pradhumant")
    assert c.stored and "|mode:batched|" in (c.signature or "")
    assert c.non_default == [
        "mode:batched (default per_claim)",
        "unparsed: not in the signature (default unscored)",
    ]
    assert c.status.endswith(
        "; computed with non-default options: mode:batched (default per_claim); "
        "unparsed: not in the signature (default unscored)"
    )
    assert matrix.cell("bleu", "ragchecker_meta_eval").non_default == []
    stored = read_cell(REPO_BASELINES / "judges" / f"{c.metric}__{c.dataset}.json")
    calls, why = _calls(c.metric, 10, 10, [stored])
    assert calls == 10 + 20 * 10 and "per_claim" in why and "measured" not in why
    default_sig = stored["signature"].replace(
        "|mode:batched|", "|mode:per_claim|unparsed:unscored|"
    )
    assert non_default_options(c.metric, default_sig) == []


def test_stored_small_n_cells_show_their_stored_percentile_method(matrix: Matrix) -> None:
    """Issue 25 item 4: cells stored before the small-n rule hold percentile-bootstrap CIs;
    the matrix shows them with that method, flagged where n <= 20 (MT-RAIG faithfulness
    ``--limit 10``: 9 pairs), and unflagged above 20 units."""
    from metajudge.reports.matrix import _value

    small = matrix.cell("mtraig_faithfulness", "lftqa_mitigation_pradhumant")
    assert small.n == 9 and small.ci
    assert small.ci_method == "percentile bootstrap (stored before the small-n rule; n <= 20)"
    assert _value(small).endswith(f"] ({small.ci_method})")
    big = matrix.cell("bertscore", "ragchecker_meta_eval")
    assert big.n == 280 and big.ci_method == "percentile bootstrap"
    assert _value(big).endswith("]")
