"""One encoding per idea (issue 37): every public name is defined in one module; a pairwise
decision has one encoding, :class:`~metajudge.stats.decisions.Pref`, whose file spellings are one
table (:data:`~metajudge.stats.decisions.SPELLINGS`); and every verdict reader yields the same
``Pref`` for the same decisions (``tests/fixtures/pairwise_decision_corpus.jsonl``)."""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import metajudge
from metajudge.stats.decisions import SPELLINGS, Pref, spell, to_pref

PKG = Path(metajudge.__file__).parent
CORPUS = Path(__file__).parent / "fixtures" / "pairwise_decision_corpus.jsonl"
DECISIONS = {"p1": Pref.A, "p2": Pref.B, "p3": Pref.TIE, "p4": Pref.TIE, "p5": None, "p6": None}

#: names one module each may define by protocol, not by meaning: every CLI command module's
#: ``register(subparsers)`` (tests/cli/test_parser.py) and a runnable module's ``main()``
#: the score-file readers' protocol (``scores/readers/*.py``: ``sniff``, ``read``, ``READER``,
#: ``VERSIONS``), one module per format or family (issues 39, 61)
R = "scores/readers/"
PROTOCOL_NAMES = {"register": "cli/", "main": "", "sniff": R, "read": R}
PROTOCOL_CONSTANTS = {"READER": R, "VERSIONS": R}
#: the decision words of the pairwise file formats (lower case)
DECISION_WORDS = {w.lower() for table in SPELLINGS.values() for w in table.values()} - {
    "0",
    "1",
    "2",
}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(PKG)), ast.parse(p.read_text())) for p in sorted(PKG.rglob("*.py"))]


def _top_names(node: ast.stmt, constants: bool) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [] if constants else [node.name]
    if not constants:
        return []
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def public_definitions(*, constants: bool = False) -> dict[str, list[str]]:
    """``{name: [modules]}`` of the public top-level functions and classes (``constants``: of
    the public top-level assignments: constants and type aliases)."""
    where: dict[str, list[str]] = defaultdict(list)
    for rel, tree in _modules():
        for node in tree.body:
            for name in _top_names(node, constants):
                if not name.startswith("_") and rel not in where[name]:
                    where[name].append(rel)
    return where


#: constants still defined twice, each in another slice's files (issue 37): fold them there.
#: CORRELATIONS: stats/correlation and stats/intervals (the stats slice); FArr / IArr: the one
#: float / int array alias (stats/ among them); LEVELS: cli/stats keeps its own copy of the
#: ``--level`` choices so that ``--help`` does not import the analyses (the grammar slice).
KNOWN_CONSTANT_TWINS = {"CORRELATIONS", "FArr", "IArr", "LEVELS"}


def test_each_public_constant_is_defined_in_one_module() -> None:
    twice = {
        name: mods
        for name, mods in public_definitions(constants=True).items()
        if len(mods) > 1
        and name != "log"  # log = logging.getLogger(__name__): per module
        and not all(m.startswith(PROTOCOL_CONSTANTS.get(name, "\0")) for m in mods)
    }
    assert set(twice) <= KNOWN_CONSTANT_TWINS, {
        n: m for n, m in twice.items() if n not in KNOWN_CONSTANT_TWINS
    }


def test_each_public_name_is_defined_in_one_module() -> None:
    twice = {}
    for name, mods in public_definitions().items():
        if name in PROTOCOL_NAMES:
            prefix = PROTOCOL_NAMES[name]
            mods = [m for m in mods if not m.startswith(prefix)] if prefix else []
        if len(mods) > 1:
            twice[name] = mods
    assert not twice, f"public names defined in several modules: {twice}"


def test_the_scan_finds_a_second_definition(tmp_path: Path) -> None:
    """The scan itself: a name defined in two modules is seen."""
    trees = [ast.parse("def both_orders(): ...\nclass Side: ...\n")] * 2
    seen = defaultdict(list)
    for k, tree in enumerate(trees):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                seen[node.name].append(k)
    assert seen == {"both_orders": [0, 1], "Side": [0, 1]}
    assert {"gather_scores", "reliability_bins", "both_orders"}.isdisjoint(
        n for n, m in public_definitions().items() if len(m) > 1
    )


def _decision_mappings(tree: ast.AST) -> list[int]:
    """Lines of dict literals, ``Literal[...]`` types and tuples / sets that spell two or more
    pairwise decisions (``"A>B"``, ``"a"`` / ``"tie"``, …): a decision encoding of its own."""
    out = []
    for node in ast.walk(tree):
        consts: list[ast.AST] = []
        if isinstance(node, ast.Dict):
            consts = [*(k for k in node.keys if k is not None), *node.values]
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal":
            consts = list(ast.walk(node.slice))
        elif isinstance(node, ast.Tuple | ast.Set | ast.List):
            consts = list(node.elts)
        words = {
            c.value.strip().lower()
            for c in consts
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        }
        hit = words & DECISION_WORDS
        if len(hit) >= 2 and hit & {"tie", "a>b", "b>a", "a=b"}:
            out.append(node.lineno)
    return out


#: human-label converters in ``data/`` sit below ``stats/`` (they cannot import Pref); their
#: label tables must agree with SPELLINGS (test_human_label_tables_agree_with_the_spellings)
HUMAN_LABEL_TABLES = {"data/convert_pairwise.py"}


def test_one_decision_spelling_table() -> None:
    found = {
        rel: lines
        for rel, tree in _modules()
        if rel != "stats/decisions.py" and rel not in HUMAN_LABEL_TABLES
        for lines in [_decision_mappings(tree)]
        if lines
    }
    assert not found, (
        f"a second pairwise decision encoding (use stats.decisions.SPELLINGS): {found}"
    )
    second = ast.parse('Side = Literal["a", "b", "tie"]\n_FLIP = {"A>B": "B>A", "A=B": "A=B"}\n')
    assert sorted(set(_decision_mappings(second))) == [1, 2]  # the scan sees the old spellings


def test_human_label_tables_agree_with_the_spellings() -> None:
    from metajudge.data import convert_pairwise as cp

    assert {k: to_pref(k, "released") for k in cp._JUDGEBENCH} == {
        k: Pref(int(v)) for k, v in cp._JUDGEBENCH.items()
    }
    assert {k: to_pref(str(k), "pandalm") for k in cp._PANDALM} == {
        k: Pref(int(v)) for k, v in cp._PANDALM.items()
    }


# --- every verdict reader, the same decisions ------------------------------------------------


def _corpus() -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in CORPUS.read_text().splitlines() if ln.strip()]


def _check(got: dict[str, Any], reader: str) -> None:
    assert got == DECISIONS, reader
    assert all(v is None or type(v) is Pref for v in got.values()), reader


def test_corpus_is_the_pref_of_each_row() -> None:
    assert {r["id"]: to_pref(r["pref"]) for r in _corpus()} == DECISIONS


def test_released_verdict_table_and_judgebench_outputs_read_pref(tmp_path: Path) -> None:
    from metajudge.scores.released_verdicts import read_verdicts

    rows = _corpus()
    table = tmp_path / "table.jsonl"
    table.write_text(
        "".join(json.dumps({"pair_id": r["id"], "decision": r["released"]}) + "\n" for r in rows)
    )
    _check({r.pair_id: r.orders[0] for r in read_verdicts(table).rows}, "verdict table")
    jb = tmp_path / "judgebench.jsonl"
    lines = []
    for r in rows:
        p = to_pref(r["released"], "released")
        swapped = spell(None if p is None else p.flip(), "released")  # as the judge saw it
        js = [{"decision": r["released"]}, {"decision": swapped}]
        lines.append({"pair_id": r["id"], "source": "s", "label": "A>B", "judgments": js})
    jb.write_text("".join(json.dumps(d) + "\n" for d in lines))
    got = read_verdicts(jb)
    _check({r.pair_id: r.orders[0] for r in got.rows}, "judgebench, order 1")
    _check({r.pair_id: r.orders[1] for r in got.rows}, "judgebench, order 2 flipped back")
    written = got.to_dict()["rows"]  # what a user reads keeps the file spelling
    assert [w["orders"][0] for w in written] == [
        spell(to_pref(r["released"], "released"), "released") for r in rows
    ]


def test_dataset_verdicts_read_pref(monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge.scores import dataset_verdicts as dv

    rows = _corpus()

    def fake_json(name: str, rel: str, data_dir: Any) -> tuple[Path, Any]:
        key = "gpt_result" if rel.startswith("gpt") else "pandalm_result"
        return Path(rel), [{"idx": r["id"], key: r["pandalm"]} for r in rows]

    monkeypatch.setattr(dv, "_json", fake_json)
    for judge, table in dv.load_external_verdicts("pandalm_testset").items():
        _check(table, f"pandalm {judge}")


def test_pairwise_judge_reads_pref_in_both_orders() -> None:
    from metajudge.data.formats import Input, PairwiseRecord, Response
    from metajudge.metrics.judges.pairwise import PairwiseJudge, parse_pairwise
    from tests.analyses.test_swap_pairwise import _ScriptedBackend

    rows = _corpus()
    recs = [
        PairwiseRecord(r["id"], Input("q"), Response("x", "a"), Response("y", "b"), {})
        for r in rows
    ]
    for order in ("ab", "ba"):
        replies = [r[f"reply_{order}"] for r in rows]
        j = PairwiseJudge(backbone="s", backend=_ScriptedBackend(replies), constrained=False)
        verdicts = j.judge(recs, order=order)  # type: ignore[arg-type]
        _check({v.id: v.preferred for v in verdicts}, f"pairwise judge, order {order}")
        positional = {r["id"]: parse_pairwise(r[f"reply_{order}"]) for r in rows}
        assert {v.id: v.decision for v in verdicts} == positional
        assert j.summary["parse_failures"] == 2


def test_arena_hard_parser_reads_pref() -> None:
    from metajudge.metrics.judges.parsers.ratings import parse_arena_hard

    _check({r["id"]: parse_arena_hard(r["arena_hard"]) for r in _corpus()}, "arena-hard")
