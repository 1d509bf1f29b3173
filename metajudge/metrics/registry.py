"""The metric registry: a name → a lazily imported metric class or factory, with default options.

In the spirit of sacreBLEU's ``METRICS`` dict, but lazy: ``register("bertscore",
"metajudge.metrics.bertscore:BERTScore", model="all-MiniLM-L6-v2")`` imports nothing until the
metric is asked for, so ``import metajudge`` and ``metajudge --help`` stay fast.

Other packages add their entries by calling :func:`register`. The LLM judges are registered here
too, by target string (``judge=True``: they take the ``backbone=`` passed to :func:`get_metric`),
so this module never imports :mod:`metajudge.metrics.judges`.

>>> "bleu" in list_metrics()
True
>>> get_metric("rouge_l").signature.startswith("rouge_l|")
True
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from metajudge.errors import InputError
from metajudge.metrics.base import Metric


@dataclass(frozen=True)
class _Entry:
    name: str
    target: str  # "module:ClassOrFactory"
    defaults: dict[str, Any] = field(default_factory=dict)
    judge: bool = False  # an LLM judge: takes backbone=
    members: tuple[str, ...] = ()  # a family: the metrics it stands for (one per dimension)


_REGISTRY: dict[str, _Entry] = {}


def register(name: str, target: str, *, judge: bool = False, **defaults: Any) -> None:
    """Register metric ``name`` as ``target`` (``"module:ClassOrFactory"``, imported lazily).

    ``defaults`` are keyword options passed to the target unless :func:`get_metric` overrides
    them; ``judge=True`` marks an LLM judge (it gets :func:`get_metric`'s ``backbone``).
    Re-registering a name replaces it (last wins).
    """
    if ":" not in target:
        raise ValueError(f"target must be 'module:attribute', got {target!r}")
    _REGISTRY[name] = _Entry(name, target, dict(defaults), judge)


def register_family(name: str, members: tuple[str, ...]) -> None:
    """Register ``name`` as a family of registered metrics, one per human dimension (``geval`` →
    ``geval_faithfulness`` + ``geval_completeness``): asking for the family scores every member,
    and each dimension is then read from its own member (``<name>_<dimension>``).
    """
    first = _entry(members[0])
    _REGISTRY[name] = _Entry(name, first.target, {}, first.judge, tuple(members))


def family_members(name: str) -> tuple[str, ...]:
    """The members of family ``name``; ``()`` for a plain metric."""
    return _entry(name).members


def expand_metrics(names: Sequence[str]) -> list[str]:
    """Metric names with every family replaced by its members (order kept, no repeats).

    >>> expand_metrics(["bleu", "geval"])
    ['bleu', 'geval_faithfulness', 'geval_completeness']
    """
    out: list[str] = []
    for n in names:
        for m in family_members(n) or (n,):
            if m not in out:
                out.append(m)
    return out


def family_row(name: str) -> str:
    """The table row a metric's scores take: a family whose members are ``<row>_<dimension>``
    gives ``<row>`` (``geval_summeval`` → ``geval``, read per dimension from ``geval_coherence``
    …, see :func:`metajudge.scores.readers.rows.metric_for_dimension`); anything else is itself.

    >>> family_row("geval_summeval"), family_row("geval"), family_row("bleu"), family_row("x.y")
    ('geval', 'geval', 'bleu', 'x.y')
    """
    members = _REGISTRY[name].members if name in _REGISTRY else ()
    if not members:
        return name
    stem = os.path.commonprefix(list(members))
    return stem[:-1] if stem.endswith("_") and len(stem) > 1 else name


def list_metrics() -> list[str]:
    """Every registered metric name, sorted."""
    return sorted(_REGISTRY)


def is_judge(name: str) -> bool:
    """Whether ``name`` is an LLM-judge metric (it runs on a backbone)."""
    return _entry(name).judge


def is_metric(name: str) -> bool:
    """Whether ``name`` names a metric: a registered one, or a judge defined in a file
    (``judge:PATH``, :mod:`metajudge.metrics.judges.definition`; the file is read when the
    metric is built).

    >>> is_metric("bleu"), is_metric("judge:my_rubric.yaml"), is_metric("nope")
    (True, True, False)
    """
    return name in _REGISTRY or name.startswith(DEFINED_PREFIX) and len(name) > len(DEFINED_PREFIX)


#: the metric-name prefix of a judge defined in a file (``judge:PATH``; the spelling is fixed)
DEFINED_PREFIX = "judge:"


def _entry(name: str) -> _Entry:
    if name.startswith(DEFINED_PREFIX) and name not in _REGISTRY and is_metric(name):
        # a judge defined in a file: the path is the metric's one option
        path = name[len(DEFINED_PREFIX) :]
        return _Entry(name, _J + "defined:DefinedJudge", {"path": path}, judge=True)
    if name not in _REGISTRY:
        raise InputError(
            f"unknown metric {name!r}; known: {', '.join(sorted(_REGISTRY))}", field="metric"
        )
    return _REGISTRY[name]


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def metric_class(name: str) -> Any:
    """The class (or factory) registered as ``name``, imported but not instantiated (no model loads).

    A family gives its first member's class. Read class attributes from it (``direction``) or
    check options against its signature.

    >>> metric_class("bleu").direction
    'higher'
    """
    return _resolve(_entry(name).target)


def get_metric(name: str, *, backbone: str | None = None, **options: Any) -> Metric:
    """A ready metric instance: the registered defaults updated with ``options``.

    ``backbone`` is the LLM judges' backbone (a config name, see ``metajudge backends list``;
    ``None``: the default embedded one); metrics that are not judges have none and ignore it.
    """
    e = _entry(name)
    if e.members:
        raise InputError(
            f"{name!r} is a family of metrics ({', '.join(e.members)}), one per dimension: "
            "score each member (expand_metrics does it)",
            field="metric",
        )
    kwargs = {**e.defaults, **options}
    if e.judge and backbone is not None:
        kwargs["backbone"] = backbone
    factory = _resolve(e.target)
    try:
        metric = factory(**kwargs)
    except TypeError as ex:
        raise InputError(f"bad options for metric {name!r}: {ex}", field="options") from None
    if not isinstance(metric, Metric):
        raise TypeError(f"{e.target} did not return a Metric (got {type(metric).__name__})")
    if getattr(metric, "name", None) != name:
        metric.name = name  # a factory registered under an alias keeps the registry name
    return metric


def metric_info(name: str, *, backbone: str | None = None, **options: Any) -> dict[str, Any]:
    """``{name, direction, range, signature, target, defaults}`` (instantiates the metric, loads no model)."""
    e = _entry(name)
    if e.members:
        first = metric_info(e.members[0], backbone=backbone, **options)
        sig = "family:" + "+".join(e.members)
        return {**first, "name": name, "members": list(e.members), "signature": sig}
    m = get_metric(name, backbone=backbone, **options)
    try:
        return {
            "name": name,
            "direction": m.direction,
            "range": list(m.range),
            "signature": m.signature,
            "target": e.target,
            "defaults": dict(e.defaults),
        }
    finally:
        m.close()


def metric_options(name: str, *, backbone: str | None = None) -> list[dict[str, Any]]:
    """Every option of metric ``name``: ``{name, type, default, choices, range, signature}``.

    ``default`` is the registry's default where it sets one, else the parameter's. ``signature``
    says what the option changes in the metric's signature, found by building the metric with
    another value (the next choice, the other boolean, twice the number) and comparing the
    signatures field by field: ``"variant:rougeL -> variant:rouge1"``, ``"not in the signature"``,
    or why it was not tried. ``backbone`` / ``backend`` are the judges' model (``--backbone``).
    """
    from metajudge.introspect import options

    e = _entry(name)
    if e.members:
        return metric_options(e.members[0], backbone=backbone)
    base = metric_info(name, backbone=backbone)["signature"]
    out = []
    for opt in options(_resolve(e.target)):
        default = e.defaults.get(opt.name, opt.default)
        row: dict[str, Any] = {
            "name": opt.name,
            "type": opt.type_text,
            "default": default,
            "choices": list(opt.choices) if opt.choices else None,
            "range": _option_range(opt.hint, default),
        }
        row["signature"] = _signature_effect(name, opt, default, base, backbone)
        out.append(row)
    return out


def _option_range(hint: Any, default: Any) -> str | None:
    if isinstance(default, bool) or not isinstance(default, int | float):
        return None
    return ">= 0" if default >= 0 else None  # as `--option` checks (metajudge.cli.types)


def _alternative(opt: Any, default: Any) -> tuple[bool, Any]:
    if opt.choices:
        others = [c for c in opt.choices if c != default and c is not None]
        return (True, others[0]) if others else (False, None)
    if isinstance(default, bool):
        return True, not default
    if isinstance(default, int | float):
        return True, type(default)(default * 2 if default else 1)
    return False, None


def _signature_effect(name: str, opt: Any, default: Any, base: str, backbone: str | None) -> str:
    if opt.name in ("backbone", "backend"):
        return "the judge's model: set with --backbone (named in the signature)"
    if not opt.settable:
        return "an object, not settable on the command line"
    ok, alt = _alternative(opt, default)
    if not ok:
        return f"not tried (default {default!r}: no other value to compare with)"
    try:
        with _quiet_probe():  # a probe value's library advice (sacrebleu's) is not the user's
            other = metric_info(name, backbone=backbone, **{opt.name: alt})["signature"]
    except Exception as ex:  # noqa: BLE001 (a value the metric refuses: say so, keep listing)
        return f"not tried ({type(ex).__name__} with {opt.name}={alt!r})"
    before, after = _fields(base), _fields(other)
    changed = [
        f"{k}:{before.get(k, '(absent)')} -> {k}:{after.get(k, '(absent)')}"
        for k in dict.fromkeys([*before, *after])
        if before.get(k) != after.get(k)
    ]
    return ", ".join(changed) if changed else "not in the signature (with the other defaults)"


@contextlib.contextmanager
def _quiet_probe() -> Iterator[None]:
    """Library loggers' warnings silenced while a metric is built with a probe value (sacrebleu
    advises effective_order when the option table tries it off: not the user's setting)."""
    lib = logging.getLogger("sacrebleu")
    level = lib.level
    lib.setLevel(logging.ERROR)
    try:
        yield
    finally:
        lib.setLevel(level)


def _fields(signature: str) -> dict[str, str]:
    """``"rouge_l|variant:rougeL|stem:yes"`` → ``{"": "rouge_l", "variant": "rougeL", ...}``."""
    out = {}
    for part in signature.split("|"):
        key, sep, value = part.partition(":")
        out[key if sep else ""] = value if sep else part
    return out


# Built-in metrics.
register("bleu", "metajudge.metrics.lexical:BLEU")
register("rouge_l", "metajudge.metrics.lexical:RougeL")
register("rouge_1", "metajudge.metrics.lexical:RougeL", variant="rouge1")
register("rouge_2", "metajudge.metrics.lexical:RougeL", variant="rouge2")
register("meteor", "metajudge.metrics.lexical:Meteor")
register("bertscore", "metajudge.metrics.bertscore:BERTScore")
register("number_match", "metajudge.metrics.number_match:NumberMatch")
# LLM judges (metajudge.metrics.judges): G-Eval, MT-RAIG Eval, answer equivalence, MuDABench.
_J = "metajudge.metrics.judges."
register("geval_faithfulness", _J + "geval:GEval", judge=True, dimension="faithfulness")
register("geval_completeness", _J + "geval:GEval", judge=True, dimension="completeness")
# MT-RAIG Table 5 scores each dimension with its own Table 18 prompt: "geval" is both
register_family("geval", ("geval_faithfulness", "geval_completeness"))
# G-Eval's SummEval dimensions (Liu et al. 2023, Table 1), reference-free: a summary vs its source
_SUMMEVAL = ("coherence", "consistency", "fluency", "relevance")
for _d in _SUMMEVAL:
    register(f"geval_{_d}", _J + "geval:GEval", judge=True, dimension=_d)
register_family("geval_summeval", tuple(f"geval_{d}" for d in _SUMMEVAL))
register("mtraig_faithfulness", _J + "mtraig:MTRAIGFaithfulness", judge=True)
register("mtraig_completeness", _J + "mtraig:MTRAIGCompleteness", judge=True)
register("answer_equivalence", _J + "equivalence:AnswerEquivalence", judge=True)
register("mudabench_process", _J + "mudabench_judge:FactCoverageJudge", judge=True)

# ---------------------------------------------------------------------------------------------
# Applicability: what each metric needs of a dataset (read by `metajudge matrix`).

#: The requirement vocabulary: what a dataset must carry for a metric to apply. The matrix checks
#: each against the records (:mod:`metajudge.runs.matrix.table`) and names the first one missing.
REQUIREMENTS: dict[str, str] = {
    "response": "response texts",
    "reference": "reference answers (input.reference)",
    "short_reference": "gold answers (references of at most 200 words at the median)",
    "numeric_reference": "numeric gold answers",
    "tables": "source tables (input.tables)",
    "context": "source document or context (input.context or input.documents; "
    "`metajudge metrics run --source-field FIELD` names another record field that holds it)",
    "question": "questions or instructions (input.question)",
    "pairs": "two responses per record with a human preference (pairwise records)",
    "gold_facts": "MuDABench's gold atomic facts (a benchmark, no human labels)",
}

_REQUIRES: dict[str, tuple[str, ...]] = {}


def declare_requirements(name: str, requires: Sequence[str]) -> None:
    """Declare what metric ``name`` needs of a dataset (words of :data:`REQUIREMENTS`).

    Kept apart from :func:`register` so that a plugin (or a judge that is not a registry metric,
    such as ``pairwise_judge``) can declare it; a name may be declared before it is registered.
    Last declaration wins.
    """
    bad = [r for r in requires if r not in REQUIREMENTS]
    if bad:
        raise ValueError(f"unknown requirement(s) {bad}; known: {', '.join(REQUIREMENTS)}")
    _REQUIRES[name] = tuple(requires)


def requirements(name: str) -> tuple[str, ...] | None:
    """What ``name`` needs of a dataset (a family: its first member's); ``None``: not declared.

    >>> requirements("bleu")
    ('response', 'reference')
    """
    if name.startswith(DEFINED_PREFIX) and name not in _REQUIRES:
        load_definition = _resolve(_J + "defined:load_definition")  # lazily, as every target
        kind = load_definition(name[len(DEFINED_PREFIX) :]).kind
        return ("response", "question", "pairs") if kind == "pairwise" else ("response",)
    e = _REGISTRY.get(name)
    return _REQUIRES.get(e.members[0] if e is not None and e.members else name)


_REF = ("response", "reference")
_TAB = ("response", "question", "tables")
for _name, _req in {
    "bleu": _REF,
    "rouge_l": _REF,
    "rouge_1": _REF,
    "rouge_2": _REF,
    "meteor": _REF,
    "bertscore": _REF,
    "number_match": (*_REF, "numeric_reference"),
    # MT-RAIG Table 18 / Eq. 2-3: an insight judged against its tables (the completeness side
    # against the reference insight too)
    "geval_faithfulness": _TAB,
    "geval_completeness": _TAB,
    "mtraig_faithfulness": _TAB,
    "mtraig_completeness": (*_TAB, "reference"),
    "answer_equivalence": (*_REF, "short_reference"),
    "mudabench_process": ("gold_facts",),
    # metajudge.metrics.judges.pairwise: A / B / tie on two responses to one instruction
    "pairwise_judge": ("response", "question", "pairs"),
    # G-Eval on SummEval (Liu et al. 2023): reference-free, a summary against its source article
    "geval_coherence": ("response", "context"),
    "geval_consistency": ("response", "context"),
    "geval_fluency": ("response", "context"),
    "geval_relevance": ("response", "context"),
}.items():
    declare_requirements(_name, _req)
