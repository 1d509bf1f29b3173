"""The metric × dataset matrix: which metric applies to which human-judgment dataset, and what
is stored for each cell (``metajudge matrix``).

Rows: every registered metric (families are listed as their members) and the pairwise judge
(:mod:`metajudge.metrics.judges.pairwise`, not a registry metric: it judges two responses at
once). Columns: every built-in dataset and each ``--input`` file. What a metric needs is declared
once, in :func:`metajudge.metrics.registry.requirements`; :func:`dataset_facts` reads what a
dataset carries from its records and :func:`applicability` names the first thing missing.

A cell's status is one of ``stored`` | ``stored (subset n=…/N, seeded)`` | ``n/a: <reason>`` |
``not run: <reason>``. Stored results come from ``baselines/ours_<dataset>.json`` (deterministic
metrics and shipped scores, regression-tested by ``metajudge baselines check``) and from
``baselines/judges/<metric>__<dataset>.json`` (cells written by ``metajudge matrix run``); the
one-line reasons of cells that apply but were not run are in ``baselines/judges/not_run.json``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from metajudge.data.formats import PairwiseRecord
from metajudge.results import Result

#: the pairwise judge's row name (declared in the registry's requirements, not a registry metric)
PAIRWISE_JUDGE = "pairwise_judge"
#: a requirement holds when at least this share of a dataset's records meets it
MIN_SHARE = 0.5
#: median words of a reference above which it is a text to compare with, not a gold answer
SHORT_REFERENCE_WORDS = 200
CELL_SCHEMA = "metajudge.matrix_cell/1"
NOT_RUN_FILE = "not_run.json"


def default_baselines_dir() -> Path:
    """``baselines/`` of the source tree this package runs from (else ``./baselines``)."""
    here = Path(__file__).resolve().parents[3] / "baselines"
    return here if here.is_dir() else Path("baselines")


@dataclass(frozen=True)
class DatasetFacts(Result):
    """What a dataset carries, read from its records (shares of records)."""

    name: str
    kind: str
    label_kind: str
    records: int
    items: int
    dimensions: tuple[str, ...]
    shares: Mapping[str, float] = field(default_factory=dict)
    reference_words: float | None = None
    responses_per_input: float = 0.0
    source: str = "built-in"


def _responses(rec: Any) -> list[str | None]:
    return [rec.a.response, rec.b.response] if isinstance(rec, PairwiseRecord) else [rec.response]


def _is_number(text: str) -> bool:
    from metajudge.metrics.numeric import number_spans, template

    spans = number_spans(text)
    return len(spans) == 1 and len(template(text, spans).split()) <= 3


def dataset_facts(ds: Any, *, source: str = "built-in") -> DatasetFacts:
    """The facts :func:`applicability` checks, for a loaded :class:`~metajudge.data.registry.Dataset`."""
    recs = list(ds.records)
    n = len(recs) or 1

    def share(pred: Any) -> float:
        return round(sum(1 for r in recs if pred(r)) / n, 4) if recs else 0.0

    refs = [r.input.reference for r in recs if r.input is not None and r.input.reference]
    shares = {
        "response": share(lambda r: all(x is not None and x.strip() for x in _responses(r))),
        "reference": share(lambda r: bool(r.input and r.input.reference)),
        "tables": share(lambda r: bool(r.input and r.input.tables)),
        "context": share(lambda r: bool(r.input and (r.input.context or r.input.documents))),
        "question": share(lambda r: bool(r.input and r.input.question.strip())),
        "pairs": share(lambda r: isinstance(r, PairwiseRecord)),
        "numeric_reference": round(sum(map(_is_number, refs)) / n, 4) if refs else 0.0,
    }
    ids = [r.id for r in recs]
    return DatasetFacts(
        name=ds.card.name,
        kind=ds.card.kind,
        label_kind=ds.card.label_kind,
        records=len(recs),
        items=len(set(ids)),
        dimensions=tuple(ds.card.dimensions),
        shares=shares,
        reference_words=float(statistics.median(len(x.split()) for x in refs)) if refs else None,
        responses_per_input=round(len(ids) / len(set(ids)), 2) if ids else 0.0,
        source=source,
    )


#: the fields of :class:`DatasetFacts` a built-in card stores (``counts.facts``)
_STORED_FACTS = ("records", "items", "shares", "reference_words", "responses_per_input")


def facts_record(facts: DatasetFacts) -> dict[str, Any]:
    """What a built-in card stores of ``facts`` (``metajudge data fetch --recount`` writes it)."""
    return {
        k: (dict(v) if isinstance(v, Mapping) else v)
        for k, v in asdict(facts).items()
        if k in _STORED_FACTS
    }


def builtin_facts(name: str, data_dir: str | Path | None) -> DatasetFacts:
    """The facts of built-in dataset ``name``: from its card's ``counts.facts`` (no load), else
    read from the loaded records."""
    from metajudge.data.loading import load
    from metajudge.data.registry import load_card

    card = load_card(name)
    stored = card.counts.get("facts") if card.counts else None
    if not stored or any(k not in stored for k in _STORED_FACTS):
        return dataset_facts(load(name, data_dir))
    return DatasetFacts(
        name=card.name,
        kind=card.kind,
        label_kind=card.label_kind,
        dimensions=tuple(card.counts.get("dimensions", card.dimensions)),
        **{k: stored[k] for k in _STORED_FACTS},
    )


def applicability(metric: str, facts: DatasetFacts) -> str | None:
    """``None`` when ``metric`` applies to the dataset, else the one-line reason it does not."""
    from metajudge.metrics.registry import REQUIREMENTS, requirements

    if facts.label_kind == "none":
        return "benchmark dataset (no human labels to agree with)"
    if facts.label_kind in ("categorical", "binary"):
        return (
            f"{facts.label_kind} labels (metric scores are meta-evaluated against numeric or "
            "pairwise labels; categorical meta-evaluation is not wired to metrics)"
        )
    req = requirements(metric)
    if req is None:
        return "requirements not declared (metrics/registry.py declare_requirements)"
    for r in req:
        if r == "gold_facts":
            return f"needs {REQUIREMENTS[r]}"
        if r == "short_reference":
            w = facts.reference_words
            if w is not None and w > SHORT_REFERENCE_WORDS:
                return f"references are long texts (median {w:g} words), not gold answers"
            continue
        if facts.shares.get(r, 0.0) < MIN_SHARE:
            if r == "pairs":
                return "not a pairwise preference dataset (the judge compares two responses)"
            if r == "numeric_reference" and facts.shares.get("reference", 0.0) >= MIN_SHARE:
                return "reference answers are not numbers"
            return f"no {REQUIREMENTS[r]}"
    return None


def matrix_rows() -> list[str]:
    """Every registered metric (families as their members) and the pairwise judge."""
    from metajudge.metrics.registry import family_members, list_metrics

    names = [m for m in list_metrics() if not family_members(m)]
    return [*names, PAIRWISE_JUDGE]


def natural_protocol(metric: str, facts: DatasetFacts) -> dict[str, str]:
    """The protocol a cell is meta-evaluated with (the dataset's natural one).

    Pairwise judge: accuracy with position consistency (``metajudge judge diagnostics``).
    Pairwise data with numeric labels: the per-pair difference of the metric against the
    humans' preference (RAGChecker's protocol). Likert data: each response's score against its
    human score, per input across its responses and averaged over inputs (G-Eval's summary
    level) when inputs have at least 3 responses on average, else pooled.
    """
    if metric == PAIRWISE_JUDGE:
        return {
            "correlate": "judge-diagnostics",
            "level": "pairs",
            "statistic": "accuracy_both_orders",
        }
    if facts.label_kind == "pairwise":
        return {"correlate": "pairwise-difference", "level": "global", "statistic": "pearson"}
    # a per-input correlation needs at least 3 responses per input (min_pairs)
    level = "item" if facts.responses_per_input >= 3 else "global"
    return {"correlate": "pointwise", "level": level, "statistic": "spearman"}


def headline_dimension(metric: str, dimensions: Sequence[str]) -> str | None:
    """The dimension a cell shows first: the one the metric is named for (``geval_coherence`` →
    ``coherence``), else the dataset's first."""
    for d in dimensions:
        if metric.endswith("_" + d):
            return d
    return dimensions[0] if dimensions else None


# ---------------------------------------------------------------------------------------------
# Stored results


def cell_path(baselines: str | Path, metric: str, dataset: str) -> Path:
    """``<baselines>/judges/<metric>__<dataset>.json``."""
    from metajudge.data.names import check_dataset_name

    check_dataset_name(metric, field="metric")
    check_dataset_name(dataset, field="dataset")
    return Path(baselines) / "judges" / f"{metric}__{dataset}.json"


def read_not_run(baselines: str | Path) -> dict[str, str]:
    """``{"<metric>__<dataset>": reason}`` from ``baselines/judges/not_run.json`` (may be absent)."""
    from metajudge.io import read_json

    p = Path(baselines) / "judges" / NOT_RUN_FILE
    if not p.is_file():
        return {}
    return {str(k): str(v) for k, v in dict(read_json(p).get("reasons", {})).items()}


def read_cell(path: Path) -> dict[str, Any]:
    """A stored judge cell, checked against its JSON Schema (errors name the file and field)."""
    from metajudge.io import read_json
    from metajudge.runs.matrix.cell import check_cell

    obj = read_json(path)
    check_cell(obj, path)
    return dict(obj)


def _deterministic(
    baselines: Path, dataset: str
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Our deterministic metrics' entries in ``ours_<dataset>.json`` by metric, and the names of
    the shipped score columns baselined there (the dataset's own metric scores, not ours)."""
    p = baselines / f"ours_{dataset}.json"
    if not p.is_file():
        return {}, []
    data = json.loads(p.read_text(encoding="utf-8"))
    ours = set(data.get("lexical", []))
    out: dict[str, list[dict[str, Any]]] = {}
    shipped: list[str] = []
    for e in data.get("entries", []):
        if e["metric"] not in ours:
            shipped += [e["metric"]] if e["metric"] not in shipped else []
            continue
        out.setdefault(e["metric"], []).append({**e, "_protocol": data.get("protocol", {})})
    return out, shipped


# ---------------------------------------------------------------------------------------------
# The matrix


@dataclass
class Cell:
    """One metric × dataset cell: its status and, when stored, the headline result and cost."""

    metric: str
    dataset: str
    status: str
    dimension: str | None = None
    statistic: str | None = None
    value: float | None = None
    ci: list[float | None] | None = None
    #: the CI's method; a cell stored before the small-n rule has a percentile bootstrap CI
    ci_method: str | None = None
    n: int | None = None
    backbone: str | None = None
    date: str | None = None
    signature: str | None = None
    wall_s: float | None = None
    calls: int | None = None
    tokens: int | None = None
    protocol: str | None = None
    file: str | None = None
    published: float | None = None  # the same statistic in the paper (baselines/published_*.json)
    published_source: str | None = None
    #: options of the stored signature that are not the metric's default now (see
    #: :func:`non_default_options`): the cell is a record of what it was computed with
    non_default: list[str] = field(default_factory=list)

    @property
    def applies(self) -> bool:
        return not self.status.startswith("n/a")

    @property
    def stored(self) -> bool:
        return self.status.startswith("stored")


@dataclass
class Matrix(Result):
    """Every cell of the metric × dataset matrix, and the facts each dataset column was judged on."""

    rows: list[str]
    datasets: list[DatasetFacts]
    cells: list[Cell]
    notes: dict[str, str] = field(default_factory=dict)  # dataset -> note (not baselined …)

    def cell(self, metric: str, dataset: str) -> Cell:
        for c in self.cells:
            if c.metric == metric and c.dataset == dataset:
                return c
        raise KeyError((metric, dataset))

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": list(self.rows),
            "datasets": [d.to_dict() for d in self.datasets],
            "cells": [asdict(c) for c in self.cells],
            "notes": dict(self.notes),
        }

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame([asdict(c) for c in self.cells])


def signature_fields(signature: str) -> dict[str, str]:
    """The ``key:value`` fields of a metric signature (the first field, the name, has none).

    >>> signature_fields("mtraig_faithfulness|backbone:smollm2-135m|mode:batched")
    {'backbone': 'smollm2-135m', 'mode': 'batched'}
    """
    return dict(f.split(":", 1) for f in signature.split("|")[1:] if ":" in f)


def non_default_options(metric: str, signature: str | None) -> list[str]:
    """Fields of a stored ``signature`` that differ from the defaults the metric class declares
    (``signature_defaults``: signature key → its default value), or that the signature lacks
    (it predates the option); ``[]`` when none, or for a metric that declares none.

    >>> non_default_options("mtraig_faithfulness", "mtraig_faithfulness|mode:batched|n:1")
    ['mode:batched (default per_claim)', 'unparsed: not in the signature (default unscored)']
    """
    from metajudge.errors import MetajudgeError
    from metajudge.metrics.registry import metric_class

    if not signature:
        return []
    try:
        defaults = getattr(metric_class(metric), "signature_defaults", None) or {}
    except (MetajudgeError, KeyError, ImportError):
        return []
    have = signature_fields(signature)
    out = []
    for key, want in defaults.items():
        if key not in have:
            out.append(f"{key}: not in the signature (default {want})")
        elif have[key] != want:
            out.append(f"{key}:{have[key]} (default {want})")
    return out


def _mark_non_default(cell: Cell) -> Cell:
    """A stored cell computed with non-default options says so in its status."""
    cell.non_default = non_default_options(cell.metric, cell.signature)
    if cell.non_default:
        cell.status += f"; computed with non-default options: {'; '.join(cell.non_default)}"
    return cell


def stored_ci_method(result: Mapping[str, Any]) -> str | None:
    """The method of a stored result's CI: as recorded, or — a cell stored before the small-n
    rule (no ``ci_method``) — the percentile bootstrap, flagged where n is at most
    :data:`~metajudge.stats.intervals.SMALL_N` (the rule would now give another interval)."""
    from metajudge.stats.intervals import PERCENTILE, SMALL_N

    if "ci_method" in result:
        return result["ci_method"]
    if not result.get("ci"):
        return None
    n = result.get("n")
    if n is not None and n <= SMALL_N:
        return f"{PERCENTILE} (stored before the small-n rule; n <= {SMALL_N})"
    return PERCENTILE


def _stored_cell(cell: Cell, obj: Mapping[str, Any], path: Path) -> Cell:
    sub = obj["subset"]
    proto = obj["protocol"]
    head = obj["headline"]
    hit = next(
        (
            r
            for r in obj["results"]
            if r["dimension"] == head["dimension"] and r["statistic"] == head["statistic"]
        ),
        obj["results"][0],
    )
    led = obj.get("measured") or obj["ledger"]  # what the model cost when it computed the cell
    cell.status = (
        "stored"
        if sub["n"] >= sub["N"]
        else f"stored (subset n={sub['n']}/{sub['N']} {sub['unit']}, seeded)"
    )
    cell.dimension, cell.statistic = hit["dimension"], hit["statistic"]
    cell.value, cell.ci, cell.n = hit["value"], hit["ci"], hit["n"]
    cell.ci_method = stored_ci_method(hit)
    cell.backbone, cell.date, cell.signature = obj["backbone"], obj["date"], obj["signature"]
    # wall time of the run that called the model (unknown when its calls were made elsewhere)
    cell.wall_s = obj["measured"].get("wall_s") if obj.get("measured") else obj["wall_s"]
    more = led.get("from_cache") or {}  # answers of this cell computed by an earlier run
    cell.calls = led["calls"] + more.get("calls", 0)
    cell.tokens = sum(led[k] + more.get(k, 0) for k in ("prompt_tokens", "completion_tokens"))
    cell.protocol = f"{proto['correlate']}|{proto['level']}"
    cell.file = str(path)
    return _mark_non_default(cell)


def _baseline_cell(
    cell: Cell, entries: Sequence[Mapping[str, Any]], dims: Sequence[str], path: Path
) -> Cell:
    defined = [e["dimension"] for e in entries if e.get("pearson") is not None]
    have = defined or [e["dimension"] for e in entries]  # first a dimension with a value
    dim = headline_dimension(cell.metric, [d for d in dims if d in have] or have)
    e = next(x for x in entries if x["dimension"] == dim)
    proto = e.get("_protocol") or {}
    stat = "pearson"  # the baselines use the pairwise-difference protocol (pipeline/baselines.py)
    sig = e.get("signature")
    cell.status = "stored"
    cell.dimension, cell.statistic, cell.value = dim, stat, e.get(stat)
    cell.n = e.get("n_items")
    cell.signature = sig[0] if isinstance(sig, list) and sig else sig
    level = "item" if proto.get("grouped") else "global"
    cell.protocol = f"pairwise-difference|{level} (baseline: point estimate, no CI)"
    cell.file = str(path)
    return _mark_non_default(cell)


def _cell(
    metric: str,
    facts: DatasetFacts,
    baselines: Path,
    det: Mapping[str, Any],
    not_run: Mapping[str, str],
) -> Cell:
    cell = Cell(metric, facts.name, "")
    reason = applicability(metric, facts)
    if reason is not None:
        cell.status = f"n/a: {reason}"
        return cell
    p = cell_path(baselines, metric, facts.name)
    if p.is_file():
        return _stored_cell(cell, read_cell(p), p)
    if metric in det:
        path = baselines / f"ours_{facts.name}.json"
        return _baseline_cell(cell, det[metric], facts.dimensions, path)
    why = not_run.get(f"{metric}__{facts.name}")
    cell.status = f"not run: {why}" if why else "not run: no stored result and no reason given"
    return cell


def _load_columns(
    inputs: Sequence[str | Path], data_dir: str | Path | None
) -> list[tuple[DatasetFacts, Any]]:
    from metajudge.data.loading import load
    from metajudge.data.registry import list_datasets

    out = []
    for name in list_datasets():
        out.append((builtin_facts(name, data_dir), None))
    for f in inputs:
        out.append((dataset_facts(load(Path(f), data_dir), source=str(f)), f))
    return out


def build_matrix(
    *,
    inputs: Sequence[str | Path] = (),
    data_dir: str | Path | None = None,
    baselines: str | Path | None = None,
    metrics: Sequence[str] | None = None,
) -> Matrix:
    """Every metric × dataset cell (built-in datasets, then each ``inputs`` file)."""
    base = Path(baselines) if baselines is not None else default_baselines_dir()
    rows = list(metrics) if metrics else matrix_rows()
    not_run = read_not_run(base)
    cols = _load_columns(inputs, data_dir)
    cells: list[Cell] = []
    notes: dict[str, str] = {}
    idx = base / "ours_index.json"
    if idx.is_file():
        index = json.loads(idx.read_text(encoding="utf-8")).get("not_baselined", {})
        notes = {k: f"no deterministic baseline: {v}" for k, v in index.items()}
    for facts, _ in cols:
        det, shipped = _deterministic(base, facts.name)
        cells += [_cell(m, facts, base, det, not_run) for m in rows]
        if shipped:
            more = ", …" if len(shipped) > 4 else ""
            notes[facts.name] = (
                f"{len(shipped)} shipped score column(s) baselined in ours_{facts.name}.json "
                f"(the dataset's own metric scores: {', '.join(shipped[:4])}{more})"
            )
    attach_published_values(cells, base)
    return Matrix(rows, [f for f, _ in cols], cells, notes)


def run_matrix(
    *,
    inputs: Sequence[str | Path] = (),
    data_dir: str | Path | None = None,
    baselines: str | Path | None = None,
    fmt: str = "md",
    output: str | Path | None = None,
) -> str:
    """``metajudge matrix``: the matrix (:func:`build_matrix`) as ``fmt`` (md, csv, json),
    written to ``output`` (atomically) when given; the text."""
    from metajudge.reports.matrix import matrix_csv, matrix_markdown

    m = build_matrix(inputs=inputs, data_dir=data_dir, baselines=baselines)
    if fmt == "json":
        text = json.dumps(m.to_dict(), indent=1, ensure_ascii=False) + "\n"
    else:
        text = matrix_csv(m) if fmt == "csv" else matrix_markdown(m)
    if output:
        from metajudge.io import atomic_write, check_output_file

        check_output_file(output)
        with atomic_write(output) as fh:
            fh.write(text)
    return text


def attach_published_values(cells: Sequence[Cell], baselines: Path) -> None:
    """Beside each stored cell, the paper's value of the same statistic, dataset and dimension
    (``baselines/published_*.json``, printed ×100 there); a family's entry (``geval``) matches its
    member named for the dimension (``geval_coherence``)."""
    from metajudge.reports.published import load_published

    entries = [e for e in load_published(baselines) if not e.get("subset")]
    for c in cells:
        if c.value is None:
            continue
        for e in entries:
            name_ok = e["metric"] == c.metric or c.metric == f"{e['metric']}_{e['dimension']}"
            if (
                name_ok
                and e.get("dataset") == c.dataset
                and e["dimension"] == c.dimension
                and e.get("statistic") == c.statistic
            ):
                c.published = round(float(e["value"]) / 100.0, 4)
                c.published_source = f"{e.get('file', '')}: {e.get('table', '')} {e.get('row', '')}"
                break


def run_recount(names: Sequence[str] | None, data_dir: str | Path | None = None) -> list[str]:
    """``data fetch --recount``: the counts (and facts) stored in each card recomputed from the data;
    the names of the cards rewritten."""
    from metajudge.data.card_counts import counts_of, write_counts
    from metajudge.data.loading import load
    from metajudge.data.registry import describe_counts, list_datasets

    changed = []
    for name in names or list_datasets():
        ds = load(name, data_dir)
        counts = {**counts_of(describe_counts(ds)), "facts": facts_record(dataset_facts(ds))}
        if write_counts(name, counts):
            changed.append(name)
    return changed
