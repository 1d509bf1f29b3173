"""``metajudge data agreement``: inter-annotator agreement of a dataset's human labels, with the
judges' agreement beside them (``--scores``) and JUDGE-BENCH's published alpha where it exists.

:func:`run_agreement` loads the dataset, computes
:func:`metajudge.analyses.annotator_agreement.agreement`, adds the judges
(:func:`~metajudge.analyses.annotator_agreement.judges_beside_humans`) and the published values,
and writes ``output`` (atomically) when asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def output_format(output: str | None, fmt: str | None) -> str | None:
    """The format of ``--output FILE``: ``fmt``, else from the file's suffix (``.csv``, ``.json``,
    else ``md``); ``fmt`` when there is no file."""
    if output and fmt is None:
        return {".csv": "csv", ".json": "json"}.get(Path(output).suffix, "md")
    return fmt


def run_agreement(
    dataset: str | None = None,
    input_file: str | None = None,
    *,
    subset: str | None = None,
    scores: Sequence[str] | None = None,
    level: str | None = None,
    seed: int = 0,
    splits: int | None = None,
    data_dir: str | Path | None = None,
    output: str | None = None,
    fmt: str | None = None,
    tracking_uri: str | None = None,
) -> Any:
    """The agreement result; with ``output``, also written there in ``fmt`` (see
    :func:`output_format`)."""
    from metajudge.analyses.annotator_agreement import AgreementOptions, agreement
    from metajudge.data.judge_bench import published_alpha
    from metajudge.data.loading import open_dataset
    from metajudge.io import atomic_write, check_output_file
    from metajudge.reports.agreement import render_agreement
    from metajudge.scores.spec import spec_paths

    if output:
        check_output_file(output, inputs=[input_file, *spec_paths(scores)])
    ds = open_dataset(
        dataset, input_file, subset=subset, data_dir=data_dir, tracking_uri=tracking_uri
    )
    opts = AgreementOptions(level=level, seed=seed, splits=splits)
    res = agreement(ds, opts)
    if scores:
        from metajudge.analyses.annotator_agreement import judges_beside_humans
        from metajudge.scores.spec import gather_scores

        rows = gather_scores(ds, scores, data_dir=data_dir)
        src = ", ".join(str(s) for s in scores)
        judges, unused = judges_beside_humans(ds, rows, opts)
        res = res.with_judges(judges, src, unused)
    res = res.with_published(
        published_alpha(ds.card, data_dir),
        "JUDGE-BENCH results/regular (Bavaresco et al. 2025)",
    )
    if output:
        with atomic_write(output) as fh:
            fh.write(render_agreement(res, output_format(output, fmt)))
    return res
