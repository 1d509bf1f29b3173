"""AlpacaEval's evaluator configs read as they are: ``judge:DIR/configs.yaml``.

An AlpacaEval evaluator (``src/alpaca_eval/evaluators_configs/<name>/configs.yaml``, tatsu-lab/
alpaca_eval; five are in ``../shared/judge_configs/alpaca_eval/``) names a prompt template, the
completion arguments and a completion parser. :func:`from_alpaca_eval` turns one into a pairwise
:class:`~metajudge.metrics.judges.definition.JudgeDefinition`:

- ``prompt_template``: the file it names, relative to the folder of evaluator folders (as
  AlpacaEval's ``base_dir``), else to the config's own folder. Its placeholders are filled as
  AlpacaEval's ``make_prompts`` fills them (the first occurrence of ``{name}`` is replaced):
  ``{instruction}`` ← the record's question, ``{output_1}`` ← response a (shown first),
  ``{output_2}`` ← response b; the chat-ML blocks become chat messages;
- ``completions_kwargs``: ``max_tokens``, ``temperature``, ``logprobs``, ``top_logprobs`` are
  used; the model (``model_name``) is replaced by the backbone; the rest (client, price,
  ``requires_chatml``) are listed in the definition's notes;
- ``fn_completion_parser`` (default ``regex_parser``, the pairwise annotator's) with
  ``completion_parser_kwargs``: :func:`ranking_parser`, :func:`logprob_parser`,
  :func:`regex_parser` give what AlpacaEval's give on the same replies (our code, written from
  their definitions at commit cd543a1; a batch of one item, so a reply that yields other than one
  annotation is unparsed, as AlpacaEval sets it to None).

A preference is AlpacaEval's number: 1 = output_1 (a) better, 2 = output_2 (b) better, in between
for ``logprob_parser`` without ``is_binarize`` (2 - p(numerator)). AlpacaEval shows the pair in a
random order per instruction; here the order is a first (``judge diagnostics`` shows both).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.metrics.judges.definition import (
    MAX_TEMPLATE_CHARS,
    JudgeDefinition,
    chatml_messages,
)
from metajudge.metrics.judges.parsers.defined import Reading

PARSERS = ("ranking_parser", "logprob_parser", "regex_parser")
#: AlpacaEval's placeholders and the record fields they are filled from
PLACEHOLDERS = {"instruction": "question", "output_1": "a", "output_2": "b"}
_USED_KWARGS = ("max_tokens", "temperature", "logprobs", "top_logprobs")


def is_alpaca_eval(doc: Any) -> bool:
    """Whether a YAML document is an AlpacaEval evaluator config (``{name: {prompt_template, …}}``)."""
    return (
        isinstance(doc, dict)
        and len(doc) == 1
        and isinstance(next(iter(doc.values())), dict)
        and "prompt_template" in next(iter(doc.values()))
    )


# ---------------------------------------------------------------------------------------------
# The three parsers (AlpacaEval's completion_parsers.py, batch of one)


def ranking_parser(completion: str, model_1_name: str = "model_1") -> float | None:
    """The rank of ``model_1_name`` in a Python-literal ranking (1: output_1 better, 2: output_2).

    >>> ranking_parser("[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]")
    1.0
    >>> ranking_parser("[{'model': 'model_1', 'rank': 2}, {'model': 'model_2', 'rank': 1}]")
    2.0
    >>> ranking_parser("[{'model': 'model_1', 'rank': 3}, {'model': 'model_2', 'rank': 1}]") is None
    True
    """
    if not completion:
        return None
    try:
        ranking = ast.literal_eval(completion)
        rank = next(c for c in ranking if c["model"] == model_1_name)["rank"]
    except (
        ValueError,
        TypeError,
        SyntaxError,
        KeyError,
        StopIteration,
        MemoryError,
        RecursionError,
    ):
        return None
    return float(rank) if rank in (1, 2) else None


def regex_parser(completion: str, outputs_to_match: Mapping[Any, str]) -> float | None:
    """The key of the one pattern that matches (earliest first, each match consumed); more than
    one annotation, or none, is no preference (a batch of one).

    >>> regex_parser(" Output (a)", {1: r"(?:^|\\n) ?Output \\(a\\)", 2: r"(?:^|\\n) ?Output \\(b\\)"})
    1.0
    >>> regex_parser("Output (a)\\nOutput (b)", {1: r"(?:^|\\n) ?Output \\(a\\)", 2: r"(?:^|\\n) ?Output \\(b\\)"}) is None
    True
    """
    if not completion:
        return None
    pats = {k: re.compile(v) for k, v in outputs_to_match.items()}
    found: list[Any] = []
    rest = completion
    while True:
        first: tuple[re.Match[str], Any] | None = None
        for k, rx in pats.items():
            m = rx.search(rest)
            if m and (first is None or m.start() < first[0].start()):
                first = (m, k)
        if first is None:
            break
        found.append(first[1])
        rest = rest[first[0].end() :]
        if len(found) > 1:
            return None
    if len(found) != 1:
        return None
    try:
        return float(found[0])
    except (TypeError, ValueError):
        return None


def logprob_parser(
    top_logprobs: Sequence[tuple[str, float]],
    numerator_token: str,
    denominator_tokens: Sequence[str],
    is_binarize: bool = True,
) -> float | None:
    """AlpacaEval's preference from one position's top log-probabilities: tokens matched
    exactly; binarised, 1 when the numerator's log-probability beats every other denominator
    token's, else 2; otherwise 2 - p(numerator) / Σ p(denominator). No listed token present →
    ``None`` (AlpacaEval's NaN).

    >>> round(logprob_parser([("m", -0.1), ("M", -2.4)], "m", ["m", "M"], False), 6)
    1.091123
    >>> logprob_parser([("m", -0.1), ("M", -2.4)], "m", ["m", "M"], True)
    1.0
    >>> logprob_parser([("The", -0.1)], "m", ["m", "M"]) is None
    True
    """
    wanted = [*denominator_tokens, numerator_token]
    found = {t: lp for t, lp in top_logprobs if t in wanted}
    if not found:
        return None
    num = found.get(numerator_token, -math.inf)
    if is_binarize:
        others = [found.get(t, -math.inf) for t in denominator_tokens if t != numerator_token]
        return 1.0 if all(num > o for o in others) else 2.0
    dens = [found.get(t, -math.inf) for t in denominator_tokens]
    top = max(dens)
    if top == -math.inf:
        return None  # no denominator token present: AlpacaEval's exp(-inf - (-inf)) is NaN
    lse = top + math.log(sum(math.exp(d - top) for d in dens))
    return 2.0 - math.exp(num - lse)


def read_alpaca(
    text: str, logprobs: Sequence[Any] | None, parse: Mapping[str, Any], labels: Sequence[str]
) -> Reading:
    """One reply read by the config's parser: the verdict (``A`` = output_1 better, ``B``,
    ``tie`` at exactly 1.5) and, for a non-binarised ``logprob_parser``, p(A) and p(B)."""
    name, kw = parse["parser"], dict(parse["kwargs"])
    if name == "ranking_parser":
        pref = ranking_parser(text, **kw)
    elif name == "regex_parser":
        pref = regex_parser(text, **kw)
    else:
        if not text or not logprobs or len(logprobs) != 1:  # a batch of one annotation
            return Reading(None)
        tl = logprobs[0]
        pref = logprob_parser(tl.top or ((tl.token, tl.logprob),), **kw)
    if pref is None or not 1.0 <= pref <= 2.0:
        return Reading(None)
    verdict = labels[0] if pref < 1.5 else (labels[1] if pref > 1.5 else labels[2])
    probs = None
    if name == "logprob_parser" and not kw.get("is_binarize", True):
        probs = {labels[0]: 2.0 - pref, labels[1]: pref - 1.0}
    return Reading(verdict, probs, None)


# ---------------------------------------------------------------------------------------------
# The config


def _template(cfg: Mapping[str, Any], path: str) -> str:
    name = cfg["prompt_template"]
    here = Path(path).resolve().parent
    for base in (here.parent, here):
        f = (base / str(name)).resolve()
        if f.is_file():
            if f.stat().st_size > MAX_TEMPLATE_CHARS * 4:
                raise InputError("prompt template too large", path=path, field="prompt_template")
            text = f.read_text(encoding="utf-8")
            if len(text) > MAX_TEMPLATE_CHARS:
                raise InputError(
                    f"template of {len(text):,} characters; at most {MAX_TEMPLATE_CHARS:,}",
                    path=path,
                    field="prompt_template",
                )
            return text
    raise InputError(f"prompt template {name!r} not found", path=path, field="prompt_template")


def _renderer(template: str, path: str) -> Any:
    names = list(dict.fromkeys(re.findall(r"{([^ \s]+?)}", template)))
    unknown = [n for n in names if n not in PLACEHOLDERS]
    if unknown:
        raise InputError(
            f"placeholder(s) {unknown} not mapped onto a pairwise record "
            f"(known: {', '.join(PLACEHOLDERS)})",
            path=path,
            field="prompt_template",
        )

    def render(ctx: Mapping[str, Any]) -> tuple[dict[str, str], ...]:
        values = {
            "instruction": ctx["question"],
            "output_1": ctx["a"]["response"],
            "output_2": ctx["b"]["response"],
        }
        text = template
        for n in names:  # the first occurrence only, as AlpacaEval's make_prompts
            text = text.replace("{" + n + "}", str(values[n]), 1)
        return chatml_messages(text)

    return render


def _parser(cfg: Mapping[str, Any], path: str) -> dict[str, Any]:
    name = cfg.get("fn_completion_parser") or "regex_parser"
    if name not in PARSERS:
        raise InputError(
            f"completion parser {name!r} is not supported (supported: {', '.join(PARSERS)})",
            path=path,
            field="fn_completion_parser",
        )
    kwargs = dict(cfg.get("completion_parser_kwargs") or {})
    need = {"regex_parser": "outputs_to_match", "logprob_parser": "numerator_token"}.get(name)
    if need and need not in kwargs:
        raise InputError(
            f"{name} needs {need}", path=path, field=f"completion_parser_kwargs.{need}"
        )
    if name == "regex_parser":
        for k, rx in kwargs["outputs_to_match"].items():
            try:
                re.compile(rx)
            except (re.error, TypeError) as ex:
                raise InputError(
                    f"the regex does not compile: {ex}",
                    path=path,
                    field=f"completion_parser_kwargs.outputs_to_match.{k}",
                ) from None
    return {
        "method": "alpaca_eval",
        "parser": name,
        "kwargs": kwargs,
        "logprobs": name == "logprob_parser",
    }


def from_alpaca_eval(doc: Mapping[str, Any], path: str) -> JudgeDefinition:
    """The pairwise definition of an AlpacaEval evaluator config (see the module docstring)."""
    name, cfg = next(iter(doc.items()))
    if int(cfg.get("batch_size", 1)) != 1:
        raise InputError("only batch_size 1 is supported", path=path, field="batch_size")
    template = _template(cfg, path)
    parse = _parser(cfg, path)
    kw = dict(cfg.get("completions_kwargs") or {})
    sampling = {
        "temperature": float(kw.get("temperature", 0.0)),
        "n": 1,
        "max_tokens": int(kw.get("max_tokens", 100)),
        "top_logprobs": int(kw.get("top_logprobs", 5)),
    }
    notes = tuple(
        f"completions_kwargs.{k} ({v!r}) not used: the backbone is chosen with --backbone"
        if k == "model_name"
        else f"completions_kwargs.{k} not used"
        for k, v in kw.items()
        if k not in _USED_KWARGS
    )
    labels = ("A", "B", "tie")
    return JudgeDefinition(
        path=path,
        name=str(name),
        kind="pairwise",
        labels=labels,
        parse=parse,
        sampling=sampling,
        renderer=_renderer(template, path),
        source={"template": template, "parse": parse, "sampling": sampling, "kind": "pairwise"},
        description=f"AlpacaEval evaluator {name}",
        origin="alpaca_eval",
        notes=notes,
    )
