"""Bounds on the code a judge definition brings: its Jinja2 templates and its regex patterns
(issue 66: a definition could hang a run or exhaust the machine).

Templates render in Jinja2's immutable sandbox (no attribute of ``_`` names, no mutation of
lists or dicts, ``range`` at most 100,000 long), and here also:

- ``include``, ``import`` and ``extends`` are refused at load (a definition is one file; there
  is no loader, so nothing is read);
- every loop step and every call spends one of :data:`MAX_STEPS` per rendering (nested
  ``range(100000)`` loops stop after a fraction of a second);
- ``*`` may not build a string or list over :data:`MAX_PROMPT_CHARS` (refused before it is
  built), ``**`` an integer over :data:`MAX_POW_BITS` bits; a filter, a call or a ``%`` format
  may not take an integer argument, a width or a precision over :data:`MAX_PROMPT_CHARS`
  (``center(10**9)``, ``"%0999999999d"``); ``lipsum`` is gone; what ``+``, ``%``, ``~``, a
  filter or a call returns is checked against the same size;
- the rendered text stops at :data:`MAX_PROMPT_CHARS` characters.

A template over a bound raises :class:`TemplateLimit` (the judge refuses that prompt: counted,
not sent). Regex patterns with a quantifier inside a repeated group (``(x+x+)+y``), or an
alternation inside one (``(a|a)+``), can backtrack exponentially: :func:`regex_hazard` says so
and the definition is refused at load; a parser pattern runs on at most
:data:`~metajudge.metrics.judges.parsers.defined.MAX_REGEX_INPUT` characters of a reply.
"""

from __future__ import annotations

import contextvars
import functools
import math
import re
from functools import cache
from typing import Any

#: The most characters a rendered prompt (and any value a template builds) may have.
MAX_PROMPT_CHARS = 1_000_000
#: Loop steps plus calls one rendering may make.
MAX_STEPS = 1_000_000
#: The largest integer ``**`` may build, in bits (about 1,200 decimal digits).
MAX_POW_BITS = 4096
#: Characters of a prompt per token of context above which it cannot fit the backbone (a
#: token of English text is about 4 characters; 8 refuses only what surely does not fit).
MAX_CHARS_PER_TOKEN = 8

_ITER, _SIZE = "_mj_bounded_iter", "_mj_bounded_size"
_steps: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("mj_steps", default=None)


class TemplateLimit(Exception):
    """A template went over a bound of this module (work or size); :attr:`key` is the
    definition's field whose template did (set by the renderer)."""

    key = "prompt"


def _spend() -> None:
    left = _steps.get()
    if left is None:
        return
    left[0] -= 1
    if left[0] < 0:
        raise TemplateLimit(f"the template runs more than {MAX_STEPS:,} loop steps and calls")


def _sized(value: Any) -> Any:
    if isinstance(value, str | list | tuple) and len(value) > MAX_PROMPT_CHARS:
        raise TemplateLimit(
            f"the template builds a value of {len(value):,} characters or items; "
            f"at most {MAX_PROMPT_CHARS:,}"
        )
    return value


class _Counted:
    """An iterable whose every step spends one of the rendering's steps."""

    def __init__(self, iterable: Any) -> None:
        self.iterable = iterable

    def __iter__(self) -> Any:
        for x in self.iterable:
            _spend()
            yield x

    def __len__(self) -> int:
        return len(self.iterable)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


#: A width or precision in a ``%`` or ``str.format`` spec (``%0999999999d``, ``{:>999999999}``).
_SPEC_NUMBER = re.compile(r"%[-#0 +]*(\d{7,})|%[-#0 +]*\d*\.(\d{7,})|\{[^{}]*:[^{}]*?(\d{7,})")


def _check_args(args: Any, kwargs: Any = None) -> None:
    """Refuse an integer argument over :data:`MAX_PROMPT_CHARS` (``center(10**9)``, a ``*``
    width): a filter or method given one can build that many characters."""
    for a in (*args, *(kwargs or {}).values()):
        if _is_int(a) and abs(a) > MAX_PROMPT_CHARS:
            raise TemplateLimit(f"an argument over {MAX_PROMPT_CHARS:,}")


def _check_format(spec: Any) -> None:
    """Refuse a format string with a width or precision over :data:`MAX_PROMPT_CHARS`."""
    if isinstance(spec, str):
        for m in _SPEC_NUMBER.finditer(spec):
            if int(next(g for g in m.groups() if g)) > MAX_PROMPT_CHARS:
                raise TemplateLimit(f"a format width over {MAX_PROMPT_CHARS:,}")


def _guarded(f: Any) -> Any:
    """Filter ``f`` with its arguments checked (the value itself is not an argument)."""
    skip = 2 if getattr(f, "jinja_pass_arg", None) is not None else 1

    @functools.wraps(f)
    def g(*args: Any, **kwargs: Any) -> Any:
        if f.__name__ != "do_format":
            _check_args(args[skip:], kwargs)
        elif len(args) >= skip:  # its arguments are values; its format string has the widths
            _check_format(args[skip - 1])
        return f(*args, **kwargs)

    return g


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*`` and ``**`` whose result would be over the bounds, before it is built, and a
    ``%`` format over them."""
    if operator == "%" and isinstance(left, str):
        _check_format(left)
    big = _is_int(left) and _is_int(right) and abs(left) > 1 and right > 0
    if operator == "**" and big and right * math.log2(abs(left)) > MAX_POW_BITS:
        raise TemplateLimit(f"a power over {MAX_POW_BITS:,} bits")
    if operator == "*":
        for seq, k in ((left, right), (right, left)):
            if (
                isinstance(seq, str | list | tuple)
                and _is_int(k)
                and len(seq) * k > MAX_PROMPT_CHARS
            ):
                raise TemplateLimit(
                    f"a value of {len(seq):,} times {k:,} is over {MAX_PROMPT_CHARS:,} characters"
                )


@cache
def environment() -> Any:
    """The one Jinja2 environment of judge definitions (see the module docstring)."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Bounded(ImmutableSandboxedEnvironment):  # type: ignore[misc]
        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return _sized(super().call_binop(context, operator, left, right))

        def wrap_str_format(self, value: Any) -> Any:  # "{:>999999999}".format(x)
            if getattr(value, "__name__", "") in ("format", "format_map"):
                _check_format(getattr(value, "__self__", None))
            return super().wrap_str_format(value)

        def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
            _spend()
            if isinstance(getattr(obj, "__self__", None), str):  # "x".center(10**9)
                _check_args(args, kwargs)
            return _sized(super().call(context, obj, *args, **kwargs))

    env = Bounded(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.globals.pop("lipsum", None)  # lipsum(n=10**6) builds its text before any check
    env.filters = {k: _guarded(f) for k, f in env.filters.items()}
    env.globals[_ITER] = _Counted
    env.globals[_SIZE] = _sized
    return env


def refused_tags(ast: Any) -> str | None:
    """Why a parsed template may not be used (``include`` / ``import`` / ``extends``), or None."""
    from jinja2 import nodes

    for n in ast.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        tag = {"FromImport": "import"}.get(type(n).__name__, type(n).__name__.lower())
        return (
            f"{{% {tag} %}} (template line {n.lineno}) is not allowed: a definition is one "
            "file and its templates read no other"
        )
    return None


def bounded_template(ast: Any) -> Any:
    """The compiled template of a parsed one, with every loop counted and every concatenation
    and filter result size-checked (see the module docstring)."""
    from jinja2 import nodes
    from jinja2.visitor import NodeTransformer

    def wrap(name: str, node: Any) -> Any:
        return nodes.Call(nodes.Name(name, "load"), [node], [], None, None, lineno=node.lineno)

    class Bound(NodeTransformer):  # type: ignore[misc]
        def visit_For(self, node: Any) -> Any:
            node = self.generic_visit(node)
            node.iter = wrap(_ITER, node.iter)
            return node

        def visit_Concat(self, node: Any) -> Any:
            return wrap(_SIZE, self.generic_visit(node))

        def visit_Filter(self, node: Any) -> Any:
            node = self.generic_visit(node)
            return node if node.node is None else wrap(_SIZE, node)  # a {% filter %} block's

    env = environment()
    return env.from_string(Bound().visit(ast))


def render_bounded(template: Any, ctx: Any) -> str:
    """``template`` rendered with ``ctx`` within the bounds (:class:`TemplateLimit` past one)."""
    token = _steps.set([MAX_STEPS])
    try:
        out, size = [], 0
        for piece in template.generate(ctx):
            size += len(piece)
            if size > MAX_PROMPT_CHARS:
                raise TemplateLimit(f"the prompt renders over {MAX_PROMPT_CHARS:,} characters")
            out.append(piece)
        return "".join(out)
    finally:
        _steps.reset(token)


def regex_hazard(pattern: str) -> str | None:
    """Why ``pattern`` (which compiles) may backtrack exponentially, or ``None``: a repeated
    group holding a quantifier or an alternation.

    >>> regex_hazard(r"Score: (?P<score>[1-5])")
    >>> regex_hazard(r"(?P<score>[1-5])(x+x+)+y")
    'a repeated group holds a quantifier (nested quantifiers can backtrack exponentially)'
    >>> regex_hazard(r"(a|ab)*c")
    'a repeated group holds an alternation (it can backtrack exponentially)'
    >>> regex_hazard(r"(?:A|B){1}")
    """
    import re._constants as c  # type: ignore[import-not-found]
    import re._parser as p  # type: ignore[import-not-found]

    repeats = (c.MAX_REPEAT, c.MIN_REPEAT)

    def walk(items: Any, repeated: bool) -> str | None:
        for op, av in items:
            if op in repeats:
                _lo, hi, sub = av
                many = hi == c.MAXREPEAT or hi > 1
                if repeated and many:
                    return "a repeated group holds a quantifier (nested quantifiers can backtrack exponentially)"
                found = walk(sub, repeated or many)
            elif op is c.BRANCH:
                if repeated:
                    return "a repeated group holds an alternation (it can backtrack exponentially)"
                found = next((w for b in av[1] if (w := walk(b, repeated))), None)
            elif op is c.SUBPATTERN:
                found = walk(av[-1], repeated)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                found = walk(av[1], repeated)
            else:
                found = None
            if found:
                return found
        return None

    return walk(p.parse(pattern), False)
