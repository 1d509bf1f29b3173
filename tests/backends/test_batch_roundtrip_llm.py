"""Batch export -> run -> import, end to end against the real embedded llama.cpp server (issue 17).

A judge run (SmolLM2-135M G-Eval on 5 items) is exported as an OpenAI batch file without a
call, a small test-side runner sends each line's body to the embedded server and writes the
results in the OpenAI batch-output format (what ``vllm.entrypoints.openai.run_batch`` writes),
the results are imported into a fresh cache, and the same judge run is then answered from that
cache with zero backend calls and exactly the scores of a live run.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.batch_file import export_requests, import_results
from metajudge.backends.cache import ResponseCache
from metajudge.backends.cached import CachedBackend
from metajudge.backends.ledger import Ledger
from metajudge.backends.recording import RecordingBackend
from metajudge.backends.registry import get_backend
from metajudge.data.formats import Input
from metajudge.metrics.base import ScoreItem
from tests.backends.test_batch_file import check_batch_input

pytest.importorskip(
    "llama_cpp.server", reason="llama-cpp-python[server] not installed (make llama)"
)
pytestmark = [pytest.mark.slow, pytest.mark.llm]

ITEMS = [
    ScoreItem(
        f"i{k}",
        resp,
        None,
        Input(f"How many units were sold in week {k}?", context=f"Week {k}: {10 + k} units sold."),
    )
    for k, resp in enumerate(
        ["10 units.", "11 units were sold.", "About 40 units.", "13.", "No idea, maybe 2."]
    )
]


def run_batch_file(requests: Path, results: Path, base_url: str) -> None:
    """The test-side runner: each line's body POSTed to the server, batch-output lines out."""
    root = base_url.removesuffix("/v1")
    out = []
    for line in requests.read_text().splitlines():
        item = json.loads(line)
        req = urllib.request.Request(
            root + item["url"],
            data=json.dumps(item["body"]).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=120) as resp:
            body, status = json.loads(resp.read()), resp.status
        out.append(
            {
                "id": f"batch_req_{len(out)}",
                "custom_id": item["custom_id"],
                "response": {"status_code": status, "request_id": str(len(out)), "body": body},
                "error": None,
            }
        )
    results.write_text("".join(json.dumps(x) + "\n" for x in out))


def _scores(results: list[Any]) -> list[tuple[str, float | None, str | None]]:
    return [(r.key, r.score, r.error) for r in results]


def test_export_run_import_gives_the_live_scores_with_zero_calls(tmp_path: Path) -> None:
    from metajudge.metrics.judges.geval import GEval

    live_be = get_backend(
        "smollm2-135m", run_dir=tmp_path / "run", cache=tmp_path / "live.sqlite", n_ctx=2048
    )
    with live_be:
        live = _scores(GEval("faithfulness", backend=live_be).score_batch(ITEMS))
        assert any(s is not None for _, s, _ in live)
        inner = live_be.inner
        cache = ResponseCache(tmp_path / "batch.sqlite")
        rec = RecordingBackend(inner, cache, close_cache=False, _owns=False)
        pending = GEval("faithfulness", backend=rec).score_batch(ITEMS)
        assert all(r.score is None and "not yet available" in (r.error or "") for r in pending)
        requests = tmp_path / "requests.jsonl"
        summary = export_requests(inner, rec.records.values(), requests)
        assert summary.n_new == len(ITEMS)
        check_batch_input(requests)
        calls_before = inner.ledger.calls
        results = tmp_path / "results.jsonl"
        run_batch_file(requests, results, inner._endpoints()[0])
        imported = import_results(cache, results, requests)
        assert imported.n_imported == len(ITEMS) and imported.n_failed == 0
        ledger = Ledger()
        from_cache = CachedBackend(inner, cache, ledger=ledger, close_cache=False, _owns=False)
        got = _scores(GEval("faithfulness", backend=from_cache).score_batch(ITEMS))
        assert ledger.calls == 0 and inner.ledger.calls == calls_before
        assert got == live
        cache.close()
