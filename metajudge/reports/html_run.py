"""``report.html`` of a run folder: the overview plus the per-item data of the disagreement browser.

A run folder holds ``result.json`` (meta-eval), ``swap.json`` (backbone swap) or
``diagnostics.json`` (judge diagnostics). The results hold no per-item values, so they are
rebuilt here from the run's inputs through the public API: the dataset named in the result
(``run.dataset`` / ``dataset``), the folder's ``scores.jsonl`` and, for ``--scores shipped`` runs, the
dataset's shipped score columns. The engine is not re-run; only score lookups are repeated.
:mod:`metajudge.reports.html_page` renders the page.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.data.formats import LikertRecord, PairwiseRecord, response_key
from metajudge.errors import InputError
from metajudge.io import read_json
from metajudge.reports import html_page as html

log = logging.getLogger(__name__)
TEXT_CAP = 20_000  # characters of one document shown in the page (the cut is stated in the page)


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def _mean(labels: Sequence[Any]) -> float | None:
    xs = [x for x in (_num(v) for v in labels) if x is not None]
    return float(np.mean(xs)) if xs else None


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
        i = self._input(rec)
        if isinstance(rec, PairwiseRecord):
            return i, [
                self._response(response_key(rec.id, s), i, r.system, r.response, s)
                for s, r in (("a", rec.a), ("b", rec.b))
            ]
        k = self._response(response_key(rec.id, rec.system), i, rec.system, rec.response, "")
        self.resp[k]["labels"] = {d: list(v) for d, v in rec.scores.items()}
        return i, [k]

    def attach_scores(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Each response's metric scores (and non-empty ``details``, ``error``) from score rows."""
        for row in rows:
            k = self.key.get(str(row.get("key")))
            if k is None:
                continue
            r = self.resp[k]
            r.setdefault("sc", {})[row["metric"]] = _num(row.get("score"))
            if row.get("details") or row.get("error"):
                det = dict(row.get("details") or {})
                if row.get("error"):
                    det["error"] = row["error"]
                r.setdefault("det", {})[row["metric"]] = det


def _split(labels: Sequence[Any], pairwise: bool, span: float) -> bool:
    xs = [x for x in (_num(v) for v in labels) if x is not None]
    if len(xs) < 2:
        return False
    if pairwise:
        return len({int(np.sign(x)) for x in xs}) > 1
    return max(xs) - min(xs) >= span / 2


def pair_view(
    name: str,
    recs: Sequence[PairwiseRecord],
    dim: str,
    scores: Mapping[str, float | None],
    *,
    items: Items,
    half_width: float,
    lower: bool = False,
) -> dict[str, Any]:
    """Pairs ranked by |minmax-normalised d − mean human label|; d = s(b) − s(a)."""
    from metajudge.analyses.metric_vs_human.normalize import minmax

    d = np.array(
        [
            np.nan
            if scores.get(response_key(r.id, "a")) is None
            or scores.get(response_key(r.id, "b")) is None
            else scores[response_key(r.id, "b")] - scores[response_key(r.id, "a")]  # type: ignore[operator]
            for r in recs
        ],
        dtype=float,
    ) * (-1 if lower else 1)
    nd = minmax(d, half_width, impute=False).values
    rows = []
    for r, dv, nv in zip(recs, d, nd, strict=True):
        labels = list(r.labels.get(dim, ()))
        h = _mean(labels)
        i, rr = items.add(r)
        g = None if h is None or not np.isfinite(nv) else abs(float(nv) - h)
        wrong = h is not None and h != 0 and np.isfinite(dv) and np.sign(dv) != np.sign(h)
        rows.append(
            {"i": i, "r": rr, "m": _num(dv), "n": _num(nv), "h": h, "g": g, "l": labels}
            | {"w": int(bool(wrong)), "s": int(_split(labels, True, 0))}
        )
    return _ranked(
        name,
        dim,
        "pair",
        rows,
        "|normalised d − mean human label| (minmax onto ±"
        f"{half_width:g}; d = s(b) − s(a){', sign flipped: lower is better' if lower else ''})",
    )


def likert_view(
    name: str,
    recs: Sequence[LikertRecord],
    dim: str,
    scores: Mapping[str, float | None],
    *,
    items: Items,
    lo: float,
    hi: float,
) -> dict[str, Any]:
    """Responses ranked by |score mapped onto the label range − mean human score|."""
    s = np.array(
        [_num(scores.get(response_key(r.id, r.system))) or np.nan for r in recs], dtype=float
    )
    ok = np.isfinite(s)
    smin, smax = (float(s[ok].min()), float(s[ok].max())) if ok.any() else (0.0, 0.0)
    span = hi - lo or 1.0
    rows = []
    for r, sv in zip(recs, s, strict=True):
        labels = list(r.scores.get(dim, ()))
        h = _mean(labels)
        i, rr = items.add(r)
        nv = (
            None if not np.isfinite(sv) or smax == smin else lo + (sv - smin) / (smax - smin) * span
        )
        g = None if h is None or nv is None else abs(nv - h)
        rows.append(
            {"i": i, "r": rr, "m": _num(sv), "n": _num(nv), "h": h, "g": g, "l": labels}
            | {"w": int(g is not None and g > span / 4), "s": int(_split(labels, False, span))}
        )
    return _ranked(
        name,
        dim,
        "resp",
        rows,
        f"|score minmax-mapped onto [{lo:g}, {hi:g}] − mean "
        "human score|; 'judge wrong' = more than a quarter of the range apart",
    )


def _ranked(name: str, dim: str, kind: str, rows: list[dict[str, Any]], how: str) -> dict[str, Any]:
    rows.sort(key=lambda x: -1.0 if x["g"] is None else x["g"], reverse=True)
    return {"name": name, "dim": dim, "kind": kind, "how": how, "rows": rows}


def write_html_report(
    out_dir: str | Path,
    *,
    external: Sequence[str] | None = None,
    input_file: str | Path | None = None,
    data_dir: str | Path | None = None,
    dataset: Any = None,
    rows: Sequence[Mapping[str, Any]] | None = None,
    progress: Any = None,
) -> Path:
    """Write ``<out_dir>/report.html`` for a meta-eval, backbone-swap, backbone-decision or
    judge-diagnostics folder.

    The items shown come from ``dataset`` (the run's loaded Dataset, when the run writes its own
    report), else from the source the folder's JSON records (loaded by
    :func:`metajudge.data.loading.load`), else from ``input_file`` or the dataset it names.
    ``external``: the backbone-swap run's ``--scores`` specs (swap.json does not record them;
    by default the backbone names are taken as the specs). A meta-eval run writing its own
    report passes the score rows it gathered as ``rows`` (else they are gathered again from the
    specs ``result.json`` records). ``progress``: a callback ``(views built, views)``.
    """
    from metajudge.reports import html_views as hv

    out = Path(out_dir)
    res_json = read_json(out / "result.json") if (out / "result.json").is_file() else None
    if isinstance(res_json, dict) and res_json.get("kind") == "categorical":
        from metajudge.reports.categorical_report import html_payload

        payload = hv._finish(html_payload(res_json), Items(), [])
    elif (out / "result.json").is_file():
        payload = hv.meta_payload(
            out, data_dir=data_dir, dataset=dataset, rows=rows, progress=progress
        )
    elif (out / "swap.json").is_file():
        res = read_json(out / "swap.json")
        payload = hv.swap_payload(
            res, external, input_file=input_file, data_dir=data_dir, out_dir=out, dataset=dataset
        )
    elif (out / "decision.json").is_file():
        return write_decision_html(
            out, external=external, input_file=input_file, data_dir=data_dir, dataset=dataset
        )
    elif (out / "diagnostics.json").is_file():
        diag = read_json(out / "diagnostics.json")
        payload = hv.diag_payload(diag, input_file=input_file, data_dir=data_dir, dataset=dataset)
    else:
        raise InputError(
            "no result.json, swap.json, decision.json or diagnostics.json in the run folder",
            path=out,
        )
    return html.write_page(out, payload)


def write_decision_html(
    out_dir: str | Path,
    *,
    metric: str | None = None,
    dimension: str | None = None,
    external: Sequence[str] | None = None,
    input_file: str | Path | None = None,
    data_dir: str | Path | None = None,
    dataset: Any = None,
) -> Path:
    """``<out_dir>/report.html`` of a backbone decision (``decision.json``): the verdict, the
    tables, ``decision.png``, and X's and Y's per-item rankings and flips. ``metric`` picks the
    human dimension the items are shown against (default: the dataset's first); ``external``
    and ``input_file`` as the decision was run (by default X and Y are taken as the specs);
    ``dataset`` as for :func:`write_html_report`."""
    from metajudge.reports import html_views as hv

    out = Path(out_dir)
    d = read_json(out / "decision.json")
    payload = hv.decision_payload(
        d,
        external,
        input_file=input_file,
        data_dir=data_dir,
        out_dir=out,
        metric=metric,
        dimension=dimension,
        dataset=dataset,
    )
    return html.write_page(out, payload)
