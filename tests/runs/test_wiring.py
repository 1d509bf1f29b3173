"""Wiring of the meta-eval run (issue 10): the backbone passed explicitly from the CLI boundary to
the scorer, metric families expanded once before the score cache, the public registry lookups,
and no program code that sets the process environment."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from metajudge.runs import meta_eval
from metajudge.scores import run_scores
from metajudge.scores.files import read_scores

FIXTURE = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
PACKAGE = Path(__file__).parents[1].parent / "metajudge"


def _ds() -> Any:
    from metajudge.data.loading import load

    return load(FIXTURE)


def _rows(ds: Any, metric: str, score: float = 0.5) -> list[dict[str, Any]]:
    """Rows as ``score_dataset`` writes them: with the inputs digest a cached row must match."""
    from metajudge.metrics.base import iter_responses
    from metajudge.metrics.registry import list_metrics, metric_class
    from metajudge.scores.scoring import inputs_digest

    known = metric in list_metrics()
    uses_input = bool(getattr(metric_class(metric), "uses_input", True)) if known else True
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
            "inputs": inputs_digest(r, uses_input),
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


def test_gather_run_scores_passes_backbone_to_the_scorer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from metajudge.scores import scoring

    ds, calls = _ds(), []

    def fake_score(dataset: Any, names: Any, **kw: Any) -> list[dict[str, Any]]:
        calls.append((list(names), kw["backbone"]))
        return [r for n in names for r in _rows(ds, n)]

    monkeypatch.setattr(scoring, "score_dataset", fake_score)
    run_scores.gather_run_scores(ds, out_dir=tmp_path, metrics=["geval"], backbone="b1")
    assert calls == [(["geval_faithfulness", "geval_completeness"], "b1")]


def test_family_expanded_before_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``--metrics geval`` is looked up in OUT/scores.jsonl as its members: a complete cache is
    reused without scoring; a partial one scores only the missing member; rows never repeat."""
    from metajudge.scores import scoring

    ds, calls = _ds(), []

    def fake_score(dataset: Any, names: Any, **kw: Any) -> list[dict[str, Any]]:
        calls.append(list(names))
        return [r for n in names for r in _rows(ds, n, 0.25)]

    monkeypatch.setattr(scoring, "score_dataset", fake_score)
    cache = tmp_path / run_scores.SCORES_CACHE
    scoring.write_scores(cache, _rows(ds, "bleu") + _rows(ds, "geval_faithfulness"))
    rows, to_score = run_scores.gather_run_scores(ds, out_dir=tmp_path, metrics=["geval"])
    assert to_score == ["geval_faithfulness", "geval_completeness"]
    assert calls == [["geval_completeness"]]
    cached = read_scores(cache)  # refuses a duplicated (key, metric)
    n = len(_rows(ds, "x"))
    assert len(cached) == 3 * n
    assert sorted({r["metric"] for r in cached}) == [
        "bleu",
        "geval_completeness",
        "geval_faithfulness",
    ]
    assert len(rows) == 2 * n
    for _ in range(2):  # reruns: served from the cache, nothing scored, nothing added
        rows, _ = run_scores.gather_run_scores(ds, out_dir=tmp_path, metrics=["geval", "bleu"])
        assert calls == [["geval_completeness"]] and len(rows) == 3 * n
        assert len(read_scores(cache)) == 3 * n


def test_unknown_metric_refused_before_scoring(tmp_path: Path) -> None:
    from metajudge.errors import InputError

    with pytest.raises(InputError, match="not registry metrics"):
        run_scores.gather_run_scores(_ds(), out_dir=tmp_path, metrics=["no_such_metric"])


def test_metric_class_is_public() -> None:
    from metajudge.metrics import registry

    assert registry.metric_class("bleu").direction == "higher"
    assert registry.metric_class("geval") is registry.metric_class("geval_faithfulness")
    assert meta_eval._directions(["bleu", "not_a_metric"]) == {"bleu": "higher"}
    for f in (meta_eval, __import__("metajudge.cli.metrics", fromlist=["x"])):
        src = Path(f.__file__).read_text(encoding="utf-8")
        assert "registry._entry" not in src and "_resolve(" not in src


def test_bootstrap_draw_checks_memory_before_allocating() -> None:
    """A whole resample matrix (stats.bootstrap_indices, bootstrap_weights) is size-checked first."""
    import numpy as np

    from metajudge import stats
    from metajudge.errors import InputError

    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match=r"--n-boot.*need .*TiB.*above the limit"):
        stats.bootstrap_weights(1_000_000, 1_000_000, rng)
    assert stats.bootstrap_weights(5, 3, rng).sum(axis=1).tolist() == [5.0, 5.0, 5.0]


@pytest.mark.parametrize(
    ("score", "message"),
    [('"0.5"', "non-numeric score '0.5'"), ("Infinity", "finite number or null, got inf")],
)
def test_one_score_row_rule_for_every_reader(tmp_path: Path, score: str, message: str) -> None:
    """``--scores`` files and OUT/scores.jsonl are checked by the same rule; NaN is a missing
    score in both."""
    from metajudge.errors import InputError

    f = tmp_path / "s.jsonl"
    row = '{"key": "news1::extractive", "item": "news1", "system": "extractive", '
    f.write_text(row + f'"metric": "m", "signature": "m|x", "score": {score}}}\n')
    for read in (lambda: read_scores(f), lambda: read_scores(f, _ds().records)):
        with pytest.raises(InputError, match=message) as e:
            read()
        assert (e.value.line, e.value.field) == (1, "score") and "s.jsonl" in str(e.value)
    f.write_text(row + '"metric": "m", "signature": "m|x", "score": NaN}\n')
    for rows in (read_scores(f), read_scores(f, _ds().records)):
        assert [(r["score"], r["error"]) for r in rows] == [(None, "missing in the score file")]
    f.write_text(row.replace('"news1::extractive"', "3") + '"metric": "m", "score": 1}\n')
    with pytest.raises(InputError, match="field key"):
        read_scores(f, _ds().records)
    f.write_text("")
    with pytest.raises(InputError, match="empty score file"):
        read_scores(f, _ds().records)


def test_report_names_the_missing_key(tmp_path: Path) -> None:
    from metajudge.analyses.metric_vs_human.result import SCHEMA, MetaEvalResult
    from metajudge.errors import InputError

    (tmp_path / "result.json").write_text(f'{{"schema": "{SCHEMA}", "dataset": {{}}}}')
    with pytest.raises(InputError, match="missing key 'protocol'") as e:
        MetaEvalResult.load(tmp_path / "result.json")
    assert e.value.field == "protocol"


def test_out_checked_before_work_and_nothing_created(tmp_path: Path) -> None:
    from metajudge.errors import InputError
    from metajudge.io import check_out_dir

    f = tmp_path / "a.jsonl"
    f.write_text("x")
    for bad in (f, f / "below", tmp_path / "a.jsonl"):
        with pytest.raises(InputError):
            check_out_dir(bad, inputs=[f])
    assert check_out_dir(tmp_path / "new" / "run") == tmp_path / "new" / "run"
    assert not (tmp_path / "new").exists()


def test_paired_diff_and_ci_share_one_resampling_rule() -> None:
    """bootstrap_ci and paired_bootstrap_diff draw rows through stats.bootstrap.resample: the
    same weights give the same rows, and weights of the wrong width are refused by both."""
    import numpy as np

    from metajudge.stats.bootstrap import bootstrap_ci, resample
    from metajudge.stats.significance import paired_bootstrap_diff

    groups = ["a", "a", "b", "c", "c", "d"]
    W = resample(groups, 6, n_resamples=50, rng=np.random.default_rng(1))
    assert W.shape == (50, 6) and (W[:, 0] == W[:, 1]).all() and (W[:, 3] == W[:, 4]).all()
    x, x2, y = [1.0, 2, 3, 4, 5, 7], [2.0, 1, 3, 5, 4, 6], [1.0, 3, 2, 4, 6, 5]
    bad = np.ones((10, 3))
    with pytest.raises(ValueError, match="columns for 4 items"):
        bootstrap_ci(x, y, groups=groups, rng=np.random.default_rng(0), weights=bad)
    with pytest.raises(ValueError, match="columns for 4 items"):
        paired_bootstrap_diff(x, x2, y, groups=groups, rng=np.random.default_rng(0), weights=bad)
