"""The answer back in MLflow (``--log-to-mlflow``), for an ``--input mlflow:EXPERIMENT`` run.

- :func:`log_cards`: after ``judge card`` wrote its folder, each card (``card.json`` and
  ``card.html``) as the artifacts of one MLflow run in that experiment (named ``judge card:
  JUDGE``), the headline agreement figures as metrics (the judge's meta-eval row: its numbers,
  ``<figure>_ci_low`` / ``_ci_high``, the inter-annotator reference's numbers as
  ``reference_<figure>``) and the card's signature as ``metajudge.*`` tags.
- :func:`tag_plan`: after ``calibrate plan --budget N --out DIR`` wrote ``selection.csv``, each
  trace the plan selected for labelling tagged ``metajudge.label_plan = selected`` with its
  ``metajudge.label_probability`` (weight a new label by 1 / probability), so reviewers find
  them in MLflow's UI (search ``tags.metajudge.label_plan = 'selected'``).
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.errors import InputError

CARD_TAG_PREFIX = "metajudge."
PLAN_TAG = "metajudge.label_plan"
PROBABILITY_TAG = "metajudge.label_probability"


def check_source(source: Any) -> None:
    """An error unless ``source`` is ``mlflow:EXPERIMENT`` (checked before a command runs)."""
    from metajudge.data.mlflow_traces import is_mlflow

    if not is_mlflow(source):
        raise InputError(
            "--log-to-mlflow writes into the experiment the data came from: give --input "
            "mlflow:EXPERIMENT",
            field="--log-to-mlflow",
        )


def _experiment(source: Any, tracking_uri: str | None) -> tuple[Any, str]:
    """The client (of ``tracking_uri``, else ``$MLFLOW_TRACKING_URI``) and experiment id of an
    ``mlflow:EXPERIMENT`` source (else an error)."""
    from metajudge.data.mlflow_traces import MLFLOW_PREFIX, client, experiment_id

    check_source(source)
    mlc = client(tracking_uri)
    return mlc, experiment_id(mlc, str(source).removeprefix(MLFLOW_PREFIX))


def headline_metrics(card: Mapping[str, Any]) -> dict[str, float]:
    """The card's headline figures: the numbers of its judge's meta-eval row (module docstring)."""
    result = ((card.get("parts") or {}).get("agreement") or {}).get("result") or {}
    rows = [r for r in result.get("rows") or () if r.get("metric") == card.get("judge")]
    if not rows:
        return {}
    row = rows[0]
    out = {k: float(v) for k, v in row.items() if _number(v)}
    for k, (lo, hi) in (row.get("ci") or {}).items():
        if _number(lo) and _number(hi):
            out |= {f"{k}_ci_low": float(lo), f"{k}_ci_high": float(hi)}
    ref = row.get("reference") or {}
    out |= {f"reference_{k}": float(v) for k, v in ref.items() if _number(v)}
    return out


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def signature_tags(card: Mapping[str, Any]) -> dict[str, str]:
    """The card's signature as tags ``metajudge.<field>`` (nested fields joined by ``.``)."""
    tags: dict[str, str] = {}

    def put(prefix: str, v: Any) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                put(f"{prefix}.{k}", x)
        elif v is not None and v != []:
            tags[prefix] = ", ".join(map(str, v)) if isinstance(v, list) else str(v)

    put(CARD_TAG_PREFIX + "signature", card.get("signature") or {})
    return tags


def log_cards(source: Any, out: str | Path, tracking_uri: str | None = None) -> list[str]:
    """Log the card(s) ``judge card`` wrote into ``out`` (``out/card.json``, else each
    ``out/<judge>/card.json``) as MLflow runs in the source's experiment; the run ids."""
    mlc, exp = _experiment(source, tracking_uri)
    with contextlib.redirect_stdout(sys.stderr):  # MLflow prints "View run ..." on stdout
        return [_log_card(mlc, exp, p) for p in _cards(Path(out))]


def _cards(root: Path) -> list[Path]:
    """The card files ``judge card`` wrote into ``root`` (one, or one per judge)."""
    found = [root / "card.json"] if (root / "card.json").is_file() else []
    return found or sorted(root.glob("*/card.json"))


def _log_card(mlc: Any, exp: str, p: Path) -> str:
    """Log the card at ``p`` as a new run of experiment ``exp``; the run id."""
    from metajudge.io import read_json

    card = read_json(p)
    run = mlc.create_run(
        exp,
        run_name=f"judge card: {card.get('judge')}",
        tags={**signature_tags(card), "metajudge.command": "judge card"},
    )
    rid = str(run.info.run_id)
    for k, v in headline_metrics(card).items():
        mlc.log_metric(rid, k, v)
    for name in ("card.json", "card.html"):
        if (p.parent / name).is_file():
            mlc.log_artifact(rid, str(p.parent / name))
    mlc.set_terminated(rid)
    return rid


def tag_plan(source: Any, out: str | Path | None, tracking_uri: str | None = None) -> int:
    """Tag the traces ``calibrate plan`` selected (``out/selection.csv``); how many."""
    from metajudge.data.label_plan import read_plan
    from metajudge.runs.calibrate_estimate import SELECTION_FILE

    sel = Path(out or "") / SELECTION_FILE
    if out is None or not sel.is_file():
        raise InputError(
            "--log-to-mlflow tags the traces the plan selects: give --budget N and --out DIR",
            field="--log-to-mlflow",
        )
    mlc, _ = _experiment(source, tracking_uri)
    picked = [(s, i, p) for (s, i), (p, chosen, _line) in read_plan(sel).items() if chosen]
    with contextlib.redirect_stdout(sys.stderr):
        for system, item, prob in picked:
            trace = item.removesuffix(f"::{system}")
            mlc.set_trace_tag(trace, PLAN_TAG, "selected")
            mlc.set_trace_tag(trace, PROBABILITY_TAG, f"{prob:.6g}")
    return len(picked)
