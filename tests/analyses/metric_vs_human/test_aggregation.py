"""issue 64: how the annotators are aggregated is a named rule (per-annotator, mean, median,
majority, mode-else-mean), equal to a hand-computed reference on a three-annotator Likert fixture
with every kind of tie, at item and system level, and stated in header, signature and caption."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
from metajudge.analyses.metric_vs_human.protocol import AGGREGATIONS, Protocol
from metajudge.data.formats import DatasetCard, Input, LikertRecord, Scale
from metajudge.data.registry import Dataset
from metajudge.reports import tables
from metajudge.reports.latex import latex_table
from metajudge.reports.paper_table import paper_table
from metajudge.stats import aggregate_labels

NAN = math.nan
# (input, system) -> three annotators' labels: all agree, two agree, none agree (unevenly
# spaced, so mean, median and majority differ), and one response with two labels that disagree
LABELS = {
    ("i0", "s0"): (3, 3, 3), ("i0", "s1"): (1, 1, 4), ("i0", "s2"): (1, 2, 5), ("i0", "s3"): (5, 4, 4),
    ("i1", "s0"): (2, 4, 5), ("i1", "s1"): (4, 4, 4), ("i1", "s2"): (2, 3, 3), ("i1", "s3"): (1, 5, 5),
    ("i2", "s0"): (2, 2, 1), ("i2", "s1"): (1, 3, 4), ("i2", "s2"): (5, 5, 5), ("i2", "s3"): (3, 5, NAN),
}  # fmt: skip
SCORES = [0.1, 0.5, 0.3, 0.9, 0.7, 0.2, 0.4, 0.8, 0.6, 0.35, 0.95, 0.15]
# the label per response under each rule, worked out by hand (same order as LABELS)
EXPECTED = {
    "mean": [3, 2, 8 / 3, 13 / 3, 11 / 3, 4, 8 / 3, 11 / 3, 5 / 3, 8 / 3, 5, 4],
    "median": [3, 1, 2, 4, 4, 4, 3, 5, 2, 3, 5, 4],
    # a tie between the most frequent labels: their median ((2,4,5) -> 4, (1,3,4) -> 3, (3,5) -> 4)
    "majority": [3, 1, 2, 4, 4, 4, 3, 5, 2, 3, 5, 4],
    # no two annotators agree: the mean ((1,2,5) -> 8/3, (2,4,5) -> 11/3, (1,3,4) -> 8/3, (3,5) -> 4)
    "mode-else-mean": [3, 1, 8 / 3, 4, 11 / 3, 4, 3, 5, 2, 8 / 3, 5, 4],
}


def _data() -> tuple[Dataset, list[dict[str, object]]]:
    card = DatasetCard(
        name="toy_three_annotators",
        kind="likert",
        description="",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("q",),
        scale=Scale(1, 5),
        annotators=3,
        direction="higher = better",
    )
    recs, rows = [], []
    for ((item, system), labels), score in zip(LABELS.items(), SCORES, strict=True):
        scores = {"q": tuple(float(v) for v in labels)}
        recs.append(
            LikertRecord(
                id=item, input=Input(question="q"), system=system, response="r", scores=scores
            )
        )
        rows.append({"key": f"{item}::{system}", "metric": "m", "score": score})
    return Dataset(card=card, records=recs), rows


def _rows(rule: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, item, system) rows of the reference: one per label (per_annotator) or response."""
    xs, ys, items, systems = [], [], [], []
    for ((item, system), labels), x in zip(LABELS.items(), SCORES, strict=True):
        ys_here = [v for v in labels if not math.isnan(v)] if rule == "per_annotator" else [None]
        for y in ys_here:
            xs.append(x)
            ys.append(y)
            items.append(item)
            systems.append(system)
    if rule != "per_annotator":
        ys = EXPECTED[rule]
    return np.array(xs), np.array(ys, dtype=float), np.array(items), np.array(systems)


def _reference(rule: str, level: str, stat: str) -> float:
    corr = {"pearson": lambda a, b: sps.pearsonr(a, b)[0], "spearman": lambda a, b: sps.spearmanr(a, b)[0]}[stat]  # fmt: skip
    x, y, items, systems = _rows(rule)
    if level == "item":  # per input across its systems, then the mean over inputs
        return float(np.mean([corr(x[items == i], y[items == i]) for i in np.unique(items)]))
    names = np.unique(systems)  # system level: the systems' mean scores over their rows
    return float(
        corr([x[systems == s].mean() for s in names], [y[systems == s].mean() for s in names])
    )


def test_each_rule_equals_the_hand_computed_labels() -> None:
    matrix = np.array(list(LABELS.values()), dtype=float)
    for rule, want in EXPECTED.items():
        np.testing.assert_allclose(aggregate_labels(matrix, rule), want, rtol=0, atol=1e-12)
    assert set(AGGREGATIONS) == {"per_annotator", *EXPECTED}


@pytest.mark.parametrize("rule", AGGREGATIONS)
@pytest.mark.parametrize("level", ["item", "system"])
def test_each_rule_at_item_and_system_level_equals_the_reference(rule: str, level: str) -> None:
    ds, rows = _data()
    proto = Protocol(correlate="pointwise", aggregation=rule, level=level, n_boot=0)
    res = meta_evaluate(ds, rows, proto)
    for stat in ("pearson", "spearman"):
        got = res.value("m", "q", stat)
        assert got == pytest.approx(_reference(rule, level, stat), abs=1e-12), (rule, level, stat)


def test_the_rules_give_different_values_on_this_fixture() -> None:
    ds, rows = _data()
    values = {
        rule: meta_evaluate(
            ds, rows, Protocol(correlate="pointwise", aggregation=rule, level="item", n_boot=0)
        ).value("m", "q", "pearson")
        for rule in AGGREGATIONS
    }
    assert len({round(v, 9) for v in values.values()}) == 4  # median = majority here, others apart


def test_the_rule_is_in_the_header_signature_and_caption() -> None:
    ds, rows = _data()
    proto = Protocol(correlate="pointwise", aggregation="mode-else-mean", n_boot=0)
    res = meta_evaluate(ds, rows, proto)
    said = "mode-else-mean (the label most annotators agree on"
    assert said in tables.protocol_line(res)  # the terminal's header
    assert said in tables.to_markdown(res)  # table.md's footer: protocol and signatures
    assert "mode-else-mean (the label most annotators agree on" in latex_table(res)
    assert "; aggregation mode-else-mean (the label most" in paper_table([res])
    assert res.data["protocol"]["aggregation"] == "mode-else-mean"


def test_a_per_annotator_pointwise_run_says_so_first(capsys: pytest.CaptureFixture[str]) -> None:
    from metajudge.reports.sections import aggregation_note

    ds, rows = _data()
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", n_boot=0))
    note = aggregation_note(res.data)
    assert note is not None and note.startswith("note: 3 annotators per response")
    assert "aggregation=per_annotator" in note and "mode-else-mean" in note
    mean = meta_evaluate(ds, rows, Protocol(correlate="pointwise", aggregation="mean", n_boot=0))
    assert aggregation_note(mean.data) is None


def test_the_cli_offers_every_rule() -> None:
    from metajudge.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command" or getattr(a, "choices", None))
    meta = sub.choices["meta-eval"]  # type: ignore[index]
    (agg,) = [a for a in meta._actions if a.dest == "aggregation"]
    assert tuple(agg.choices) == AGGREGATIONS and agg.default == "per_annotator"


def test_the_terminal_table_shows_kendall_beside_pearson_and_spearman() -> None:
    ds, rows = _data()
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", aggregation="mean", n_boot=0))
    header = tables.summary_table(res).splitlines()[0]
    assert [h.strip() for h in header.split("|")[2:5]] == [
        "Q Pearson",
        "Q Spearman",
        "Q Kendall τb",
    ]
