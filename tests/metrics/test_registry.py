"""Properties over the whole non-LLM metric registry: range, identity maximum, order invariance,
bad input; plus the registry API itself."""

from __future__ import annotations

import pytest

from metajudge.errors import InputError, MissingResourceError
from metajudge.metrics.base import Metric, ScoreItem
from metajudge.metrics.registry import get_metric, list_metrics, metric_info, register

LEXICAL = ["bleu", "rouge_l", "rouge_1", "rouge_2", "meteor", "number_match"]
NON_LLM = [*LEXICAL, "bertscore"]

PAIRS = [
    ("The company reported revenue of $4.2 billion in 2021, up 12% year over year.",
     "Revenue was $4.2 billion in fiscal 2021, a 12% increase."),
    ("Paris is the capital of France.", "The capital of France is Paris."),
    ("I do not know.", "The answer is 42."),
    ("Dogs are loyal animals that live with humans.", "Cats are independent pets."),
    ("42", "42"),
    ("", "A non-empty reference about 7 things."),
    ("Numbers: 1, 2, 3 and (4).", "The total is 10."),
]  # fmt: skip


def _metric(name: str) -> Metric:
    try:
        return get_metric(name)
    except MissingResourceError as e:
        pytest.skip(reason=f"{name}: {e}")


def _params() -> list:
    return [pytest.param(n, marks=pytest.mark.slow) if n == "bertscore" else n for n in NON_LLM]


def test_every_non_llm_metric_is_covered_here() -> None:
    """A new non-LLM metric must join these property tests."""
    from metajudge.metrics import registry

    names = list_metrics()
    for n in NON_LLM:
        assert n in names
    ours = {
        n
        for n, e in registry._REGISTRY.items()
        if e.target.startswith("metajudge.metrics.")
        and not e.target.startswith("metajudge.metrics.judges")
    }
    assert ours == set(NON_LLM)


@pytest.mark.parametrize("name", _params())
def test_scores_in_range_and_keys_kept(name: str) -> None:
    m = _metric(name)
    items = [ScoreItem(f"k{i}", h, r) for i, (h, r) in enumerate(PAIRS)]
    res = m.score_batch(items)
    assert [r.key for r in res] == [it.key for it in items]
    lo, hi = m.range
    # BERTScore is computed in float32 (torch): a text against itself is 1 to a few float32 ulps
    # (1.0000002 on an AVX-512 machine); every other metric here in float64
    tol = 1e-6 if name == "bertscore" else 1e-9
    for r in res:
        if r.score is None:
            assert r.error  # never a silent None
            continue
        assert lo - tol <= r.score <= hi + tol, (name, r)


@pytest.mark.parametrize("name", [n for n in _params() if n != "number_match"])
def test_identical_response_and_reference_give_the_maximum(name: str) -> None:
    m = _metric(name)
    texts = [h for h, _ in PAIRS if h] + [r for _, r in PAIRS]
    items = [
        ScoreItem(f"{j}|{i}", t, ref) for j, ref in enumerate(texts) for i, t in enumerate(texts)
    ]
    scores = {
        r.key: r.score for r in m.score_batch(items)
    }  # one batch: a model encodes each text once
    for j, ref in enumerate(texts):
        same = max(scores[f"{j}|{i}"] for i, t in enumerate(texts) if t == ref)
        best = max(v for k, v in scores.items() if k.startswith(f"{j}|") and v is not None)
        assert same is not None and same >= best - 1e-6, (name, ref)
        if name == "bleu":
            assert same == pytest.approx(100.0)
        elif name in ("rouge_l", "bertscore"):
            assert same == pytest.approx(1.0, abs=1e-5)


def test_number_match_identity() -> None:
    m = get_metric("number_match")
    for t in ("42", "$1,234.5", "(7)", "12.5%", "3 million"):
        assert m.score(t, t).score == 1.0


@pytest.mark.parametrize("name", _params())
def test_item_order_does_not_change_scores(name: str) -> None:
    import numpy as np

    m = _metric(name)
    items = [ScoreItem(f"k{i}", h, r) for i, (h, r) in enumerate(PAIRS)]
    base = {r.key: r.score for r in m.score_batch(items)}
    rng = np.random.default_rng(7)
    for _ in range(2):
        perm = [items[i] for i in rng.permutation(len(items))]
        got = {r.key: r.score for r in m.score_batch(perm)}
        for k, v in base.items():
            if v is None:
                assert got[k] is None
            else:
                assert got[k] == pytest.approx(v, abs=1e-6), (name, k)


@pytest.mark.parametrize("name", _params())
def test_bad_input_never_crashes_inside_a_dependency(name: str) -> None:
    m = _metric(name)
    res = m.score_batch([ScoreItem("none", None, "ref"), ScoreItem("noref", "resp", None)])
    assert [r.score for r in res] == [None, None] and all(r.error for r in res)
    for bad in (3.5, ["a"], b"bytes"):
        with pytest.raises(InputError):
            m.score_batch([ScoreItem("bad", bad, "ref")])  # type: ignore[arg-type]
    assert m.score_batch([]) == []


def test_registry_api() -> None:
    assert {"bleu", "rouge_l", "meteor", "bertscore", "number_match"} <= set(list_metrics())
    info = metric_info("rouge_l")
    assert (
        info["name"] == "rouge_l" and info["direction"] == "higher" and info["range"] == [0.0, 1.0]
    )
    assert info["signature"].startswith("rouge_l|")
    assert "stem:no" in get_metric("rouge_l", use_stemmer=False).signature
    with pytest.raises(InputError, match="unknown metric"):
        get_metric("no_such_metric")
    with pytest.raises(InputError, match="bad options"):
        get_metric("rouge_l", no_such_option=1)


def test_register_lazy_alias() -> None:
    from metajudge.metrics import registry

    register("rouge_l_nostem_test", "metajudge.metrics.lexical:RougeL", use_stemmer=False)
    try:
        m = get_metric("rouge_l_nostem_test")
        assert m.name == "rouge_l_nostem_test" and "stem:no" in m.signature
        assert "stem:yes" in get_metric("rouge_l_nostem_test", use_stemmer=True).signature
    finally:
        registry._REGISTRY.pop("rouge_l_nostem_test")
    with pytest.raises(ValueError):
        register("x", "no_colon")


def test_missing_wordnet_gives_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from metajudge.metrics import wordnet

    monkeypatch.setattr(wordnet, "find_wordnet", lambda: None)
    monkeypatch.setattr(wordnet, "DEBIAN_WORDNET_DIR", tmp_path / "nowhere")
    m = get_metric("meteor")
    with pytest.raises(MissingResourceError, match="metajudge setup wordnet") as ei:
        m.score("a", "b")
    assert "wordnet-base" in str(ei.value)
