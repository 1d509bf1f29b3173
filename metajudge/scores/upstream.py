"""Scores computed elsewhere, turned into metajudge's score rows (:mod:`metajudge.scores.rows`).

Loaders:

* :func:`ragchecker_baseline` — RAGChecker's ``baseline_ragchecker.json``: its own [0, 1]
  scores per side and dimension, as metrics ``ragchecker_<dimension>`` (the RAGChecker
  protocol correlates each human dimension with the same-named RAGChecker score; the
  meta-evaluation treats ``ragchecker`` as one metric family, see :func:`metric_for_dimension`).
* :func:`lftqa_metric_scores` — LFTQA-Eval's ``scores/<subset>/metric_scores/<metric>.json``.
* :func:`hanna_metric_scores` — HANNA's ``hanna_metric_scores_llm.csv`` metric and LLM-judge
  columns.
* :func:`metajudge.scores.files.read_scores` — any file: JSONL score rows, or a CSV / JSON table with columns
  ``item, system[, side], <metric>...``; the upstream formats above are recognised by content.

Every loader checks its rows against the dataset: an unknown item or system, a duplicate
(item, system, metric) or a non-numeric value raises :class:`~metajudge.errors.InputError`
naming the file, the line (or JSON index) and the field. Empty / null cells are *missing*
scores (kept as ``score: None`` with an ``error``), counted and reported by the protocol.
"""

from __future__ import annotations

import ast
import csv
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import LikertRecord, PairwiseRecord, response_key
from metajudge.errors import InputError
from metajudge.io import read_json
from metajudge.scores.alignment import IdPolicy
from metajudge.scores.rows import ScoreRow, make_row

#: Columns of a wide score table that are ids, not metrics.
ID_COLUMNS = ("item", "system", "side", "key", "id")


def metric_for_dimension(metric: str, dimension: str, available: Iterable[str]) -> str | None:
    """The score column that metric row ``metric`` uses for human ``dimension``.

    ``metric`` itself when it exists; otherwise the dimension-specific member of the family
    ``<metric>_<dimension>`` (e.g. ``ragchecker`` → ``ragchecker_correctness``); ``None`` if
    neither is available.

    >>> metric_for_dimension("ragchecker", "overall", ["ragchecker_overall"])
    'ragchecker_overall'
    >>> metric_for_dimension("bleu", "overall", ["bleu"])
    'bleu'
    """
    avail = set(available)
    if metric in avail:
        return metric
    fam = f"{metric}_{dimension}"
    return fam if fam in avail else None


def collapse_families(metrics: Sequence[str], dimensions: Sequence[str]) -> list[str]:
    """Metric row names: ``X_<dim>`` columns for two or more dimensions become one row ``X``.

    >>> collapse_families(["bleu", "ragchecker_correctness", "ragchecker_overall"], ["correctness", "overall"])
    ['bleu', 'ragchecker']
    """
    out: list[str] = []
    fams: dict[str, int] = {}
    for m in metrics:
        for d in dimensions:
            if m.endswith("_" + d):
                fams[m[: -len(d) - 1]] = fams.get(m[: -len(d) - 1], 0) + 1
    for m in metrics:
        fam = next((m[: -len(d) - 1] for d in dimensions if m.endswith("_" + d)), None)
        name = fam if fam is not None and fams.get(fam, 0) >= 2 and fam not in metrics else m
        if name not in out:
            out.append(name)
    return out


# ---------------------------------------------------------------------------------------------
# Mapping (item, system[, side]) to response keys of a dataset


class KeyMap:
    """Which responses a dataset has, to turn ``(item, system[, side])`` into a response key."""

    def __init__(self, records: Sequence[Any], ids: IdPolicy | None = None) -> None:
        #: the rule for rows whose ids the dataset lacks (None: refuse, as strict)
        self.ids = ids
        self.pairwise = bool(records) and isinstance(records[0], PairwiseRecord)
        #: each pair's systems ``(a, b)``, its id as the dataset holds it (a score file's rows
        #: keep that one string, not one read from each line) and its place among the pairs
        self.sides: dict[str, tuple[str, str, str, int]] = {}
        self.systems: dict[str, set[str]] = {}
        for r in records:
            if isinstance(r, PairwiseRecord):
                at = self.sides[r.id][3] if r.id in self.sides else len(self.sides)
                self.sides[r.id] = (r.a.system, r.b.system, r.id, at)
            elif isinstance(r, LikertRecord):
                self.systems.setdefault(r.id, set()).add(r.system)

    def keys(self) -> set[str]:
        if self.pairwise:
            return {response_key(i, s) for i in self.sides for s in ("a", "b")}
        return {response_key(i, s) for i, ss in self.systems.items() for s in ss}

    def resolve(
        self, item: str, system: str | None, side: str | None, *, where: dict[str, Any]
    ) -> tuple[str, str | None, str] | None:
        """``(system, side, key)`` for one row. An item or system the dataset lacks is refused
        (InputError naming ``where``) or, under a non-strict :class:`IdPolicy`, counted there
        and ``None`` returned (the row is dropped); a malformed side is always an error."""
        if self.pairwise:
            if item not in self.sides:
                return self._unknown(
                    f"unknown item id {item!r} (not a pair of this dataset)",
                    "item",
                    where,
                    item,
                    system,
                )
            return self._pair_side(item, system, side, where)
        if item not in self.systems:
            return self._unknown(
                f"unknown item id {item!r} (not in this dataset)", "item", where, item, system
            )
        if system not in self.systems[item]:
            return self._unknown(
                f"unknown system {system!r} for item {item!r}", "system", where, item, system
            )
        return system, None, response_key(item, system)

    def _unknown(
        self, message: str, field: str, where: dict[str, Any], item: str, system: str | None
    ) -> None:
        if self.ids is None:
            raise InputError(message, field=field, **where)
        self.ids.unknown(message, field=field, where=where, item=item, system=system)

    def _pair_side(
        self, item: str, system: str | None, side: str | None, where: dict[str, Any]
    ) -> tuple[str, str | None, str] | None:
        sa, sb = self.sides[item][:2]
        if side is not None:
            if side not in ("a", "b"):
                raise InputError(f"side must be 'a' or 'b', got {side!r}", field="side", **where)
            sys_ = sa if side == "a" else sb
            if system not in (None, "", sys_):
                raise InputError(
                    f"system {system!r} is not side {side} ({sys_!r}) of pair {item!r}",
                    field="system",
                    **where,
                )
            return sys_, side, response_key(item, side)
        if system == sa and system == sb:
            raise InputError(
                f"both sides of pair {item!r} are {system!r}: give a 'side' column",
                field="side",
                **where,
            )
        if system == sa:
            return sa, "a", response_key(item, "a")
        if system == sb:
            return sb, "b", response_key(item, "b")
        return self._unknown(
            f"unknown system {system!r} for pair {item!r} (its systems: {sa!r}, {sb!r})",
            "system",
            where,
            item,
            system,
        )


def _num(v: Any, *, field: str, where: dict[str, Any]) -> float | None:
    """A score cell as a float; None for empty / null / NaN (missing); InputError for anything
    non-numeric and for an infinite score (``inf``, ``-inf``, ``1e309``: never read as missing
    and imputed, as in the JSONL path)."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise InputError(f"non-numeric score {v!r}", field=field, **where)
    if isinstance(v, str):
        s = v.strip()
        if s == "" or s.lower() in ("nan", "null", "none", "na"):
            return None
        try:
            f = float(s)
        except ValueError:
            raise InputError(f"non-numeric score {v!r}", field=field, **where) from None
    elif isinstance(v, (int, float)):
        f = float(v) if isinstance(v, float) or abs(v) < 2**1023 else math.inf
    else:
        raise InputError(f"non-numeric score {v!r}", field=field, **where)
    if math.isnan(f):
        return None
    if math.isinf(f):
        raise InputError(
            f"infinite score {v!r}: expected a finite number (leave the cell empty for a "
            "missing score)",
            field=field,
            **where,
        )
    return f


class _Collector:
    """Collects rows, rejecting duplicate (key, metric)."""

    def __init__(self) -> None:
        self.rows: list[ScoreRow] = []
        self.seen: dict[tuple[str, str], str] = {}

    def add(self, row: ScoreRow, where: dict[str, Any], origin: str) -> None:
        k = (row["key"], row["metric"])
        if k in self.seen:
            raise InputError(
                f"duplicate score for {row['key']!r} metric {row['metric']!r} (first at {self.seen[k]})",
                field=row["metric"],
                **where,
            )
        self.seen[k] = origin
        self.rows.append(row)


def _missing_error(score: float | None) -> str | None:
    return "missing in the score file" if score is None else None


# ---------------------------------------------------------------------------------------------
# Upstream formats


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
    col = _Collector()
    sig = f"ragchecker|source:{path.name}|external"
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
                score = _num(v, field=f"[{i}].{mk}.ragchecker.{lab}", where=where)
                row = make_row(
                    item=item,
                    system=system,
                    side=side,
                    metric=f"ragchecker_{dim}",
                    score=score,
                    signature=sig,
                    error=_missing_error(score),
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
    col = _Collector()
    for p in paths:
        name = p.stem
        if metrics is not None and name not in metrics:
            continue
        _lftqa_file(p, name, km, col)
    return col.rows


def _lftqa_file(p: Path, name: str, km: KeyMap | None, col: _Collector) -> None:
    data = read_json(p)
    if not isinstance(data, list):
        raise InputError("expected a JSON list of {example_id, model, score}", path=p)
    sig = f"{name}|source:lftqa_eval/{p.parent.parent.name}/{p.name}|external"
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
        score = _num(obj["score"], field=f"[{i}].score", where=where)
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
                error=_missing_error(score),
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
    col = _Collector()
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
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
                sig = f"{name}|source:hanna/{path.name}|external"
                for i, v in enumerate(values):
                    item = str(i)
                    sys_ = system
                    if km is not None:
                        got = km.resolve(item, system, None, where=where)
                        if got is None:
                            continue
                        sys_ = got[0]
                    score = _num(v, field=f"{colname}[{i}]", where=where)
                    col.add(
                        make_row(
                            item=item,
                            system=sys_,
                            side=None,
                            metric=name,
                            score=score,
                            signature=sig,
                            error=_missing_error(score),
                        ),
                        where,
                        f"line {lineno}",
                    )
    return col.rows
