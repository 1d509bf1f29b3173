"""MT-RAIG Eval with the ``paper`` prompts over the OpenAI-compatible path, end to end (issue 11).

The server is the real component: llama-cpp-python's OpenAI-compatible server (SmolLM2-135M),
reached through :class:`~metajudge.backends.openai_backend.OpenAIBackend` with a user-style
config that states a 128k context, as a vLLM or GPT-4o-mini config would. Checked: the judge's
table budget comes from that context and no table of the paper's sizes (three 10-row gold
tables; MT-RAIG Bench tables average 10.54 rows, paper Table 2) is cut; per-claim and batched
verification see the same claims and return the same verdict structure.

The 135M model does not follow the paper's zero-shot decomposition prompt reliably (see
:func:`metajudge.metrics.judges.common.default_variant`); when its decomposition is unparseable
the test supplies fixed claims so that the verification stage still runs against the server.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from metajudge.backends.config import BackendConfig
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.backends.registry import get_backend
from metajudge.data.formats import Input, Table
from metajudge.metrics.base import ScoreItem
from metajudge.metrics.judges.common import table_budget_chars
from metajudge.metrics.judges.mtraig import MTRAIGFaithfulness

pytest.importorskip(
    "llama_cpp.server", reason="llama-cpp-python[server] not installed (make llama)"
)
pytestmark = [pytest.mark.slow, pytest.mark.llm]

CONTEXT_128K = 131072
FIXED_CLAIMS = [
    "Club 0 played Opponent FC 0 at home on 1 May 2020.",
    "The attendance of that match was 41,213.",
    "Club 2 won 2-1 against Opponent FC 9.",
]


def _tables() -> tuple[Table, ...]:
    return tuple(
        Table(
            f"Club {t} - 2019-20 season results",
            ("Date", "Opponent", "Venue", "Result", "Attendance"),
            tuple(
                (f"{r + 1} May 2020", f"Opponent FC {r}", "Home", "2-1", "41,213")
                for r in range(10)
            ),
        )
        for t in range(3)
    )


class _Faith(MTRAIGFaithfulness):
    """Real decomposition; fixed claims where the small model's decomposition is unparseable."""

    def decompose(self, items: Sequence[ScoreItem]) -> list:  # type: ignore[override]
        states = super().decompose(items)
        for st in states:
            if not st.claims:
                st.details["fixed_claims"] = True
                st.error, st.claims = None, list(FIXED_CLAIMS)
        return states


@pytest.fixture(scope="module")
def openai_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAIBackend]:
    run = tmp_path_factory.mktemp("paper-run")
    emb = get_backend("smollm2-135m", run_dir=run, cache=False, n_ctx=4096, n_parallel=1)
    emb._ensure_started()
    cfg = BackendConfig(
        name="local-128k",
        kind="openai",
        model=emb.config.served_model,
        base_url=emb.servers[0].base_url,
        n_ctx=CONTEXT_128K,
        json_mode="json_object_schema",
        native_n=False,
        timeout_s=600,
        max_retries=1,
    )
    be = OpenAIBackend(cfg, run_dir=run)
    try:
        yield be
    finally:
        be.close()
        emb.close()


def test_paper_pipeline_over_openai_path(openai_path: OpenAIBackend, tmp_path: Path) -> None:
    inp = Input("How did the clubs do at home in May 2020?", tables=_tables())
    item = ScoreItem(
        "q1::s1", "Club 0 won 2-1 at home on 1 May 2020 before 41,213 fans.", None, inp
    )
    results = {}
    for mode in ("batched", "per_claim"):
        m = _Faith(
            mode=mode,
            variant="paper",
            backend=openai_path,  # type: ignore[arg-type]
            decompose_max_tokens=160,
            verify_max_tokens=24 if mode == "per_claim" else None,
        )
        assert m.n_ctx == CONTEXT_128K and m.max_table_chars == table_budget_chars(CONTEXT_128K)
        assert m.max_claims is None and "claims:none" in m.signature
        [r] = m.score_batch([item])
        d = r.details
        assert d["tables"]["truncated"] is False
        assert d["tables"]["rows_kept"] == d["tables"]["rows_total"] == 30
        assert m.summary["responses_tables_cut"] == 0
        results[mode] = r
    b, p = results["batched"], results["per_claim"]
    assert b.details["claims"] == p.details["claims"] and b.details["claims"]
    k = len(b.details["claims"])
    for r in (b, p):  # one verdict per claim, each 0, 1 or unparseable (counted)
        v = r.details.get("verdicts")
        assert v is not None and len(v) == k and all(x in (0.0, 1.0, None) for x in v), r
        assert r.details["parse_failures"] >= sum(x is None for x in v)
        # unparsed=unscored (the default, issue 25): one unparseable verdict leaves the
        # response unscored; it never leaves |C|
        assert (r.score is None) == any(x is None for x in v)
