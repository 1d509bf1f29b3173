"""``metajudge demo`` (the judge section of ``make demo``): seeded subsets, options, the report,
and end to end against the embedded llama.cpp servers (slow): every metric family in the
output, and a rerun served from the response cache with identical numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from metajudge.errors import InputError
from metajudge.runs.demo import RAG_DATASET, TABLE_DATASET, DemoOptions, draw_subset


def test_options_refuse_bad_values() -> None:
    with pytest.raises(InputError):
        DemoOptions(n_rag=0)
    with pytest.raises(InputError):
        DemoOptions(backbones=("smollm2-135m", "smollm2-135m"))


def test_cli_refuses_non_positive_n(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--out", "x", "--n-rag", "0"]) == 2
    assert "--n-rag" in capsys.readouterr().err


def test_subset_is_seeded_and_labelled(data_dir: Path, tmp_path: Path) -> None:
    from metajudge.data.loading import load as load_jsonl_dataset

    p1, d1 = draw_subset(TABLE_DATASET, 5, 3, tmp_path / "a", data_dir=data_dir)
    _, d2 = draw_subset(TABLE_DATASET, 5, 3, tmp_path / "b", data_dir=data_dir)
    _, d3 = draw_subset(TABLE_DATASET, 5, 4, tmp_path / "c", data_dir=data_dir)
    assert d1["ids"] == d2["ids"] != d3["ids"]
    assert d1["n"] == 5 and d1["of"] < d1["records"] == 200  # unannotated pairs are not drawn
    ds = load_jsonl_dataset(p1)
    assert ds.card.name == f"{TABLE_DATASET}_demo"
    assert [r.id for r in ds.records] == d1["ids"]
    assert all(any(v is not None for vs in r.labels.values() for v in vs) for r in ds.records)


def test_ragchecker_subset_gives_gold_answer_as_context(data_dir: Path, tmp_path: Path) -> None:
    from metajudge.data.loading import load as load_jsonl_dataset

    p, d = draw_subset(
        RAG_DATASET,
        3,
        0,
        tmp_path,
        data_dir=data_dir,
        reference_as_context=True,
    )
    assert d["context"].startswith("gold answer")
    for r in load_jsonl_dataset(p).records:
        assert r.input.context == r.input.reference and r.input.context


def test_too_many_pairs_refused(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="labelled pairs"):
        draw_subset(TABLE_DATASET, 10_000, 0, tmp_path, data_dir=data_dir)


def test_demo_html_page_holds_tables_caution_and_links(data_dir: Path, tmp_path: Path) -> None:
    """The demo's one page: metric table, judge lines with cost, swap agreement, caution, links."""
    from metajudge.reports.demo_report import CAUTION, write_demo_html
    from metajudge.reports.html_check import find_chromium, selftest
    from metajudge.runs.backbone_swap import run_backbone_swap
    from metajudge.runs.demo import DemoResult, JudgeRun

    sub, _ = draw_subset(RAG_DATASET, 8, 0, tmp_path, data_dir=data_dir)
    lex = tmp_path / "lex"
    argv = ["meta-eval", "--input", str(sub), "--metrics", "bleu,rouge_l", "--out", str(lex)]
    assert main([*argv, "--n-boot", "20", "--no-plots", "--paths-only"]) == 0
    swap = run_backbone_swap(
        "lftqa_eval", "geval_faithfulness", external=["gpt-4o", "gpt-4o-mini"], limit=30, n_boot=20
    )
    corr = [{"dimension": "correctness", "pearson": 0.25, "ci": [-0.1, 0.6], "n_pairs": 8}]
    run = JudgeRun(
        "ragchecker_judges", "geval_faithfulness", "smollm2-135m", 8, 1, 8, 1, 7, 1, 1234, 99, 2.5
    )
    run.correlations = corr
    res = DemoResult(DemoOptions(), {}, [run], swap.to_dict(), {"calls": 7}, 3.0)
    out = tmp_path / "judges"
    (out / "swap").mkdir(parents=True)
    (out / "swap" / "report.html").write_text("<p>swap</p>")
    page = write_demo_html(res, out, lexical_run=lex)
    text = page.read_text(encoding="utf-8")
    for s in ("bleu", "G-Eval faithfulness", "1234", "Backbone-swap agreement", "gpt-4o-mini"):
        assert s in text, s
    assert CAUTION in text and 'href="../lex/report.html"' in text
    # the judges first, the lexical metrics' table last; its inter-human row named in a few words
    assert text.index("LLM judges vs humans") < text.index("Metrics vs humans on all pairs")
    assert "inter-human ceiling (annotator vs annotator)" in text
    assert 'href="swap/report.html"' in text and 'href="table_qa_mtraig/report.html"' not in text
    assert not re.search(r'(src|href)="(https?:)?//', text)
    exe = find_chromium()
    if exe is not None:
        res_js = selftest(page, chromium=exe)
        assert res_js["errors"] == [] and res_js["sort_changed"], res_js


# ---------------------------------------------------------------------------------------------
# End to end (real servers)

FAMILIES = ("bleu", "rouge_l", "meteor", "bertscore")
JUDGES = ("G-Eval", "MT-RAIG Eval", "Answer equivalence", "Backbone-swap agreement")
_VOLATILE = re.compile(r"(calls \d+|cache hits \d+|tokens \d+ prompt \+ \d+ completion|[\d.]+ s\b)")


def _numbers(out: str) -> list[str]:
    """The printed judge lines with the cost and time fields blanked (they differ on a rerun:
    "served from the cache" after the "; " of a swap line)."""
    keep = [ln.split("; ")[0] for ln in out.splitlines() if "Pearson" in ln or "agreement" in ln]
    return [_VOLATILE.sub("_", ln) for ln in keep]


@pytest.mark.slow
@pytest.mark.llm
def test_demo_end_to_end_and_rerun_from_cache(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sub, _ = draw_subset(RAG_DATASET, 4, 0, tmp_path / "lex_in", data_dir=data_dir)
    lex = tmp_path / "lex"
    assert (
        main(
            [
                "meta-eval",
                "--input",
                str(sub),
                "--metrics",
                ",".join(FAMILIES),
                "--out",
                str(lex),
                "--n-boot",
                "50",
                "--no-plots",
                "--paths-only",
            ]
        )
        == 0
    )
    args = [
        "demo",
        "--out",
        str(tmp_path / "judges"),
        "--lexical-run",
        str(lex),
        "--n-rag",
        "4",
        "--n-table",
        "4",
        "--n-boot",
        "50",
    ]
    capsys.readouterr()
    assert main(args) == 0
    first = capsys.readouterr().out
    page = Path(first.strip().splitlines()[-1])
    assert page.is_file() and page.name == "report.html" and page.is_absolute()
    assert (page.parent / "swap" / "report.html").is_file()
    assert '"compare":[{"x":"smollm2-135m"' in (page.parent / "swap" / "report.html").read_text()
    report = page.parent / "report.md"
    text = report.read_text(encoding="utf-8")
    for fam in FAMILIES:
        assert f"| {fam} |" in text, fam
    for name in JUDGES:
        assert name in first and name in text, name
    assert "weak judges" in first
    assert "demo option mode=batched" in first  # the demo's non-default MT-RAIG choice, said
    assert re.search(r"Subset: n = 4 of \d+ labelled ragchecker_meta_eval pairs", first)
    calls = int(re.search(r"Ledger \(judge section\): (\d+) LLM calls", first).group(1))  # type: ignore[union-attr]
    assert calls > 0

    cards = tmp_path / "cards"  # make demo's last line: the judge cards' page
    card = ["judge", "card", "--dataset", "trust_or_escalate_jung2025", "--judge", "gpt-4-turbo"]
    assert main([*card, "--n-boot", "50", "--repeats", "2", "--out", str(cards / "toe")]) == 0
    capsys.readouterr()
    assert main([*args, "--cards", str(cards)]) == 0
    second = capsys.readouterr().out
    last = second.strip().splitlines()
    assert Path(last[-1]) == (cards / "cards.html").resolve() and Path(last[-1]).is_file()
    assert Path(last[-3]).name == "report.html"
    assert re.search(r"Ledger \(judge section\): 0 LLM calls, \d+ served from the cache", second)
    assert _numbers(second) == _numbers(first) and _numbers(first)
    runs = json.loads((tmp_path / "judges" / "demo.json").read_text())["runs"]
    assert {r["metric"] for r in runs} == {
        "geval_faithfulness",
        "answer_equivalence",
        "mtraig_faithfulness",
    }
    assert all(r["calls"] == 0 for r in runs)


def test_demo_lines_say_served_from_the_cache_and_parse_failures_only_where_parsed() -> None:
    """Issue 62: a rerun reads "served from the cache", not 0 calls and 0 tokens; a judge whose
    replies no parser read shows no "parse failures 0/0"; a swap value on fewer than 5 pairs
    shows no CI."""
    from metajudge.reports.demo_report import estimate_text, run_lines, swap_human_lines
    from metajudge.runs.demo import JudgeRun

    rerun = JudgeRun("s", "answer_equivalence", "smollm2-135m", 12, 0, 0, 0, 0, 11, 0, 0, 0.01)
    (line,) = run_lines(rerun)
    assert "served from the cache (11 replies)" in line
    assert "parse failures" not in line and "calls 0" not in line and "tokens 0" not in line
    first = JudgeRun("s", "geval_faithfulness", "smollm2-135m", 12, 1, 11, 0, 11, 0, 6820, 11, 27.6)
    assert (
        "parse failures 0/11 (0.0%), unscored 1/12, calls 11, cache hits 0, tokens 6820"
        in (run_lines(first)[0])
    )
    swap = {
        "backbones": ["a"],
        "dimension": "correctness",
        "per_backbone": {
            "a": {
                "unscored": 1,
                "pairs_pearson": {"value": -0.9, "ci": [None, None], "ci_method": "none (n < 5)"},
            }
        },
        "runs": {"a": {"parse_attempts": 11, "parse_failures": 0, "cost": {"cached": 11}}},
    }
    (line,) = swap_human_lines(swap)
    assert line.endswith(
        "a vs human correctness: Pearson -0.900 no CI (n < 5); parse failures 0/11 (0.0%), "
        "unscored 1, served from the cache (11 replies)"
    )
    assert estimate_text({"value": 0.5, "ci": [0.1, 0.8], "ci_method": "Fisher z"}) == (
        "0.500 [0.100, 0.800] Fisher z"
    )


def test_demo_chooses_batched_mtraig_verification_and_says_so() -> None:
    """Issue 25 item 2: per_claim is the metric's default; the demo picks batched and says so."""
    from metajudge.metrics.judges.mtraig import DEFAULT_MODE
    from metajudge.reports.demo_report import run_lines
    from metajudge.runs.demo import DEMO_CHOICES, JudgeRun, _metric_options

    assert DEFAULT_MODE == "per_claim"
    assert _metric_options("mtraig_faithfulness", DemoOptions()) == {"mode": "batched"}
    assert _metric_options("mtraig_completeness", DemoOptions()) == {}
    run = JudgeRun(
        "table_qa_mtraig", "mtraig_faithfulness", "smollm2-135m", 4, 0, 8, 0, 8, 0, 1, 1, 1.0
    )
    run.note = DEMO_CHOICES["mtraig_faithfulness"][1]
    lines = run_lines(run)
    assert (
        lines[1].strip().startswith("demo option mode=batched") and "per-claim default" in lines[1]
    )


# ---------------------------------------------------------------------------------------------
# Small-n intervals (issue 25 item 4)


def test_demo_lines_name_their_ci_method(data_dir: Path, tmp_path: Path) -> None:
    """The demo's subsets (seed 0: 6 RAGChecker pairs and 4 table-QA pairs, each drawn with a
    fresh generator, the --limit rule), meta-evaluated
    as the demo does (:func:`meta_evaluate_section`; BLEU stands in for the judges, no model
    runs): the table lines (3 labelled pairs) print no CI (n < 5) — where the percentile bootstrap printed e.g.
    MT-RAIG faithfulness r = -0.869 [-1.000, -0.802] — and the 6-pair lines a Fisher-z CI,
    saying so."""
    from metajudge.reports.demo_report import corr_text
    from metajudge.runs.demo import _correlations, meta_evaluate_section
    from metajudge.scores.scoring import score_dataset
    from metajudge.stats import fisher_z_ci

    opts = DemoOptions(n_boot=200)
    rag, _ = draw_subset(RAG_DATASET, opts.n_rag, opts.seed, tmp_path, data_dir=data_dir)
    tab, _ = draw_subset(TABLE_DATASET, opts.n_table, opts.seed, tmp_path, data_dir=data_dir)
    lines = {}
    for section, path in (("rag", rag), ("table", tab)):
        rows = score_dataset(path, ["bleu"], progress=False)
        res = meta_evaluate_section(section, path, rows, ["bleu"], tmp_path, opts)
        lines[section] = _correlations(res, "bleu")
    table = [c for c in lines["table"] if c["pearson"] is not None]
    # 4 table-QA pairs drawn, 3 of them labelled on each dimension (one pair has no
    # completeness label, another null faithfulness labels)
    assert table and all(c["n_pairs"] == 3 for c in table)
    for c in table:
        assert c["ci"] is None and c["ci_method"] == "none (n < 5)"
        assert corr_text(c).endswith("no CI (n < 5) (n=3 pairs)"), corr_text(c)
    rag_lines = [c for c in lines["rag"] if c["pearson"] is not None]
    assert rag_lines and all(c["n_pairs"] == 6 for c in rag_lines)
    for c in rag_lines:
        assert c["ci_method"] == "Fisher z"
        assert c["ci"] == list(fisher_z_ci(c["pearson"], 6))
        assert " Fisher z (n=6 pairs)" in corr_text(c), corr_text(c)


# ---------------------------------------------------------------------------------------------
# The swap's second backbone judged alongside the first backbone's sections (scripted judges:
# the orchestration; the real servers are the slow end-to-end test above)


class _Judge:
    """A scripted judge metric: score = position; ``fail`` raised by score_batch; ``gate``:
    score_batch waits for it (the calls of a real judge, which end when its servers stop)."""

    signature = "scripted|backbone:gemma3-270m|seed:0"

    def __init__(self, fail: BaseException | None = None, gate: Any = None) -> None:
        self.fail = fail
        self.gate = gate
        self.closed = 0
        self.thread = ""

    def score_batch(self, items: list[Any]) -> list[Any]:
        import threading

        from metajudge.metrics.base import MetricResult

        self.thread = threading.current_thread().name
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.fail is not None:
            raise self.fail
        return [MetricResult(it.key, float(i % 5), {}) for i, it in enumerate(items)]

    @property
    def summary(self) -> dict[str, Any]:
        return {"parse_attempts": 11, "parse_failures": 0, "cost": {"calls": 11, "cached": 0}}

    def close(self) -> None:
        self.closed += 1


class _Server:
    def __init__(self, gate: Any) -> None:
        self.gate = gate
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1
        self.gate.set()


def _rag_items(data_dir: Path, tmp_path: Path) -> tuple[Path, list[Any]]:
    from metajudge.runs.backbone_swap import swap_items
    from metajudge.runs.demo import draw_subset

    rag, _ = draw_subset(RAG_DATASET, 6, 0, tmp_path, data_dir=data_dir, reference_as_context=True)
    from metajudge.data.loading import load as load_jsonl_dataset

    return rag, swap_items(load_jsonl_dataset(rag).records)


def test_swap_prefetch_runs_in_a_worker_hands_over_its_run_and_closes(
    data_dir: Path, tmp_path: Path
) -> None:
    import threading

    from metajudge.runs.demo import SwapPrefetch

    _, items = _rag_items(data_dir, tmp_path)
    judge = _Judge()
    judged = SwapPrefetch(judge, items, "gemma3-270m", note="judged alongside").start().result()
    scores, sig, run = judged["gemma3-270m"]
    assert list(scores) == [it.key for it in items] and len(items) == 12
    assert sig == judge.signature and run["note"] == "judged alongside"
    assert run["cost"] == {"calls": 11, "cached": 0} and run["n_items"] == 12
    assert judge.closed == 1 and judge.thread != threading.main_thread().name


def test_swap_prefetch_error_is_raised_in_the_main_thread_and_the_judge_closed(
    data_dir: Path, tmp_path: Path
) -> None:
    from metajudge.runs.demo import SwapPrefetch

    _, items = _rag_items(data_dir, tmp_path)
    judge = _Judge(fail=RuntimeError("gemma server died"))
    pre = SwapPrefetch(judge, items, "gemma3-270m").start()
    with pytest.raises(RuntimeError, match="gemma server died"):
        pre.result()
    assert judge.closed == 1


@pytest.mark.parametrize("worker_fails", [False, True])
def test_sections_failure_stops_the_swap_judge_and_is_raised(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker_fails: bool
) -> None:
    """Ctrl-C (or an error) in the first backbone's sections: the second backbone's servers are
    stopped (its waiting calls end), its judge closed, the main error raised (the worker's own
    failure, if any, as a note on it), and the swap never runs."""
    import threading

    from metajudge.runs import demo

    rag, items = _rag_items(data_dir, tmp_path)
    gate = threading.Event()
    server = _Server(gate)
    judge = _Judge(fail=RuntimeError("connection refused") if worker_fails else None, gate=gate)
    backend = type("B", (), {"inner": type("E", (), {"servers": [server]})()})()
    pre = demo.SwapPrefetch(judge, items, "gemma3-270m", backend=backend)
    monkeypatch.setattr(demo.SwapPrefetch, "for_demo", classmethod(lambda cls, r, o: pre))

    def sections(*a: Any) -> Any:
        raise KeyboardInterrupt

    def swap(*a: Any) -> Any:
        raise AssertionError("the swap ran")

    monkeypatch.setattr(demo, "run_sections", sections)
    monkeypatch.setattr(demo, "run_swap", swap)
    with pytest.raises(KeyboardInterrupt) as info:
        demo.run_judges({RAG_DATASET: rag}, tmp_path, DemoOptions(), lambda s: None)
    assert server.stopped == 1 and judge.closed == 1
    notes = getattr(info.value, "__notes__", [])
    assert notes == (
        ["the gemma3-270m swap judge also failed: RuntimeError('connection refused')"]
        if worker_fails
        else []
    )


def test_handed_over_backbone_is_counted_once_and_the_swap_calls_no_model(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both backbones handed to the real swap pipeline (no model at all: get_metric refuses):
    the swap takes their scores, signatures and runs as they are, the demo's total ledger counts
    the second backbone's 11 calls once (first backbone 66 calls + swap halves 0 + 11), and the
    printed swap line says where that judge ran."""
    from metajudge.metrics import registry
    from metajudge.reports.demo_report import swap_human_lines
    from metajudge.runs.backbone_swap import judge_backbone
    from metajudge.runs.demo import run_swap, total_ledger

    rag, items = _rag_items(data_dir, tmp_path)
    monkeypatch.setattr(registry, "get_metric", lambda *a, **k: pytest.fail("a judge was built"))
    first = judge_backbone(_Judge(), items)
    first[2]["cost"] = {"calls": 0, "cached": 11, "prompt_tokens": 0}
    second = judge_backbone(_Judge(), items)
    second[2].update(note="judged while the smollm2-135m sections ran (its own replicas)")
    second[2]["cost"] = {"calls": 11, "cached": 0, "prompt_tokens": 6283, "completion_tokens": 22}
    opts = DemoOptions(n_boot=50)
    swap = run_swap(rag, tmp_path, opts, {"smollm2-135m": first, "gemma3-270m": second})
    assert swap["runs"]["gemma3-270m"]["cost"]["calls"] == 11
    assert swap["signatures"]["gemma3-270m"] == _Judge.signature
    ledger = total_ledger({"calls": 66, "cached": 0, "prompt_tokens": 35733}, swap)
    assert ledger["calls"] == 77 and ledger["cached"] == 11
    assert ledger["prompt_tokens"] == 35733 + 6283 and ledger["completion_tokens"] == 22
    lines = swap_human_lines(swap)
    assert "calls 11, cache hits 0, tokens 6283 prompt + 22 completion" in lines[-2]
    assert lines[-1] == "      (judged while the smollm2-135m sections ran (its own replicas))"
    assert (tmp_path / "swap" / "report.html").is_file()


def test_handed_over_scores_must_be_of_the_swaps_responses(data_dir: Path, tmp_path: Path) -> None:
    from metajudge.data.loading import load as load_jsonl_dataset
    from metajudge.runs.backbone_swap import judge_backbone, judge_scores

    rag, items = _rag_items(data_dir, tmp_path)
    scores, sig, run = judge_backbone(_Judge(), items[:-1])
    with pytest.raises(ValueError, match="gemma3-270m scores handed to the swap"):
        judge_scores(
            load_jsonl_dataset(rag).records,
            "geval_faithfulness",
            ["gemma3-270m"],
            judged={"gemma3-270m": (scores, sig, run)},
        )
