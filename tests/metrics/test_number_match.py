"""Number Match (T2-RAGBench): extraction formats, tolerance boundaries, modes, bad input."""

from __future__ import annotations

import math

import pytest

from metajudge.errors import InputError
from metajudge.metrics.base import ScoreItem
from metajudge.metrics.number_match import (
    NumberMatch,
    extract_numbers,
    find_numbers,
    number_match,
    number_match_accuracy,
    numbers_equivalent,
)
from metajudge.metrics.registry import get_metric

# (prediction, gold, options, expected match)
TABLE: list[tuple[object, object, dict, bool]] = [
    # plain numbers and formats
    ("42", 42, {}, True),
    ("The answer is 42.", "42", {}, True),
    ("3.14159", 3.14159, {}, True),
    (".5", 0.5, {}, True),
    ("-7.25", -7.25, {}, True),
    ("+7.25", 7.25, {}, True),
    ("−7.25", -7.25, {}, True),  # U+2212 minus
    ("1,234,567.89", 1234567.89, {}, True),
    ("$1,234", 1234, {}, True),
    ("-$1,234", -1234, {}, True),
    ("$-1,234", -1234, {}, True),
    ("USD 2,500", 2500, {}, True),
    ("€3.5", 3.5, {}, True),
    ("£12", 12, {}, True),
    ("(1,234)", -1234, {}, True),
    ("($1,234.5)", -1234.5, {}, True),
    ("(1,234)", -1234, {"paren_negative": False}, False),  # read as +1234
    ("12.5%", 12.5, {}, True),
    ("12.5 percent", 12.5, {}, True),
    ("-3.2%", -3.2, {}, True),
    ("2.1 million", 2_100_000, {}, True),
    ("$4.5 billion", 4.5e9, {}, True),
    ("7 thousand", 7000, {}, True),
    ("€1.2bn", 1.2e9, {}, True),
    ("$3M", 3e6, {}, True),
    ("3m", 3e6, {}, False),  # a bare one-letter suffix is not a scale (metres? minutes?)
    ("2e5", 200000, {}, True),
    # tolerance boundaries: relative to |gold|, eps = 1e-2
    ("100.9", 100, {}, True),  # 0.9 % off
    ("101.1", 100, {}, False),  # 1.1 % off
    ("99.1", 100, {}, True),  # -0.9 %
    ("98.9", 100, {}, False),  # -1.1 %
    ("-100.9", -100, {}, True),
    ("0.00991", 0.01, {}, True),  # 0.9 % off
    ("0.00989", 0.01, {}, False),  # 1.1 % off
    ("0.00989", 0.01, {"rel_tol": 2e-2}, True),
    # zero gold: exact unless abs_tol
    ("0", 0, {}, True),
    ("0.0", "0", {}, True),
    ("0.001", 0, {}, False),
    ("0.001", 0, {"abs_tol": 0.01}, True),
    # sign handling
    ("-5", 5, {}, False),
    ("-5", 5, {"ignore_sign": True}, True),
    ("(5)", 5, {"ignore_sign": True}, True),
    # scale invariance (power-of-ten rescaling)
    ("12.5%", 0.125, {}, False),
    ("12.5%", 0.125, {"mode": "scale_invariant"}, True),
    ("1,234 million", 1.234e9, {}, True),
    ("1.234", 1.234e9, {"mode": "scale_invariant"}, True),
    ("1.234", 1.234e9, {"mode": "scale_invariant", "max_power": 6}, False),
    ("1.26", 12.5, {"mode": "scale_invariant"}, True),  # 12.6 vs 12.5: 0.8 %
    ("1.27", 12.5, {"mode": "scale_invariant"}, False),  # 12.7 vs 12.5: 1.6 %
    ("-0.125", 12.5, {"mode": "scale_invariant"}, False),  # rescaling never flips the sign
    ("-0.125", 12.5, {"mode": "scale_invariant", "ignore_sign": True}, True),
    # several numbers: which one counts
    ("From 2019 to 2020 revenue grew by 12.5%", 12.5, {}, True),  # last (default)
    ("From 2019 to 2020 revenue grew by 12.5%", 12.5, {"select": "first"}, False),
    ("12.5% (from $100 to $112.5)", 12.5, {}, False),
    ("12.5% (from $100 to $112.5)", 12.5, {"select": "first"}, True),
    ("12.5% (from $100 to $112.5)", 100, {"select": "any"}, True),
    ("12.5% or 13%", 12.5, {"select": "only"}, False),
    ("12.5%", 12.5, {"select": "only"}, True),
    # not numbers
    ("no idea", 3.0, {}, False),
    ("", 3.0, {}, False),
    (None, 3.0, {}, False),
    ("Q3 FY2019", 3, {}, False),  # glued to letters: not numbers
    ("COVID-19", -19, {}, False),  # a hyphen after a letter is not a minus
    ("COVID-19", 19, {}, True),
    # numeric predictions
    (41.7, 42, {}, True),
    (float("nan"), 42, {}, False),
    # MuDABench rule: integer digits and the first decimal (truncated)
    ("12.38", 12.34, {"mode": "first_decimal"}, True),
    ("12.29", 12.34, {"mode": "first_decimal"}, False),
    ("2.3", 2.39, {"mode": "first_decimal"}, True),
]


def test_table_is_big_enough() -> None:
    assert len(TABLE) >= 40


@pytest.mark.parametrize("pred,gold,opts,expected", TABLE)
def test_number_match_table(pred: object, gold: object, opts: dict, expected: bool) -> None:
    assert number_match(pred, gold, **opts) is expected  # type: ignore[arg-type]


def test_reference_recipe_agrees_on_bare_numbers() -> None:
    """On bare numeric strings, strict mode is T2-RAGBench's score_nm (except gold 0, documented)."""

    def recipe(pred: str, gold: str) -> bool:
        try:
            return abs(float(pred) - float(gold)) / abs(float(gold)) <= 1e-2
        except (ValueError, ZeroDivisionError):
            return False

    pairs = [
        ("100.9", "100"),
        ("101.1", "100"),
        ("-5", "5"),
        ("3.33", "3.3"),
        ("1e3", "1000"),
        ("abc", "1"),
        ("0.5", "0.495"),
    ]
    for p, g in pairs:
        assert number_match(p, g) is recipe(p, g), (p, g)


def test_extract_numbers_order_and_spans() -> None:
    text = "Revenue fell to ($1,234.5 million), or -3.2% YoY, vs 2019-12"
    nums = find_numbers(text)
    assert [n.value for n in nums] == [-1234.5e6, -3.2, 2019.0, 12.0]
    assert nums[0].text == "($1,234.5 million)" and nums[0].currency and nums[0].scale == 1e6
    assert nums[1].text == "-3.2%" and nums[1].percent
    assert extract_numbers("1,2") == [1.0, 2.0]
    assert extract_numbers("1,234,56") == [1234.0, 56.0]
    assert extract_numbers("a - 5") == [5.0]  # a spaced hyphen is not a sign
    assert extract_numbers("") == [] and extract_numbers("none") == []


def test_numbers_equivalent_is_relative_to_gold() -> None:
    # 100 vs 101: 1/101 = 0.0099 relative to gold 101 (match), 1/100 = 0.01 relative to gold 100 (boundary, match)
    assert numbers_equivalent(100, 101) and numbers_equivalent(101, 100)
    assert not numbers_equivalent(100, 102)
    assert not numbers_equivalent(math.inf, 1.0)


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(InputError, match="exactly one"):
        number_match("5", "between 3 and 4")
    with pytest.raises(InputError, match="exactly one"):
        number_match("5", "n/a")
    with pytest.raises(InputError, match="bool"):
        number_match(True, 1)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="list"):
        number_match(["5"], 5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not finite"):
        number_match("5", float("inf"))
    with pytest.raises(InputError, match="unknown select"):
        number_match("5", 5, select="middle")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="unknown mode"):
        numbers_equivalent(5, 5, mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="2 predictions but 1 golds"):
        number_match_accuracy(["1", "2"], [1])


def test_accuracy_over_a_set() -> None:
    assert number_match_accuracy(["1", "2", "x", "4.02"], [1, 3, 5, 4]) == pytest.approx(0.5)


def test_metric_class() -> None:
    m = NumberMatch(preset=None, mode="scale_invariant", ignore_sign=True)  # free text: no preset
    assert "mode:scale_invariant" in m.signature and "sign:ignore" in m.signature
    res = m.score_batch(
        [
            ScoreItem("1", "It is 12.5%.", "0.125"),
            ScoreItem("2", "no number", "3"),
            ScoreItem("3", "", "3"),
            ScoreItem("4", "5", "no gold number"),
            ScoreItem("5", None, "3"),
        ]
    )
    assert [r.score for r in res] == [1.0, 0.0, 0.0, None, None]
    assert res[0].details["candidates"] == [12.5] and res[0].details["gold"] == 0.125
    assert "reference" in (res[3].error or "")
    with pytest.raises(InputError):
        NumberMatch(mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        NumberMatch(rel_tol=-1)


# -- issue 11 defect 6: presets and a named free-text selection rule ------------------------------


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("$3.2 million", 3.2, True),  # the paper's scale invariance: million
        ("7", 700_000_000, False),  # bounded: 10^8 is no unit scale
        ("3", 0.0003, False),  # bounded: 10^-4 is no unit scale
        ("12.5%", 0.125, True),  # percent ×100
        ("12.5", 12.5, True),
        ("The answer is 12.5", 12.5, False),  # the whole answer must be the number
    ],
)
def test_t2ragbench_preset(pred: str, gold: float, expected: bool) -> None:
    assert number_match(pred, gold, preset="t2ragbench") is expected
    assert NumberMatch(preset="t2ragbench").score(pred, str(gold)).score == float(expected)


def test_mudabench_preset_is_digit_wise_first_decimal() -> None:
    got = [number_match(p, g, preset="mudabench") for p, g in (("7.96", 7.9), ("12.38", 12.34), ("14.39", 14.4))]  # fmt: skip
    assert got == [True, True, False]
    assert "preset:mudabench|mode:first_decimal" in NumberMatch(preset="mudabench").signature


def test_free_text_selection_rule_is_named() -> None:
    for pred, gold in (
        ("The change is 12.5% (2018 to 2019)", 12.5),
        ("Revenue was 3.2 million in 2019", 3.2),
    ):
        assert number_match(pred, gold, select="salient", mode="unit_scales")
        assert not number_match(pred, gold, select="last", mode="unit_scales")
    m = NumberMatch(preset=None, select="salient", mode="unit_scales")
    assert "preset:none" in m.signature and "select:salient" in m.signature
    assert "preset:t2ragbench" in NumberMatch().signature  # the registry default


# -- issue 25 item 1: a scale is accepted only where it is written --------------------------------


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("$3.2 million", 3_200_000, 1.0),  # a scale word on the prediction: with its scale
        ("$3.2 million", "3,200,000", 1.0),
        ("$3.2 million", 3.2, 1.0),  # ... and without it
        ("5k", 5000, 1.0),  # a scale symbol on the prediction
        ("7%", 0.07, 1.0),  # a percent sign on the prediction
        ("0.07", "7%", 1.0),  # a percent sign on the gold
        ("7", 700, 0.0),  # bare: no scale written, none accepted
        ("5", 5000, 0.0),
        ("0.05", 5, 0.0),
        ("12.5", 0.125, 0.0),
    ],
)
def test_default_preset_accepts_only_written_scales(
    pred: str, gold: object, expected: float
) -> None:
    m = get_metric("number_match")  # the registry default
    assert m.score(pred, str(gold)).score == expected
    assert number_match(pred, gold, preset="t2ragbench") is bool(expected)  # type: ignore[arg-type]


def test_default_preset_signature_names_preset_and_relaxations() -> None:
    sig = get_metric("number_match").signature
    assert sig == (
        "number_match|preset:t2ragbench|mode:strict|rel_tol:0.01|abs_tol:0|sign:keep|"
        "select:whole|written_scales:pct_either+scale_pred|max_power:any|paren_neg:yes|"
        "fp_slack:1e-12|extract:3"
    )
    assert "written_scales:none" in NumberMatch(preset="t2ragbench", written_scales=False).signature
    assert "mode:unit_scales" in NumberMatch(mode="unit_scales").signature
    # without the relaxation, the written scales are not accepted either
    for pred, gold in (("$3.2 million", 3.2), ("7%", 0.07), ("0.07", "7%"), ("5k", 5)):
        assert not number_match(pred, gold, preset="t2ragbench", written_scales=False)


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("100.9", "100", 1.0),
        (" 12.5 ", "12.5", 1.0),  # float() strips whitespace
        ("1e3", "1000", 1.0),
        ("-5", "5", 0.0),  # the sign is kept
        ("$3.2 million", "3200000", 0.0),  # float() reads no currency or scale
        ("7%", "0.07", 0.0),
        ("1,234", "1234", 0.0),
        ("The answer is 5", "5", 0.0),
        ("0", "0", 0.0),  # ZeroDivisionError: incorrect
        ("5", "n/a", 0.0),  # a gold float() cannot read: incorrect, no error
        ("7", "700", 0.0),
    ],
)
def test_seed_preset_is_the_seed_recipe(pred: str, gold: str, expected: float) -> None:
    def score_nm(predictions: list[str], golds: list[str]) -> float:  # the seed card, verbatim
        correct = 0
        for p, g in zip(predictions, golds, strict=True):
            try:
                if abs(float(p) - float(g)) / abs(float(g)) <= 1e-2:
                    correct += 1
            except Exception:  # noqa: BLE001, S110
                pass
        return correct / len(golds)

    assert score_nm([pred], [gold]) == expected
    m = get_metric("number_match", preset="seed")
    assert m.score(pred, gold).score == expected
    assert number_match(pred, gold, preset="seed") is bool(expected)
    assert m.signature.startswith("number_match|preset:seed|parse:float(whole answer)|rel_tol:0.01")
    with pytest.raises(InputError, match="no option"):
        NumberMatch(preset="seed", mode="unit_scales")
