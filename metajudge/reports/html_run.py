"""``report.html`` of a run folder: the overview plus the per-item data of the disagreement browser.

A run folder holds ``result.json`` (meta-eval), ``swap.json`` (backbone swap) or
``diagnostics.json`` (judge diagnostics). The results hold no per-item values, so they are
rebuilt here from the run's inputs through the public API: the dataset named in the result
(``run.dataset`` / ``dataset``), the folder's ``scores.jsonl`` and, for ``--scores shipped`` runs, the
dataset's shipped score columns. The engine is not re-run; only score lookups are repeated.
:mod:`metajudge.reports.html_items` builds the items and views, :mod:`metajudge.reports.html_views`
the payload per run kind, :mod:`metajudge.reports.html_page` renders the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import read_json
from metajudge.reports import html_page as html
from metajudge.reports import html_views as hv
from metajudge.reports.html_items import BROWSER_CAP, Items


def write_html_report(
    out_dir: str | Path,
    *,
    external: Sequence[str] | None = None,
    input_file: str | Path | None = None,
    data_dir: str | Path | None = None,
    dataset: Any = None,
    rows: Sequence[Mapping[str, Any]] | None = None,
    progress: Any = None,
    cap: int | None = BROWSER_CAP,
    keep: dict[str, Any] | None = None,
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
    ``cap``: the units a meta-eval page's browser view shows at most (:data:`BROWSER_CAP`;
    ``None`` or 0: all). ``keep``: filled with the page's payload (``metajudge judge card``
    builds its page on a meta-eval run's, not a second time).
    """
    from metajudge.bulk import paused_gc

    with paused_gc():  # hundreds of thousands of small row dicts at arena scale
        return _write_html_report(
            out_dir, external, input_file, data_dir, dataset, (rows, progress, cap), keep
        )


def _write_html_report(
    out_dir: str | Path,
    external: Sequence[str] | None,
    input_file: str | Path | None,
    data_dir: str | Path | None,
    dataset: Any,
    meta: tuple[Sequence[Mapping[str, Any]] | None, Any, int | None],
    keep: dict[str, Any] | None = None,
) -> Path:
    out = Path(out_dir)
    res_json = read_json(out / "result.json") if (out / "result.json").is_file() else None
    if isinstance(res_json, dict) and res_json.get("kind") in (
        "calibrate-estimate",
        "calibrate-plan",
    ):
        from metajudge.reports.estimate_html import estimate_payload, plan_payload

        est = res_json["kind"] == "calibrate-estimate"
        payload = (estimate_payload if est else plan_payload)(res_json)
    elif res_json is not None:
        payload = result_payload(out, data_dir, dataset, meta)
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
    if keep is not None:
        keep.update(payload)
    return html.write_page(out, payload)


def result_payload(
    out: Path,
    data_dir: str | Path | None,
    dataset: Any,
    meta: tuple[Sequence[Mapping[str, Any]] | None, Any, int | None] = (None, None, BROWSER_CAP),
) -> dict[str, Any]:
    """The page payload of a meta-eval folder's ``result.json`` (categorical or not), the
    disagreement browser's items and views included; ``meta``: (rows, progress, cap) as
    :func:`write_html_report` takes them. ``metajudge judge card`` builds on it."""
    rows, progress, cap = meta
    res_json = read_json(out / "result.json")
    if isinstance(res_json, dict) and res_json.get("kind") == "categorical":
        from metajudge.reports.categorical_report import html_payload

        return hv._finish(html_payload(res_json), Items(), [])
    return hv.meta_payload(
        out, data_dir=data_dir, dataset=dataset, rows=rows, progress=progress, cap=cap
    )


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
