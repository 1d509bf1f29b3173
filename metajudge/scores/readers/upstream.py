"""The upstream datasets' own score files, turned into metajudge's score rows
(:mod:`metajudge.scores.readers.rows`); :mod:`metajudge.scores.readers.upstream_files` recognises them
among ``--scores`` files, :mod:`metajudge.scores.shipped` reads them as a card's shipped columns.

Loaders:

* :func:`ragchecker_baseline` — RAGChecker's ``baseline_ragchecker.json``: its own [0, 1]
  scores per side and dimension, as metrics ``ragchecker_<dimension>`` (the RAGChecker
  protocol correlates each human dimension with the same-named RAGChecker score; the
  meta-evaluation treats ``ragchecker`` as one metric family, see :func:`metajudge.scores.readers.rows.metric_for_dimension`).
* :func:`lftqa_metric_scores` — LFTQA-Eval's ``scores/<subset>/metric_scores/<metric>.json``.
* :func:`hanna_metric_scores` — HANNA's ``hanna_metric_scores_llm.csv`` metric and LLM-judge
  columns.

Every loader checks its rows against the dataset: an unknown item or system, a duplicate
(item, system, metric) or a non-numeric value raises :class:`~metajudge.errors.InputError`
naming the file, the line (or JSON index) and the field. Empty / null cells are *missing*
scores (kept as ``score: None`` with an ``error``), counted and reported by the protocol
(:func:`metajudge.scores.readers.rows.score_cell`, the rule of every score file).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import csv_reader, read_json
from metajudge.scores.readers.alignment import Collector, IdPolicy, KeyMap
from metajudge.scores.readers.rows import (
    ScoreRow,
    file_signature,
    make_row,
    missing_error,
    score_cell,
)


def ragchecker_baseline(
    path: str | Path, records: Sequence[Any] | None = None, ids: IdPolicy | None = None
) -> list[ScoreRow]:
    """RAGChecker's own scores from ``baseline_ragchecker.json`` (Ru et al. 2024).

    One row per pair side and dimension: metric ``ragchecker_<dim>`` (``correctness``,
    ``completeness``, ``overall``) from ``model{1,2}.ragchecker.<dim>_label``; model1 = side a,
    model2 = side b, item = ``str(instance_id)``. With ``records`` the ids and system names are
    checked against the dataset (``ids``: the rule for ids it lacks, :class:`IdPolicy`;
    default: refuse).
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON list of RAGChecker instances", path=path)
    km = KeyMap(records, ids) if records else None
    col = Collector()
    sig = file_signature("ragchecker", path.name)
    for i, obj in enumerate(data):
        where = {"path": path, "line": None}
        if not isinstance(obj, Mapping) or "instance_id" not in obj:
            raise InputError(
                "expected an object with instance_id", field=f"[{i}].instance_id", **where
            )
        item = str(obj["instance_id"])
        for side, mk in (("a", "model1"), ("b", "model2")):
            m = obj.get(mk)
            if not isinstance(m, Mapping) or not isinstance(m.get("ragchecker"), Mapping):
                raise InputError(
                    "missing RAGChecker scores", field=f"[{i}].{mk}.ragchecker", **where
                )
            system = str(m.get("model_name", ""))
            if km is not None:
                got = km.resolve(item, None, side, where={**where})
                if got is None:
                    continue
                system = got[0]
                if m.get("model_name") not in (None, system):
                    raise InputError(
                        f"system {m.get('model_name')!r} does not match the dataset's side {side} ({system!r})",
                        field=f"[{i}].{mk}.model_name",
                        **where,
                    )
            for lab, v in m["ragchecker"].items():
                dim = lab.removesuffix("_label")
                score = score_cell(v, field=f"[{i}].{mk}.ragchecker.{lab}", where=where)
                row = make_row(
                    item=item,
                    system=system,
                    side=side,
                    metric=f"ragchecker_{dim}",
                    score=score,
                    signature=sig,
                    error=missing_error(score),
                )
                col.add(row, {**where}, f"[{i}]")
    return col.rows


def lftqa_metric_files(data_dir: str | Path | None = None, subset: str | None = None) -> list[Path]:
    """LFTQA-Eval metric score files (``scores/<subset>/metric_scores/*.json``) listed in the card."""
    from metajudge.data.registry import load_card, resolve_file

    card = load_card("lftqa_eval")
    out = []
    for f in card.files:
        local = f.local or f.path
        m = re.fullmatch(r"scores/([^/]+)/metric_scores/([^/]+)\.json", local)
        if m and (subset is None or m.group(1) == subset):
            out.append(resolve_file("lftqa_eval", local, data_dir))
    return out


def lftqa_metric_scores(
    subset: str | None = None,
    *,
    data_dir: str | Path | None = None,
    metrics: Sequence[str] | None = None,
    records: Sequence[Any] | None = None,
    files: Sequence[str | Path] | None = None,
) -> list[ScoreRow]:
    """LFTQA-Eval's metric scores (Wang et al. 2024) as score rows keyed ``example_id::model``.

    ``subset``: ``qtsumm`` / ``fetaqa`` / None (both). Metric name = file stem (``bleu``,
    ``geval_gpt-4o_faithfulness``, ...). ``files`` reads these paths instead of the card's.
    """
    paths = [Path(p) for p in files] if files is not None else lftqa_metric_files(data_dir, subset)
    km = KeyMap(records) if records else None
    col = Collector()
    for p in paths:
        name = p.stem
        if metrics is not None and name not in metrics:
            continue
        lftqa_file(p, name, km, col)
    return col.rows


def lftqa_file(p: Path, name: str, km: KeyMap | None, col: Collector) -> None:
    """One LFTQA-Eval metric file's scores (metric ``name``) into ``col``."""
    data = read_json(p)
    if not isinstance(data, list):
        raise InputError("expected a JSON list of {example_id, model, score}", path=p)
    sig = file_signature(name, f"lftqa_eval/{p.parent.parent.name}/{p.name}")
    for i, obj in enumerate(data):
        where = {"path": p, "line": None}
        if not isinstance(obj, Mapping):
            raise InputError("expected an object", field=f"[{i}]", **where)
        for f in ("example_id", "model", "score"):
            if f not in obj:
                raise InputError("missing required field", field=f"[{i}].{f}", **where)
        item, system = str(obj["example_id"]), str(obj["model"])
        if km is not None:
            got = km.resolve(item, system, None, where={**where})
            if got is None:
                continue
            system = got[0]
        score = score_cell(obj["score"], field=f"[{i}].score", where=where)
        details = {"reason": obj["reason"]} if "reason" in obj else {}
        col.add(
            make_row(
                item=item,
                system=system,
                side=None,
                metric=name,
                score=score,
                signature=sig,
                details=details,
                error=missing_error(score),
            ),
            where,
            f"{p.name}[{i}]",
        )


_HANNA_CRIT = {
    "RE": "relevance",
    "CH": "coherence",
    "EM": "empathy",
    "SU": "surprise",
    "EG": "engagement",
    "CX": "complexity",
}


def _slug(s: str) -> str:
    s = re.sub(r"[^\x20-\x7e]+", " ", s).strip()  # drop HANNA's decoration symbols (Ξ§, ¤ε, ...)
    return re.sub(r"[^A-Za-z0-9.+\-*]+", "_", s).strip("_").lower()


def hanna_metric_scores(
    path: str | Path,
    *,
    records: Sequence[Any] | None = None,
    metrics: Sequence[str] | None = None,
    ids: IdPolicy | None = None,
) -> list[ScoreRow]:
    """HANNA's metric and LLM-judge columns (Chhun et al. 2022/2024) as score rows.

    ``hanna_metric_scores_llm.csv`` has one row per system and per column a list of 96 values
    (story index i = item ``str(i)``). Human columns are skipped. Automatic metrics become
    ``hanna.<slug>`` (e.g. ``hanna.bleu``, ``hanna.bertscore_f1``); LLM judges rating one
    criterion become the family ``hanna.<judge>_run<k>_<dimension>`` (e.g.
    ``hanna.beluga-13b_run1_coherence``), their average column ``hanna.<judge>_avg_run<k>``.
    ``ids``: the rule for ids the dataset lacks (:class:`IdPolicy`; default: refuse).
    """
    path = Path(path)
    km = KeyMap(records, ids) if records else None
    col = Collector()
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv_reader(fh, path, dicts=True)
        header = reader.fieldnames or []
        if "Model" not in header:
            raise InputError(
                "not a HANNA metric-score CSV (no 'Model' column)", path=path, line=1, field="Model"
            )
        for lineno, row in enumerate(reader, start=2):
            system = row["Model"]
            for colname in header:
                if (
                    colname == "Model"
                    or colname.startswith("Human")
                    or colname
                    in ("Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity")
                ):
                    continue
                m = re.fullmatch(r"(.+) (RE|CH|EM|SU|EG|CX|AVG) (\d+)", colname)
                if m:
                    judge, crit, run = _slug(m.group(1)), m.group(2), m.group(3)
                    name = (
                        f"hanna.{judge}_avg_run{run}"
                        if crit == "AVG"
                        else f"hanna.{judge}_run{run}_{_HANNA_CRIT[crit]}"
                    )
                else:
                    name = "hanna." + _slug(colname)
                if metrics is not None and name not in metrics:
                    continue
                where = {"path": path, "line": lineno}
                try:
                    values = ast.literal_eval(row[colname])
                except (ValueError, SyntaxError):
                    raise InputError("expected a list of numbers", field=colname, **where) from None
                if not isinstance(values, (list, tuple)):
                    raise InputError("expected a list of numbers", field=colname, **where)
                sig = file_signature(name, f"hanna/{path.name}")
                for i, v in enumerate(values):
                    item = str(i)
                    sys_ = system
                    if km is not None:
                        got = km.resolve(item, system, None, where=where)
                        if got is None:
                            continue
                        sys_ = got[0]
                    score = score_cell(v, field=f"{colname}[{i}]", where=where)
                    col.add(
                        make_row(
                            item=item,
                            system=sys_,
                            side=None,
                            metric=name,
                            score=score,
                            signature=sig,
                            error=missing_error(score),
                        ),
                        where,
                        f"line {lineno}",
                    )
    return col.rows
