"""External pairwise verdicts: JudgeBench's released outputs reproduce its published accuracies;
protocols, position consistency, P(first wins), McNemar, the Arena-Hard parser, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scipy import stats

from metajudge.analyses.arena_hard_check import check_against_released
from metajudge.analyses.verdict_accuracy import (
    evaluate_verdicts,
    first_wins,
    mcnemar,
    order_pairs,
    pair_correct,
)
from metajudge.cli import main
from metajudge.errors import InputError
from metajudge.metrics.judges.parsers.ratings import parse_arena_hard
from metajudge.reports.verdict_tables import published_judgebench
from metajudge.scores.released_verdicts import PairVerdicts, read_verdict_table, read_verdicts
from metajudge.stats.decisions import CONSISTENCY_RULE, Pref, position_consistency, to_pref

A, B, T = Pref.A, Pref.B, Pref.TIE

OUTPUTS = Path(os.environ.get("METAJUDGE_DATA_DIR", "/nonexistent")) / "judgebench" / "outputs"
FILES = sorted(OUTPUTS.glob("*.jsonl")) if OUTPUTS.is_dir() else []
needs_data = pytest.mark.skipif(not FILES, reason="JudgeBench outputs not in METAJUDGE_DATA_DIR")


@pytest.fixture(scope="module")
def judges():  # type: ignore[no-untyped-def]
    return [read_verdicts(f) for f in FILES]


@needs_data
def test_published_accuracies_to_two_decimals(judges) -> None:  # type: ignore[no-untyped-def]
    pub = published_judgebench()
    assert len(pub) == 5 and len(judges) == 5
    res = evaluate_verdicts(judges, "double_game", n_boot=50)
    for rep in res.judges:
        got = {a.category: round(100 * a.accuracy, 2) for a in rep.accuracies}
        assert got == pub[rep.judge], rep.judge
        assert all(a.ci_low <= a.accuracy <= a.ci_high for a in rep.accuracies)
    assert len(res.tests) == 10 and all(t.n == 350 for t in res.tests)


@needs_data
def test_arena_hard_parser_agrees_with_released_decisions() -> None:
    f = next(f for f in FILES if "arena_hard" in f.name)
    rows = []
    for line in f.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        js = d["judgments"]
        rows.append(
            (d["pair_id"], [j["judgment"]["response"] for j in js], [j["decision"] for j in js])
        )
    check = check_against_released(rows)
    assert check.replies == 700 and check.agree == 700 and check.differences == ()


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("verdict: [[A>>B]]", "A>B"),
        ("[[A>B]]", "A>B"),
        ("[[A=B]]", "A=B"),
        ("[[B>A]]", "B>A"),
        ("[[B>>A]]", "B>A"),
        ("[[A>B]] and later [[B>A]]", None),
        ("[[A>B]] then again [[A>B]]", "A>B"),
        ("A>B", None),
        ("", None),
        ("[[C]]", None),
    ],
)
def test_parse_arena_hard(text: str, want: str | None) -> None:
    assert parse_arena_hard(text) == to_pref(want)


def test_protocols_consistency_first_wins() -> None:
    rows = [
        PairVerdicts("1", "math", A, (A, A)),  # right both orders
        PairVerdicts("2", "math", A, (A, B)),  # position flip: sum 0
        PairVerdicts("3", "math", B, (T, B)),  # tie + right: sum 1
        PairVerdicts("4", "math", B, (None, None)),  # unparsed: wrong, not dropped
        PairVerdicts("5", "math", B, (B,)),  # one order only
    ]
    dg = [pair_correct(r, "double_game") for r in rows]
    assert dg == [True, False, True, False, True]
    assert [pair_correct(r, "single") for r in rows] == [True, True, False, False, True]
    assert [pair_correct(r, "both_agree") for r in rows] == [True, False, False, False, False]
    assert position_consistency(*order_pairs(rows)) == (0.25, 4, 1)  # unparsed: inconsistent
    # decisive: 1 (first wins, loses), 2 (wins, wins), 3 (-, wins), 5 (loses) -> 4 of 6
    rate, n = first_wins(rows)
    assert n == 6 and rate == pytest.approx(4 / 6)


def test_the_consistency_rule_is_stated_and_unparsed_pairs_counted() -> None:
    from metajudge.reports.verdict_tables import accuracy_table
    from metajudge.scores.released_verdicts import JudgeVerdicts

    rows = (PairVerdicts("1", "math", A, (A, A)), PairVerdicts("2", "math", A, (A, None)))
    res = evaluate_verdicts([JudgeVerdicts("j", "-", rows)], "double_game", n_boot=20)
    rep = res.judges[0]
    assert (rep.position_consistency, rep.pairs_both_orders, rep.consistency_unparsed) == (
        0.5,
        2,
        1,
    )
    assert any(CONSISTENCY_RULE in n for n in res.notes)
    assert accuracy_table(res)[1][-2] == "50.0% of 2 (1 unparsed)"


def test_mcnemar_exact_and_chi2() -> None:
    a = [True] * 10 + [False] * 2 + [True] * 5
    b = [False] * 10 + [True] * 2 + [True] * 5
    nb, nc, p, method = mcnemar(a, b)
    assert (nb, nc) == (10, 2) and method == "exact binomial"
    assert p == pytest.approx(stats.binomtest(10, 12, 0.5).pvalue)
    a = [True] * 30 + [False] * 10
    b = [False] * 30 + [True] * 10
    nb, nc, p, method = mcnemar(a, b)
    assert method.startswith("chi2") and p == pytest.approx(stats.chi2.sf((20 - 1) ** 2 / 40, 1))


def test_bootstrap_is_seeded() -> None:
    rows = tuple(PairVerdicts(str(i), "math", A, (A if i % 3 else B,)) for i in range(60))
    from metajudge.scores.released_verdicts import JudgeVerdicts

    v = JudgeVerdicts("j", "-", rows)
    a = evaluate_verdicts([v], "single", seed=3, n_boot=200).judges[0].accuracies[-1]
    b = evaluate_verdicts([v], "single", seed=3, n_boot=200).judges[0].accuracies[-1]
    assert a == b and a.ci_low < a.accuracy < a.ci_high


def test_generic_table_csv_and_jsonl(tmp_path: Path) -> None:
    csv_p = tmp_path / "v.csv"
    csv_p.write_text(
        "pair_id,order,decision,label,category,judge\n"
        "p1,1,A>B,A>B,mmlu-pro-law,mine\n"
        "p1,2,A>B,A>B,mmlu-pro-law,mine\n"  # swapped order: A>B as shown = B>A originally
        "p2,1,,B>A,livecodebench,mine\n"
        "p3,1,tie,B>A,livecodebench,mine\n"
        "p3,2,none,B>A,livecodebench,mine\n"
    )
    v = read_verdict_table(csv_p)
    assert v.judge == "mine"
    r1, r2, r3 = v.rows
    assert r3.orders == (T, None)
    assert r1.orders == (A, B) and r1.category == "knowledge"
    assert r2.orders == (None,) and r2.category == "coding"
    js = tmp_path / "v.jsonl"
    js.write_text(
        "\n".join(
            json.dumps(d)
            for d in [
                {"pair_id": "p1", "order": "original", "decision": "A>B", "label": "A>B"},
                {"pair_id": "p1", "order": "swapped", "decision": "B>A", "label": "A>B"},
            ]
        )
        + "\n"
    )
    assert read_verdicts(js).rows[0].orders == (A, A)


def test_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "o.jsonl"
    bad.write_text(
        json.dumps(
            {"pair_id": "x", "source": "s", "label": "A>B", "judgments": "[{'decision': 'A>B'"}
        )
        + "\n"
    )
    with pytest.raises(InputError, match="malformed judgments") as e:
        read_verdicts(bad)
    assert e.value.line == 1 and e.value.field == "judgments"
    bad.write_text(
        json.dumps(
            {"pair_id": "x", "source": "s", "label": "A>B", "judgments": [{"decision": "A>>B"}]}
        )
        + "\n"
    )
    with pytest.raises(InputError, match="not one of") as e:
        read_verdicts(bad)
    assert e.value.field == "judgments[0].decision"
    t = tmp_path / "t.csv"
    t.write_text("pair_id,order,decision\np,3,A>B\n")
    with pytest.raises(InputError, match="order") as e:
        read_verdicts(t)
    assert e.value.line == 2


@needs_data
def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    args = ["judge", "verdicts", "--n-boot", "50", "-o", str(out)]
    for f in FILES[:2]:
        args += ["--verdicts", str(f)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "(published 65.71)" in text and "McNemar" in text
    d = json.loads(out.read_text())
    assert d["protocol"] == "double_game" and len(d["judges"]) == 2
    assert (
        main(
            [
                "judge",
                "verdicts",
                "--order-rule",
                "both_agree",
                "--verdicts",
                str(FILES[0]),
                "--format",
                "csv",
                "--n-boot",
                "20",
            ]
        )
        == 0
    )
    assert "both_agree" in capsys.readouterr().out


TIES = 8  # decisions (pair x order) with equal rewards across the four reward models


@needs_data
def test_reward_model_scores_match_decisions(judges) -> None:  # type: ignore[no-untyped-def]
    """Each reward-model decision is the order of its two scalar rewards (as presented); equal
    rewards were released as B>A (upstream's ``A>B if a > b else B>A``)."""
    ties = 0
    for v in judges:
        for r in v.rows:
            for k, (sa, sb) in enumerate(r.scores):
                shown = A if sa > sb else B
                ties += sa == sb
                assert (shown if k == 0 else shown.flip()) == r.orders[k], (v.judge, r.pair_id)
    assert sum(bool(r.scores) for v in judges for r in v.rows) == 4 * 350
    assert ties == TIES
