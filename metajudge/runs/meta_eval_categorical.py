"""The categorical branch of ``metajudge meta-eval`` (datasets with categorical / binary labels).

:func:`run_meta_eval` (:mod:`metajudge.runs.meta_eval`) hands a dataset whose
``card.label_kind`` is categorical or binary to :func:`run_categorical`: the score columns are
read as labels (:mod:`metajudge.analyses.metric_vs_human.categorical`), and the run folder gets
``result.json`` (``"kind": "categorical"``) and ``table.md/.csv/.json``
(:mod:`metajudge.reports.categorical_report`). :func:`asked_options` names the numeric-only
options a command line asked for, so they are refused with a message naming them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.reports.render import RESULT_FILE


def asked_options(
    protocol: Protocol, explicit: Sequence[str] = (), defaults: Protocol | None = None
) -> list[str]:
    """The numeric-only options of ``protocol`` that differ from the defaults, plus ``explicit``
    (flags a command line gave even at their default value, e.g. ``--normalize minmax``)."""
    d = defaults or Protocol()
    out = list(explicit)
    checks = (
        (protocol.normalize != d.normalize, "--normalize"),
        (
            protocol.aggregation not in ("per_annotator", "majority"),
            f"--aggregation {protocol.aggregation}",
        ),
        (protocol.grouped, "--level item"),
        (protocol.level not in (d.level, "item"), "--level"),
        (protocol.epsilon != d.epsilon, "--tie-band"),
        (protocol.learn_epsilon, "--learn-tie-band"),
        (tuple(protocol.statistics) != tuple(d.statistics), "--statistics"),
    )
    out += [flag for cond, flag in checks if cond]
    return list(dict.fromkeys(out))


def refuse_asked(protocol: Protocol, asked: Sequence[str], label_kind: str) -> None:
    """Raise naming the numeric-only options asked for (:func:`asked_options`)."""
    from metajudge.analyses.metric_vs_human.categorical import refuse_options

    refuse_options(asked_options(protocol, asked), label_kind)


def run_categorical(
    ds: Any,
    rows: Sequence[dict[str, Any]],
    *,
    out_dir: str | Path,
    protocol: Protocol,
    metrics: Sequence[str] | None = None,
    data_dir: str | Path | None = None,
    run: dict[str, Any] | None = None,
    scores_cache: Any = None,
) -> tuple[Any, dict[str, Path]]:
    """Evaluate the label columns of ``rows`` on ``ds`` and write the run folder
    (``scores_cache``: the rows of a new ``scores.jsonl``, :func:`~metajudge.scores.run_scores.
    write_scores_cache`)."""
    from metajudge.analyses.metric_vs_human.categorical import (
        CategoricalOptions,
        categorical_meta_evaluate,
    )
    from metajudge.reports.categorical_report import render_categorical
    from metajudge.reports.html_run import write_html_report
    from metajudge.run_folder import run_folder
    from metajudge.scores.run_scores import write_scores_cache

    t0 = time.perf_counter()
    opts = CategoricalOptions(
        n_boot=protocol.n_boot, seed=protocol.seed, ci_level=protocol.ci_level
    )
    res = categorical_meta_evaluate(ds, rows, opts, metrics=metrics, data_dir=data_dir)
    res.data["run"] = {**(run or {}), "seconds": round(time.perf_counter() - t0, 3)}
    with run_folder(out_dir) as rf:  # written as a set, like every run folder
        write_scores_cache(rf, scores_cache)
        data = res.to_dict()
        text = json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n"
        written = {RESULT_FILE: rf.write_text(RESULT_FILE, text)}
        written.update(render_categorical(rf.stage, data))
        written["report.html"] = write_html_report(rf.stage, data_dir=data_dir, dataset=ds)
    return res, {k: rf.out / Path(v).relative_to(rf.stage) for k, v in written.items()}


def is_categorical_result(path: str | Path) -> dict[str, Any] | None:
    """The JSON of a categorical ``result.json`` in run folder ``path``; None for other runs."""
    from metajudge.io import read_json

    p = Path(path) / RESULT_FILE
    if not p.is_file():
        return None
    data = read_json(p)
    return data if isinstance(data, dict) and data.get("kind") == "categorical" else None
