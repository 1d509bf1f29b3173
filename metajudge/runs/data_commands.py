"""The ``metajudge data`` commands' work: open the dataset a command names, export its records or
its pairs as a canonical JSONL file, fetch the upstream files, validate a file (``data fetch --recount``:
:func:`metajudge.runs.matrix.table.run_recount`).

The CLI (:mod:`metajudge.cli.data`) parses, calls one of these and prints what it returns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.errors import InputError


def open_named(
    name: str | None,
    dataset: str | None,
    input_file: str | None,
    *,
    subset: str | None = None,
    data_dir: str | Path | None = None,
) -> Any:
    """The dataset a ``data`` command names: positionally (``name``), or by ``--dataset NAME`` /
    ``--input FILE``, exactly once."""
    from metajudge.data.loading import open_dataset

    if name and (dataset or input_file):
        raise InputError("give the dataset once (--dataset NAME or --input FILE)", field="dataset")
    name = dataset or name
    if name is None and input_file is None:
        raise InputError("give --dataset NAME or --input FILE", field="dataset")
    return open_dataset(name, input_file, subset=subset, data_dir=data_dir)


def run_export(
    output: str,
    *,
    name: str | None = None,
    dataset: str | None = None,
    input_file: str | None = None,
    subset: str | None = None,
    data_dir: str | Path | None = None,
) -> str:
    """``data export``: the dataset's records written to ``output`` as canonical JSONL; the line
    that says what was written (``data export --pairs`` is :func:`run_pairs`)."""
    from metajudge.data.formats import write_jsonl
    from metajudge.io import check_output_file

    check_output_file(output, inputs=[input_file], field="--output")
    ds = open_named(name, dataset, input_file, subset=subset, data_dir=data_dir)
    if ds.card.kind == "benchmark":
        raise InputError(
            f"{ds.name} holds benchmark inputs (no human labels), not canonical records; "
            "use metajudge.data.load_mudabench / load_mtraig_items",
            field="name",
        )
    if not ds.records:
        raise InputError(f"{ds.name}: nothing to export (0 records)", field="records")
    n = write_jsonl(output, ds.records, card=ds.card)
    return f"wrote {n} {ds.card.kind} records of {ds.name} to {output}"


def pairs_summary(ds: Any, pairs: Sequence[Any], tie_band: float, n: int, output: str) -> str:
    """What ``data export --pairs`` wrote: pairs, inputs, ties per dimension, inputs with one system."""
    systems: dict[str, set[str]] = {}
    for r in ds.records:
        systems.setdefault(r.id, set()).add(r.system)
    single = sum(1 for s in systems.values() if len(s) < 2)
    ties = Counter(d for p in pairs for d, v in p.labels.items() if v[0] == 0)
    tie_txt = ", ".join(f"{d} {ties.get(d, 0)}" for d in ds.card.dimensions)
    return (
        f"wrote {n} pairs from {len(systems) - single} inputs of {ds.name} to {output} "
        f"(label = mean(b) - mean(a); tie band {tie_band:g}; ties: {tie_txt}; "
        f"{single} inputs with a single system give no pair)"
    )


def run_pairs(
    output: str,
    *,
    tie_band: float,
    name: str | None = None,
    dataset: str | None = None,
    input_file: str | None = None,
    subset: str | None = None,
    data_dir: str | Path | None = None,
) -> str:
    """``data export --pairs``: the pairs of a graded (likert) dataset, differences within ``tie_band``
    ties, written to ``output`` as canonical pairwise JSONL; :func:`pairs_summary`."""
    from metajudge.data.formats import write_jsonl
    from metajudge.io import check_output_file

    check_output_file(output, inputs=[input_file], field="--output")
    ds = open_named(name, dataset, input_file, subset=subset, data_dir=data_dir)
    if ds.card.kind != "likert":
        raise InputError(
            f"{ds.name} is {ds.card.kind}: data export --pairs builds pairs from graded (likert) data, "
            "a score per response" + (" (it is pairwise already)" if ds.kind == "pairwise" else ""),
            path=input_file,
            field="kind",
        )
    pairs = ds.pairs(tie_band=tie_band)
    if not pairs:
        raise InputError(
            f"{ds.name}: no input has two systems with a common labelled dimension (0 pairs)",
            path=input_file,
            field="records",
        )
    n = write_jsonl(output, pairs, card=ds.pairwise_card(tie_band=tie_band))
    return pairs_summary(ds, pairs, tie_band, n, output)


def run_fetch(
    names: Sequence[str] | None, data_dir: str | Path | None = None
) -> list[tuple[str, Path]]:
    """``data fetch``: each built-in dataset's upstream files (all datasets without ``names``),
    downloaded when missing; ``[(name/relpath, local path)]``."""
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import list_datasets, load_card, resolve_file

    out = []
    for name in names or list_datasets():
        card = load_card(name)
        for sf in card.files:
            p = resolve_file(name, local_relpath(sf), data_dir)
            out.append((f"{name}/{local_relpath(sf)}", p))
    return out


def run_doctor(
    spec: str,
    *,
    input_file: str | None = None,
    reading: Any = None,
    tracking_uri: str | None = None,
) -> dict[str, Any]:
    """``data doctor``: what the score file ``spec`` (``FILE`` or ``FORMAT:FILE``) is, and the
    ``meta-eval`` command that reads it (:func:`metajudge.scores.doctor.describe`); for
    ``mlflow:EXPERIMENT``, what the experiment's traces are read as
    (:func:`metajudge.data.mlflow_traces.doctor_lines`)."""
    from metajudge.data.mlflow_traces import is_mlflow
    from metajudge.scores.doctor import describe
    from metajudge.scores.spec import parse_score_spec

    if is_mlflow(spec):  # an experiment: what its traces and assessments are read as
        from metajudge.data.loading import load

        counts = load(spec, tracking_uri=tracking_uri).card.counts
        return {"format": "mlflow", "experiment": spec, **dict(counts)}
    parsed = parse_score_spec(spec)
    if parsed.shipped:
        raise InputError("data doctor reads a file, not shipped columns", field="file")
    return describe(parsed.source, fmt=parsed.fmt, reading=reading, input_file=input_file)


def run_show(
    *,
    name: str | None = None,
    dataset: str | None = None,
    input_file: str | None = None,
    subset: str | None = None,
    data_dir: str | Path | None = None,
    pairs: bool = False,
    records: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]], bool]:
    """``data show``: the card (``pairs``: of the pairwise expansion) with the counts, the first
    ``records`` records (benchmark items for a benchmark) as dicts, and whether they are
    benchmark items."""
    from dataclasses import asdict

    from metajudge.data.registry import describe_counts

    ds = open_named(name, dataset, input_file, subset=subset, data_dir=data_dir)
    card = ds.pairwise_card() if pairs else ds.card
    head = {"card": card.to_dict(), "counts": describe_counts(ds)}
    n = max(0, records)
    if ds.card.kind == "benchmark":
        return head, [asdict(it) for it in ds.items[:n]], True
    recs = ds.pairs() if pairs else ds.records
    return head, [r.to_dict() for r in recs[:n]], False


@dataclass
class Validation:
    """What ``data validate`` found: ``summary`` (the OK line, or the line that says why the
    file fails), ``ok``, and the ``warnings`` and ``errors`` (each a line)."""

    summary: str
    ok: bool
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _validate_loaded(path: str, kind: str) -> Validation:
    """A JUDGE-BENCH-format file or a built-in dataset's upstream file: converted (errors name
    file, record and field), then each record checked against the JSON Schema of its kind and
    the (derived) card."""
    from metajudge.data.loading import load
    from metajudge.data.validation import Rules, raise_first, record_errors

    ds = load(Path(path))
    rules = Rules.of(ds.card)
    raise_first([e for r in ds.records for e in record_errors(r.to_dict(), rules, path=path)])
    what = {
        "judge_bench": "JUDGE-BENCH format",
        "released_probs": "Trust-or-Escalate released format (instruction, outputs, preferences, probs)",
    }.get(kind, f"upstream file of {ds.name}")
    return Validation(
        f"OK {path}: {what}, {len(ds.records)} {ds.card.kind} records; dimensions "
        + ", ".join(f"{d} ({ds.card.scale_of(d).describe()})" for d in ds.card.dimensions),
        True,
    )


def run_validate(
    path: str, *, card: str | None = None, no_card: bool = False, max_errors: int | None = None
) -> Validation:
    """``data validate``: a canonical JSONL file checked line by line (against the built-in
    ``card`` when given); a JUDGE-BENCH or upstream file (:func:`metajudge.data.loading.file_kind`)
    converted and its records checked."""
    from metajudge.data.loading import file_kind
    from metajudge.data.registry import load_card
    from metajudge.data.validation import check_file

    kind = file_kind(path)[0] if Path(path).is_file() else "jsonl"
    if kind not in ("jsonl", "columnar", "arena"):  # canonical records: checked one by one
        return _validate_loaded(path, kind)
    rep = check_file(path, load_card(card) if card else None, max_errors=max_errors)
    if rep.errors:
        shown = (
            f" (first {len(rep.errors)} shown; --max-errors)"
            if rep.n_errors > len(rep.errors)
            else ""
        )
        summary = f"{path}: {rep.n_errors} error(s){shown}"
        return Validation(summary, False, list(rep.warnings), list(rep.errors))
    if rep.card is None and not no_card:
        return Validation(
            f"metajudge: error: {path}:1: field card: no card line (line 1 of a canonical "
            'file is {"card": {...}}: kind, dimensions, scale; docs/own-data.md); '
            "give --card NAME to check it against a built-in card, or --no-card to check its "
            "records without one",
            False,
            list(rep.warnings),
        )
    dims: Counter[str] = Counter()
    for r in rep.records:
        dims.update((getattr(r, "labels", None) or r.scores).keys())
    used = rep.card
    kind = used.kind if used else ("pairwise" if hasattr(rep.records[0], "labels") else "likert")
    return Validation(
        f"OK {path}: {len(rep.records)} {kind} records; dimensions "
        + ", ".join(f"{d} ({c})" for d, c in dims.items())
        + (
            f"; card {used.name}, scale {used.scale.describe()}"
            if used
            else "; no card (scale not checked)"
        )
        + _label_lines(rep.records),
        True,
        list(rep.warnings),
    )


def _label_lines(records: Sequence[Any]) -> str:
    """Labelled and unlabelled records per system (partial labels), one line each."""
    from metajudge.data.partial import label_counts

    counts = label_counts(records)
    n_lab = sum(c["labelled"] for c in counts.values())
    head = f"\nlabelled records: {n_lab} of {len(records)}"
    if n_lab == len(records):
        return head + " (every record)"
    return head + "".join(
        f"\n  {s}: {c['labelled']} labelled, {c['unlabelled']} unlabelled"
        for s, c in counts.items()
    )


def run_list(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """``data list``: a row per built-in dataset (its card's counts); with ``data_dir``, what that
    folder holds (:func:`metajudge.data.loading.list_local`), with a status per entry."""
    from metajudge.data.card_counts import listing_row
    from metajudge.data.loading import list_local
    from metajudge.data.registry import list_datasets

    if data_dir:
        return list_local(data_dir)
    return [listing_row(n) for n in list_datasets()]
