"""``metajudge matrix run --dry-run``: what a cell would cost, with no model call.

estimate = items × calls per item × tokens per call, and a wall time from a throughput:

- **calls**: the judge runs on the (subset) items in export mode
  (:class:`~metajudge.backends.recording.RecordingBackend` over an empty cache: every request
  it would send is recorded, none is sent), so the count is the judge's own (G-Eval: one per
  response and dimension; answer equivalence: one per response the numeric fast path does not
  decide, distinct responses once; the pairwise judge: two orders per pair). A judge whose
  later calls depend on earlier answers (MT-RAIG Eval: decomposition, then verification or
  matching) records only its first stage: its calls per response are then measured in a stored
  cell of that metric under the backbone, else :data:`STAGE_RULES` (stated in the output).
  How many of the requests the response cache already holds is counted too.
- **tokens per call**: the recorded prompts counted with the backbone's tokenizer (embedded
  GGUF backbones: llama.cpp's vocabulary, no weights, and the GGUF's chat template), else with
  the characters-per-token ratio measured in stored cells of the backbone, else
  :data:`~metajudge.metrics.judges.common.CHARS_PER_TOKEN` (assumed); completion tokens per
  call as measured in stored cells of the metric, else each request's ``max_tokens`` (a bound).
- **wall time**: tokens / the tokens per second of model time measured in stored cells of this
  metric and backbone (else of every stored cell of the backbone), plus the server start
  measured there; else unknown.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from metajudge.errors import MetajudgeError
from metajudge.results import Result

#: later-stage calls per distinct response of judges whose later calls depend on earlier
#: answers (MT-RAIG Eval, Seo et al. 2025, Eq. 2-3, in metajudge's default modes)
STAGE_RULES: dict[str, tuple[int, str]] = {
    "mtraig_faithfulness": (
        20,
        (
            "after the decompositions, one verification call per claim (per_claim, the default): "
            "20 claims per response assumed, the small-backbone claim cap (a bound there)"
        ),
    ),
    "mtraig_completeness": (
        1,
        "after the reference and prediction decompositions, one matching call per response",
    ),
}


@dataclass
class CostEstimate(Result):
    """A cell's cost estimate and where each figure comes from."""

    metric: str
    dataset: str
    backbone: str | None
    items: int
    of: int
    unit: str
    calls: int
    cached: int
    calls_source: str
    prompt_tokens: int
    completion_tokens: int
    tokens_source: str
    completion_source: str
    wall_s: float | None
    wall_source: str

    @property
    def calls_per_item(self) -> float:
        return self.calls / self.items if self.items else 0.0

    @property
    def tokens_per_call(self) -> float:
        return (self.prompt_tokens + self.completion_tokens) / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "calls_per_item": round(self.calls_per_item, 3),
            "tokens_per_call": round(self.tokens_per_call, 1),
        }

    def to_text(self) -> str:
        wall = "unknown" if self.wall_s is None else f"{self.wall_s:.0f} s"
        return "\n".join(
            [
                (
                    f"dry run: {self.metric} × {self.dataset} under {self.backbone or 'no backbone'}"
                    " (no model called)"
                ),
                f"items: {self.items} of {self.of} {self.unit}",
                (
                    f"calls: {self.items} items × {self.calls_per_item:.2f} calls/item = "
                    f"{self.calls} ({self.calls_source}); {self.cached} already in the response cache"
                ),
                (
                    f"tokens: {self.calls} calls × {self.tokens_per_call:.0f} tokens/call = "
                    f"{self.prompt_tokens + self.completion_tokens} "
                    f"({self.prompt_tokens} prompt: {self.tokens_source}; "
                    f"{self.completion_tokens} completion: {self.completion_source})"
                ),
                f"wall time: {wall} ({self.wall_source})",
            ]
        )


def stored_cells(baselines: Path, backbone: str | None) -> list[dict[str, Any]]:
    """Stored cells of ``backbone`` whose ``measured`` cost is known."""
    out = []
    for p in sorted((baselines / "judges").glob("*__*.json")):
        try:
            c = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(c, dict) and c.get("backbone") == backbone and c.get("measured"):
            out.append(c)
    return out


def _record(opts: Any, prep: Any, backbone: str) -> tuple[list[Any], Any]:
    """Every request the judge would send on the subset (first stage), and the cached backend."""
    from metajudge.backends.cache import ResponseCache
    from metajudge.backends.recording import RecordingBackend
    from metajudge.backends.registry import get_backend
    from metajudge.runs.matrix.table import PAIRWISE_JUDGE

    recs = list(prep.dataset.records)
    if opts.metric == PAIRWISE_JUDGE:
        from metajudge.metrics.judges.pairwise import PAIRWISE_PARSER_VERSION as pv
    else:
        from metajudge.metrics.registry import metric_class

        pv = str(getattr(metric_class(opts.metric), "parser_version", ""))
    cached = get_backend(backbone, parser_version=pv, seed=opts.seed)
    with tempfile.TemporaryDirectory() as tmp:
        empty = ResponseCache(Path(tmp) / "empty.sqlite")
        rec = RecordingBackend(cached.inner, empty, parser_version=pv, _owns=False)
        kw: dict[str, Any] = {"backend": rec}
        if opts.prompt_variant:
            kw["variant"] = opts.prompt_variant
        if opts.metric == PAIRWISE_JUDGE:
            from metajudge.metrics.judges.pairwise import PairwiseJudge

            judge = PairwiseJudge(backbone=backbone, seed=opts.seed, **kw)
            judge.judge(recs, order="ab")
            judge.judge(recs, order="ba")
        else:
            from metajudge.scores.scoring import score_dataset

            score_dataset(recs, [opts.metric], options={opts.metric: kw}, progress=False)
        empty.close()
    return list(rec.records.values()), cached


def count_prompt_tokens(backbone: str, requests: Sequence[Any]) -> list[int] | None:
    """Prompt tokens of each request under the backbone's own tokenizer; ``None`` when the
    backbone has no local tokenizer (see :func:`prompt_token_ids`)."""
    ids = prompt_token_ids(backbone, requests)
    return None if ids is None else [len(t) for t in ids]


def processed_tokens(ids: Sequence[Sequence[int]], replicas: int) -> int:
    """Prompt tokens a llama.cpp server evaluates for these prompts sent in order: each server
    keeps its last prompt's KV cache and re-evaluates only what follows the longest common
    prefix with it. With ``replicas`` servers taking requests in turn, a prompt's previous one
    on its server is one of the ``replicas`` before it (the longest shared prefix among them
    is taken: an estimate, the routing is least-in-flight).

    >>> processed_tokens([[1, 2, 3, 4], [1, 2, 3, 5], [9]], replicas=1)
    6
    """
    total = 0
    for i, t in enumerate(ids):
        reuse = 0
        for prev in ids[max(0, i - replicas) : i]:
            k = 0
            for a, b in zip(t, prev, strict=False):
                if a != b:
                    break
                k += 1
            reuse = max(reuse, min(k, len(t) - 1))  # the last token is always evaluated
        total += len(t) - reuse
    return total


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null for a block (C libraries write there directly)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def prompt_token_ids(backbone: str, requests: Sequence[Any]) -> list[list[int]] | None:
    """Prompt token ids of each request under the backbone's own tokenizer (embedded GGUF
    backbones: the vocabulary only, no weights, and its chat template); ``None`` when the
    backbone has no local tokenizer."""
    from metajudge.metrics.judges.engine import backbone_config

    cfg = backbone_config(backbone)
    if cfg.kind != "embedded" or not cfg.gguf:
        return None
    try:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from metajudge.backends.models import resolve_gguf

        with _quiet_stderr():  # llama.cpp's C side warns about the context of a vocab-only load
            vocab = llama_cpp.Llama(
                model_path=str(resolve_gguf(cfg.gguf)), vocab_only=True, verbose=False
            )
    except (ImportError, OSError, ValueError, RuntimeError, MetajudgeError):
        return None  # no local tokenizer: the caller falls back to a chars/token ratio
    fmt = None
    template = vocab.metadata.get("tokenizer.chat_template")
    if cfg.chat and template:
        tok = vocab._model.token_get_text
        fmt = Jinja2ChatFormatter(template, tok(vocab.token_eos()), tok(vocab.token_bos()))
    out = []
    for r in requests:
        if r.messages is not None and fmt is not None:
            text = fmt(messages=[dict(m) for m in r.messages]).prompt
            out.append(list(vocab.tokenize(text.encode(), add_bos=False, special=True)))
        else:
            text = (
                r.prompt
                if r.prompt is not None
                else "\n".join(str(m.get("content", "")) for m in r.messages or ())
            )
            out.append(list(vocab.tokenize(text.encode(), add_bos=True, special=True)))
    return out


def _sum(cells: Sequence[dict[str, Any]], key: str) -> float:
    return float(sum((c.get("measured") or {}).get(key) or 0 for c in cells))


def distinct_responses(records: Sequence[Any]) -> int:
    """Distinct (response, reference, input) of the records: what a judge scores once."""
    from metajudge.metrics.base import iter_responses

    return len({(r.response, r.reference, r.input) for r in iter_responses(records)})


def _calls(
    metric: str, first: int, responses: int, cells: Sequence[dict[str, Any]]
) -> tuple[int, str]:
    if metric not in STAGE_RULES:
        return first, "recorded in export mode"
    from metajudge.runs.matrix.table import non_default_options

    same = [  # cells computed with the metric's defaults (a batched MT-RAIG cell is not)
        c
        for c in cells
        if c["metric"] == metric
        and c["ledger"].get("responses")
        and not non_default_options(metric, c.get("signature"))
    ]
    if same:
        per = _sum(same, "calls") / sum(c["ledger"]["responses"] for c in same)
        return round(
            per * responses
        ), f"{per:.2f} calls/response measured in {len(same)} stored cell(s)"
    k, why = STAGE_RULES[metric]
    return first + k * responses, f"{first} recorded first-stage calls + rule: {why}"


def _prompt_tokens(
    backbone: str, reqs: Sequence[Any], cells: Sequence[dict[str, Any]]
) -> tuple[float, str, float | None]:
    """Prompt tokens of the recorded requests, how they were counted, and how many of them the
    server would evaluate (prefix reuse, :func:`processed_tokens`; None without a tokenizer)."""
    from metajudge.metrics.judges.common import CHARS_PER_TOKEN
    from metajudge.metrics.judges.engine import backbone_config
    from metajudge.runs.matrix.prepare import request_chars

    ids = prompt_token_ids(backbone, reqs)
    if ids is not None:
        replicas = max(1, int(getattr(backbone_config(backbone), "n_parallel", 1) or 1))
        return (
            float(sum(len(t) for t in ids)),
            f"counted with {backbone}'s tokenizer (its GGUF vocabulary)",
            float(processed_tokens(ids, replicas)),
        )
    chars = sum(request_chars(r) for r in reqs)
    with_chars = [c for c in cells if (c.get("measured") or {}).get("prompt_chars")]
    if with_chars:
        ratio = _sum(with_chars, "prompt_tokens") / _sum(with_chars, "prompt_chars")
        return (
            chars * ratio,
            f"{1 / ratio:.2f} chars/token measured in {len(with_chars)} stored cell(s)",
            None,
        )
    return (
        chars / CHARS_PER_TOKEN,
        f"assumed {CHARS_PER_TOKEN} chars/token (no tokenizer, no stored cell)",
        None,
    )


def _completion(
    metric: str, reqs: Sequence[Any], calls: int, cells: Sequence[dict[str, Any]]
) -> tuple[float, str]:
    same = [c for c in cells if c["metric"] == metric and _sum([c], "calls")]
    if same:
        per = _sum(same, "completion_tokens") / _sum(same, "calls")
        return per * calls, f"{per:.1f}/call measured in {len(same)} stored cell(s)"
    bound = sum(r.max_tokens * max(r.n, 1) for r in reqs) / max(len(reqs), 1)
    return bound * calls, "bound: each request's max_tokens"


def _wall(
    metric: str,
    prompt: float,
    completion: float,
    processed: float | None,
    cells: Sequence[dict[str, Any]],
) -> tuple[float | None, str]:
    """Tokens / the throughput measured in stored cells of this metric, else of any metric, on
    this backbone; plus the mean server start measured there. With a tokenizer the tokens the
    server evaluates (``processed``: prompt tokens after prefix reuse, + completion tokens) are
    divided by the evaluated tokens per second of cells that recorded them; else all tokens by
    all tokens per second."""
    timed = [c for c in cells if (c.get("measured") or {}).get("model_s")]
    if processed is not None:
        known = [c for c in timed if (c.get("measured") or {}).get("processed_prompt_tokens")]
        timed, what = (known, "evaluated") if known else (timed, "")
    else:
        what = ""
    same = [c for c in timed if c["metric"] == metric]
    use, where = (same, f"of {metric}") if same else (timed, "of this backbone")
    if not use:
        return None, "unknown: no stored cell of this backbone has a measured cost"
    prompt_key = "processed_prompt_tokens" if what else "prompt_tokens"
    tps = (_sum(use, prompt_key) + _sum(use, "completion_tokens")) / _sum(use, "model_s")
    start = _sum(use, "start_s") / len(use)
    work = (processed if what and processed is not None else prompt) + completion
    why = (
        f"{work:.0f} {what + ' ' if what else ''}tokens at {tps:.0f} {what + ' ' if what else ''}"
        f"tokens/s measured in {len(use)} stored cell(s) {where}, + {start:.0f} s start"
    )
    return work / tps + start, why


def estimate_cell(opts: Any) -> CostEstimate:
    """The dry run of a cell (the module docstring); calls no model."""
    from metajudge.metrics.judges.engine import resolve_backbone
    from metajudge.metrics.registry import is_judge
    from metajudge.runs.matrix.prepare import prepare_cell
    from metajudge.runs.matrix.table import PAIRWISE_JUDGE, default_baselines_dir

    prep = prepare_cell(opts)
    d = prep.draw
    head = {
        "metric": opts.metric,
        "dataset": prep.facts.name,
        "items": d.n,
        "of": d.of,
        "unit": d.unit,
    }
    if opts.metric != PAIRWISE_JUDGE and not is_judge(opts.metric):
        none = "a deterministic metric: no model call"
        return CostEstimate(
            **head,
            backbone=None,
            calls=0,
            cached=0,
            calls_source=none,
            prompt_tokens=0,
            completion_tokens=0,
            tokens_source=none,
            completion_source=none,
            wall_s=None,
            wall_source="not estimated",
        )
    backbone = resolve_backbone(opts.backbone)
    recorded, cached = _record(opts, prep, backbone)
    try:
        hits = cached.cache.get_many([r.key for r in recorded]) if recorded else {}
    finally:
        cached.close()
    reqs = [r.request for r in recorded]
    base = Path(opts.baselines) if opts.baselines else default_baselines_dir()
    cells = stored_cells(base, backbone)
    calls, calls_src = _calls(
        opts.metric, len(reqs), distinct_responses(prep.dataset.records), cells
    )
    prompt, tok_src, processed = _prompt_tokens(backbone, reqs, cells)
    scale = calls / len(reqs) if reqs else 0.0  # later stages: first-stage size
    prompt, processed = prompt * scale, None if processed is None else processed * scale
    if reqs and calls != len(reqs):
        tok_src += "; later-stage calls sized as the first stage's mean"
    completion, comp_src = _completion(opts.metric, reqs, calls, cells)
    wall, wall_src = _wall(opts.metric, prompt, completion, processed, cells)
    return CostEstimate(
        **head,
        backbone=backbone,
        calls=calls,
        cached=len(hits),
        calls_source=calls_src,
        prompt_tokens=round(prompt),
        completion_tokens=round(completion),
        tokens_source=tok_src,
        completion_source=comp_src,
        wall_s=None if wall is None else round(wall, 1),
        wall_source=wall_src,
    )
