"""Table serialisation (MT-RAIG Appendix B.4), schemas, truncation, and the prompt files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metajudge.data.formats import Input, Table
from metajudge.metrics.judges.prompts import PROMPT_DIR, PROMPT_VARIANTS, load_prompt
from metajudge.metrics.judges.table_text import (
    parse_text_table,
    serialize_schemas,
    serialize_table,
    serialize_tables,
    tables_of,
)
from tests.conftest import Load

T1 = Table("Sales", ("Year", "Units"), (("2020", "10"), ("2021", "15"), ("2022", "9")))
T2 = Table("Stores", ("City", "Count"), (("Oslo", "3"),))


def test_appendix_b4_format() -> None:
    text, kept = serialize_table(T1)
    assert (
        text
        == "[TITLE] Sales [HEADER] Year | Units [ROW 1] 2020 | 10 [ROW 2] 2021 | 15 [ROW 3] 2022 | 9"
    )
    assert kept == 3


def test_cells_are_one_line() -> None:
    t = Table("A\nB", ("x\ty",), (("multi\nline",),))
    assert serialize_table(t)[0] == "[TITLE] A B [HEADER] x y [ROW 1] multi line"


def test_several_tables_numbered_and_schemas() -> None:
    s = serialize_tables([T1, T2])
    lines = s.text.splitlines()
    assert lines[0].startswith("Table 1: [TITLE] Sales") and lines[1].startswith(
        "Table 2: [TITLE] Stores"
    )
    assert (
        serialize_schemas([T1, T2])
        == "Table 1: [TITLE] Sales [HEADER] Year | Units\nTable 2: [TITLE] Stores [HEADER] City | Count"
    )
    assert "[ROW" not in serialize_schemas([T1, T2])


def test_row_limit_recorded() -> None:
    s = serialize_tables([T1, T2], max_rows=2)
    assert "[ROW 3]" not in s.text and s.rows_kept == (2, 1) and s.rows_total == (3, 1)
    assert s.truncation() == {"tables": 2, "rows_total": 4, "rows_kept": 3, "truncated": True}
    assert not serialize_tables([T1]).truncated


def test_char_budget_lowers_rows_until_it_fits() -> None:
    big = Table("Big", ("n", "sq"), tuple((str(i), str(i * i)) for i in range(200)))
    s = serialize_tables([big], max_rows=200, max_chars=500)
    assert len(s.text) <= 500 and 1 <= s.rows_kept[0] < 200 and s.truncated


def test_parse_text_table_and_tables_of() -> None:
    t = parse_text_table("Table Title: Records\nTable:\nRace | Time\n50 m | 26.76\n")
    assert t == Table("Records", ("Race", "Time"), (("50 m", "26.76"),))
    assert parse_text_table("no table here") is None
    assert tables_of(Input("q", context="Table Title: R\nTable:\na | b\n1 | 2")) == (
        Table("R", ("a", "b"), (("1", "2"),)),
    )
    assert tables_of(Input("q", tables=(T1,))) == (T1,)
    assert tables_of(Input("q")) is None


def test_real_lftqa_table_serialises(load: Load) -> None:
    ds = load("lftqa_mitigation_pradhumant")
    tabs = tables_of(ds.records[0].input)
    assert tabs
    text = serialize_tables(tabs).text
    assert text.startswith("[TITLE] ") and "[HEADER] " in text and "[ROW 1] " in text


# -- prompt files -------------------------------------------------------------------------------

PAPER = {  # task -> (first line of the paper's table text, its table number)
    "mtraig_claims": ("MT-RAIG Eval - Faithfulness : Table-aware insight decomposition", 15),
    "mtraig_verify": ("MT-RAIG Eval - Faithfulness : Claim verification", 15),
    "mtraig_topics": ("MT-RAIG Eval - Completeness : Question-aware insight decomposition", 16),
    "mtraig_match": ("MT-RAIG Eval - Completeness : Topic matching", 16),
    "geval_faithfulness": ("G-Eval : Faithfulness", 18),
    "geval_completeness": ("G-Eval : Completeness", 18),
}


def _seed() -> str:
    for d in (Path(__file__).resolve().parents[4] / "shared" / "seeds",):
        hits = sorted(d.glob("002_*.txt")) if d.is_dir() else []
        if hits:
            return hits[0].read_text(encoding="utf-8")
    pytest.skip(reason="seed paper text (../shared/seeds/002_*.txt) not present")


@pytest.mark.parametrize("task", sorted(PAPER))
def test_paper_prompts_are_verbatim(task: str) -> None:
    seed = _seed()
    head, _ = PAPER[task]
    start = seed.index(head + "\n") + len(head) + 1
    body = load_prompt(task, "paper").text
    norm = lambda s: re.sub(r"\s+", " ", s).strip()
    assert norm(seed[start : start + len(body) + 200]).startswith(norm(body))


def test_every_task_has_both_variants_and_renders() -> None:
    tasks = {
        p.name.split(".")[0] for p in PROMPT_DIR.glob("*.txt") if not p.name.startswith("pairwise")
    }
    assert {
        "geval_faithfulness",
        "mtraig_claims",
        "mtraig_verify_batched",
        "equivalence",
        "fact_coverage",
    } <= tasks
    for task in tasks:
        for v in PROMPT_VARIANTS:
            tpl = load_prompt(task, v)
            assert len(tpl.sha256) == 64 and tpl.placeholders()
            out = tpl.render(**{k: "{VALUE}" for k in tpl.placeholders()})
            assert "{VALUE}" in out and not any("{" + k + "}" in out for k in tpl.placeholders())


def test_render_requires_every_placeholder() -> None:
    with pytest.raises(KeyError):
        load_prompt("mtraig_verify", "paper").render(serialized_tables="t")
