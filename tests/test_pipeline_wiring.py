"""Wiring of the meta-eval run (issue 10): the backbone passed explicitly from the CLI boundary to
the scorer, metric families expanded once before the score cache, the public registry lookups,
and no program code that sets the process environment."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from metajudge.pipeline import meta_eval

FIXTURE = Path(__file__).parent / "fixtures" / "byod" / "graded.jsonl"
PACKAGE = Path(__file__).parent.parent / "metajudge"


def _ds() -> Any:
    return meta_eval.load_input(input_file=FIXTURE)


def _rows(ds: Any, metric: str, score: float = 0.5) -> list[dict[str, Any]]:
    from metajudge.metrics.base import iter_responses

    return [
        {
            "key": r.key,
            "item": r.item,
            "system": r.system,
            "side": r.side,
            "metric": metric,
            "score": score,
            "signature": f"{metric}|v1",
            "details": {},
            "error": None,
        }
        for r in iter_responses(ds.records)
    ]


def test_no_program_code_sets_the_environment() -> None:
    setter = re.compile(r"os\.environ\[[^]]+\]\s*=|environ\.(setdefault|update|pop)\(|putenv\(")
    hits = [
        f"{p.relative_to(PACKAGE)}:{i}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if setter.search(line)
    ]
    assert hits == []


def test_judge_engine_has_no_compatibility_shim() -> None:
    from metajudge.metrics.judges import engine

    for gone in ("set_default_backbone", "default_backbone", "CallStats", "_LEGACY_ENV"):
        assert not hasattr(engine, gone), gone
    assert engine.resolve_backbone(None) == engine.DEFAULT_BACKBONE
    assert engine.resolve_backbone("x") == "x"


class _Stop(Exception):
    pass


def test_cli_passes_the_backbone_explicitly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--backbone`` (else ``$METAJUDGE_BACKBONE``) reaches run_meta_eval as an argument."""
    from metajudge.cli import main

    seen: list[Any] = []

    def fake_run(*a: Any, **kw: Any) -> Any:
        seen.append(kw["backbone"])
        raise _Stop

    monkeypatch.setattr(meta_eval, "run_meta_eval", fake_run)
    argv = ["meta-eval", "--input", str(FIXTURE), "--metrics", "bleu", "--out", str(tmp_path / "o")]
    monkeypatch.setenv("METAJUDGE_BACKBONE", "from-env")
    with pytest.raises(_Stop):
        main(argv)
    with pytest.raises(_Stop):
        main([*argv, "--backbone", "given"])
    assert seen == ["from-env", "given"]


def test_gather_scores_passes_backbone_to_the_scorer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from metajudge.metrics import scoring

    ds, calls = _ds(), []

    def fake_score(dataset: Any, names: Any, **kw: Any) -> list[dict[str, Any]]:
        calls.append((list(names), kw["backbone"]))
        return [r for n in names for r in _rows(ds, n)]

    monkeypatch.setattr(scoring, "score_dataset", fake_score)
    meta_eval.gather_scores(ds, out_dir=tmp_path, metrics=["geval"], backbone="b1")
    assert calls == [(["geval_faithfulness", "geval_completeness"], "b1")]


def test_family_expanded_before_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``--metrics geval`` is looked up in OUT/scores.jsonl as its members: a complete cache is
    reused without scoring; a partial one scores only the missing member; rows never repeat."""
    from metajudge.metrics import scoring

    ds, calls = _ds(), []

    def fake_score(dataset: Any, names: Any, **kw: Any) -> list[dict[str, Any]]:
        calls.append(list(names))
        return [r for n in names for r in _rows(ds, n, 0.25)]

    monkeypatch.setattr(scoring, "score_dataset", fake_score)
    cache = tmp_path / meta_eval.SCORES_CACHE
    scoring.write_scores(cache, _rows(ds, "bleu") + _rows(ds, "geval_faithfulness"))
    rows, to_score = meta_eval.gather_scores(ds, out_dir=tmp_path, metrics=["geval"])
    assert to_score == ["geval_faithfulness", "geval_completeness"]
    assert calls == [["geval_completeness"]]
    cached = scoring.read_scores(cache)  # refuses a duplicated (key, metric)
    n = len(_rows(ds, "x"))
    assert len(cached) == 3 * n
    assert sorted({r["metric"] for r in cached}) == [
        "bleu",
        "geval_completeness",
        "geval_faithfulness",
    ]
    assert len(rows) == 2 * n
    for _ in range(2):  # reruns: served from the cache, nothing scored, nothing added
        rows, _ = meta_eval.gather_scores(ds, out_dir=tmp_path, metrics=["geval", "bleu"])
        assert calls == [["geval_completeness"]] and len(rows) == 3 * n
        assert len(scoring.read_scores(cache)) == 3 * n


def test_unknown_metric_refused_before_scoring(tmp_path: Path) -> None:
    from metajudge.errors import InputError

    with pytest.raises(InputError, match="not registry metrics"):
        meta_eval.gather_scores(_ds(), out_dir=tmp_path, metrics=["no_such_metric"])


def test_metric_class_is_public() -> None:
    from metajudge.metrics import registry

    assert registry.metric_class("bleu").direction == "higher"
    assert registry.metric_class("geval") is registry.metric_class("geval_faithfulness")
    assert meta_eval._directions(["bleu", "not_a_metric"]) == {"bleu": "higher"}
    for f in (meta_eval, __import__("metajudge.metrics.cli", fromlist=["x"])):
        src = Path(f.__file__).read_text(encoding="utf-8")
        assert "registry._entry" not in src and "_resolve(" not in src
