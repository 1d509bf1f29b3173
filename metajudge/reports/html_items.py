"""The per-item data of ``report.html``'s disagreement browser: the items, their responses and the
views (see :mod:`metajudge.reports.html_run`, which writes the page of a run folder).

A run folder holds ``result.json`` (meta-eval), ``swap.json`` (backbone swap) or
``diagnostics.json`` (judge diagnostics). The results hold no per-item values, so they are
rebuilt here from the run's inputs through the public API: the dataset named in the result
(``run.dataset`` / ``dataset``), the folder's ``scores.jsonl`` and, for ``--scores shipped`` runs, the
dataset's shipped score columns. The engine is not re-run; only score lookups are repeated.
:mod:`metajudge.reports.html_page` renders the page.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from metajudge.data.formats import LikertRecord, PairwiseRecord, response_key
from metajudge.scores.readers.rows import ScoreRows, ScoreTable, score_values

log = logging.getLogger(__name__)
TEXT_CAP = 20_000  # characters of one document shown in the page (the cut is stated in the page)


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _nums(a: np.ndarray) -> list[float | None]:
    """An array's values as :func:`_num` gives them (non-finite: ``None``)."""
    return [x if math.isfinite(x) else None for x in a.tolist()]


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_CAP:
        return text
    return text[:TEXT_CAP] + f"\n[… {len(text) - TEXT_CAP} more characters not shown in this page]"


class Items:
    """The inputs and responses of the records a page shows, each stored once."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.resp: list[dict[str, Any]] = []
        self._item: dict[str, int] = {}
        self.key: dict[str, int] = {}
        self._added: dict[int, tuple[Any, int, list[int]]] = {}  # id(record) -> its indices

    def _input(self, rec: Any) -> int:
        if rec.id in self._item:
            return self._item[rec.id]
        inp, meta = rec.input, dict(rec.meta or {})
        self._item[rec.id] = len(self.items)
        self.items.append(
            {
                "id": rec.id,
                "sub": str(meta.get("subset") or meta.get("category") or meta.get("source") or ""),
                "q": inp.question,
                "ctx": _cap(inp.context),
                "ref": _cap(inp.reference),
                "tables": [t.to_dict() for t in inp.tables or ()],
                "docs": [_cap(d) for d in inp.documents or ()],
            }
        )
        return self._item[rec.id]

    def _response(self, key: str, item: int, system: str, text: str | None, side: str) -> int:
        if key not in self.key:
            self.key[key] = len(self.resp)
            self.resp.append({"i": item, "sys": system, "side": side, "text": _cap(text)})
        return self.key[key]

    def add(self, rec: Any) -> tuple[int, list[int]]:
        """Register a record; returns (input index, response indices)."""
        hit = self._added.get(id(rec))
        if hit is not None and hit[0] is rec:  # registered by an earlier view
            return hit[1], list(hit[2])
        i = self._input(rec)
        if isinstance(rec, PairwiseRecord):
            rr = [
                self._response(response_key(rec.id, s), i, r.system, r.response, s)
                for s, r in (("a", rec.a), ("b", rec.b))
            ]
        else:
            rr = [self._response(response_key(rec.id, rec.system), i, rec.system, rec.response, "")]
            self.resp[rr[0]]["labels"] = {d: list(v) for d, v in rec.scores.items()}
        self._added[id(rec)] = (rec, i, rr)
        return i, list(rr)

    def attach_scores(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Each response's metric scores (and non-empty ``details``, ``error``) from score rows:
        the rows' responses and scores resolved as arrays (a
        :class:`~metajudge.scores.readers.rows.ScoreTable` from its columns), then set in one pass."""
        if not rows:
            return
        parts = rows.parts() if isinstance(rows, ScoreRows) else [rows]
        where = [self._where(p) for p in parts]
        for p, at in zip(parts, where, strict=True):
            self._scores_of(p, at)
        for p, at in zip(parts, where, strict=True):
            self._details_of(p, at)

    def _where(self, part: Any) -> list[int | None]:
        """The registered response of each row (of each table row: its columns share it)."""
        keys = part.ids.keys if isinstance(part, ScoreTable) else [r.get("key") for r in part]
        return [self.key.get(str(k)) for k in keys]

    def _scores_of(self, part: Any, where: list[int | None]) -> None:
        resp = self.resp
        if isinstance(part, ScoreTable):
            hit = [i for i, k in enumerate(where) if k is not None]
            for col in part.columns:
                vals = _nums(np.asarray(col.scores, dtype=float)[hit])
                for i, v in zip(hit, vals, strict=True):
                    resp[where[i]].setdefault("sc", {})[col.metric] = v  # type: ignore[index]
            return
        vals = np.array([_num(row.get("score")) for row in part], dtype=float)
        for k, row, v in zip(where, part, _nums(vals), strict=True):
            if k is not None:
                resp[k].setdefault("sc", {})[row["metric"]] = v

    def _details_of(self, part: Any, where: list[int | None]) -> None:
        resp = self.resp
        if isinstance(part, ScoreTable):  # no details; an error where a row has no score
            for col in part.columns:
                for i in _errors_at(col):
                    err, k = col.error_at(i), where[i]
                    if k is not None and err:
                        resp[k].setdefault("det", {})[col.metric] = {"error": err}
            return
        for k, row in zip(where, part, strict=True):
            if k is not None and (row.get("details") or row.get("error")):
                det = dict(row.get("details") or {})
                if row.get("error"):
                    det["error"] = row["error"]
                resp[k].setdefault("det", {})[row["metric"]] = det


def _errors_at(col: Any) -> list[int]:
    """The rows of a table column that may carry an error: unscored, or with an own error."""
    nan = np.flatnonzero(np.isnan(np.asarray(col.scores, dtype=float))).tolist()
    return sorted({*nan, *col.errors}) if col.errors else nan


def _label_matrix(labels: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(M, valid, count)``: the labels as an ``(n, annotators)`` float matrix (NaN where
    missing, ``None`` or not finite), its mask of usable values and their count per row."""
    k = max((len(x) for x in labels), default=0) or 1
    padded = [list(x) + [None] * (k - len(x)) for x in labels]
    try:
        M = np.array(padded, dtype=float).reshape(len(labels), k)
    except (TypeError, ValueError):  # a value float() refuses: as _num, no label
        M = np.array([[_num(v) for v in row] for row in padded], dtype=float).reshape(-1, k)
    valid = np.isfinite(M)
    return M, valid, valid.sum(axis=1)


def _means(M: np.ndarray, valid: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per row, the mean of its usable labels (NaN when none), bit for bit ``np.mean`` of them:
    summed column after column from 0.0 (a missing value adds −0.0: nothing), as ``np.mean``
    sums fewer than 8 values; rows with 8 or more usable labels are averaged one by one."""
    total = np.zeros(M.shape[0])
    for j in range(M.shape[1]):
        total = total + np.where(valid[:, j], M[:, j], -0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / count
    for i in np.flatnonzero(count >= 8):
        out[i] = np.mean(M[i][valid[i]])
    return out


def _splits(
    M: np.ndarray, valid: np.ndarray, count: np.ndarray, pairwise: bool, span: float
) -> np.ndarray:
    """Rows whose annotators disagree: signs differ (pairwise), or the labels span at least
    half the range (graded); at least two usable labels."""
    x = np.sign(M) if pairwise else M
    hi = np.where(valid, x, -np.inf).max(axis=1, initial=-np.inf)
    lo = np.where(valid, x, np.inf).min(axis=1, initial=np.inf)
    with np.errstate(invalid="ignore"):
        far = hi != lo if pairwise else hi - lo >= span / 2
    return (count >= 2) & far


BROWSER_CAP = 5_000
"""Units (pairs / responses) one browser view carries at most: the largest gaps first
(:func:`shown_units`); every shipped dataset fits (the largest, lftqa_eval, has 2,988
responses), an arena-scale run's page stays a few MB. The cut is stated beside the view and in
the page's warnings; ``--browser-cap`` (0: every unit) changes it."""


def shown_units(g: np.ndarray, cap: int | None) -> np.ndarray:
    """The indices of the units a view shows, in its order: the largest gap ``g`` first, a unit
    with no gap (NaN) last, ties in record order; at most ``cap`` (``None`` or 0: all). With a
    cap, only the units that can be among the first ``cap`` are sorted (those not below the
    ``cap``-th largest key, in record order): the same units in the same order, 0.03 s where
    sorting all took 0.15 s (1,000,000 gaps, the cap of 5,000)."""
    neg = -np.where(np.isfinite(g), g, -1.0)
    if not cap or cap >= neg.size:
        return np.argsort(neg, kind="stable")
    kth = np.partition(neg, cap - 1)[cap - 1]
    can = np.flatnonzero(neg <= kth)
    return can[np.argsort(neg[can], kind="stable")][:cap]


def _basis(recs: Sequence[Any], dim: str, memo: dict[Any, Any] | None) -> tuple[Any, ...]:
    """What every view of ``recs`` on ``dim`` shares, computed once (``memo``, keyed by the
    records list): the response keys per side (a, b; or the one response), the labels per
    record and their matrix ``(M, valid, count)`` with the mean label ``h``."""
    hit = None if memo is None else memo.get((id(recs), dim))
    if hit is not None and hit[0] is recs:
        return hit[1]
    if recs and isinstance(recs[0], PairwiseRecord):
        ids = [r.id for r in recs]
        keys: tuple[list[str], ...] = (
            list(map(response_key, ids, repeat("a"))),
            list(map(response_key, ids, repeat("b"))),
        )
        labels = [list(r.labels.get(dim, ())) for r in recs]
    else:
        keys = (list(map(response_key, [r.id for r in recs], [r.system for r in recs])),)
        labels = [list(r.scores.get(dim, ())) for r in recs]
    M, valid, count = _label_matrix(labels)
    out = (keys, labels, (M, valid, count), _means(M, valid, count))
    if memo is not None:
        memo[(id(recs), dim)] = (recs, out)
    return out


def pair_view(
    name: str,
    recs: Sequence[PairwiseRecord],
    dim: str,
    scores: Mapping[str, float | None],
    *,
    items: Items,
    half_width: float,
    lower: bool = False,
    cap: int | None = None,
    memo: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """Pairs ranked by |minmax-normalised d − mean human label|; d = s(b) − s(a). Every value is
    computed over all pairs in bulk; rows (and :class:`Items` entries) only for the ``cap``
    shown (:func:`shown_units`). ``memo``: shared by the views of one page (:func:`_basis`)."""
    from metajudge.analyses.metric_vs_human.normalize import minmax

    (ka, kb), labels, (M, valid, count), h = _basis(recs, dim, memo)
    sa, sb = score_values(scores, ka, memo), score_values(scores, kb, memo)
    d = (sb - sa) * (-1 if lower else 1)
    nd = minmax(d, half_width, impute=False).values
    has_h, fin_d = count > 0, np.isfinite(d)
    with np.errstate(invalid="ignore"):
        g = np.where(has_h & np.isfinite(nd), np.abs(nd - h), np.nan)
        wrong = has_h & (h != 0) & fin_d & (np.sign(d) != np.sign(h))
    split = _splits(M, valid, count, True, 0.0)
    pick = shown_units(g, cap)
    rows = _view_rows(items, recs, (d, nd, h, g), labels, (wrong, split), pick)
    how = (
        "|normalised d − mean human label| (minmax onto ±"
        f"{half_width:g}; d = s(b) − s(a){', sign flipped: lower is better' if lower else ''})"
    )
    return _view(name, dim, "pair", rows, how, (len(recs), cap))


def _view_rows(
    items: Items,
    recs: Sequence[Any],
    cols: tuple[Any, Any, Any, Any],
    labels: list[list[Any]],
    flags: tuple[Any, Any],
    pick: np.ndarray,
) -> list[dict[str, Any]]:
    """The browser rows of one view, in bulk, for the records ``pick`` (in its order): per
    record its item and response (``i``, ``r``; registered in record order), ``cols`` =
    (metric value, normalised value, mean human label, gap) as ``m n h g``, its labels, the
    wrong-direction flag ``w`` and the split-annotator flag ``s`` (``flags``)."""
    added = {int(j): items.add(recs[j]) for j in np.sort(pick).tolist()}
    m, n, h, g = (_nums(c[pick]) for c in cols)
    wrong, split = (f[pick].astype(int).tolist() for f in flags)
    rows = []
    for j, mv, nv, hv, gv, w, sp in zip(pick.tolist(), m, n, h, g, wrong, split, strict=True):
        i, rr = added[j]
        row = {"i": i, "r": rr, "m": mv, "n": nv, "h": hv, "g": gv, "l": labels[j], "w": w, "s": sp}
        rows.append(row)
    return rows


def likert_view(
    name: str,
    recs: Sequence[LikertRecord],
    dim: str,
    scores: Mapping[str, float | None],
    *,
    items: Items,
    lo: float,
    hi: float,
    cap: int | None = None,
    memo: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """Responses ranked by |score mapped onto the label range − mean human score|; bulk, rows
    for the ``cap`` shown only, ``memo`` as :func:`pair_view`'s."""
    (keys,), labels, (M, valid, count), h = _basis(recs, dim, memo)
    s = score_values(scores, keys, memo)
    s[~np.isfinite(s)] = np.nan  # (as _num reads a value)
    ok = np.isfinite(s)
    smin, smax = (float(s[ok].min()), float(s[ok].max())) if ok.any() else (0.0, 0.0)
    span = hi - lo or 1.0
    nv = np.full(s.shape, np.nan)
    if smax != smin:
        nv[ok] = lo + (s[ok] - smin) / (smax - smin) * span
    with np.errstate(invalid="ignore"):
        g = np.where((count > 0) & np.isfinite(nv), np.abs(nv - h), np.nan)
        wrong = np.isfinite(g) & (g > span / 4)
    split = _splits(M, valid, count, False, span)
    pick = shown_units(g, cap)
    rows = _view_rows(items, recs, (s, nv, h, g), labels, (wrong, split), pick)
    how = (
        f"|score minmax-mapped onto [{lo:g}, {hi:g}] − mean "
        "human score|; 'judge wrong' = more than a quarter of the range apart"
    )
    return _view(name, dim, "resp", rows, how, (len(recs), cap))


def _view(
    name: str, dim: str, kind: str, rows: list[dict[str, Any]], how: str, size: tuple[int, Any]
) -> dict[str, Any]:
    """A browser view; ``size`` = (units, cap): a view cut to its cap records the units it
    has (``total``), the cap and the sentence the page shows beside it (``cut``)."""
    view = {"name": name, "dim": dim, "kind": kind, "how": how, "rows": rows}
    total, cap = size
    if len(rows) < total:
        unit = "pairs" if kind == "pair" else "responses"
        view |= {
            "total": total,
            "cap": cap,
            "cut": f"showing {len(rows):,} of {total:,} {unit}: the {len(rows):,} with the "
            "largest gap (ranked as below; ties in dataset order); the others are in no view "
            "of this page (--browser-cap)",
        }
    return view
