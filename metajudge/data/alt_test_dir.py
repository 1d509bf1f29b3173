"""The Alternative Annotator Test's directory format (Calderon, Reichart & Dror, ACL 2025; the
``nitaytech/AltTest`` repository), read and checked.

A folder holds two JSON files:

- ``human_annotations.json``: ``{annotator: {item: label}}``, at least two annotators;
- ``llm_annotations.json``: ``{llm: {item: label}}``, at least one LLM, whose item ids meet the
  humans' (items only one side has are left out of the test, counted).

Labels are all strings or booleans (categories) or all numbers (ratings), in both files; ``null``
is no label (skipped, counted). A number is finite: ``NaN``, ``Infinity`` and ``1e309`` are refused
(file, line and field). Anything else raises :class:`~metajudge.errors.InputError`
naming the file and the field (``annotator.item``), before anything is computed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from metajudge.errors import InputError

HUMAN_FILE = "human_annotations.json"
LLM_FILE = "llm_annotations.json"

AltLabel = str | bool | float
LabelType = Literal["categorical", "numeric"]


@dataclass(frozen=True)
class AltTestData:
    """Annotations in the Alt-Test format: ``humans[annotator][item]``, ``llms[llm][item]``."""

    humans: Mapping[str, Mapping[str, AltLabel]]
    llms: Mapping[str, Mapping[str, AltLabel]]
    label_type: LabelType
    source: str = ""
    n_null: int = 0  # null labels skipped
    notes: tuple[str, ...] = field(default_factory=tuple)

    def llm_names(self) -> list[str]:
        return list(self.llms)


def _type_of(v: Any) -> LabelType | None:
    if v is None:
        return None
    if isinstance(v, (str, bool)):
        return "categorical"
    if isinstance(v, (int, float)):
        return "numeric"
    return None


def _table(
    obj: Any, path: Path, what: str
) -> tuple[dict[str, dict[str, AltLabel]], dict[LabelType, str], int]:
    """``obj`` as ``{who: {item: label}}``: the labels, where each label type is first seen
    (``who.item``) and the number of nulls; a non-mapping or a label of no type raises."""
    if not isinstance(obj, dict) or not obj:
        raise InputError(
            f"expected a non-empty JSON object {{{what}: {{item: label}}}}",
            path=path,
            field="<root>",
        )
    out: dict[str, dict[str, AltLabel]] = {}
    first: dict[LabelType, str] = {}
    n_null = 0
    for who, items in obj.items():
        if not isinstance(items, dict) or not items:
            raise InputError("expected a non-empty object {item: label}", path=path, field=who)
        row: dict[str, AltLabel] = {}
        for item, v in items.items():
            kind = _type_of(v)
            if v is None:
                n_null += 1
                continue
            if kind is None:
                raise InputError(
                    f"a label is a string, a boolean or a number, not {type(v).__name__}",
                    path=path,
                    field=f"{who}.{item}",
                )
            if kind == "numeric" and not math.isfinite(float(v)):
                raise InputError(f"{v!r} is not a finite number", path=path, field=f"{who}.{item}")
            first.setdefault(kind, f"{who}.{item}")
            row[str(item)] = float(v) if kind == "numeric" else v
        out[str(who)] = row
    return out, first, n_null


def _one_type(seen: list[tuple[Path, dict[LabelType, str]]]) -> LabelType:
    """The label type of both files; labels of mixed types raise, naming the first odd one."""
    types = {t for _, first in seen for t in first}
    if len(types) == 1:
        return types.pop()  # type: ignore[return-value]
    if not types:
        raise InputError("no labels (every label is null)", path=seen[0][0], field="<root>")
    # the first label seen sets the type; name the first label of the other type
    lead = next(iter(seen[0][1]))
    for path, first in seen:
        for t, where in first.items():
            if t != lead:
                raise InputError(
                    f"labels of mixed types: this label is {t}, the first label of "
                    f"{seen[0][0].name} is {lead}",
                    path=path,
                    field=where,
                )
    raise AssertionError("unreachable")  # pragma: no cover


def alt_test_data(
    human_obj: Any,
    llm_obj: Any,
    *,
    human_path: str | Path = HUMAN_FILE,
    llm_path: str | Path = LLM_FILE,
    source: str = "",
) -> AltTestData:
    """Checked :class:`AltTestData` from the two parsed JSON objects (paths name them in errors)."""
    hp, lp = Path(human_path), Path(llm_path)
    humans, h_first, h_null = _table(human_obj, hp, "annotator")
    llms, l_first, l_null = _table(llm_obj, lp, "llm")
    if len(humans) < 2:
        raise InputError(
            f"the Alt-Test needs at least two annotators (found one: {next(iter(humans))!r})",
            path=hp,
            field="<root>",
        )
    label_type = _one_type([(hp, h_first), (lp, l_first)])
    human_items = {i for row in humans.values() for i in row}
    for llm, row in llms.items():
        if not human_items.intersection(row):
            raise InputError(
                f"none of its {len(row)} item ids is an item of {hp.name} "
                f"(e.g. {next(iter(row))!r}; the humans' e.g. {next(iter(sorted(human_items)))!r})",
                path=lp,
                field=llm,
            )
    return AltTestData(
        humans=humans, llms=llms, label_type=label_type, source=source, n_null=h_null + l_null
    )


def read_alt_test_dir(path: str | Path) -> AltTestData:
    """The folder ``path`` in the Alt-Test format (module docstring), checked."""
    from metajudge.io import read_json

    d = Path(path)
    if not d.is_dir():
        raise InputError(
            f"expected a folder holding {HUMAN_FILE} and {LLM_FILE}", path=d, field="--input"
        )
    hp, lp = d / HUMAN_FILE, d / LLM_FILE
    for p in (hp, lp):
        if not p.is_file():
            raise InputError("file not found (the Alt-Test folder format)", path=p)
        if p.stat().st_size == 0:
            raise InputError("empty file", path=p, field="<root>")
    human, llm = read_json(hp, finite=True), read_json(lp, finite=True)  # NaN, 1e309: refused
    return alt_test_data(human, llm, human_path=hp, llm_path=lp, source=str(d))


#: The built-in dataset whose subsets are Alt-Test folders.
BUILTIN = "alt_test_calderon2025"


def load_alt_test(
    dataset: str | None = None,
    subset: str | None = None,
    input: str | Path | None = None,
    data_dir: str | Path | None = None,
) -> AltTestData:
    """The annotations of ``--input DIR`` (the folder format) or of a built-in dataset's subset
    (its pinned, sha256-checked files, as :func:`~metajudge.data.registry.resolve_file` finds
    them): exactly one of ``input`` and ``dataset``."""
    from metajudge.data.registry import load_card, resolve_file
    from metajudge.io import read_json

    if (dataset is None) == (input is None):
        raise InputError("give exactly one of --dataset NAME and --input DIR", field="dataset")
    if input is not None:
        if subset:
            raise InputError("--subset goes with --dataset, not --input DIR", field="--subset")
        return read_alt_test_dir(input)
    assert dataset is not None
    card = load_card(dataset)
    subsets = sorted({Path(sf.local or sf.path).parent.name for sf in card.files})
    if dataset != BUILTIN:
        raise InputError(
            f"dataset {dataset!r} is not in the Alt-Test format (the one that is: {BUILTIN}; "
            "or give --input DIR)",
            field="--dataset",
        )
    if subset not in subsets:
        raise InputError(
            f"give --subset, one of: {', '.join(subsets)} (got {subset!r})", field="--subset"
        )
    hp = resolve_file(dataset, f"{subset}/{HUMAN_FILE}", data_dir)
    lp = resolve_file(dataset, f"{subset}/{LLM_FILE}", data_dir)
    return alt_test_data(
        read_json(hp, finite=True),
        read_json(lp, finite=True),
        human_path=hp,
        llm_path=lp,
        source=f"{dataset}/{subset}",
    )
