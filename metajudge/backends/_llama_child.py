"""Run ``python -m llama_cpp.server`` and exit when the metajudge process that started it dies.

Usage: ``python -m metajudge.backends._llama_child PARENT_PID [llama_cpp.server args...]``.
A watchdog thread polls the parent pid; when the parent is gone (even after ``kill -9``, which
runs no clean-up code) the server exits within half a second, so no server is ever orphaned.

With ``--logits_all True`` (what the logprobs of G-Eval need: llama-cpp-python refuses
``logprobs`` otherwise) the child first installs :func:`last_logits_only`: llama.cpp computes
the logits of the last token of each evaluated batch only — the rows the log-probabilities of
the generated tokens are read from — instead of the logits of every prompt token, and the
log-softmax runs on the rows that are read instead of on the whole context. The generated
tokens' log-probabilities are those of stock ``logits_all``; the prompt tokens' ones (``echo``
with ``logprobs``) are no longer there, and such a request is refused.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time
from typing import Any


def _watch(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


class _RowLogprobs:
    """``logits_to_logprobs`` of a 2-D logits array, computed for the rows a caller slices."""

    def __init__(self, fn: Any, logits: Any) -> None:
        self.fn = fn
        self.logits = logits

    def __getitem__(self, key: Any) -> Any:
        return self.fn(self.logits[key])

    def __len__(self) -> int:
        return len(self.logits)


def last_logits_only() -> None:
    """Patch ``llama_cpp.Llama`` in this process (see the module docstring)."""
    import numpy as np
    from llama_cpp import llama as ll

    cls = ll.Llama
    stock_logprobs = cls.logits_to_logprobs
    stock_create = cls._create_completion

    def logits_to_logprobs(logits: Any, axis: int = -1) -> Any:
        if axis == -1 and getattr(logits, "ndim", 1) == 2:
            return _RowLogprobs(stock_logprobs, logits)
        return stock_logprobs(logits, axis=axis)

    def eval(self: Any, tokens: Any) -> None:
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i : min(len(tokens), i + self.n_batch)]
            n_past = self.n_tokens
            n = len(batch)
            self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)
            self._ctx.decode(self._batch)
            self.input_ids[n_past : n_past + n] = batch
            if self._logits_all:  # the one output row: the batch's last token
                row = np.ctypeslib.as_array(self._ctx.get_logits(), shape=(self._n_vocab,))
                self.scores[n_past + n - 1, :] = row
            self.n_tokens += n
            self._requires_eval = False

    def _create_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("echo") and kwargs.get("logprobs") is not None:
            raise ValueError(
                "metajudge's embedded server keeps the logits of generated tokens only: "
                "echo with logprobs (prompt-token log-probabilities) is not served"
            )
        return stock_create(self, *args, **kwargs)

    cls.logits_to_logprobs = staticmethod(logits_to_logprobs)
    cls.eval = eval
    cls._create_completion = _create_completion


def main() -> None:
    parent = int(sys.argv[1])
    if os.getppid() != parent:
        sys.exit(0)
    threading.Thread(target=_watch, args=(parent,), name="parent-watchdog", daemon=True).start()
    args = sys.argv[2:]
    if "--logits_all" in args and args[args.index("--logits_all") + 1] == "True":
        last_logits_only()
    sys.argv = ["llama_cpp.server", *args]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
