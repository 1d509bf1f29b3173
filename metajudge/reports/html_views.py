"""The payloads of ``report.html`` per run kind (see :mod:`metajudge.reports.html_run`)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.data.formats import LikertRecord, PairwiseRecord, response_key
from metajudge.reports import html_page as html
from metajudge.reports.html_items import BROWSER_CAP, Items, likert_view, pair_view
from metajudge.scores.readers.rows import ScoreRows, ScoreTable, score_maps


def _finish(payload: dict[str, Any], items: Items, views: list[Any], compare: Any = ()) -> dict:
    payload.update(items=items.items, resp=items.resp, views=views, compare=list(compare))
    if items.resp and all(r["text"] is None for r in items.resp):
        payload["warnings"].append(
            "the dataset ships no response texts (scores only): the browser shows ids, labels "
            "and scores"
        )
    return payload


def _scale(ds: Any, dim: str) -> tuple[float, float]:
    sc = (getattr(ds.card, "dimension_scales", None) or {}).get(dim) or ds.card.scale
    return float(sc.min), float(sc.max)


def _views(
    name: str,
    ds: Any,
    dim: str,
    scores: Mapping[str, Any],
    items: Items,
    *,
    lower: bool = False,
    cap: int | None = BROWSER_CAP,
    memo: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """The browser view of one metric on ``dim``: at most ``cap`` units, the largest gaps first
    (:func:`~metajudge.reports.html_items.shown_units`); ``memo`` shares the dataset's records,
    keys and labels between the views of one page."""
    memo = {} if memo is None else memo
    hit = memo.get(("records", id(ds)))
    if hit is None or hit[0] is not ds:
        kind = PairwiseRecord if ds.card.kind == "pairwise" else LikertRecord
        hit = memo[("records", id(ds))] = (ds, [r for r in ds.records if isinstance(r, kind)])
    recs = hit[1]
    lo, hi = _scale(ds, dim)
    if ds.card.kind == "pairwise":
        hw = max(abs(lo), abs(hi)) or 1.0
        return pair_view(
            name, recs, dim, scores, items=items, half_width=hw, lower=lower, cap=cap, memo=memo
        )
    return likert_view(name, recs, dim, scores, items=items, lo=lo, hi=hi, cap=cap, memo=memo)


def cut_warning(views: Sequence[Mapping[str, Any]]) -> list[str]:
    """The page's warning when views were cut to the browser cap (none otherwise)."""
    cut = [v for v in views if "cut" in v]
    if not cut:
        return []
    unit = "pairs" if cut[0]["kind"] == "pair" else "responses"
    totals = sorted({int(v["total"]) for v in cut})
    line = (
        f"the disagreement browser shows at most {int(cut[0]['cap']):,} {unit} per view, the "
        f"largest gaps first: {len(cut)} of {len(views)} views cut (of "
        f"{' / '.join(f'{t:,}' for t in totals)} {unit}); every value in the tables uses all "
        "of them (--browser-cap 0 shows all in the browser)"
    )
    return [line]


def meta_payload(
    out: Path,
    *,
    data_dir: str | Path | None = None,
    dataset: Any = None,
    rows: Sequence[Mapping[str, Any]] | None = None,
    progress: Any = None,
    cap: int | None = BROWSER_CAP,
) -> dict[str, Any]:
    """A meta-eval folder: overview from ``result.json``, items from the dataset and scores
    (``dataset``: the run's loaded Dataset, else the source ``result.json`` records; ``rows``:
    the run's gathered score rows, else gathered again from the specs it records; ``progress``:
    a callback ``(views built, views)``; ``cap``: units per view, :data:`BROWSER_CAP`)."""
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.reports.published import attach_published

    res = MetaEvalResult.load(out / "result.json")
    if not res.data.get("published"):
        attach_published(res)
    payload = html.meta_overview(res.data)
    run = res.data.get("run") or {}
    items = Items()
    if dataset is None and not (run.get("source") or run.get("dataset")):
        payload["warnings"].append("result.json names no dataset: no disagreement browser")
        return _finish(payload, items, [])
    ds = dataset if dataset is not None else run_dataset(run, None, data_dir)
    if rows is None:
        rows = _run_rows(ds, run, out, data_dir)
    by = score_maps(rows)  # {metric: {key: score}}; a score table's columns read as arrays
    payload["warnings"] += _row_warnings(rows) + text_free_warning(ds)
    todo = [
        (m, dim, col) for m in res.data["metrics"] for dim, col in m["columns"].items() if col in by
    ]
    views: list[dict[str, Any]] = []
    memo: dict[Any, Any] = {}
    for m, dim, col in todo:
        lower = m.get("direction") == "lower"
        views.append(_views(m["name"], ds, dim, by[col], items, lower=lower, cap=cap, memo=memo))
        if progress is not None:
            progress(len(views), len(todo))
    payload["warnings"] += cut_warning(views)
    items.attach_scores(_shown_rows(rows, items, views))
    return _finish(payload, items, views)


def text_free_warning(ds: Any) -> list[str]:
    """The page's warning when the dataset was read text-free (its records hold no texts: a
    large file meta-evaluated against score tables, docs/own-data.md), none otherwise."""
    from metajudge.data.fast_records import NO_TEXT

    recs = getattr(ds, "records", None)
    if not recs or getattr(recs[0], "input", None) is not NO_TEXT:
        return []
    why = "a large file meta-evaluated against score tables: only each response's word count"
    line = f"the dataset was read text-free ({why} was kept): the browser shows the pairs "
    return [line + "without their question and responses"]


def _shown_rows(rows: Sequence[Mapping[str, Any]], items: Items, views: list[Any]) -> Any:
    """The score rows of the responses the page shows, in their order: a list of row dicts
    filtered (C-level ``map``s); all of them when no view was cut, or when they are held in
    columns (not a list: :meth:`Items.attach_scores` resolves those in bulk)."""
    if not isinstance(rows, list) or not any("cut" in v for v in views):
        return rows
    return list(compress(rows, map(items.key.__contains__, map(itemgetter("key"), rows))))


def _run_rows(ds: Any, run: Mapping[str, Any], out: Path, data_dir: Any) -> list[Any]:
    """The score rows of a meta-eval folder, gathered again from the specs ``run`` records."""
    from metajudge.scores.readers.alignment import IdPolicy
    from metajudge.scores.readers.base import Reading
    from metajudge.scores.run_scores import gather_run_scores

    rows, _ = gather_run_scores(
        ds,
        out_dir=out,
        metrics=run.get("registry_metrics") or None,
        scores=run.get("scores") or (),
        score_files=run.get("score_files") or (),  # run folders written before `scores`
        external=bool(run.get("external")),
        data_dir=data_dir,
        progress=False,
        # the run's own rule; the rows it dropped are counted in result.json (run.score_ids)
        ids=IdPolicy(strict=(run.get("score_ids") or {}).get("rule") == "strict"),
        reading=Reading(**(run.get("reading") or {})),  # --id-field, --system, --epochs
    )
    return rows


def _row_warnings(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Parse failures / errors and cuts (truncated tables, capped claims) per metric, in the
    order of each metric's first such row (a score table's columns counted as arrays)."""
    total: dict[str, int] = {}
    err: dict[str, list[int]] = {}  # metric -> [count, first row]
    cut: dict[str, list[int]] = {}
    failed: dict[str, int] = {}  # of err: rows that name an error (the rest have no score)
    at = 0
    for part in rows.parts() if isinstance(rows, ScoreRows) else [rows]:
        if isinstance(part, ScoreTable):
            _table_warnings(part, at, total, err, failed)
        else:
            _dict_warnings(part, at, total, err, cut, failed)
        at += len(part)
    out = [
        f"{m}: {n} of {total[m]} responses with no score ({n / total[m]:.1%}: "
        + _no_score_why(n, failed.get(m, 0))
        + "), shown in the browser"
        for m, (n, _) in sorted(err.items(), key=lambda kv: kv[1][1])
    ]
    out += [
        f"{m}: {n} of {total[m]} responses had their input cut to fit the metric "
        "(truncated text, table or claims; each row's details say which)"
        for m, (n, _) in sorted(cut.items(), key=lambda kv: kv[1][1])
    ]
    return out


def _no_score_why(n: int, failed: int) -> str:
    """Why rows have no score: an error or parse failure each row names, or none (the score is
    missing from the scores read, e.g. upstream: no error, or one that says "missing ...")."""
    if failed == n:
        return "error or parse failure"
    if not failed:
        return "missing in the scores given, no error recorded"
    return f"{failed} error or parse failure, {n - failed} missing in the scores given"


def _count(into: dict[str, list[int]], m: str, n: int, first: int) -> None:
    got = into.setdefault(m, [0, first])
    got[0] += n


def _dict_warnings(
    rows: Any,
    at: int,
    total: dict[str, int],
    err: dict[str, list[int]],
    cut: dict[str, list[int]],
    failed: dict[str, int],
) -> None:
    for i, r in enumerate(rows, start=at):
        m = r["metric"]
        total[m] = total.get(m, 0) + 1
        if r.get("error") or r.get("score") is None:
            _count(err, m, 1, i)
            e = str(r.get("error") or "")
            failed[m] = failed.get(m, 0) + bool(e and not e.startswith("missing"))
        det = r.get("details") or {}
        if any(k in det and det[k] for k in ("truncated", "table_cut", "cuts", "claims_capped")):
            _count(cut, m, 1, i)


def _table_warnings(
    table: ScoreTable,
    at: int,
    total: dict[str, int],
    err: dict[str, list[int]],
    failed: dict[str, int],
) -> None:
    """A table's rows have no details; a row without a score (or with its own error) counts."""
    n_cols = len(table.columns)
    for c, col in enumerate(table.columns):
        total[col.metric] = total.get(col.metric, 0) + len(table.ids)
        bad = np.isnan(np.asarray(col.scores, dtype=float))
        for i, e in col.errors.items():
            bad[i] = bad[i] or bool(e)
            real = bool(e) and not str(e).startswith("missing")
            failed[col.metric] = failed.get(col.metric, 0) + real
        idx = np.flatnonzero(bad)
        if idx.size:
            _count(err, col.metric, int(idx.size), at + int(idx[0]) * n_cols + c)


def run_dataset(doc: Mapping[str, Any], input_file: Any, data_dir: Any) -> Any:
    """The dataset of a run folder's JSON ``doc``, through :func:`metajudge.data.loading.load`:
    the source it records (``doc["source"]``, or a meta-eval's ``doc["run"]["source"]``); for a
    folder written before sources were recorded, ``input_file`` or the ``dataset`` it names
    (``NAME/SUBSET``, or the file a meta-eval was given) with the recorded ``subset``."""
    from metajudge.data.loading import load

    if doc.get("source"):
        return load(doc["source"], data_dir)
    base, _, sub = str(doc["dataset"]).partition("/")
    subset = doc.get("subset") or None
    if input_file is not None:
        return load(Path(input_file), data_dir, subset=sub or subset)
    if Path(str(doc["dataset"])).is_file():
        return load(Path(str(doc["dataset"])), data_dir, subset=subset)
    return load(base, data_dir, subset=sub or subset)


def swap_payload(
    res: Mapping[str, Any],
    external: Sequence[str] | None,
    *,
    input_file: Any,
    data_dir: Any,
    out_dir: str | Path | None = None,
    dataset: Any = None,
) -> dict[str, Any]:
    """A backbone-swap folder: per-backbone rankings and, per pair of backbones, the flips.

    Per-item scores: the live backbones' ``scores_<backbone>.jsonl`` in ``out_dir``
    (:func:`metajudge.scores.backbone_files.read_backbone_scores`), the others from the ``external``
    specs (by default the backbone names). Flips use the swap's tie band (``protocol.eps``)."""
    payload = html.swap_overview(res)
    eps = float((res.get("protocol") or {}).get("eps") or 0.0)
    src = (res, res["dimension"], list(res["backbones"]))
    return _backbone_views(payload, src, external, (dataset, input_file), data_dir, out_dir, eps)


def _backbone_scores(
    ds: Any, dim: str, bbs: Sequence[str], external: Any, data_dir: Any, out_dir: Any
) -> dict[str, Any]:
    """Per-backbone ``{key: score}``: saved score files first, then the external specs."""
    from metajudge.scores.backbone_files import read_backbone_scores
    from metajudge.scores.swap_sources import external_scores

    saved = read_backbone_scores(out_dir, bbs) if out_dir is not None else {}
    specs = list(external) if external else [b for b in bbs if b not in saved]
    got: dict[str, Any] = {}
    if specs:
        got, _ = external_scores(ds, specs, dimension=dim, data_dir=data_dir)
    return {b: saved.get(b, got.get(b)) for b in bbs if b in saved or b in got}


def _backbone_views(
    payload: dict[str, Any],
    src: tuple[Mapping[str, Any], str, list[str]],
    external: Any,
    data: tuple[Any, Any],
    data_dir: Any,
    out_dir: Any,
    eps: float,
) -> dict[str, Any]:
    """Rankings per backbone and the flips per pair of backbones of ``src`` (the run's JSON,
    dimension, backbones) added to ``payload``; ``data``: the run's loaded Dataset (or None) and
    its input file (:func:`run_dataset`). A failure to get the scores is a warning."""
    doc, dim, bbs = src
    items = Items()
    try:
        ds = data[0] if data[0] is not None else run_dataset(doc, data[1], data_dir)
        scores = _backbone_scores(ds, dim, bbs, external, data_dir, out_dir)
    except Exception as e:  # noqa: BLE001 - the overview still renders; the reason is shown
        payload["warnings"].append(f"per-item scores not available for this page: {e}")
        return _finish(payload, items, [])
    memo: dict[Any, Any] = {}
    views = [_views(bb, ds, dim, s, items, memo=memo) for bb, s in scores.items()]
    payload["warnings"] += cut_warning(views)
    cmp = [
        _flips(ds, (x, y), (scores[x], scores[y]), items, eps)
        for x, y in itertools.combinations(scores, 2)
    ]
    return _finish(payload, items, views, cmp)


def _flips(
    ds: Any,
    names: tuple[str, str],
    s: tuple[Mapping[str, Any], Mapping[str, Any]],
    items: Items,
    eps: float = 0.0,
) -> dict[str, Any]:
    """Pairs of responses where backbones x and y decide differently (d = s(b) − s(a), decided
    with the swap's tie band ``|d| <= eps`` by :func:`metajudge.stats.tie_decisions`)."""
    from metajudge.stats import tie_decisions

    pairs: list[tuple[Any, str, str, Any]] = []
    if ds.card.kind == "pairwise":
        for r in ds.records:
            pairs.append((r, response_key(r.id, "a"), response_key(r.id, "b"), r))
    else:
        by: dict[str, list[LikertRecord]] = {}
        for r in ds.records:
            by.setdefault(r.id, []).append(r)
        for group in by.values():
            for a, b in itertools.combinations(group, 2):
                pairs.append((a, response_key(a.id, a.system), response_key(b.id, b.system), b))
    sx, sy = s
    rows = []
    n_both = 0
    for ra, ka, kb, rb in pairs:
        vals = [sx.get(ka), sx.get(kb), sy.get(ka), sy.get(kb)]
        if any(v is None for v in vals):
            continue
        dx, dy = (int(v) for v in tie_decisions([vals[1] - vals[0], vals[3] - vals[2]], eps))
        n_both += 1
        if dx != dy:
            i, r1 = items.add(ra)
            r2 = r1 if ra is rb else items.add(rb)[1]
            rr = r1 if ra is rb else r1 + r2
            rows.append([i, rr, dx, dy, int(dx != 0 and dy != 0)])
    return {"x": names[0], "y": names[1], "eps": eps, "n": n_both, "rows": rows}


def decision_payload(
    d: Mapping[str, Any],
    external: Sequence[str] | None,
    *,
    input_file: Any,
    data_dir: Any,
    out_dir: str | Path | None = None,
    metric: str | None = None,
    dimension: str | None = None,
    dataset: Any = None,
) -> dict[str, Any]:
    """A backbone-decision folder: the decision's tables, then X's and Y's rankings and flips
    (the decision's tie band). ``dimension``: by default the one ``metric`` judges."""
    from metajudge.reports.html_decision import decision_overview
    from metajudge.scores.swap_sources import metric_dimension

    payload = decision_overview(d)
    ni = d["non_inferiority"]
    dim = dimension
    if dim is None:
        try:
            if dataset is None:
                dataset = run_dataset(d, input_file, data_dir)
            dims = dataset.card.dimensions
            dim = metric_dimension(metric, dims) if metric else dims[0]
        except Exception as e:  # noqa: BLE001 - the overview still renders; the reason is shown
            payload["warnings"].append(f"dataset not loadable for the browser: {e}")
            return _finish(payload, Items(), [])
    eps = float((d.get("protocol") or {}).get("tie_band") or 0.0)
    src = (d, dim, [ni["x"], ni["y"]])
    return _backbone_views(payload, src, external, (dataset, input_file), data_dir, out_dir, eps)


def diag_payload(
    diag: Mapping[str, Any], *, input_file: Any, data_dir: Any, dataset: Any = None
) -> dict[str, Any]:
    """A judge-diagnostics folder: per backbone, the pairs it gets wrong or flips on order swap."""
    payload = html.diagnostics_overview(diag)
    items = Items()
    try:
        ds = dataset if dataset is not None else run_dataset(diag, input_file, data_dir)
    except Exception as e:  # noqa: BLE001 - the overview still renders; the reason is shown
        payload["warnings"].append(f"dataset not loadable for the browser: {e}")
        return _finish(payload, items, [])
    recs = {r.id: r for r in ds.records if isinstance(r, PairwiseRecord)}
    dim = diag["dimension"]
    views = []
    for bb, d in diag["backbones"].items():
        rows = []
        for v in d.get("verdicts") or []:
            rec = recs.get(v["id"])
            if rec is None:
                continue
            labels = list(rec.labels.get(dim, ()))
            h = _human(labels)
            ab, ba = _side(v.get("ab"), "ab"), _side(v.get("ba"), "ba")
            i, rr = items.add(rec)
            wrong = ab is None or (h is not None and h != 0 and ab != h)
            flip = ab is None or ba is None or ab != ba
            rows.append(
                {"i": i, "r": rr, "m": ab, "n": ba, "h": h, "g": int(wrong) * 2 + int(flip)}
                | {
                    "l": labels,
                    "w": int(wrong),
                    "s": int(len({np.sign(x) for x in _nums(labels)}) > 1),
                }
                | {"raw": [v.get("ab_raw"), v.get("ba_raw")]}
            )
        rows.sort(key=lambda x: -x["g"])
        views.append(
            {
                "name": bb,
                "dim": dim,
                "kind": "verdict",
                "rows": rows,
                "how": "judge wrong vs the humans' majority sign first, then order flips "
                "(A/B vs B/A decisions differ); decisions: −1 = a better, 0 = tie, 1 = b better",
            }
        )
    return _finish(payload, items, views)


def _nums(labels: Sequence[Any]) -> list[float]:
    out = []
    for v in labels:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            continue
    return out


def _human(labels: Sequence[Any]) -> int | None:
    xs = _nums(labels)
    return int(np.sign(np.mean(xs))) if xs else None


def _side(decision: Any, order: str) -> int | None:
    """A positional decision as written in a verdict row (``A`` = shown first) as −1 (a better),
    0 (tie) or 1 (b better)."""
    from metajudge.stats.decisions import to_pref, unswap

    p = unswap(to_pref(decision, "positional"), order)
    return None if p is None else int(p)
