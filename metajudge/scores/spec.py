"""Where a command's scores come from: one grammar (``--scores SPEC``, repeatable) and one gatherer.

A spec is one of::

    PATH                  every column of a score file (any format :func:`~metajudge.scores.files.read_scores` reads;
                          a name that is not a path is looked up among the dataset's upstream files)
    PATH:COL[,COL...]     only these columns (``COL`` also takes the family ``COL_<dimension>``,
                          and ``judge:DEF``, the column of a judge defined in the file ``DEF``)
    shipped               every column the dataset ships (its card's ``shipped_scores``, and the
                          judges' released replies a JUDGE-BENCH file holds)
    shipped:COL[,COL...]  only these shipped columns; for a judge metric with a human dimension
                          (``backbone-swap``, ``decide``), ``COL`` may be a backbone whose column
                          the card names (``shipped:gpt-4o`` → LFTQA-Eval's ``geval_gpt-4o_faithfulness``)
    LABEL=PATH[:COL]      one column under the name ``LABEL`` (also ``LABEL=shipped:COL``)
    FORMAT:PATH[:COL]     the file read as ``FORMAT`` (:data:`metajudge.scores.readers.FORCIBLE`:
                          ``inspect``, ``promptfoo``, ``deepeval``, ``ragas``, ``jsonl``, ``csv``,
                          ``json``) instead of the format its content shows

:func:`parse_score_spec` reads one spec, :func:`gather_scores` turns specs into score rows
(:mod:`metajudge.scores.readers.rows`). The old spellings map onto it: ``--external`` (a flag) is
``shipped`` (:data:`SHIPPED`), an ``--external LABEL=PATH[:COL],NAME`` list is
:func:`from_external_list`.

>>> parse_score_spec("mine=runs/a/scores.jsonl:bleu")
ScoreSpec(text='mine=runs/a/scores.jsonl:bleu', source='runs/a/scores.jsonl', columns=('bleu',), label='mine')
>>> parse_score_spec("shipped:gpt-4o,gpt-4o-mini").columns
('gpt-4o', 'gpt-4o-mini')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.readers.base import Reading
from metajudge.scores.readers.rows import ScoreRow, ScoreRows, renamed, row_metrics, select_metrics

#: The source word of the dataset's shipped columns.
SHIPPED_SOURCE = "shipped"


@dataclass(frozen=True)
class ScoreSpec:
    """One ``--scores`` value: a ``source`` (a path, or ``shipped``), the ``columns`` it keeps
    (empty: all) and the ``label`` its one column is renamed to."""

    text: str
    source: str
    columns: tuple[str, ...] = ()
    label: str | None = None
    #: the format ``FORMAT:PATH`` forces (None: detected from the content)
    fmt: str | None = field(default=None, repr=False)

    @property
    def shipped(self) -> bool:
        return self.source == SHIPPED_SOURCE

    def __str__(self) -> str:
        return self.text


#: ``--scores shipped``: every column the dataset ships (what ``--external`` was).
SHIPPED = ScoreSpec(SHIPPED_SOURCE, SHIPPED_SOURCE)


def _bad(text: str, why: str) -> InputError:
    return InputError(f"score spec {text!r}: {why}", field="scores")


def _columns(text: str, cols: str) -> tuple[str, ...]:
    out = tuple(c.strip() for c in cols.split(","))
    if not cols.strip() or any(not c for c in out):
        raise _bad(text, "empty column name after ':' (PATH:COL or shipped:COL)")
    if len(set(out)) != len(out):
        raise _bad(text, "a column is named twice")
    return out


def _label(text: str) -> tuple[str | None, str]:
    """``(LABEL, rest)`` of ``LABEL=rest``; no label when the text is a file or the part
    before ``=`` looks like a path."""
    if "=" not in text or Path(text).is_file():
        return None, text
    label, _, rest = text.partition("=")
    if "/" in label or ":" in label:
        return None, text
    if not label.strip():
        raise _bad(text, "empty label before '=' (LABEL=PATH[:COL])")
    if not rest.strip():
        raise _bad(text, "nothing after '=' (LABEL=PATH[:COL] or LABEL=shipped:COL)")
    return label.strip(), rest.strip()


def parse_score_spec(text: str) -> ScoreSpec:
    """One ``--scores`` value (see the module docstring); an error names the spec.

    >>> parse_score_spec("shipped")
    ScoreSpec(text='shipped', source='shipped', columns=(), label=None)
    >>> parse_score_spec("x=shipped:a,b")
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: field scores: score spec 'x=shipped:a,b': LABEL= names one column, got 2 (a, b)
    """
    text = str(text).strip()
    if not text:
        raise _bad(text, "empty (give PATH, PATH:COL, LABEL=PATH[:COL], shipped or shipped:COL)")
    label, target = _label(text)
    fmt, target = _forced(target)
    columns: tuple[str, ...] = ()
    if target == SHIPPED_SOURCE or target.startswith(SHIPPED_SOURCE + ":"):
        source = SHIPPED_SOURCE
        if target != SHIPPED_SOURCE:
            columns = _columns(text, target.partition(":")[2])
    elif ":" in target and not Path(target).is_file():
        source, cols = _path_and_columns(target)
        if not source:
            raise _bad(text, "no path before ':' (PATH:COL)")
        columns = _columns(text, cols)
    else:
        source = target
    if label is not None and len(columns) > 1:
        raise _bad(text, f"LABEL= names one column, got {len(columns)} ({', '.join(columns)})")
    if label is not None and source == SHIPPED_SOURCE and not columns:
        raise _bad(text, "LABEL= needs one shipped column: LABEL=shipped:COL")
    return ScoreSpec(text, source, columns, label, fmt)


def _path_and_columns(target: str) -> tuple[str, str]:
    """``(PATH, COLS)`` of ``PATH:COLS``: split at the last ``:``, or before the first column
    that is a judge defined in a file (``judge:PATH``, whose own path may hold ``:``).

    >>> _path_and_columns("runs/x/scores.jsonl:judge:/defs/v1.yaml,judge:v2.yaml")
    ('runs/x/scores.jsonl', 'judge:/defs/v1.yaml,judge:v2.yaml')
    >>> _path_and_columns("a.csv:bleu")
    ('a.csv', 'bleu')
    """
    from metajudge.metrics.judges.definition import PREFIX

    at = target.find(":" + PREFIX)
    if at > 0:
        return target[:at], target[at + 1 :]
    source, _, cols = target.rpartition(":")
    return source, cols


def _forced(target: str) -> tuple[str | None, str]:
    """``(FORMAT, rest)`` of ``FORMAT:PATH[:COL]`` (a format name that is not itself a file).

    >>> _forced("inspect:logs/a.eval"), _forced("a.csv:bleu")
    (('inspect', 'logs/a.eval'), (None, 'a.csv:bleu'))
    """
    from metajudge.scores.readers import FORCIBLE

    head, sep, rest = target.partition(":")
    if sep and head in FORCIBLE and rest and not Path(head).is_file():
        return head, rest
    return None, target


def file_spec(path: str | Path) -> ScoreSpec:
    """Every column of the file ``path``, taken as it is (never parsed as ``PATH:COL``)."""
    return ScoreSpec(str(path), str(path))


def as_specs(specs: Iterable[ScoreSpec | str]) -> list[ScoreSpec]:
    """Specs parsed where they are still text (the Python API takes either)."""
    return [s if isinstance(s, ScoreSpec) else parse_score_spec(s) for s in specs]


def from_external_list(items: Iterable[ScoreSpec | str]) -> list[ScoreSpec]:
    """The old ``--external`` list of ``backbone-swap``/``decide``: ``LABEL=PATH[:COL]`` stays
    as it is, a bare backbone name ``NAME`` is ``shipped:NAME`` (a parsed spec passes through).

    >>> [s.text for s in from_external_list(["gpt-4o", "x=a.csv:score"])]
    ['shipped:gpt-4o', 'x=a.csv:score']
    """
    out = []
    for item in items:
        if isinstance(item, ScoreSpec):
            out.append(item)
        elif str(item).strip():
            text = str(item).strip()
            out.append(parse_score_spec(text if "=" in text else f"{SHIPPED_SOURCE}:{text}"))
    return out


def judge_specs(
    scores: Iterable[ScoreSpec | str] = (), external: Iterable[ScoreSpec | str] = ()
) -> list[ScoreSpec]:
    """A judge's score specs (``backbone-swap``, ``decide``): ``scores`` in this grammar, then
    ``external``, the old ``--external`` list (:func:`from_external_list`)."""
    return [*as_specs(scores), *from_external_list(external)]


def spec_paths(specs: Iterable[ScoreSpec | str]) -> list[str]:
    """The files the specs name (``--out`` must not be one of them)."""
    return [s.source for s in as_specs(specs) if not s.shipped]


def input_paths(src: Any) -> list[str]:
    """The files and folders a :class:`~metajudge.data.source.DataSource` reads: its ``path``
    and the files its ``scores`` name (an output must not change one,
    :func:`metajudge.io.check_out_dir`)."""
    return [str(p) for p in (src.path, *spec_paths(src.scores)) if p]


def n_columns(specs: Iterable[ScoreSpec | str]) -> int:
    """How many score columns the specs name (a spec without columns counts as one)."""
    return sum(max(1, len(s.columns)) for s in as_specs(specs))


def reads_labels(card: Any) -> bool:
    """Are a score file's label cells read as labels for a dataset of this ``card``
    (categorical or binary labels), by default?"""
    return card.label_kind in ("categorical", "binary")


def gather_scores(
    dataset: Any,
    specs: Sequence[ScoreSpec | str],
    *,
    data_dir: str | Path | None = None,
    dimension: str | None = None,
    labels: bool | None = None,
    ids: IdPolicy | None = None,
    reading: Reading | None = None,
) -> ScoreRows:
    """Score rows of every spec, in order, checked against ``dataset``'s records.

    ``ids``: the rule for a score file's rows whose item or system the dataset lacks
    (:class:`~metajudge.scores.readers.alignment.IdPolicy`: dropped and counted there, or refused when
    strict; ``None`` refuses them). The dataset's shipped columns are always checked strictly.
    ``reading``: how a judge framework's file is joined (``--id-field``, ``--system``,
    ``--epochs``: :class:`~metajudge.scores.readers.base.Reading`).

    ``dimension``: the human dimension of a judge metric (backbone-swap, decide): a column
    family ``COL_<dimension>`` and a card's per-backbone judge column are read for it.
    ``labels`` (default: a categorical or binary dataset): label cells are kept as labels.
    Two specs giving the same column are an error naming both. The rows are a
    :class:`~metajudge.scores.readers.rows.ScoreRows` (a wide file's scores stay in columns).
    """
    if labels is None:
        labels = reads_labels(dataset.card)
    rows = ScoreRows()
    origin: dict[str, ScoreSpec] = {}
    for spec in as_specs(specs):
        try:
            got = _spec_rows(dataset, spec, data_dir, dimension, labels, ids, reading)
        except InputError as e:
            if e.message.startswith("score spec "):
                raise
            raise InputError(
                f"score spec {spec.text!r}: {e.message}", path=e.path, line=e.line, field=e.field
            ) from e
        for m in row_metrics(got):
            if m in origin:
                raise _bad(spec.text, f"column {m!r} is given twice (also by {origin[m].text!r})")
            origin[m] = spec
        rows += got
    return rows


def _spec_rows(
    ds: Any,
    spec: ScoreSpec,
    data_dir: Any,
    dimension: str | None,
    labels: bool,
    ids: IdPolicy | None = None,
    reading: Reading | None = None,
) -> ScoreRows | list[ScoreRow]:
    if spec.shipped:
        rows = _shipped_rows(ds, spec, data_dir, dimension)
    else:
        from metajudge.scores.files import read_scores

        path = _resolve_path(ds.card.name, spec, data_dir)
        got = read_scores(path, ds.records, fmt=spec.fmt, labels=labels, ids=ids, reading=reading)
        rows = _select(spec, got, ds, dimension)
    if spec.label is None:
        return rows
    names = sorted(row_metrics(rows))
    if len(names) != 1:
        raise _bad(
            spec.text,
            f"{spec.source} has several score columns ({', '.join(names)}); pick one with "
            f"{spec.label}={spec.source}:COLUMN",
        )
    return renamed(rows, spec.label)


def _resolve_path(dataset_name: str, spec: ScoreSpec, data_dir: Any) -> Path:
    """The spec's file: a path, else an upstream file of the dataset (``baseline_ragchecker.json``)."""
    p = Path(spec.source)
    if p.is_file():
        return p
    from metajudge.data.registry import resolve_file

    try:
        return resolve_file(dataset_name, spec.source, data_dir)
    except Exception as e:  # noqa: BLE001 - say clearly what was tried
        raise _bad(
            spec.text,
            f"score file {spec.source!r} not found (not a path, nor an upstream file of "
            f"{dataset_name!r}: {e})",
        ) from None


def _wanted(col: str, ds: Any, dimension: str | None) -> list[str]:
    """Column ``col`` and its family members ``col_<dimension>``."""
    dims = [dimension] if dimension else list(ds.card.dimensions)
    return [col, *(f"{col}_{d}" for d in dims)]


def _select(
    spec: ScoreSpec, rows: list[ScoreRow], ds: Any, dimension: str | None
) -> ScoreRows | list[ScoreRow]:
    """The rows of the spec's columns (all rows when it names none); a missing one is an error."""
    if not spec.columns:
        return rows
    have = row_metrics(rows)
    keep: set[str] = set()
    for col in spec.columns:
        got = [m for m in _wanted(col, ds, dimension) if m in have]
        if not got:
            raise _bad(
                spec.text, f"{spec.source} has no score column {col!r} (it has {', '.join(have)})"
            )
        keep.update(got[:1] if col in got else got)
    return select_metrics(rows, keep)


def _shipped_rows(ds: Any, spec: ScoreSpec, data_dir: Any, dimension: str | None) -> list[ScoreRow]:
    """The dataset's shipped columns (:func:`metajudge.scores.shipped.shipped_scores`)."""
    from metajudge.scores.shipped import shipped_scores

    if not spec.columns:
        return shipped_scores(ds, data_dir)
    rows: list[ScoreRow] = []
    for col in spec.columns:
        got = shipped_scores(ds, data_dir, metrics=_wanted(col, ds, dimension))
        if any(r["metric"] == col for r in got):
            got = [r for r in got if r["metric"] == col]
        if not got and dimension is not None:
            got = _backbone_rows(ds, col, dimension, data_dir)
        if not got:
            raise _bad(spec.text, _no_shipped(ds, col, data_dir))
        rows += got
    return rows


def _backbone_rows(ds: Any, backbone: str, dimension: str, data_dir: Any) -> list[ScoreRow]:
    """The card's judge column of ``backbone`` (``shipped_scores[].backbone_column``), named
    after the backbone; none when the card names no such columns."""
    from metajudge.scores.shipped import backbone_column, shipped_scores

    if not any(s.get("backbone_column") for s in ds.card.shipped_scores or ()):
        return []
    name, _ = backbone_column(ds, backbone, dimension)
    return [{**r, "metric": backbone} for r in shipped_scores(ds, data_dir, metrics=[name])]


def _no_shipped(ds: Any, col: str, data_dir: Any) -> str:
    from metajudge.scores.shipped import shipped_scores

    have = sorted({r["metric"] for r in shipped_scores(ds, data_dir)})
    known = [b for s in ds.card.shipped_scores or () for b in s.get("backbones", [])]
    hint = f"; backbones with a judge column: {', '.join(known)}" if known else ""
    shown = ", ".join(have[:20]) + (f", … ({len(have)} in all)" if len(have) > 20 else "")
    return f"{ds.card.name} ships no score column {col!r} (it ships: {shown}){hint}"
