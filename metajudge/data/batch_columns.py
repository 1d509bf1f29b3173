"""The loader's checks made on a pairwise record batch's columns (Arrow), where the line pass
makes them record by record (:class:`~metajudge.data.fast_records.FastRecords`).

:func:`checked_columns` gives the columns a batch's records are built from
(:meth:`FastRecords.batch <metajudge.data.fast_records.FastRecords.batch>`), or ``None`` where a
row may need the full path or may differ between JSON and the table: a row of another shape
than the common one (``id``, ``input.question``, ``a``/``b`` with ``system`` and ``response``,
``labels`` with one list of numbers per card dimension), a null (absent in a table, absent or
null in JSON: the two are kept apart by the line pass alone), a label outside the card's scale
or not finite, a label list of an annotator count the card does not state or without a label,
an empty id. Bytes that are not UTF-8 raise ``ArrowInvalid``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SIDE_FIELDS = ("system", "response")


def checked_columns(
    batch: Any, rule_of: Callable[[str], Any], annotators: int | None
) -> (
    tuple[list[str], tuple[list, list], tuple[list, list], dict[str, list[tuple[list, bool]]]]
    | None
):
    """``(ids, (systems, words) of a, (systems, words) of b, {dimension: [(labels, has
    -0.0)]})`` of a
    pairwise record batch whose every row the loader's pass would build without a warning
    (module docstring), or ``None``. ``rule_of``: a dimension's ``(lower, upper, allowed)``
    (:meth:`FastRecords._rule <metajudge.data.fast_records.FastRecords._rule>`);
    ``annotators``: the card's annotator count (None: any)."""
    from metajudge.data.columnar import pyarrow, word_counts

    pa = pyarrow()
    t = batch.schema
    if sorted(t.names) != ["a", "b", "id", "input", "labels"] or batch.num_rows == 0:
        return None
    batch.validate(full=True)  # UTF-8 (ArrowInvalid: the line pass names the byte)
    if not _plain_shape(batch, pa) or not _labels_ok(batch.column("labels"), rule_of, annotators):
        return None
    ids = batch.column("id")
    import pyarrow.compute as pc

    if pc.min(pc.binary_length(ids)).as_py() == 0:
        return None
    sides = []
    for name in ("a", "b"):
        s = batch.column(name)
        sides.append((s.field("system").to_pylist(), word_counts(s.field("response"))))
    labels = batch.column("labels")
    lists = {f.name: _with_sign(labels.field(f.name)) for f in labels.type}
    return ids.to_pylist(), sides[0], sides[1], lists


def _with_sign(col: Any) -> list[tuple[list[Any], bool]]:
    """Each label list of a list column, with whether it holds a -0.0 (kept apart from 0.0
    where equal label tuples are shared)."""
    import numpy as np
    import pyarrow.compute as pc

    values = col.flatten().to_numpy(zero_copy_only=False)
    negative_zero = (values == 0.0) & np.signbit(values)
    parents = pc.list_parent_indices(col).to_numpy(zero_copy_only=False)
    flags = np.bincount(parents[negative_zero], minlength=len(col)) > 0
    return list(zip(col.to_pylist(), flags.tolist(), strict=True))


def _plain_shape(batch: Any, pa: Any) -> bool:
    """Every field of the common shape present (no null), strings where strings are."""
    cols = [batch.column("id")]
    inp = batch.column("input")
    if not pa.types.is_struct(inp.type) or [f.name for f in inp.type] != ["question"]:
        return False
    cols += [inp, inp.field("question")]
    for name in ("a", "b"):
        s = batch.column(name)
        if not pa.types.is_struct(s.type) or sorted(f.name for f in s.type) != sorted(SIDE_FIELDS):
            return False
        cols += [s, s.field("system"), s.field("response")]
    strings = [batch.column("id"), inp.field("question")]
    strings += [batch.column(n).field(f) for n in ("a", "b") for f in SIDE_FIELDS]
    return all(c.null_count == 0 for c in cols) and all(pa.types.is_string(c.type) for c in strings)


def _labels_ok(labels: Any, rule_of: Callable[[str], Any], annotators: int | None) -> bool:
    """Every label list of every dimension a list of finite numbers inside the dimension's
    scale (and its values), of length 1 or the card's annotator count, with a label."""
    import numpy as np

    from metajudge.data.columnar import pyarrow

    pa = pyarrow()
    import pyarrow.compute as pc

    if not pa.types.is_struct(labels.type) or labels.type.num_fields == 0 or labels.null_count:
        return False
    for f in labels.type:
        col, rule = labels.field(f.name), rule_of(f.name)
        if not isinstance(rule, tuple) or not pa.types.is_list(col.type) or col.null_count:
            return False
        if not pa.types.is_floating(col.type.value_type):
            return False
        lo, hi, allowed = rule
        n = pc.list_value_length(col).to_numpy(zero_copy_only=False)
        if n.min() < 1 or (annotators and not np.all((n == 1) | (n == annotators))):
            return False
        values = col.flatten()
        v = values.to_numpy(zero_copy_only=False)  # nulls: NaN
        valid = ~values.is_null().to_numpy(zero_copy_only=False)
        x = v[valid]
        if not np.all(np.isfinite(x) & (lo <= x) & (x <= hi)):
            return False
        if allowed is not None and not np.all(np.isin(x, list(allowed))):
            return False
        parents = pc.list_parent_indices(col).to_numpy(zero_copy_only=False)
        if np.bincount(parents[valid], minlength=len(col)).min() == 0:
            return False  # a list of nulls only: the line pass warns
    return True
