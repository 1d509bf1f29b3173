"""JUDGE-BENCH's unified format (Bavaresco et al., "LLMs instead of Human Judges? A Large Scale
Empirical Study across 20 NLP Evaluation Tasks", ACL 2025), read directly.

One file = ``{"dataset", "dataset_url", "annotations": [spec, ...], "instances": [...]}`` where a
spec is ``{"metric", "category": graded|categorical|continuous, "prompt", "worst"/"best" (graded,
continuous) or "labels_list" (categorical)}`` and an instance is ``{"id", "instance",
"annotations": {metric: {"individual_human_scores": [...], "mean_human" | "majority_human"
[, <model name>: <raw reply>]}}}`` (upstream README, ``human_labels/dmg_judge_bench/``).

Each file becomes a :class:`~metajudge.data.registry.Dataset` of per-response records (one record
per instance, ``system`` = ``"instance"``, no response text: the ``instance`` is the input) with one
dimension per annotation spec:

- graded → numeric scale ``[worst, best]`` (with the integer values when both ends are integers);
- continuous → numeric scale ``[worst, best]`` without listed values;
- categorical → the ``labels_list`` (unordered); a file's label is matched case-insensitively to
  the list, as the upstream evaluation lower-cases both (``eval_responses.py``).

A file whose specs are all numeric is a ``likert`` card, otherwise ``categorical``; in a mixed file
(ROSCOE ``*-overall``) the graded dimensions become ordered labels ``"worst" … "best"`` (a graded
item is an ordered category; their α level stays ordinal). Uneven annotator counts are padded with
``None`` to the longest list of the file. An instance with an empty ``individual_human_scores``
keeps its ``majority_human`` / ``mean_human`` as its only label (ToxicChat ships only that; the
record's ``meta['aggregate_only']`` names those dimensions). The aggregates and the raw model
replies of the file stay in ``meta`` (``mean_human``, ``majority_human``, ``replies``).

Limit: a file mixing categorical and *continuous* annotations (none of the shipped ones) loads and
its agreement is computed, but its records cannot be exported as one canonical JSONL file (a
categorical record holds label strings only; ``data validate`` names the numeric fields).
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.data.formats import DatasetCard, Input, Label, LikertRecord, Scale, SourceFile
from metajudge.errors import InputError

if TYPE_CHECKING:
    from metajudge.data.registry import Dataset

CATEGORIES = ("graded", "categorical", "continuous")
_HUMAN_KEYS = ("individual_human_scores", "mean_human", "majority_human")
# subset names of the shipped files: the name of their results file in results_regular/
SUBSET_NAMES: Mapping[str, str] = {
    "data/cola/cola.json": "cola",
    "data/dices/dices_990.json": "dices-990",
    "data/dices/dices_350_crowdsourced.json": "dices-350-crowdsourced",
    "data/dices/dices_350_expert.json": "dices-350-expert",
    "data/inferential-strategies/inferential_strategies.json": "inferential-strategies",
    "data/llmbar/data-adversarial.json": "llmbar-adversarial",
    "data/llmbar/data-natural.json": "llmbar-natural",
    "data/medical-safety/data.json": "medical-safety",
    "data/recipe_crowd_sourcing_data/meta_evaluation_recipes.json": "recipe-crowd-sourcing-data",
    "data/example.json": "example",
}


def subset_name(relpath: str) -> str:
    """The subset name of a file: the shipped files' results name, else the stem (``_`` → ``-``).

    >>> subset_name("data/dices/dices_990.json"), subset_name("data/roscoe/roscoe-drop-overall.json")
    ('dices-990', 'roscoe-drop-overall')
    """
    return SUBSET_NAMES.get(relpath, Path(relpath).stem.replace("_", "-"))


def is_judge_bench(obj: Any) -> bool:
    """True for a parsed JSON object in JUDGE-BENCH's unified format."""
    return isinstance(obj, Mapping) and "annotations" in obj and "instances" in obj


def replies_of(annotation: Mapping[str, Any]) -> dict[str, Any]:
    """The judges' raw replies in one instance's annotation of a metric: every key but the
    human scores (``<model name>: "<reply>"``)."""
    return {k: v for k, v in annotation.items() if k not in _HUMAN_KEYS}


def has_replies(obj: Any) -> bool:
    """True for a JUDGE-BENCH object some instance of which holds a judge's reply."""
    insts = obj.get("instances") if is_judge_bench(obj) else None
    return any(
        isinstance(a, Mapping) and bool(replies_of(a))
        for inst in (insts if isinstance(insts, list) else ())
        if isinstance(inst, Mapping) and isinstance(inst.get("annotations"), Mapping)
        for a in inst["annotations"].values()
    )


def _spec_scale(spec: Mapping[str, Any], where: str, path: Path) -> Scale:
    cat = spec.get("category")
    if cat not in CATEGORIES:
        raise InputError(
            f"unknown category {cat!r} (known: {', '.join(CATEGORIES)})",
            path=path,
            field=f"{where}.category",
        )
    if cat == "categorical":
        labels = spec.get("labels_list")
        if not isinstance(labels, list) or len(labels) < 2:
            raise InputError(
                "a categorical annotation needs a labels_list of at least two labels",
                path=path,
                field=f"{where}.labels_list",
            )
        return Scale(0.0, len(labels) - 1.0, None, tuple(str(x) for x in labels))
    try:
        lo, hi = sorted((float(spec["worst"]), float(spec["best"])))
    except (KeyError, TypeError, ValueError):
        raise InputError(
            f"a {cat} annotation needs numeric worst and best", path=path, field=where
        ) from None
    ints = cat == "graded" and lo.is_integer() and hi.is_integer()
    return Scale(lo, hi, tuple(float(v) for v in range(int(lo), int(hi) + 1)) if ints else None)


def _graded_as_labels(scale: Scale) -> Scale:
    """A graded numeric scale as ordered label strings (for a mixed file)."""
    vals = scale.values or (scale.min, scale.max)
    return Scale(0.0, len(vals) - 1.0, None, tuple(_num_label(v) for v in vals), True)


def _num_label(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _as_list(raw: Any, path: Path, field: str) -> list[Any]:
    """``individual_human_scores``: a list, or its Python-literal string (as the files store it)."""
    if isinstance(raw, str):
        try:
            raw = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            raise InputError(f"not a list literal: {raw[:60]!r}", path=path, field=field) from None
    if not isinstance(raw, list):
        raise InputError(f"expected a list, got {type(raw).__name__}", path=path, field=field)
    return raw


def _label(v: Any, scale: Scale, as_text: bool, path: Path, field: str) -> Label:
    """One annotator value on ``scale`` (categorical: matched case-insensitively)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if scale.labels is not None and not as_text:
        low = {x.lower(): x for x in scale.labels}
        hit = low.get(str(v).strip().lower())
        if hit is None:
            raise InputError(
                f"label {v!r} is not in labels_list {list(scale.labels)}", path=path, field=field
            )
        return hit
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(f"expected a number, got {v!r}", path=path, field=field) from None
    if as_text:
        return _label(_num_label(x), scale, False, path, field)
    if not scale.contains(x):
        raise InputError(f"score {v!r} is outside {scale.describe()}", path=path, field=field)
    return x


def _instance_text(inst: Any) -> str:
    return inst if isinstance(inst, str) else json.dumps(inst, ensure_ascii=False)


def read_obj(
    obj: Mapping[str, Any],
    path: Path,
    *,
    name: str,
    files: Sequence[SourceFile] = (),
    repository: str = "",
    commit: str = "",
    license: str = "",
    graded_as_labels: bool = False,
) -> Dataset:
    """Convert one parsed JUDGE-BENCH file into a Dataset named ``name`` (module docstring).

    ``graded_as_labels``: graded dimensions as ordered labels even in an all-graded file (the
    rule of mixed files; used for the collection of all shipped files)."""
    from metajudge.data.registry import Dataset

    specs = obj.get("annotations")
    if not isinstance(specs, list) or not specs:
        raise InputError("no annotation specs in the header", path=path, field="annotations")
    scales: dict[str, Scale] = {}
    prompts: dict[str, str] = {}
    graded: set[str] = set()
    for i, spec in enumerate(specs):
        where = f"annotations[{i}]"
        if not isinstance(spec, Mapping) or not isinstance(spec.get("metric"), str):
            raise InputError("an annotation spec needs a metric name", path=path, field=where)
        scales[spec["metric"]] = _spec_scale(spec, where, path)
        prompts[spec["metric"]] = str(spec.get("prompt", ""))
        if spec["category"] != "categorical":
            graded.add(spec["metric"])
    mixed = bool(graded) and (len(graded) < len(scales) or graded_as_labels)
    if mixed:
        scales = {
            m: _graded_as_labels(s) if m in graded and s.values else s for m, s in scales.items()
        }
        graded = {m for m in graded if scales[m].labels is not None}
    records = _records(obj, path, scales, graded if mixed else set(), name)
    widths = {len(v) for r in records for v in r.scores.values()}
    card = DatasetCard(
        name=name,
        kind="categorical" if mixed or not graded else "likert",
        description=str(obj.get("dataset", "")) + f" (JUDGE-BENCH unified format, {path.name})",
        repository=repository,
        commit=commit,
        files=tuple(files),
        license=license,
        dimensions=tuple(scales),
        scale=next(iter(scales.values())),
        annotators=max(widths) if widths else None,
        direction="higher = better" if not mixed and graded else "labels as listed",
        notes=_card_notes(obj, mixed, graded),
        dimension_scales=scales if len(scales) > 1 else {},
    )
    subsets = (name,)
    return Dataset(card=card, records=records, subsets=subsets)


def _card_notes(obj: Mapping[str, Any], mixed: bool, graded: set[str]) -> str:
    out = [f"JUDGE-BENCH unified format; dataset_url {obj.get('dataset_url', '?')}."]
    if obj.get("expert_annotator") is not None:
        out.append(f"expert_annotator: {obj['expert_annotator']}.")
    if mixed:
        out.append(f"graded dimensions as ordered labels: {', '.join(sorted(graded))}.")
    out.append("Uneven annotator counts padded with null; aggregate-only instances keep it.")
    return " ".join(out)


def _records(
    obj: Mapping[str, Any], path: Path, scales: Mapping[str, Scale], as_text: set[str], name: str
) -> list[LikertRecord]:
    insts = obj.get("instances")
    if not isinstance(insts, list) or not insts:
        raise InputError("no instances", path=path, field="instances")
    rows: list[tuple[str, Any, dict[str, list[Label]], dict[str, Any]]] = []
    for k, inst in enumerate(insts):
        if not isinstance(inst, Mapping) or "id" not in inst:
            raise InputError("an instance needs an id", path=path, field=f"instances[{k}]")
        rid = str(inst["id"])
        where = f"instances[{k}] (id {rid})"
        ann = inst.get("annotations")
        if not isinstance(ann, Mapping):
            raise InputError("no annotations", path=path, field=f"{where}.annotations")
        scores, meta = _instance_scores(ann, scales, as_text, path, where)
        rows.append((rid, inst.get("instance"), scores, meta))
    widths = {m: max(len(s.get(m, ())) for _, _, s, _ in rows) for m in scales}
    out = []
    for rid, inst, scores, meta in rows:
        padded = {m: tuple(v) + (None,) * (widths[m] - len(v)) for m, v in scores.items()}
        out.append(
            LikertRecord(
                id=rid,
                input=Input(question=_instance_text(inst)),
                system="instance",
                response=None,
                scores=padded,
                meta={"subset": name, **meta},
            )
        )
    return out


def _instance_scores(
    ann: Mapping[str, Any],
    scales: Mapping[str, Scale],
    as_text: set[str],
    path: Path,
    where: str,
) -> tuple[dict[str, list[Label]], dict[str, Any]]:
    scores: dict[str, list[Label]] = {}
    meta: dict[str, Any] = {}
    for metric, a in ann.items():
        f = f"{where}.annotations.{metric}"
        if metric not in scales:
            raise InputError("metric not declared in the header annotations", path=path, field=f)
        if not isinstance(a, Mapping):
            raise InputError("expected an object", path=path, field=f)
        sc, txt = scales[metric], metric in as_text
        raw = _as_list(a.get("individual_human_scores", []), path, f"{f}.individual_human_scores")
        vals = [
            _label(v, sc, txt, path, f"{f}.individual_human_scores[{i}]") for i, v in enumerate(raw)
        ]
        agg_key = "majority_human" if "majority_human" in a else "mean_human"
        if not any(v is not None for v in vals):
            if a.get(agg_key) is None:
                raise InputError(
                    "no human score (individual_human_scores, mean_human and majority_human "
                    "all missing or empty)",
                    path=path,
                    field=f,
                )
            vals = [_label(a[agg_key], sc, txt, path, f"{f}.{agg_key}")]
            meta.setdefault("aggregate_only", []).append(metric)
        scores[metric] = vals
        for key in ("mean_human", "majority_human"):
            if a.get(key) is not None:
                meta.setdefault(key, {})[metric] = a[key]
        replies = replies_of(a)
        if replies:
            meta.setdefault("replies", {})[metric] = replies
    return scores, meta


def read_file(path: str | Path, *, name: str | None = None, **provenance: Any) -> Dataset:
    """Read any JUDGE-BENCH-format file (``name``: the dataset name, default the file's stem)."""
    from metajudge.io import read_json

    p = Path(path)
    obj = read_json(p)
    if not is_judge_bench(obj):
        raise InputError(
            "not JUDGE-BENCH's unified format (needs annotations and instances)", path=p
        )
    return read_obj(obj, p, name=name or p.stem, **provenance)


def load_judge_bench_collection(
    card: DatasetCard, root: str | Path | None, files: Mapping[str, Path] | None = None
) -> Dataset:
    """All data files of the ``dmg_judge_bench`` card: one part per file (:func:`subset_name`),
    each its own Dataset with the card derived from its header; the whole collection's records
    carry dimensions ``"<subset>/<metric>"`` (graded ones as ordered labels)."""
    from dataclasses import replace

    from metajudge.data.fetch import local_relpath, resolve_source
    from metajudge.data.registry import Dataset
    from metajudge.io import read_json

    parts: dict[str, Dataset] = {}
    whole: list[LikertRecord] = []
    scales: dict[str, Scale] = {}
    for sf in card.files:
        rel = local_relpath(sf)
        if not rel.startswith("data/") or not rel.endswith(".json"):
            continue
        p = files[rel] if files and rel in files else resolve_source(card, sf, root)
        obj = read_json(p)
        if not is_judge_bench(obj):
            continue  # e.g. recipe_crowd_sourcing_data/questions.json
        name = subset_name(rel)
        prov = {"repository": card.repository, "commit": card.commit, "license": card.license}
        parts[name] = read_obj(obj, p, name=name, files=(sf,), **prov)
        flat = read_obj(obj, p, name=name, graded_as_labels=True)
        for m in flat.card.dimensions:
            scales[f"{name}/{m}"] = flat.card.scale_of(m)
        whole += [
            replace(r, id=f"{name}/{r.id}", scores={f"{name}/{m}": v for m, v in r.scores.items()})
            for r in flat.records
        ]
    full = replace(
        card, dimensions=tuple(scales), scale=next(iter(scales.values())), dimension_scales=scales
    )
    return Dataset(card=full, records=list(whole), subsets=tuple(parts), parts=parts)


def provenance_of(path: Path, match: tuple[str, str] | None) -> dict[str, Any]:
    """``read_obj`` keywords for a file: name and pinned source when it is a shipped file."""
    from metajudge.data.fetch import find_source
    from metajudge.data.registry import load_card

    if match is None:
        return {"name": path.stem}
    card = load_card(match[0])
    return {
        "name": subset_name(match[1]),
        "files": (find_source(card, match[1]),),
        "repository": card.repository,
        "commit": card.commit,
        "license": card.license,
    }


def published_alpha(
    card: DatasetCard, data_dir: str | Path | None = None
) -> dict[str, float] | None:
    """The inter-human Krippendorff α that JUDGE-BENCH published for this file's set
    (``results/regular/<subset>.json``, the same value under every judge), or None when the set has
    no published results (or the card is not a JUDGE-BENCH file)."""
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import load_card, resolve_file

    if card.repository != "dmg-illc/JUDGE-BENCH":
        return None
    rel = f"results_regular/{card.name}.json"
    if not any(local_relpath(f) == rel for f in load_card("dmg_judge_bench").files):
        return None
    from metajudge.io import read_json

    res = read_json(resolve_file("dmg_judge_bench", rel, data_dir))
    first = next(iter(res.values()))
    return {m: float(v["krippendorff_alpha"]) for m, v in first.items() if m in card.dimensions}
