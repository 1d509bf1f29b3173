"""The one score-spec grammar (``--scores SPEC``) and its gatherer, old spellings included."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metajudge.cli import main
from metajudge.errors import InputError
from metajudge.scores.spec import (
    SHIPPED,
    ScoreSpec,
    from_external_list,
    gather_scores,
    parse_score_spec,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"


def _ds() -> Any:
    from metajudge.data.loading import load

    return load(FIXTURE)


def _wide(tmp_path: Path, name: str = "s.csv") -> Path:
    """A wide table over the fixture's responses: columns ``a``, ``b`` and ``m_coherence``."""
    lines = ["item,system,a,b:lower,m_coherence"]
    for i, r in enumerate(_ds().records):
        lines.append(f"{r.id},{r.system},{i},{-i},{i % 3}")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


# ---- the grammar


@pytest.mark.parametrize(
    ("text", "source", "columns", "label"),
    [
        ("runs/x/scores.jsonl", "runs/x/scores.jsonl", (), None),
        ("s.csv:bleu", "s.csv", ("bleu",), None),
        ("s.csv:bleu, rouge_l", "s.csv", ("bleu", "rouge_l"), None),
        ("mine=s.csv", "s.csv", (), "mine"),
        ("mine=dir/s.csv:bleu", "dir/s.csv", ("bleu",), "mine"),
        ("shipped", "shipped", (), None),
        ("shipped:gpt-4o,gpt-4o-mini", "shipped", ("gpt-4o", "gpt-4o-mini"), None),
        ("x=shipped:ragchecker", "shipped", ("ragchecker",), "x"),
        ("a/b=c.csv", "a/b=c.csv", (), None),  # '/' before '=': a path, not a label
    ],
)
def test_each_form_parses(text: str, source: str, columns: tuple, label: str | None) -> None:
    spec = parse_score_spec(text)
    assert (spec.source, spec.columns, spec.label, spec.text) == (source, columns, label, text)
    assert spec.shipped == (source == "shipped")


def test_an_existing_file_with_colon_or_equals_is_a_path(tmp_path: Path) -> None:
    f = tmp_path / "x=1:2.csv"
    f.write_text("item,system,a\n")
    spec = parse_score_spec(str(f))
    assert (spec.source, spec.columns, spec.label) == (str(f), (), None)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("s.csv:", "empty column name"),
        ("s.csv:a,,b", "empty column name"),
        (":bleu", "no path before"),
        ("=s.csv", "empty label"),
        ("x=", "nothing after"),
        ("x=s.csv:a,b", "names one column, got 2"),
        ("x=shipped", "needs one shipped column"),
        ("shipped:a,a", "named twice"),
    ],
)
def test_errors_name_the_spec(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why) as e:
        parse_score_spec(text)
    assert f"score spec {text.strip()!r}" in str(e.value) and e.value.field == "scores"


def test_cli_refuses_a_bad_spec_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["stats", "kendall", "--dataset", "x", "--dimension", "d", "--scores", "x=f.csv:a,b"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "argument --scores: score spec 'x=f.csv:a,b': LABEL= names one column" in err


# ---- the old spellings


def _parser(cmd: list[str]) -> argparse.Namespace:
    """The parsed arguments of a command line (nothing run)."""
    from metajudge.cli import build_parser

    return build_parser().parse_args(cmd)


def test_from_external_list_passes_parsed_specs() -> None:
    spec = parse_score_spec("shipped:a")
    assert from_external_list([spec, " b ", ""]) == [spec, parse_score_spec("shipped:b")]


def test_external_is_removed(capsys: pytest.CaptureFixture[str]) -> None:
    """``--external`` (removed in 0.3.0) is refused; ``--scores`` is the one spelling."""
    for cmd in (["meta-eval"], ["judge", "swap"], ["stats", "kendall"]):
        assert main([*cmd, "--help"]) == 0
        out = capsys.readouterr().out
        assert "--scores" in out and "--external" not in out, cmd
    with pytest.raises(SystemExit):
        _parser(["stats", "kendall", "--dataset", "x", "--dimension", "d", "--external"])


# ---- the gatherer


def test_gather_files_columns_and_labels(tmp_path: Path) -> None:
    ds, f = _ds(), _wide(tmp_path)
    n = len(ds.records)
    rows = gather_scores(ds, [str(f)])
    assert sorted({r["metric"] for r in rows}) == ["a", "b", "m_coherence"] and len(rows) == 3 * n
    assert {r["direction"] for r in rows if r["metric"] == "b"} == {"lower"}
    only = gather_scores(ds, [f"{f}:a,m"])  # 'm' is the family m_<dimension>
    assert sorted({r["metric"] for r in only}) == ["a", "m_coherence"]
    named = gather_scores(ds, [f"mine={f}:b", f"{f}:a"])
    assert [r["metric"] for r in named] == ["mine"] * n + ["a"] * n
    first_b = next(r for r in rows if r["metric"] == "b")
    assert named[0] == {**first_b, "metric": "mine"}


def test_gather_errors_name_the_spec(tmp_path: Path) -> None:
    ds, f = _ds(), _wide(tmp_path)
    with pytest.raises(
        InputError, match=r"has no score column 'zz' \(it has a, b, m_coherence\)"
    ) as e:
        gather_scores(ds, [f"{f}:zz"])
    assert f"score spec '{f}:zz'" in str(e.value)
    with pytest.raises(InputError, match="several score columns") as e:
        gather_scores(ds, [f"x={f}"])
    assert f"x={f}:COLUMN" in str(e.value)
    with pytest.raises(InputError, match="column 'a' is given twice"):
        gather_scores(ds, [f"{f}:a", str(f)])
    with pytest.raises(InputError, match="score spec 'nope.csv': score file 'nope.csv' not found"):
        gather_scores(ds, ["nope.csv"])
    bad = tmp_path / "bad.csv"
    bad.write_text(f"item,system,a\n{ds.records[0].id},{ds.records[0].system},abc\n")
    with pytest.raises(InputError, match="non-numeric score 'abc'") as e:
        gather_scores(ds, [str(bad)])
    assert (e.value.path, e.value.line, e.value.field) == (str(bad), 2, "a")
    assert f"score spec '{bad}'" in str(e.value)


def test_shipped_needs_a_card_that_ships() -> None:
    with pytest.raises(InputError, match="ships no per-response scores"):
        gather_scores(_ds(), ["shipped"])


def test_spec_objects_are_hashable_values() -> None:
    assert {parse_score_spec("shipped"), SHIPPED} == {SHIPPED}
    assert isinstance(SHIPPED, ScoreSpec) and str(SHIPPED) == "shipped"


# ---- real data: the old and new spellings give the same results


def _meta_eval(data_dir: Path, out: Path, scores: list[str]) -> dict[str, Any]:
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--data-dir", str(data_dir),
            "--metrics", "ragchecker", "--n-boot", "100", "--no-plots", "--paths-only", "--out", str(out)]  # fmt: skip
    assert main([*argv, *scores]) == 0
    res = json.loads((out / "result.json").read_text())
    res["run"].pop("seconds")
    res.pop("timing_s")
    return res


def test_meta_eval_external_equals_scores_shipped(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = _meta_eval(data_dir, tmp_path / "new", ["--scores", "shipped"])
    assert new["run"]["scores"] == ["shipped"]
    col = _meta_eval(data_dir, tmp_path / "col", ["--scores", "shipped:ragchecker"])
    col["run"]["scores"] = ["shipped"]
    assert col == new  # the family ragchecker_<dimension>: the same columns
    cell = next(
        c for c in new["cells"] if (c["metric"], c["dimension"]) == ("ragchecker", "overall")
    )
    assert (
        round(100 * cell["stats"]["pearson"]["value"], 2) == 61.93
    )  # the published RAGChecker value


def test_backbone_specs_old_and_new_read_the_same_columns(data_dir: Path) -> None:
    from metajudge.runs.backbone_swap import load_swap_data

    kw: dict[str, Any] = {"subset": "qtsumm", "limit": 30, "data_dir": data_dir}
    old, _, _ = load_swap_data(
        "lftqa_eval", "geval_faithfulness", external=["gpt-4o", "gpt-4o-mini"], **kw
    )
    new, _, _ = load_swap_data(
        "lftqa_eval", "geval_faithfulness", scores=["shipped:gpt-4o,gpt-4o-mini"], **kw
    )
    col, _, _ = load_swap_data(
        "lftqa_eval",
        "geval_faithfulness",
        scores=["gpt-4o=shipped:geval_gpt-4o_faithfulness", "shipped:gpt-4o-mini"],
        **kw,
    )
    assert old.backbones == new.backbones == col.backbones == ("gpt-4o", "gpt-4o-mini")
    assert old.signatures == new.signatures == col.signatures
    np.testing.assert_array_equal(old.scores, new.scores)
    np.testing.assert_array_equal(old.scores, col.scores)
    assert np.isfinite(new.scores).mean() > 0.9
