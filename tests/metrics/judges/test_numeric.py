"""Number spans, the MuDABench digit-wise rule, the answer-equivalence fast path, the probes."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from metajudge.metrics.judges.probes import (
    FORMAT_KINDS,
    PERTURB_KINDS,
    equivalence_probes,
    perturb_numbers,
)
from metajudge.metrics.numeric import fast_path, number_spans, spans_equivalent, template


def _v(text: str) -> list[str]:
    return [str(s.value) for s in number_spans(text, paren="amounts")]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("12.5% and 0.125", ["0.125", "0.125"]),
        ("$1,234 million vs 1.234 billion", ["1234000000", "1234000000"]),
        ("净利润为-3.2亿元", ["-320000000.0"]),
        ("loss of ($1,200.50)", ["-1200.50"]),
        ("held on 2022-09-05 (2021)", ["2022", "9", "5", "2021"]),
        ("COVID-19 cases", ["19"]),
        ("Q3 results", []),
        ("down 3.2 percent", ["0.032"]),
    ],
)
def test_number_spans(text: str, values: list[str]) -> None:
    assert [str(Decimal(v).normalize()) for v in _v(text)] == [
        str(Decimal(v).normalize()) for v in values
    ]


def test_span_keeps_the_space_before_it() -> None:
    s = number_spans("customer_id 562 paid")[0]
    assert s.text == "562" and "customer_id 562 paid"[s.start - 1] == " "


@pytest.mark.parametrize(
    ("gold", "pred", "same"),
    [
        ("18.02%", "0.1802", True),
        ("18.02%", "18.0%", True),
        # MuDABench's judge prompt: integer digits + first decimal, compared digit-wise
        # (truncation). The old rule rounded half up and said True here (decided against, issue 10).
        ("14.4%", "14.39%", False),
        ("12.34", "12.38", True),
        ("7.9", "7.96", True),
        ("$6,497,941,000.00", "$6.497941 billion", True),
        ("1,234 million", "1.234 billion", True),
        ("18.02%", "18.92%", False),
        ("18.02%", "-18.02%", False),
        ("18.02%", "18.02", False),
        ("18.02%", "18.02‰", False),
        ("1.9720", "1.9720万", False),
        ("14.39%", "14%", False),
    ],
)
def test_spans_equivalent_mudabench_rule(gold: str, pred: str, same: bool) -> None:
    assert spans_equivalent(number_spans(gold)[0], number_spans(pred)[0]) is same


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("7.96", "7.9", 1),  # issue 11 defect 2: equal digit-wise
        ("12.38", "12.34", 1),
        ("14.39", "14.4", 0),
        ("18.02", "18.02%", None),  # a percent sign on one side only: the LLM decides
        ("0.1802", "18.02%", None),
        ("1.234 billion", "1,234 million", None),  # different scale words
        ("$5", "5", None),  # a unit on one side only
        ("twelve", "12", None),  # words
        ("-18.02%", "18.02%", 0),
    ],
)
def test_fast_path_decides_only_unambiguous_cases(
    pred: str, gold: str, expected: int | None
) -> None:
    got = fast_path(pred, gold)
    assert (None if got is None else got[0]) == expected


def test_fast_path_decides_only_clear_cases() -> None:
    gold = "股票代码601398，资本充足率为18.02%；股票代码002142，资本充足率为15.44%"
    assert fast_path(
        "股票代码601398，资本充足率为18.0%；股票代码002142，资本充足率为15.4%", gold
    ) == (1, "numeric fast path (first_decimal): 4 number(s) match")
    assert (
        fast_path("股票代码601398，资本充足率为0.1802；股票代码002142，资本充足率为15.4%", gold)
        is None
    )
    assert (
        fast_path("股票代码601398，资本充足率为18.92%；股票代码002142，资本充足率为15.44%", gold)[0]
        == 0
    )  # type: ignore[index]
    assert fast_path("资本充足率最高的是601398", gold) is None  # different wording: the LLM decides
    assert fast_path("[WOOF], [BJ]", "[WOOF], [BJ], [JJSF]") is None  # no numbers
    assert fast_path("The answer is X.", " the answer is  x.") == (1, "identical text")
    assert template("Growth 12.5% in 2021") == template("growth 0.125 in 2022")


def test_probe_labels_follow_the_rule(data_dir: Path) -> None:
    from metajudge.data.benchmarks import load_mudabench

    qs = load_mudabench("simple", data_dir) + load_mudabench("complex", data_dir)
    golds = [(f"{q.variant}#{q.index}", q.question, q.final_answer) for q in qs]
    probes = equivalence_probes(golds, np.random.default_rng(0), max_golds=15)
    assert len(probes) >= 40
    kinds = {p.kind for p in probes}
    assert kinds == set(FORMAT_KINDS) | set(PERTURB_KINDS)
    for p in probes:
        assert p.prediction != p.gold
        assert p.label == (1 if p.kind in FORMAT_KINDS else 0)
        fp = fast_path(p.prediction, p.gold)  # one span changed, wording kept
        if p.kind in ("percent_fraction", "scale_words", "wrong_unit"):
            assert fp is None, p  # written differently: the LLM decides
        else:
            assert fp is not None and fp[0] == p.label, p
    again = equivalence_probes(golds, np.random.default_rng(0), max_golds=15)
    assert [p.to_dict() for p in again] == [p.to_dict() for p in probes]  # seeded


def test_perturb_numbers_changes_values_not_years() -> None:
    text = "In 2009 customer 562 paid $1,200.50, up 3.5% on 2008."
    new, k = perturb_numbers(text, np.random.default_rng(3))  # type: ignore[misc]
    assert k == 3 and "2009" in new and "2008" in new
    old_vals = [s.value for s in number_spans(text, paren="amounts") if s.value not in (2008, 2009)]
    new_vals = [s.value for s in number_spans(new, paren="amounts") if s.value not in (2008, 2009)]
    assert len(old_vals) == len(new_vals) and all(
        a != b for a, b in zip(old_vals, new_vals, strict=True)
    )
    assert template(new) == template(text)
    assert perturb_numbers("No numbers in 2020.", np.random.default_rng(0)) is None
