"""AlpacaEval's evaluator configs read as they are: ``judge:DIR/configs.yaml``.

An AlpacaEval evaluator (``src/alpaca_eval/evaluators_configs/<name>/configs.yaml``, tatsu-lab/
alpaca_eval; five are in ``../shared/judge_configs/alpaca_eval/``) names a prompt template, the
completion arguments and a completion parser. :func:`from_alpaca_eval` turns one into a pairwise
:class:`~metajudge.metrics.judges.definition.JudgeDefinition`:

- ``prompt_template``: the file it names, relative to the folder of evaluator folders (as
  AlpacaEval's ``base_dir``), else to the config's own folder, never outside that folder of
  evaluator folders (an absolute path, ``..`` or a symlink leading out is refused, unread). Its placeholders are filled as
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

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.metrics.judges.definition import (
    MAX_TEMPLATE_CHARS,
    PAIRWISE_LABELS,
    JudgeDefinition,
    chatml_messages,
    check_sampling,
)
from metajudge.metrics.judges.parsers.alpaca_eval import (  # noqa: F401 - the parsers, re-exported
    logprob_parser,
    ranking_parser,
    regex_parser,
)
from metajudge.metrics.judges.sandbox import regex_hazard

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
# The config


def _template(cfg: Mapping[str, Any], path: str) -> str:
    """The text of the config's ``prompt_template``: a path relative to the folder of evaluator
    folders, else to the config's own folder, that stays inside the evaluator folders
    (:func:`metajudge.io.inside`): an absolute path, a ``..`` or a symlink that leads out is
    refused before anything is read (a config must not send a local file to the backbone)."""
    from metajudge.io import inside

    name = str(cfg["prompt_template"])
    here = Path(path).resolve().parent
    if Path(name).is_absolute():
        raise InputError(
            f"prompt template {name!r} is an absolute path; templates resolve only inside the "
            f"evaluator folders ({here.parent}); it was not read",
            path=path,
            field="prompt_template",
        )
    for rel in (Path(name), Path(here.name) / name):
        if not (here.parent / rel).is_file():
            continue
        f = inside(here.parent, rel, what="prompt_template", source=path)
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
            where = f"completion_parser_kwargs.outputs_to_match.{k}"
            try:
                re.compile(rx)
            except (re.error, TypeError) as ex:
                raise InputError(
                    f"the regex does not compile: {ex}", path=path, field=where
                ) from None
            hazard = regex_hazard(rx)
            if hazard is not None:
                raise InputError(f"the regex is refused: {hazard}", path=path, field=where)
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
    check_sampling({k: v for k, v in kw.items() if k in _USED_KWARGS}, path, "completions_kwargs")
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
    labels = PAIRWISE_LABELS  # A: output_1 (a) better, B: output_2, tie: a preference of 1.5
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
