"""A judge defined in a file: the YAML definition behind the metric name ``judge:PATH``.

:func:`~metajudge.metrics.judges.defined.load_definition` reads a definition (schema ``metajudge/data/schemas/
judge_definition.schema.json``; an AlpacaEval evaluator ``configs.yaml`` is read by
:mod:`metajudge.metrics.judges.alpaca_eval` into the same :class:`JudgeDefinition`) and refuses
anything it cannot use with an :class:`~metajudge.errors.InputError` naming the file and the key,
before any model is called:

- the YAML is read safely (:func:`read_yaml`): at most :data:`MAX_FILE_BYTES`, nesting at most
  :data:`MAX_DEPTH` deep, no anchors or aliases (an alias bomb needs them), no Python tags;
- the schema is checked, then what a schema cannot say: a scale whose min is not below its max,
  a regex that does not compile or lacks its named group, a template over :data:`MAX_TEMPLATE_CHARS`,
  a Jinja2 syntax error, a variable that no record can have (:data:`VARIABLES`);
- templates render in Jinja2's sandbox with ``StrictUndefined``: a variable a record lacks is an
  error naming the record (:meth:`JudgeDefinition.render`), raised while the requests are built,
  so before the first call.

:attr:`JudgeDefinition.digest` hashes everything that changes a verdict (kind, scale, labels,
template text, parser, sampling, the few-shot examples): the metric's signature carries it, so one
character changed in the template is another judge.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from metajudge.backends.base import Message
from metajudge.data.formats import LikertRecord, PairwiseRecord
from metajudge.errors import InputError, RecordError
from metajudge.stats.decisions import SPELLINGS, Pref

#: The metric-name prefix of a defined judge: ``judge:PATH`` (this spelling is fixed).
PREFIX = "judge:"
MAX_FILE_BYTES = 1_000_000
MAX_TEMPLATE_CHARS = 200_000
MAX_DEPTH = 32
JUDGE_KINDS = ("rating", "label", "binary", "pairwise")
#: What a template may name (docs/judges.md): the record's input fields, the response, the two
#: responses of a pair, system names, ``meta``, the few-shot ``examples`` and the definition's own.
VARIABLES = frozenset(
    [
        "question",
        "context",
        "reference",
        "documents",
        "tables",
        "input",
        "response",
        "system",
        "id",
        "meta",
        "a",
        "b",
        "examples",
        "labels",
        "scale",
    ]
)
#: a pairwise definition's default labels: the positional spellings of a better / b better / tie
PAIRWISE_LABELS = tuple(SPELLINGS["positional"][p] for p in (Pref.A, Pref.B, Pref.TIE))
DEFAULT_LABELS = {"binary": ("pass", "fail"), "pairwise": PAIRWISE_LABELS}
Renderer = Callable[[Mapping[str, Any]], tuple[Message, ...]]


def is_defined(name: str) -> bool:
    """Whether metric ``name`` is a judge defined in a file (``judge:PATH``).

    >>> is_defined("judge:my.yaml"), is_defined("geval")
    (True, False)
    """
    return name.startswith(PREFIX) and len(name) > len(PREFIX)


@dataclass(frozen=True)
class JudgeDefinition:
    """A usable judge definition (see the module docstring)."""

    path: str
    name: str
    kind: str
    labels: tuple[str, ...]
    parse: Mapping[str, Any]
    sampling: Mapping[str, Any]
    renderer: Renderer = field(repr=False, compare=False)
    source: Mapping[str, Any] = field(repr=False)  # what the digest hashes
    description: str = ""
    scale: tuple[int, int] | None = None
    backbone: str | None = None
    examples: tuple[Mapping[str, Any], ...] = ()
    example_ids: tuple[str, ...] = ()
    origin: str = "metajudge"
    notes: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """sha256 (12 hex) of everything that changes a verdict, in canonical JSON."""
        text = json.dumps(self.source, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    def render(
        self, context: Mapping[str, Any], record_id: str, system: str | None = None
    ) -> tuple[Message, ...]:
        """The chat messages for one record; a variable the record lacks is a
        :class:`~metajudge.errors.RecordError` naming the definition file, the record and the
        variable (the CLI adds the record's file and line)."""
        import jinja2

        ctx = {k: v for k, v in context.items() if v is not None}
        ctx.update(examples=list(self.examples), labels=list(self.labels))
        if self.scale is not None:
            ctx["scale"] = {"min": self.scale[0], "max": self.scale[1]}
        which = f"record {record_id!r}" + (f" (system {system!r})" if system else "")
        try:
            return self.renderer(ctx)
        except (jinja2.UndefinedError, KeyError) as ex:
            var = missing_variable(getattr(self.renderer, "reads", ()), ctx, str(ex))
            raise RecordError(
                f"the template of judge definition {self.path} reads {var}, which {which} "
                "lacks (`{% if x is defined %}` guards an optional one)",
                record_id=record_id,
                system=system,
                field=var,
            ) from None
        except TemplateFault as ex:
            raise InputError(
                f"the template fails on {which}: {ex}", path=self.path, field=ex.key
            ) from None


#: The record a definition's template is rendered on once at load (:func:`check_template`).
SAMPLE_CONTEXT: Mapping[str, Any] = {
    "id": "sample",
    "question": "How many units were sold?",
    "context": "Week 1: 10 units.",
    "reference": "10 units.",
    "documents": ["Week 1: 10 units."],
    "tables": "| week | units |\n| 1 | 10 |",
    "input": {"question": "How many units were sold?", "context": "Week 1: 10 units."},
    "response": "10 units.",
    "system": "system-a",
    "a": {"response": "10 units.", "system": "system-a"},
    "b": {"response": "12 units.", "system": "system-b"},
}


def check_template(d: JudgeDefinition) -> None:
    """Render ``d``'s prompt once on :data:`SAMPLE_CONTEXT`, before any call: a template that
    fails (a type error, a division by zero, an overflow, a recursive macro) or goes over a
    bound of :mod:`.sandbox` is an InputError naming the file and the field. A variable the
    sample lacks (a ``meta`` key) is left to the records, each rendered before the first call."""
    from metajudge.metrics.judges.sandbox import TemplateLimit

    try:
        d.render(SAMPLE_CONTEXT, "(a sample record)")
    except RecordError:
        return
    except TemplateLimit as ex:
        raise InputError(
            f"the template goes over a bound on a sample record: {ex}",
            path=d.path,
            field=ex.key,
        ) from None


def missing_variable(reads: Sequence[str], ctx: Mapping[str, Any], message: str) -> str:
    """The dotted variable (``meta.source``) a template reads and ``ctx`` lacks, told apart by
    Jinja2's ``message`` (``'meta' is undefined``, ``... has no attribute 'source'``); the
    message's name when the template's reads do not say.

    >>> missing_variable(["meta", "meta.source", "response"], {"meta": {}}, "no attribute 'source'")
    'meta.source'
    >>> missing_variable(["meta.source", "response"], {}, "'meta' is undefined")
    'meta.source'
    """
    quoted = re.findall(r"'([^']*)'", message)
    name = quoted[-1] if quoted else message.strip()
    lacking = [r for r in reads if not _resolves(ctx, r)]
    longest = [r for r in lacking if not any(o.startswith(r + ".") for o in lacking)]
    for r in sorted(longest):
        if name in r.split("."):
            return r
    return name


def _resolves(ctx: Mapping[str, Any], dotted: str) -> bool:
    cur: Any = ctx
    for part in dotted.split("."):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif not isinstance(cur, Mapping) and hasattr(cur, part):
            cur = getattr(cur, part)
        else:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Safe YAML


class _Loader:
    """Built on first use (PyYAML is imported lazily): a SafeLoader with a depth limit that
    refuses anchors and aliases."""

    cls: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls.cls is None:
            import yaml

            class Limited(yaml.SafeLoader):  # type: ignore[misc]
                depth = 0

                def compose_node(self, parent: Any, index: Any) -> Any:
                    if self.check_event(yaml.AliasEvent):
                        raise _Refused("YAML aliases are not allowed (an alias bomb needs them)")
                    ev = self.peek_event()
                    if getattr(ev, "anchor", None):
                        raise _Refused("YAML anchors (&name) are not allowed")
                    self.depth += 1
                    try:
                        if self.depth > MAX_DEPTH:
                            raise _Refused(f"YAML nested more than {MAX_DEPTH} deep")
                        node = super().compose_node(parent, index)
                    finally:
                        self.depth -= 1
                    _no_huge_integer(node, index)
                    return node

            cls.cls = Limited
        return cls.cls


class _Refused(Exception):
    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.line, self.field = line, field


def _no_huge_integer(node: Any, key: Any) -> None:
    """Refuse a YAML integer no float can hold (``abs >= 2**1024``; past 4,300 digits Python
    cannot even read it): :func:`metajudge.io.parse_json`'s rule for JSON inputs."""
    tag, value = getattr(node, "tag", ""), getattr(node, "value", None)
    if not tag.endswith(":int") or not isinstance(value, str):
        return
    digits = value.replace("_", "").lstrip("+-").lstrip("0")
    if len(digits) < 309 or (len(digits) < 400 and digits.isdigit() and int(digits) < 2**1024):
        return
    raise _Refused(
        f"a number outside the range of a float ({digits[:3]}…, {len(digits)} digits; at most "
        "about 1.8e308)",
        line=node.start_mark.line + 1,
        field=getattr(key, "value", None) if isinstance(getattr(key, "value", None), str) else None,
    )


def read_yaml(path: str | Path) -> Any:
    """The YAML document in ``path`` read safely (see the module docstring)."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError("judge definition file not found", path=p)
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"file of {size:,} bytes; a definition has at most {MAX_FILE_BYTES:,}", path=p
        )
    try:
        text = p.read_text(encoding="utf-8")
        return yaml.load(text, Loader=_Loader.get())
    except _Refused as ex:
        raise InputError(str(ex), path=p, line=ex.line, field=ex.field) from None
    except UnicodeDecodeError as ex:
        raise InputError(f"not UTF-8 text ({ex.reason})", path=p) from None
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(
            f"not valid YAML: {getattr(ex, 'problem', ex)}", path=p, line=line
        ) from None


# ---------------------------------------------------------------------------------------------
# Templates


def _environment() -> Any:
    from metajudge.metrics.judges.sandbox import environment

    return environment()


def compile_template(text: str, path: str, key: str) -> Any:
    """A sandboxed Jinja2 template with bounded work (:mod:`.sandbox`); syntax errors,
    oversize text, unknown variables and ``include`` / ``import`` / ``extends`` refused."""
    import jinja2
    from jinja2 import meta

    from metajudge.metrics.judges.sandbox import bounded_template, refused_tags

    if len(text) > MAX_TEMPLATE_CHARS:
        raise InputError(
            f"template of {len(text):,} characters; at most {MAX_TEMPLATE_CHARS:,}",
            path=path,
            field=key,
        )
    env = _environment()
    try:
        ast = env.parse(text)
    except jinja2.TemplateSyntaxError as ex:
        raise InputError(
            f"Jinja2 syntax error (template line {ex.lineno}): {ex.message}", path=path, field=key
        ) from None
    refused = refused_tags(ast)
    if refused:
        raise InputError(refused, path=path, field=key)
    unknown = sorted(meta.find_undeclared_variables(ast) - VARIABLES)
    if unknown:
        raise InputError(
            f"template variable(s) {', '.join(map(repr, unknown))} that no record has "
            f"(known: {', '.join(sorted(VARIABLES))})",
            path=path,
            field=key,
        )
    return bounded_template(ast)


_CHATML = re.compile(r"<\|im_start\|>([^\n]*)\n(.*?)(?:<\|im_end\|>|\Z)", re.DOTALL)


def chatml_messages(text: str) -> tuple[Message, ...]:
    """A chat-ML string (``<|im_start|>role\\n…<|im_end|>``) as messages; text without it is one
    user message. A ``system name=…`` role is a system message (as AlpacaEval reads it).

    >>> chatml_messages("<|im_start|>system\\nBe fair.\\n<|im_end|>\\n<|im_start|>user\\nA or B?\\n<|im_end|>")
    ({'role': 'system', 'content': 'Be fair.'}, {'role': 'user', 'content': 'A or B?'})
    >>> chatml_messages("Score it.")
    ({'role': 'user', 'content': 'Score it.'},)
    """
    found = _CHATML.findall(text)
    if not found:
        return ({"role": "user", "content": text.strip()},)
    out = []
    for role, content in found:
        r = role.strip().split(" ", 1)[0] or "user"
        out.append(
            {
                "role": r if r in ("system", "user", "assistant") else "user",
                "content": content.strip(),
            }
        )
    return tuple(out)


class TemplateFault(Exception):
    """A template that failed to render: the definition's field (``prompt.user``) and why."""

    def __init__(self, key: str, error: Exception) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.key, self.error = key, error


class _JinjaRenderer:
    """A definition's renderer: its templates by role (``None``: one chat-ML string) and key,
    and the dotted variables they read (:attr:`reads`, to name the one a record lacks). A
    template that fails is a :class:`TemplateFault` naming its key; one over a bound of
    :mod:`.sandbox`, a :class:`~.sandbox.TemplateLimit`."""

    def __init__(self, parts: list[tuple[str | None, str, Any]], reads: Sequence[str]) -> None:
        self.parts = parts
        self.reads = tuple(sorted(set(reads)))

    def _render(self, key: str, template: Any, ctx: Mapping[str, Any]) -> str:
        import jinja2

        from metajudge.metrics.judges.sandbox import TemplateLimit, render_bounded

        try:
            return render_bounded(template, ctx)
        except (jinja2.UndefinedError, KeyError):
            raise
        except TemplateLimit as ex:
            ex.key = key
            raise
        except Exception as ex:  # noqa: BLE001 - any fault (a RecursionError too), named
            raise TemplateFault(key, ex) from None

    def __call__(self, ctx: Mapping[str, Any]) -> tuple[Message, ...]:
        if self.parts and self.parts[0][0] is None:
            return chatml_messages(self._render(*self.parts[0][1:], ctx))
        return tuple(
            {"role": str(r), "content": self._render(k, t, ctx).strip()} for r, k, t in self.parts
        )


def template_reads(text: str) -> list[str]:
    """The dotted names a template reads (``meta.source``, ``a.response``, ``question``).

    >>> template_reads("{{ meta.source }} {{ a['response'] }} {{ q }}")
    ['a', 'a.response', 'meta', 'meta.source', 'q']
    """
    from jinja2 import nodes

    def dotted(n: Any) -> str | None:
        if isinstance(n, nodes.Name):
            return n.name
        if isinstance(n, nodes.Getattr):
            base = dotted(n.node)
            return None if base is None else f"{base}.{n.attr}"
        if isinstance(n, nodes.Getitem) and isinstance(n.arg, nodes.Const):
            base = dotted(n.node)
            return None if base is None else f"{base}.{n.arg.value}"
        return None

    ast = _environment().parse(text)
    found = (dotted(n) for n in ast.find_all((nodes.Name, nodes.Getattr, nodes.Getitem)))
    return sorted({d for d in found if d is not None})


def jinja_renderer(prompt: Any, path: str) -> Renderer:
    """The renderer of a definition's ``prompt`` ({system, user} or one chat-ML string)."""
    if isinstance(prompt, str):
        return _JinjaRenderer(
            [(None, "prompt", compile_template(prompt, path, "prompt"))], template_reads(prompt)
        )
    parts: list[tuple[str | None, str, Any]] = [
        (role, f"prompt.{role}", compile_template(prompt[role], path, f"prompt.{role}"))
        for role in ("system", "user")
        if role in prompt
    ]
    reads = [d for role, _, _ in parts for d in template_reads(prompt[str(role)])]
    return _JinjaRenderer(parts, reads)


# ---------------------------------------------------------------------------------------------
# The definition


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    schema_path = Path(__file__).parents[2] / "data" / "schemas" / "judge_definition.schema.json"
    return Draft202012Validator(json.loads(schema_path.read_text(encoding="utf-8")))


def _schema_check(doc: Any, path: str) -> None:
    if not isinstance(doc, dict):
        raise InputError(
            "a judge definition is a YAML mapping (name, kind, prompt, parse, …)", path=path
        )
    errors = sorted(
        _validator().iter_errors(doc), key=lambda e: (len(e.path), list(map(str, e.path)))
    )
    if errors:
        e = errors[0]
        key = ".".join(map(str, e.path)) or (
            e.message.split("'")[1] if "required property" in e.message else "(top level)"
        )
        raise InputError(e.message[:300], path=path, field=key)


def _labels(doc: Mapping[str, Any], path: str) -> tuple[str, ...]:
    kind = doc["kind"]
    labels = tuple(doc.get("labels") or DEFAULT_LABELS.get(kind, ()))
    if kind == "label" and not labels:
        raise InputError("a label judge needs a non-empty set of labels", path=path, field="labels")
    want = {"binary": (2,), "pairwise": (2, 3)}.get(kind)
    if want and len(labels) not in want:
        raise InputError(
            f"a {kind} judge has {' or '.join(map(str, want))} labels, got {len(labels)}",
            path=path,
            field="labels",
        )
    if len({x.strip().lower() for x in labels}) != len(labels):
        raise InputError("labels repeat (case and spaces ignored)", path=path, field="labels")
    return labels


def _scale(doc: Mapping[str, Any], path: str) -> tuple[int, int] | None:
    if doc["kind"] != "rating":
        return None
    sc = doc.get("scale")
    if sc is None:
        raise InputError("a rating judge needs a scale (min, max)", path=path, field="scale")
    lo, hi = sc["min"], sc["max"]
    if lo >= hi:
        raise InputError(f"scale min {lo} is not below max {hi}", path=path, field="scale")
    if doc["parse"]["method"] == "logprobs" and not (0 <= lo and hi <= 9):
        raise InputError(
            "log-probability parsing reads one digit token: the scale must lie within 0-9",
            path=path,
            field="scale",
        )
    return int(lo), int(hi)


def _parse_spec(doc: Mapping[str, Any], path: str) -> dict[str, Any]:
    from metajudge.metrics.judges.sandbox import regex_hazard

    spec = dict(doc["parse"])
    method = spec["method"]
    if method == "regex":
        if "pattern" not in spec:
            raise InputError("a regex parser needs a pattern", path=path, field="parse.pattern")
        group = spec.setdefault("group", "score" if doc["kind"] == "rating" else "verdict")
        try:
            rx = re.compile(spec["pattern"])
        except re.error as ex:
            raise InputError(
                f"the regex does not compile: {ex}", path=path, field="parse.pattern"
            ) from None
        hazard = regex_hazard(spec["pattern"])
        if hazard is not None:
            raise InputError(
                f"the regex is refused: {hazard}; write it without repeating a group that "
                "repeats or alternates",
                path=path,
                field="parse.pattern",
            )
        if group not in rx.groupindex:
            raise InputError(
                f"the regex has no named group {group!r} (write (?P<{group}>...))",
                path=path,
                field="parse.pattern",
            )
    if method == "json" and "field" not in spec:
        raise InputError("a JSON parser needs the field to read", path=path, field="parse.field")
    return spec


def check_sampling(sampling: Mapping[str, Any], path: str, section: str = "sampling") -> None:
    """Refuse a sampling number that is not finite or is negative (YAML's ``.nan`` passes a
    schema's bounds: every comparison with NaN is false), naming ``section.key``.

    >>> check_sampling({"temperature": 0.7, "n": 2}, "j.yaml")
    >>> check_sampling({"temperature": float("nan")}, "j.yaml")
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: j.yaml: field sampling.temperature: nan is not a finite number >= 0
    """
    for k, v in sampling.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            continue
        if not math.isfinite(v) or v < 0:
            raise InputError(
                f"{v!r} is not a finite number >= 0", path=path, field=f"{section}.{k}"
            )


def _sampling(doc: Mapping[str, Any], path: str) -> dict[str, Any]:
    s = {"temperature": 0.0, "n": 1, "max_tokens": 16, "top_logprobs": 10}
    s.update(doc.get("sampling") or {})
    check_sampling(s, path)
    if doc["parse"]["method"] == "logprobs":
        s["n"] = 1  # one distribution per item
    return s


def definition_from_doc(doc: Any, p: str) -> JudgeDefinition:
    """The definition a YAML document in metajudge's format gives (``p``: its file)."""
    _schema_check(doc, p)
    labels, scale = _labels(doc, p), _scale(doc, p)
    parse, sampling = _parse_spec(doc, p), _sampling(doc, p)
    renderer = jinja_renderer(doc["prompt"], p)
    examples, ids = _examples(doc, p)
    source = {
        "kind": doc["kind"],
        "scale": doc.get("scale"),
        "labels": list(labels),
        "prompt": doc["prompt"],
        "parse": parse,
        "sampling": sampling,
        "examples": [dict(e) for e in examples],
    }
    d = JudgeDefinition(
        path=p,
        name=doc["name"],
        kind=doc["kind"],
        labels=labels,
        parse=parse,
        sampling=sampling,
        renderer=renderer,
        source=source,
        description=doc.get("description", ""),
        scale=scale,
        backbone=doc.get("backbone"),
        examples=examples,
        example_ids=ids,
    )
    check_template(d)
    return d


def _examples(
    doc: Mapping[str, Any], path: str
) -> tuple[tuple[dict[str, Any], ...], tuple[str, ...]]:
    """The few-shot examples: ``n`` inputs drawn with ``seed`` from ``file`` (relative to the
    definition; each input with all its responses, the rule of every command's subset), each
    response as the template sees a record plus its human ``label`` (the first dimension's
    mean); and the ids of the inputs drawn."""
    spec = doc.get("examples")
    if not spec:
        return (), ()
    from metajudge.data.loading import open_dataset
    from metajudge.data.subsample import select

    f = Path(path).parent / spec["file"]
    if not f.is_file():
        raise InputError(f"examples file {f} not found", path=path, field="examples.file")
    ds = open_dataset(None, str(f))
    draw = select(ds.records, limit=int(spec.get("n", 3)), seed=int(spec.get("seed", 0)))
    out = []
    for r in draw.records:
        labels = getattr(r, "labels", None) or getattr(r, "scores", {})
        vals = [float(v) for v in next(iter(labels.values()), ()) if isinstance(v, int | float)]
        out.append({**record_context(r), "label": sum(vals) / len(vals) if vals else None})
    return tuple(out), tuple(dict.fromkeys(r.id for r in draw.records))


def record_context(record: Any, item: Any = None) -> dict[str, Any]:
    """What a template sees of one record (docs/judges.md): the input's fields, ``response`` and
    ``system`` (a Likert record, or the scored side of a pair), ``a`` / ``b`` (a pair), ``id``,
    ``meta``; ``item`` (a response being scored) overrides the response and input fields."""
    inp = item.input if item is not None and item.input is not None else record.input
    ctx: dict[str, Any] = {
        "id": record.id,
        "question": inp.question,
        "context": inp.context,
        "reference": item.reference if item is not None else inp.reference,
        "documents": list(inp.documents) if inp.documents else None,
        "tables": _tables(inp),
        "input": inp.to_dict() if hasattr(inp, "to_dict") else None,
        "meta": dict(record.meta) if record.meta else None,
    }
    if isinstance(record, PairwiseRecord):
        ctx["a"] = {"response": record.a.response, "system": record.a.system}
        ctx["b"] = {"response": record.b.response, "system": record.b.system}
    elif isinstance(record, LikertRecord):
        ctx.update(response=record.response, system=record.system)
    if item is not None:
        ctx["response"] = item.response
    return ctx


def _tables(inp: Any) -> str | None:
    from metajudge.metrics.judges.table_text import serialize_tables, tables_of

    t = tables_of(inp)
    return serialize_tables(t).text if t else None


def definition_path(metric: str) -> str:
    """The file of metric ``judge:PATH``."""
    return metric[len(PREFIX) :]


def summary_of(d: JudgeDefinition) -> dict[str, Any]:
    """What a report says of a definition: name, file, kind, digest, parser, examples used."""
    return {
        "name": d.name,
        "file": d.path,
        "origin": d.origin,
        "kind": d.kind,
        "digest": d.digest,
        "parse": dict(d.parse),
        "examples_excluded": list(d.example_ids),
        "notes": list(d.notes),
    }


def describe_variables() -> Sequence[str]:
    """The template variables, sorted (docs/judges.md lists them)."""
    return sorted(VARIABLES)
