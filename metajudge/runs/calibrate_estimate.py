"""``metajudge calibrate estimate`` (and ``plan``): the work of each command.

Input (a :class:`~metajudge.data.source.DataSource`, read by
:mod:`metajudge.data.estimate_rows`): a CJE fresh-draw folder (``--input DIR``), or a canonical
dataset file / built-in dataset whose labels may cover only some records, with ``--scores``
naming one judge column. Probes (``probes``, ``--probes DIR``): a CJE probe folder; a label plan
(``plan``, ``--plan FILE``). A probe row that is also a labelled row of the calibration data is refused
(the audit must be held out). The run returns the result, its Markdown and the files written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.data.source import DataSource
from metajudge.errors import InputError


def estimate_rows(src: DataSource, notes: list[str] | None = None) -> tuple[Any, dict[str, int]]:
    """The :class:`~metajudge.analyses.calibration.crossfit.EstimateRows` of the input
    (:func:`metajudge.data.estimate_rows.read_rows`; ``notes``: its notes), and the rows left
    out per reason."""
    from metajudge.analyses.calibration.crossfit import crossfit_rows
    from metajudge.data.estimate_rows import read_rows
    from metajudge.scores.spec import gather_scores

    rows, scale, dropped = read_rows(src, gather_scores, notes)
    return crossfit_rows(rows, scale=scale, source=src.name), dropped


def _stream_rows() -> int:
    from metajudge.data.judge_table import STREAM_ROWS

    return STREAM_ROWS


def streams(src: DataSource) -> bool:
    """Is the input a Parquet judge-score table (:mod:`metajudge.data.judge_table`) of more than
    its ``STREAM_ROWS`` rows, estimated from sums in a streaming scan?"""
    from metajudge.data import judge_table

    path = src.path
    return (
        bool(path)
        and judge_table.is_judge_table(path)
        and (judge_table.row_count(path) > _stream_rows())
    )


def streamed_estimate(src: DataSource, st: Any, probes: str | None = None) -> Any:
    """``calibrate estimate`` on a Parquet judge-score table from sums
    (:func:`metajudge.analyses.calibration.sums.sums_estimates`): the labelled rows read into
    memory, the calibration fitted on them, then every judge score summed in one streaming scan
    (:func:`metajudge.data.judge_table.scan`)."""
    from metajudge.analyses.calibration.crossfit import crossfit_rows, fit_crossfit
    from metajudge.analyses.calibration.sums import ScoreSums, breaks_of, sums_estimates
    from metajudge.data import judge_table

    raw, scale = judge_table.labelled_rows(src.path, src.cluster_field)
    if not raw:
        raise InputError("no labelled row (oracle_label)", path=src.path, field="oracle_label")
    cal = crossfit_rows(raw, scale=scale, source=src.name)
    cf = fit_crossfit(cal, seed=st.seed, folds=st.folds)
    sums = judge_table.scan(src.path, ScoreSums(breaks_of(cf)))
    return sums_estimates(cal, cf, sums, st, probe_rows(src, probes, cal))


def probe_rows(src: DataSource, probes: str | None, rows: Any) -> Any:
    """The rows of the probe folder ``probes`` (``--probes``), refused where one is a labelled
    row of ``rows``."""
    if not probes:
        return None
    from metajudge.analyses.calibration.crossfit import crossfit_rows
    from metajudge.data import cje_folder

    raw = cje_folder.read_folder(probes, probe=True, cluster_field=src.cluster_field or "prompt_id")
    probe = crossfit_rows(raw, scale=rows.scale, source=str(probes))
    lab = rows.take(rows.labelled)
    used = set(zip(lab.system.tolist(), lab.item.tolist(), strict=True))
    shared = [
        f"{s}:{i}"
        for s, i in zip(probe.system.tolist(), probe.item.tolist(), strict=True)
        if (s, i) in used
    ]
    if shared:
        raise InputError(
            f"{len(shared)} probe row(s) are also labelled rows of the calibration data "
            f"({rows.source}), e.g. {', '.join(shared[:3])}: a transport audit needs held-out "
            "probes",
            path=probes,
            field="prompt_id",
        )
    return probe


def with_plan(rows: Any, path: str) -> tuple[Any, dict[str, Any]]:
    """``rows`` with the plan's selection probabilities and draws (``--plan``), and what the plan
    held: candidates, selected and labelled, selected but still unlabelled, labelled though not
    selected. A plan row not in the data, or an unlabelled row not in the plan, is refused."""
    from dataclasses import replace

    import numpy as np

    from metajudge.data.label_plan import read_plan

    if Path(path).is_dir():  # a `calibrate plan --out DIR` run folder
        path = str(Path(path) / SELECTION_FILE)
    plan = read_plan(path)
    keys = list(zip(rows.system.tolist(), rows.item.tolist(), strict=True))
    known = set(keys)
    for (s, i), (_, _, line) in plan.items():
        if (s, i) not in known:
            raise InputError(
                f"{s}:{i} is not a row of {rows.source} (was the plan made on other data?)",
                path=path,
                line=line,
                field="item",
            )
    pi = np.array([plan[k][0] if k in plan else np.nan for k in keys])
    drawn = np.array([k in plan and plan[k][1] for k in keys], dtype=bool)
    lab, cand = rows.labelled, np.isfinite(pi)
    stray = [f"{s}:{i}" for (s, i), c, ok in zip(keys, cand, lab, strict=True) if not (c or ok)]
    if stray:
        raise InputError(
            f"{len(stray)} unlabelled row(s) are not in the plan, e.g. {', '.join(stray[:3])}: "
            "make the plan on the rows estimated",
            path=path,
            field="--plan",
        )
    summary = {
        "file": str(path),
        "candidates": int(cand.sum()),
        "selected": int(drawn.sum()),
        "selected_labelled": int((drawn & lab).sum()),
        "selected_unlabelled": int((drawn & ~lab).sum()),
        "labelled_not_selected": int((cand & ~drawn & lab).sum()),
        "probability_range": [float(np.nanmin(pi)), float(np.nanmax(pi))],
    }
    return replace(rows, pi=pi, drawn=drawn), summary


@dataclass
class EstimateRun:
    """A command's result, its Markdown, what was left out and the files written."""

    result: Any
    markdown: str
    dropped: dict[str, int]
    wrote: list[tuple[str, Path]]
    folder: list[Path] | None = None
    #: what the input's reader noted, printed to stderr (an estimate also lists them in its notes)
    notes: list[str] = field(default_factory=list)


def run_estimate(
    src: DataSource,
    *,
    method: str = "aipw",
    probes: str | None = None,
    plan: str | None = None,
    draw: Any = None,
    alpha: float = 0.05,
    margin: float = 0.05,
    support_threshold: float = 0.05,
    seed: int = 0,
    folds: int = 40,
    n_boot: int = 2000,
    out: str | None = None,
) -> EstimateRun:
    """``calibrate estimate``: with ``method`` ``aipw``, the calibrated estimates, differences
    and gates (``probes``: the transport audit's folder, ``plan``: the label plan), with ``out`` a run folder (``result.json``, ``estimate.md``, ``report.html`` with
    the forest plot); with ``ppi`` or ``rogan-gladen``, :func:`run_drawn` (``draw``: its
    :class:`~metajudge.runs.estimate_draw.LabelDraw`)."""
    from metajudge.analyses.calibration.estimate import ESTIMATE_METHODS, Settings, estimate_mean
    from metajudge.reports.estimate_report import estimate_markdown

    if method not in ESTIMATE_METHODS:
        raise InputError(
            f"unknown method {method!r} (one of {', '.join(ESTIMATE_METHODS)})", field="--method"
        )
    if method != "aipw":
        aipw_only = (("--probes", probes), ("--plan", plan), ("--cluster-field", src.cluster_field))
        for name, given in aipw_only:
            if given:
                raise InputError(f"{name} goes with --method aipw", field=name)
        return run_drawn(src, draw, method=method, alpha=alpha, seed=seed, n_boot=n_boot, out=out)
    if not 0 < margin:
        raise InputError(f"the margin must be > 0, got {margin:g}", field="--margin")
    if not 0 < support_threshold < 1:
        raise InputError(
            f"the threshold must be in (0, 1), got {support_threshold:g}",
            field="--support-threshold",
        )
    if out:
        from metajudge.io import check_out_dir
        from metajudge.scores.spec import input_paths

        check_out_dir(out, inputs=[*input_paths(src), probes, plan], field="--out")
    st = Settings(
        alpha=alpha,
        support_threshold=support_threshold,
        margin=margin,
        seed=seed,
        folds=folds,
        n_boot=n_boot,
    )
    notes: list[str] = []
    if streams(src):
        if plan:
            raise InputError(
                "--plan needs the rows in memory: a label plan goes with a table of at most "
                f"{_stream_rows():,} rows",
                field="--plan",
            )
        res, dropped = streamed_estimate(src, st, probes), {}
    else:
        rows, dropped = estimate_rows(src, notes)
        design = None
        if plan:
            rows, design = with_plan(rows, plan)
        probe = probe_rows(src, probes, rows)
        res = estimate_mean("aipw", rows, st, probes=probe, design=design)
    res.notes[:0] = notes
    md = estimate_markdown(res)
    run = EstimateRun(res, md, dropped, [])
    if out:
        from metajudge.reports.estimate_html import estimate_payload
        from metajudge.results import as_data
        from metajudge.runs.calibrate import write_folder

        paths = write_folder(out, res, {"estimate.md": md}, [], estimate_payload(as_data(res)))
        run.wrote.append(("the run folder (report.html with the forest plot)", Path(out)))
        run.folder = paths
    return run


def run_drawn(
    src: DataSource,
    draw: Any,
    *,
    method: str,
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int = 2000,
    out: str | None = None,
) -> EstimateRun:
    """``calibrate estimate --method ppi|rogan-gladen``: the estimate of
    :func:`~metajudge.runs.estimate_draw.drawn_estimate` (its result a JSON-ready dict), with
    ``out`` ``ppi.md``/``ppi.json`` written there."""
    from metajudge.reports.decision_report import ppi_markdown
    from metajudge.runs.estimate_draw import LabelDraw, drawn_estimate, write_drawn

    if out:
        from metajudge.io import check_out_dir
        from metajudge.scores.spec import input_paths

        check_out_dir(out, inputs=input_paths(src), field="--out")
    payload = drawn_estimate(
        src, draw or LabelDraw(), method=method, alpha=alpha, seed=seed, n_boot=n_boot
    )
    run = EstimateRun(payload, ppi_markdown(payload), {}, [])
    if out:
        run.folder = write_drawn(out, src, payload, run.markdown)
        run.wrote += [("the estimate", p) for p in run.folder]
    return run


def run_plan(
    src: DataSource,
    *,
    half_width: float | None = None,
    budget: float | None = None,
    mix: float | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    folds: int = 40,
    out: str | None = None,
) -> EstimateRun:
    """``calibrate plan``: labels needed for ``half_width``; with ``budget``, the active
    selection of the next labels. With ``out``, a run folder (``result.json``, ``plan.md``,
    ``report.html``, and with a budget :data:`SELECTION_FILE`, CSV: system, item, cluster,
    judge_score, probability, selected; ``calibrate estimate --plan`` reads it)."""
    from metajudge.analyses.calibration.estimate import Settings
    from metajudge.analyses.calibration.plan import label_plan
    from metajudge.reports.estimate_report import label_plan_markdown

    if half_width is None and budget is None:
        raise InputError("give --half-width H, --budget N, or both", field="--half-width")
    if half_width is not None and not half_width > 0:
        raise InputError(f"must be > 0, got {half_width:g}", field="--half-width")
    if mix is not None and not 0 <= mix < 1:
        raise InputError(f"must be in [0, 1), got {mix:g}", field="--mix")
    if out:
        from metajudge.io import check_out_dir
        from metajudge.scores.spec import input_paths

        check_out_dir(out, inputs=input_paths(src), field="--out")
    elif budget is not None:
        raise InputError("--budget writes the selection into the run folder: give --out DIR")
    notes: list[str] = []
    rows, dropped = estimate_rows(src, notes)
    res, picks = label_plan(
        rows,
        Settings(alpha=alpha, seed=seed, folds=folds),
        half_width=half_width,
        budget=budget,
        mix=mix,
    )
    run = EstimateRun(res, label_plan_markdown(res), dropped, [], notes=notes)
    if out:
        _plan_folder(out, run, picks)
    return run


#: The label plan's selection in a ``calibrate plan`` run folder (``calibrate estimate --plan``).
SELECTION_FILE = "selection.csv"


def _plan_folder(out: str, run: EstimateRun, picks: list[Any]) -> None:
    import io

    from metajudge.data.label_plan import PLAN_COLUMNS
    from metajudge.io import CsvWriter
    from metajudge.reports.estimate_html import plan_payload
    from metajudge.results import as_data
    from metajudge.runs.calibrate import write_folder

    texts = {"plan.md": run.markdown}
    if picks:
        buf = io.StringIO()
        w = CsvWriter(buf)
        w.writerow(PLAN_COLUMNS)
        w.writerows(sorted(picks, key=lambda p: -p[4]))
        texts[SELECTION_FILE] = buf.getvalue()
    run.folder = write_folder(out, run.result, texts, [], plan_payload(as_data(run.result)))
    if picks:
        what = f"{len(picks)} candidates ({run.result.selection['picked']} selected)"
        run.wrote.append((what, Path(out) / SELECTION_FILE))
    run.wrote.append(("the run folder (report.html)", Path(out)))
