"""The embedded server child's last-token-logits patch against stock llama-cpp-python (slow)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (make llama)")
pytestmark = [pytest.mark.slow, pytest.mark.llm]

PROMPT = (
    "Table: year | city | visitors\n"
    + "".join(f"{1990 + i} | city{i % 7} | {1000 + 37 * i}\n" for i in range(60))
    + "Rate how faithful this statement is to the table, 1 to 5: "
    "'city3 had the most visitors in 2001.' Score:"
)


@pytest.fixture(scope="module")
def llm() -> Iterator[Any]:
    from llama_cpp import Llama

    from metajudge.backends.models import resolve_gguf
    from metajudge.metrics.judges.engine import backbone_config

    cfg = backbone_config("smollm2-135m")
    model = Llama(
        model_path=str(resolve_gguf(str(cfg.gguf), cfg.gguf_sha256)),
        n_ctx=2048,
        n_threads=1,
        n_threads_batch=1,
        logits_all=True,
        verbose=False,
    )
    yield model
    model.close()


def _ask(llm: Any, **kw: Any) -> dict[str, Any]:
    llm.reset()  # no prefix reuse between the two variants
    out: dict[str, Any] = llm.create_completion(
        PROMPT, max_tokens=4, temperature=0.0, logprobs=10, seed=0, **kw
    )
    return out


def test_patched_logprobs_equal_stock_and_echo_is_refused(llm: Any) -> None:
    from llama_cpp import llama as ll

    from metajudge.backends._llama_child import last_logits_only

    stock = _ask(llm)
    saved = {k: ll.Llama.__dict__[k] for k in ("eval", "logits_to_logprobs", "_create_completion")}
    try:
        last_logits_only()
        patched = _ask(llm)
        again = _ask(llm)  # a second request: rows left from the first must not leak in
        with pytest.raises(ValueError, match="echo with logprobs"):
            _ask(llm, echo=True)
    finally:
        for k, v in saved.items():
            setattr(ll.Llama, k, v)
    assert stock["usage"]["prompt_tokens"] > 500
    s, p = stock["choices"][0], patched["choices"][0]
    assert (
        len(s["logprobs"]["tokens"]) == 4
    )  # four generated tokens: the prompt's row, then decode rows
    assert p["text"] == s["text"]
    assert p["logprobs"] == s["logprobs"]  # bit for bit: tokens, offsets, logprobs, top-10
    assert again["choices"][0]["logprobs"] == s["logprobs"]
