"""Issue 11: judge fidelity on strong remote backbones — each defect's exact inputs.

Defect 1 (tables cut to 1,920 characters for remote backbones), 4 (silent claim cap), 5 (geval
completeness scored with the faithfulness prompt), with a scripted backend standing in for the
model (the formulas and records are what is pinned here).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from test_judges_metrics import INP, FakeConfig, ScriptedBackend, item, text_of

from metajudge.backends.base import Request
from metajudge.backends.config import BackendConfig, builtin_configs
from metajudge.backends.context import context_length
from metajudge.data.formats import Input, Table
from metajudge.metrics.judges.common import table_budget_chars
from metajudge.metrics.judges.mtraig import MTRAIGFaithfulness
from metajudge.metrics.registry import get_metric

# -- defect 1: context budgets from the backbone ------------------------------------------------


def _paper_tables(n_tables: int, n_rows: int) -> tuple[Table, ...]:
    """Tables the size of MT-RAIG Bench's (paper Table 2: 10.54 rows on average)."""
    return tuple(
        Table(
            f"2019-20 season results of club {t}",
            ("Date", "Opponent", "Venue", "Result", "Attendance", "Scorers"),
            tuple(
                (
                    f"{r + 1} May 2020",
                    f"Opponent FC {r}",
                    "Home",
                    "2-1",
                    "41,213",
                    "Smith 12', Lee 80'",
                )
                for r in range(n_rows)
            ),
        )
        for t in range(n_tables)
    )


def test_gpt4o_mini_budget_is_its_128k_context_not_1920() -> None:
    m = get_metric("mtraig_faithfulness", backbone="openai-gpt-4o-mini")
    assert m.max_table_chars != 1920
    assert m.n_ctx == 128000 and m.max_table_chars == table_budget_chars(128000)
    assert "ctx:128000" in m.signature
    # the paper's top-10 retrieved tables (100 rows) and three 10-row gold tables: nothing cut
    for n_tables in (10, 3):
        inp = Input("q", tables=_paper_tables(n_tables, 10))
        _text, rec = m.tables_text(inp)  # type: ignore[misc]
        assert rec["rows_kept"] == rec["rows_total"] == 10 * n_tables and not rec["truncated"]
    assert m.summary["responses_tables_cut"] == 0


def test_every_builtin_config_states_its_context() -> None:
    assert all(c.n_ctx for c in builtin_configs())


@pytest.fixture()
def models_server() -> Iterator[str]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            return None

        def do_GET(self) -> None:
            body = json.dumps(
                {"object": "list", "data": [{"id": "qwen", "max_model_len": 32768}]}
            ).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()


def test_user_config_without_n_ctx_reads_the_server(models_server: str) -> None:
    cfg = BackendConfig(name="vllm", kind="openai", model="qwen", base_url=models_server)
    ctx = context_length(cfg)
    assert ctx.tokens == 32768 and ctx.source == "server"
    dead = cfg.replace(base_url="http://127.0.0.1:9/v1")
    assert context_length(dead, timeout_s=0.5).source == "fallback"


def test_table_cut_is_recorded_per_response_and_counted() -> None:
    def script(r: Request) -> Any:
        t = text_of(r)
        if "verdicts" in t or "claims" in t.lower() and "[ROW" in t:
            return '{"verdicts": ["yes"]}'
        return "1. Sales rose."

    big = Input("q", tables=_paper_tables(3, 10))
    m = MTRAIGFaithfulness(backend=ScriptedBackend(script, config=FakeConfig(n_ctx=2048)))  # type: ignore[arg-type]
    assert m.max_table_chars == 1920
    r_big, r_small = m.score_batch([item("big", inp=big), item("small", inp=INP)])
    assert r_big.details["tables"]["truncated"] and r_big.details["tables"]["budget_chars"] == 1920
    assert not r_small.details["tables"]["truncated"]
    assert m.summary["responses_tables_cut"] == 1 and m.summary["tables_cut_share"] == 0.5
