"""Retrieval metrics over ranked document ids and gold id sets (T2-RAGBench, MT-RAIG).

Per query, with ``gold`` the set of relevant document ids and ``ranked`` the retrieved ids, best
first. Duplicate retrieved ids are de-duplicated: the first occurrence keeps its rank and a
repeat takes no rank (``["a", "a", "b"]`` ranks b second), so a repeated relevant id counts
once. :func:`retrieval_report` says so in its ``signature`` (``dedup:first``) and counts the
repeats (``duplicate_ids``, ``queries_with_duplicates``).

- ``mrr_at_k``: 1/rank of the first relevant id within the top k, else 0 (T2-RAGBench's MRR@3:
  ``score_mrr`` in its evaluation card — ``1/rank if rank <= k else 0``, averaged over queries);
- ``recall_at_k``: |top-k ∩ gold| / |gold| (T2-RAGBench R@1, R@3; MT-RAIG R@k);
- ``precision_at_k``: |top-k ∩ gold| / k — the standard IR denominator k, also when fewer than k
  ids were retrieved (MT-RAIG P@k);
- ``f1_at_k``: harmonic mean of P@k and R@k (0 when both are 0), per query.

Two F1 aggregates over queries, both reported by :func:`retrieval_report` under their names:
``f1@k`` is the mean of per-query F1; ``f1_corpus@k`` is the harmonic mean of the mean P@k and
the mean R@k — the form MT-RAIG's Table 19 is consistent with (19 of its 20 F1 cells within
0.01 of 2·P·R/(P+R) of the P and R printed beside them);
- ``hit_at_k``: 1 if any relevant id is in the top k.

A query with an empty gold set has no defined recall/MRR: it raises :class:`InputError` (name the
query in :func:`retrieval_report`). MT-RAIG reports k = 2, 5, 10, 20; T2-RAGBench MRR@3, R@1, R@3.

>>> mrr_at_k({"d2"}, ["d1", "d2", "d3"], k=3)
0.5
>>> recall_at_k({"d2", "d9"}, ["d1", "d2", "d3"], k=3), precision_at_k({"d2", "d9"}, ["d1", "d2", "d3"], k=3)
(0.5, 0.3333333333333333)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from metajudge.errors import InputError

Id = str | int
#: what :func:`retrieval_report` computes: duplicates de-duplicated (first occurrence keeps its
#: rank), P@k over k, F1 both per query (``f1@k``) and corpus-level (``f1_corpus@k``)
SIGNATURE = "retrieval|dedup:first|precision_denominator:k|f1:mean_per_query+corpus"


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", field="k")
    return k


def _gold_set(gold: Collection[Id] | Iterable[Id]) -> set[Id]:
    if isinstance(gold, (str, bytes)):
        raise InputError(
            "gold must be a collection of document ids, not a single string", field="gold"
        )
    g = set(gold)
    if not g:
        raise InputError("gold set is empty: recall/MRR undefined for this query", field="gold")
    return g


def _top_k(ranked: Sequence[Id], k: int) -> list[Id]:
    if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Sequence):
        raise InputError("ranked must be a sequence of document ids (best first)", field="ranked")
    seen: set[Id] = set()
    out: list[Id] = []
    for d in ranked:
        if d in seen:
            continue
        seen.add(d)
        out.append(d)
        if len(out) == k:
            break
    return out


def duplicate_count(ranked: Sequence[Id]) -> int:
    """Repeated ids in a ranking (each repeat after the first occurrence), which the metrics drop.

    >>> duplicate_count(["a", "b", "a", "a"]), duplicate_count(["a", "b"])
    (2, 0)
    """
    if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Sequence):
        raise InputError("ranked must be a sequence of document ids (best first)", field="ranked")
    return len(ranked) - len(set(ranked))


def mrr_at_k(gold: Collection[Id], ranked: Sequence[Id], *, k: int) -> float:
    """Reciprocal rank of the first relevant id within the top ``k`` (0 if none).

    >>> mrr_at_k({"a"}, ["b", "c", "a"], k=3), mrr_at_k({"a"}, ["b", "c", "a"], k=2)
    (0.3333333333333333, 0.0)
    """
    k = _check_k(k)
    g = _gold_set(gold)
    for rank, d in enumerate(_top_k(ranked, k), start=1):
        if d in g:
            return 1.0 / rank
    return 0.0


def recall_at_k(gold: Collection[Id], ranked: Sequence[Id], *, k: int) -> float:
    """|top-k ∩ gold| / |gold|."""
    k = _check_k(k)
    g = _gold_set(gold)
    return sum(1 for d in _top_k(ranked, k) if d in g) / len(g)


def precision_at_k(gold: Collection[Id], ranked: Sequence[Id], *, k: int) -> float:
    """|top-k ∩ gold| / k."""
    k = _check_k(k)
    g = _gold_set(gold)
    return sum(1 for d in _top_k(ranked, k) if d in g) / k


def f1_at_k(gold: Collection[Id], ranked: Sequence[Id], *, k: int) -> float:
    """Harmonic mean of :func:`precision_at_k` and :func:`recall_at_k` (0 when both are 0).

    >>> round(f1_at_k({"a", "b"}, ["a", "c"], k=2), 4)
    0.5
    """
    p = precision_at_k(gold, ranked, k=k)
    r = recall_at_k(gold, ranked, k=k)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def hit_at_k(gold: Collection[Id], ranked: Sequence[Id], *, k: int) -> float:
    """1.0 if any relevant id is in the top ``k``, else 0.0."""
    k = _check_k(k)
    g = _gold_set(gold)
    return 1.0 if any(d in g for d in _top_k(ranked, k)) else 0.0


_FUNCS = {
    "mrr": mrr_at_k,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "f1": f1_at_k,
    "hit": hit_at_k,
}


def retrieval_report(
    golds: Sequence[Collection[Id]],
    rankeds: Sequence[Sequence[Id]],
    ks: Sequence[int] = (1, 3),
    *,
    metrics: Sequence[str] = ("mrr", "recall", "precision", "f1", "hit"),
    ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Mean of each metric at each k over queries: ``{"mrr@3": ..., "recall@1": ..., "n": N}``;
    with ``f1`` also ``f1_corpus@k``, the harmonic mean of mean P@k and mean R@k (MT-RAIG Table 19);
    ``signature`` (:data:`SIGNATURE`: duplicates de-duplicated) and the repeats dropped:
    ``duplicate_ids`` (over all rankings) and ``queries_with_duplicates``.

    ``ids`` (optional) name the queries in errors. T2-RAGBench: ``ks=(1, 3)`` (MRR@3, R@1, R@3);
    MT-RAIG: ``ks=(2, 5, 10, 20)`` (P/R/F1).

    >>> r = retrieval_report([{"a"}, {"b"}], [["a", "x"], ["x", "b"]], ks=(1, 2))
    >>> r["mrr@2"], r["recall@1"], r["n"], r["duplicate_ids"]
    (0.75, 0.5, 2, 0)
    >>> r = retrieval_report([{"a"}, {"b", "c", "d"}], [["a", "x"], ["b", "y"]], ks=(2,), metrics=("f1",))
    >>> round(r["f1@2"], 4), round(r["f1_corpus@2"], 4)
    (0.5333, 0.5714)
    """
    if len(golds) != len(rankeds):
        raise InputError(f"{len(golds)} gold sets but {len(rankeds)} rankings", field="rankeds")
    if not golds:
        raise InputError("no queries", field="golds")
    if ids is not None and len(ids) != len(golds):
        raise InputError(f"{len(ids)} ids but {len(golds)} queries", field="ids")
    for m in metrics:
        if m not in _FUNCS:
            raise InputError(
                f"unknown retrieval metric {m!r} ({', '.join(_FUNCS)})", field="metrics"
            )
    ks = [_check_k(k) for k in ks]
    computed = list(metrics) + [
        m for m in ("precision", "recall") if "f1" in metrics and m not in metrics
    ]
    sums: dict[str, float] = {f"{m}@{k}": 0.0 for m in computed for k in ks}
    for i, (g, r) in enumerate(zip(golds, rankeds, strict=True)):
        for m in computed:
            for k in ks:
                try:
                    sums[f"{m}@{k}"] += _FUNCS[m](g, r, k=k)
                except InputError as e:
                    qid = ids[i] if ids is not None else str(i)
                    raise InputError(f"query {qid}: {e.message}", field=e.field) from None
    n = len(golds)
    means = {key: v / n for key, v in sums.items()}
    out: dict[str, Any] = {f"{m}@{k}": means[f"{m}@{k}"] for m in metrics for k in ks}
    if "f1" in metrics:
        for k in ks:
            p, r = means[f"precision@{k}"], means[f"recall@{k}"]
            out[f"f1_corpus@{k}"] = 2 * p * r / (p + r) if p + r > 0 else 0.0
    out["n"] = n
    dups = [duplicate_count(r) for r in rankeds]
    out["duplicate_ids"] = sum(dups)
    out["queries_with_duplicates"] = sum(d > 0 for d in dups)
    out["signature"] = SIGNATURE
    return out
