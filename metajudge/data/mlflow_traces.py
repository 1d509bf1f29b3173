"""An MLflow experiment's traces and assessments as a dataset: ``--input mlflow:EXPERIMENT``.

MLflow logs an LLM application's calls as *traces*, and the verdicts on them as *assessments*:
feedback (``mlflow.log_feedback``, from a ``HUMAN`` reviewer, an ``LLM_JUDGE`` or ``CODE``) and
expectations (``mlflow.log_expectation``, ground truth). :func:`read_experiment` reads one
experiment (by name or id; the tracking URI from ``tracking_uri``, else ``$MLFLOW_TRACKING_URI``:
a ``sqlite:///`` store, a folder or a server) as a per-response dataset:

- one record per trace: id = the trace id, system = the app version that made it (the
  LoggedModel named by ``mlflow.set_active_model``), else the trace's name, input = its request (the
  ``question`` argument, or the only argument, else the request as JSON), response = its
  response, meta = its own tags (not MLflow's ``mlflow.*`` ones, nor the ``metajudge.*`` ones
  ``calibrate plan --log-to-mlflow`` sets);
- each assessment name is a dimension (``dimension``: only that one); human feedback and every
  expectation are its labels, one annotator per reviewer (``source_id``; ``null`` where a
  reviewer did not assess the trace); a trace no human assessed is an unlabelled record;
- each ``LLM_JUDGE`` source's feedback is a judge column named by its ``source_id``
  (``<source_id>_<dimension>`` with several dimensions), read by ``--scores shipped`` (the
  card's ``mlflow_assessments`` shipped-scores loader in :mod:`metajudge.scores.shipped`,
  reading each record's ``meta["mlflow_judges"]``); feedback logged with
  an ``AssessmentError``, or a value off the dimension's kind, is a row with an error (counted
  as unparsed, never dropped).

Values: ``bool`` (and ``"yes"``/``"no"``, ``"true"``/``"false"``) make a ``binary`` dimension
with labels ``["no", "yes"]`` (docs/own-data.md); numbers a ``likert`` one (the range the
reviewers used); other strings a ``categorical`` one (the labels the reviewers used: a judge's
other label is off the scale, counted as invalid by ``meta-eval``). An assessment that was overridden
(``valid`` false) is skipped. mlflow is an optional extra (``pip install metajudge[mlflow]``),
imported only here.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from metajudge.errors import InputError

MLFLOW_PREFIX = "mlflow:"
#: the card's shipped-scores loader of the judge columns (:mod:`metajudge.scores.shipped`)
LOADER = "mlflow_assessments"
#: the record meta key holding a trace's judge assessments ({column: value or error})
META_KEY = "mlflow_judges"
_BINARY = {"yes": "yes", "no": "no", "true": "yes", "false": "no"}


def is_mlflow(source: Any) -> bool:
    """Does ``source`` (an ``--input`` value) name an MLflow experiment (``mlflow:EXPERIMENT``)?"""
    return isinstance(source, str | os.PathLike) and str(source).startswith(MLFLOW_PREFIX)


def import_mlflow() -> Any:
    """The ``mlflow`` module, or an error naming the extra that installs it."""
    try:
        import mlflow
    except ImportError:
        raise InputError(
            "reading or writing MLflow needs mlflow: pip install metajudge[mlflow]",
            field="mlflow",
        ) from None
    return mlflow


def client(tracking_uri: str | None = None) -> Any:
    """An ``MlflowClient`` of ``tracking_uri`` (else ``$MLFLOW_TRACKING_URI``)."""
    import_mlflow()
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri or os.environ.get("MLFLOW_TRACKING_URI"))


def experiment_id(mlc: Any, name_or_id: str) -> str:
    """The id of the experiment named (or numbered) ``name_or_id``; an error names the known."""
    exp = mlc.get_experiment_by_name(name_or_id)
    if exp is None and name_or_id.isdigit():
        try:
            exp = mlc.get_experiment(name_or_id)
        except Exception:  # noqa: BLE001 - MLflow raises its own error for an unknown id
            exp = None
    if exp is None:
        known = ", ".join(e.name for e in mlc.search_experiments(max_results=50))
        raise InputError(
            f"no MLflow experiment {name_or_id!r} at {mlc.tracking_uri} (known: {known or 'none'})",
            field="--input",
        )
    return str(exp.experiment_id)


@dataclass
class _Trace:
    """One trace as read: its record fields and its assessments by dimension."""

    id: str
    system: str
    question: str
    response: str | None
    meta: dict[str, Any]
    humans: dict[str, dict[str, Any]] = field(default_factory=dict)  # dim -> reviewer -> value
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)  # dim -> judge -> value|err


@dataclass
class _Error:
    """An assessment logged with an ``AssessmentError``."""

    message: str


def _text(raw: Any) -> tuple[str | None, Any]:
    """A request or response as MLflow keeps it (JSON text): the text, and the parsed value."""
    if raw is None:
        return None, None
    try:
        val = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return str(raw), raw
    if isinstance(val, str):
        return val, val
    return json.dumps(val, ensure_ascii=False), val


def _question(raw: Any) -> str:
    """A trace's request as a record's question: its ``question`` (or only) argument's text."""
    text, val = _text(raw)
    if isinstance(val, Mapping):
        if isinstance(val.get("question"), str):
            return str(val["question"])
        if len(val) == 1 and isinstance(next(iter(val.values())), str):
            return str(next(iter(val.values())))
    return text or ""


def _read_traces(mlc: Any, exp_id: str, counts: Counter[str]) -> list[_Trace]:
    """Every trace of the experiment with its valid assessments (page by page, oldest first)."""
    out: list[_Trace] = []
    models: dict[str, str] = {}
    token = None
    while True:
        page = mlc.search_traces(
            locations=[exp_id], max_results=500, page_token=token, order_by=["timestamp ASC"]
        )
        out += [_trace(t, counts, _system(mlc, t, models)) for t in page]
        token = page.token
        if not token:
            return out


def _system(mlc: Any, t: Any, models: dict[str, str]) -> str:
    """A trace's system: the name of the app version that made it (the LoggedModel of
    ``mlflow.set_active_model``), else the trace's name (``models``: names already looked up)."""
    mid = (t.info.trace_metadata or {}).get("mlflow.modelId")
    if mid and mid not in models:
        models[mid] = str(mlc.get_logged_model(mid).name)
    return models.get(mid) or str((t.info.tags or {}).get("mlflow.traceName") or "app")


def _trace(t: Any, counts: Counter[str], system: str) -> _Trace:
    info = t.info
    tags = dict(info.tags or {})
    response, _ = _text(t.data.response if t.data else None)
    tr = _Trace(
        id=str(info.trace_id),
        system=system,
        question=_question(t.data.request if t.data else None),
        response=response,
        meta={k: v for k, v in tags.items() if not k.startswith(("mlflow.", "metajudge."))},
    )
    for a in sorted(info.assessments or (), key=lambda a: a.last_update_time_ms or 0):
        if getattr(a, "valid", True) is False:
            counts["overridden"] += 1
            continue
        kind = str(a.source.source_type)
        err = getattr(a, "error", None)
        value: Any = _Error(f"{err.error_code}: {err.error_message}") if err else a.value
        if type(a).__name__ == "Expectation" or kind == "HUMAN":
            tr.humans.setdefault(a.name, {})[str(a.source.source_id)] = value
        elif kind == "LLM_JUDGE":
            tr.judges.setdefault(a.name, {})[str(a.source.source_id)] = value
        else:
            counts[f"ignored_{kind.lower()}"] += 1
    return tr


def _kind(values: Sequence[Any]) -> str:
    """The label kind ``values`` (an assessment name's, errors left out) make."""
    if values and all(
        isinstance(v, bool) or (isinstance(v, str) and v.strip().lower() in _BINARY) for v in values
    ):
        return "binary"
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "likert"
    if all(isinstance(v, str) for v in values):
        return "categorical"
    seen = sorted({type(v).__name__ for v in values})
    raise InputError(f"values of several kinds ({', '.join(seen)})", field="--input")


def _mapped(v: Any, kind: str) -> Any:
    """``v`` on a ``kind`` dimension: a label (binary ``"no"``/``"yes"``, categorical) or a
    number; None when it is not of that kind."""
    if kind == "binary":
        if isinstance(v, bool):
            return "yes" if v else "no"
        return _BINARY.get(v.strip().lower()) if isinstance(v, str) else None
    if kind == "likert":
        ok = isinstance(v, int | float) and not isinstance(v, bool)
        return float(v) if ok else None
    return str(v) if isinstance(v, str) else None


@dataclass(frozen=True)
class _Dim:
    """One assessment name read as a dimension: its kind and scale."""

    name: str
    kind: str
    scale: Any


def _dimensions(traces: Sequence[_Trace], only: str | None) -> list[_Dim]:
    """The dimensions: every assessment name some reviewer used (``only``: that one), one kind."""
    from metajudge.data.formats import Scale

    names = list(dict.fromkeys(n for t in traces for n in t.humans))
    if only is not None:
        if only not in names:
            raise InputError(
                f"no human assessment named {only!r} (found: {', '.join(names) or 'none'})",
                field="--dimension",
            )
        names = [only]
    if not names:
        raise InputError("no trace of the experiment has a human assessment", field="--input")
    dims = []
    for n in names:
        human = [v for t in traces for v in t.humans.get(n, {}).values() if not _is_err(v)]
        try:
            kind = _kind(human)
        except InputError as e:
            raise InputError(f"assessment {n!r}: {e.message}", field="--input") from None
        if kind == "binary":
            scale = Scale(0.0, 1.0, None, ("no", "yes"))
        elif kind == "likert":
            nums = [float(v) for v in human]
            scale = Scale(min(nums), max(nums))
        else:
            labels = sorted({str(v) for v in human})  # a judge's other label: off the scale
            scale = Scale(0.0, len(labels) - 1.0, None, tuple(labels))
        dims.append(_Dim(n, kind, scale))
    if len({d.kind for d in dims}) > 1:
        said = ", ".join(f"{d.name} ({d.kind})" for d in dims)
        raise InputError(
            f"assessments of several kinds ({said}): give --dimension NAME", field="--dimension"
        )
    return dims


def _is_err(v: Any) -> bool:
    return isinstance(v, _Error)


def _judge_cell(v: Any, d: _Dim) -> dict[str, Any]:
    """A judge's assessment as a row's cell: ``score`` (a binary label's code), ``label``
    (categorical) or ``error``."""
    if _is_err(v):
        return {"error": f"MLflow assessment error {v.message}"}
    got = _mapped(v, d.kind)
    if got is None:
        return {"error": f"unparsed value {v!r} (not {d.kind})"}
    if d.kind == "binary":
        return {"score": float(d.scale.labels.index(got))}
    return {"label": got} if d.kind == "categorical" else {"score": got}


def _record(t: _Trace, dims: Sequence[_Dim], reviewers: Sequence[str], several: bool) -> dict:
    """The canonical record dict of one trace (module docstring)."""
    scores: dict[str, list[Any]] = {}
    judges: dict[str, dict[str, Any]] = {}
    for d in dims:
        given = t.humans.get(d.name, {})
        labels = [None if _is_err(v := given.get(r)) else _mapped(v, d.kind) for r in reviewers]
        if any(v is not None for v in labels):
            scores[d.name] = labels
        for judge, v in t.judges.get(d.name, {}).items():
            judges[f"{judge}_{d.name}" if several else judge] = _judge_cell(v, d)
    meta = {**t.meta, **({META_KEY: judges} if judges else {})}
    return {
        "id": t.id,
        "input": {"question": t.question},
        "system": t.system,
        "response": t.response,
        "scores": scores,
        "meta": meta,
    }


def read_experiment(
    source: str, *, tracking_uri: str | None = None, dimension: str | None = None
) -> Any:
    """The :class:`~metajudge.data.registry.Dataset` of ``mlflow:EXPERIMENT`` (module
    docstring), its card's ``counts`` saying what was found (:func:`found`)."""
    from metajudge.data.formats import DatasetCard
    from metajudge.data.registry import Dataset
    from metajudge.data.validation import record_from_dict

    name = str(source).removeprefix(MLFLOW_PREFIX)
    mlc = client(tracking_uri)
    counts: Counter[str] = Counter()
    traces = _read_traces(mlc, experiment_id(mlc, name), counts)
    if not traces:
        raise InputError(f"the MLflow experiment {name!r} has no traces", field="--input")
    dims = _dimensions(traces, dimension)
    reviewers = sorted({r for t in traces for d in dims for r in t.humans.get(d.name, {})})
    several = len(dims) > 1
    dicts = [_record(t, dims, reviewers, several) for t in traces]
    kind = dims[0].kind
    recs = [record_from_dict(d, kind=kind, scale=_scale_for(dims, d)) for d in dicts]  # type: ignore[arg-type]
    judges = sorted({j for d in dicts for j in d["meta"].get(META_KEY, {})})
    card = DatasetCard(
        name="mlflow_" + "".join(c if c.isalnum() or c in "-_" else "_" for c in name),
        kind=kind,  # type: ignore[arg-type]
        description=f"the traces of MLflow experiment {name!r} at {mlc.tracking_uri}: human "
        "assessments as labels (one annotator per reviewer), LLM judges' as judge columns",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=tuple(d.name for d in dims),
        scale=dims[0].scale,
        annotators=len(reviewers),
        direction="higher = better" if kind == "likert" else "",
        notes=f"reviewers: {', '.join(reviewers)}",
        shipped_scores=({"loader": LOADER, "judges": judges},) if judges else (),
        dimension_scales={d.name: d.scale for d in dims} if several else {},
        counts=_found(dicts, dims, reviewers, judges, counts),
    )
    return Dataset(card=card, records=recs, subsets=())


def _scale_for(dims: Sequence[_Dim], d: Mapping[str, Any]) -> Any:
    """The scale a record is checked against (its one dimension's where it has one)."""
    names = list(d["scores"])
    return next((x.scale for x in dims if names == [x.name]), dims[0].scale)


def _found(
    dicts: Sequence[Mapping[str, Any]],
    dims: Sequence[_Dim],
    reviewers: Sequence[str],
    judges: Sequence[str],
    counts: Mapping[str, int],
) -> dict[str, Any]:
    """What the reader found (``data doctor mlflow:EXPERIMENT`` prints it)."""
    cells = [c for d in dicts for c in d["meta"].get(META_KEY, {}).values()]
    labelled = sum(bool(d["scores"]) for d in dicts)
    return {
        "traces": len(dicts),
        "labelled": labelled,
        "unlabelled": len(dicts) - labelled,
        "dimensions": {d.name: d.kind for d in dims},
        "reviewers": list(reviewers),
        "judges": list(judges),
        "judge_assessments": len(cells),
        "judge_unparsed": sum("error" in c for c in cells),
        **{k: v for k, v in counts.items() if v},
    }


def doctor_lines(source: str, found: Mapping[str, Any]) -> list[str]:
    """``data doctor mlflow:EXPERIMENT``: what the reader found, one finding a line."""
    dims = ", ".join(f"{k} ({v})" for k, v in found["dimensions"].items())
    out = [
        f"experiment: {source}",
        (
            f"traces: {found['traces']} ({found['labelled']} with a human assessment, "
            f"{found['unlabelled']} without: the unlabelled rows)"
        ),
        f"dimensions (assessment names): {dims}",
        f"reviewers (annotators): {', '.join(found['reviewers']) or 'none'}",
        f"judge columns (LLM_JUDGE source ids): {', '.join(found['judges']) or 'none'}",
        (
            f"judge assessments: {found['judge_assessments']} ({found['judge_unparsed']} unparsed: "
            "an error or a value off the dimension's kind)"
        ),
    ]
    if found.get("overridden"):
        out.append(f"overridden assessments skipped: {found['overridden']}")
    if found.get("ignored_code"):
        out.append(f"CODE feedback not read: {found['ignored_code']}")
    judge = (found["judges"] or ["JUDGE"])[0]
    out.append(
        f"command: metajudge meta-eval --input {source} --scores shipped:{judge} --out runs/mlflow"
    )
    return out
