"""``metajudge demo``: the judge section of ``make demo`` on a small seeded subset.

After the lexical + BERTScore table on all RAGChecker pairs (``metajudge meta-eval``, run by the
Makefile), this runs the LLM judges on the embedded backbones and meta-evaluates them through
the same pipeline (:func:`metajudge.runs.meta_eval.run_meta_eval` with the judge scores as a
score file; :func:`metajudge.runs.backbone_swap.run_backbone_swap` for the swap):

1. G-Eval faithfulness and answer equivalence on ``n_rag`` RAGChecker pairs;
2. MT-RAIG Eval faithfulness on ``n_table`` table-QA pairs of
   ``lftqa_mitigation_pradhumant``;
3. G-Eval faithfulness under SmolLM2-135M and Gemma-3-270M on the same RAGChecker pairs. The
   Gemma judge runs in a worker thread on its own replicas while 1 and 2 run under SmolLM2
   (:class:`SwapPrefetch`, :func:`run_judges`: the cores are otherwise partly idle) and is
   handed to the swap; the SmolLM2 half is served from the response cache (the same calls as 1).

Each subset is drawn uniformly without replacement by a fresh ``numpy.random.default_rng(seed)``
(:func:`metajudge.data.subsample.select`, the ``--limit`` rule of every command) and written
into the run folder (canonical JSONL), so each meta-evaluation reads a file. RAGChecker ships no
retrieved passages (``input.context``) and no tables, which G-Eval judges an answer against: the
subset file gives G-Eval the gold answer (``input.reference``) as its context, cut to
``context_chars`` characters (the cut is recorded per row by the judge and counted in the report).

Judge calls go through the response cache (the user cache, ``$METAJUDGE_CACHE_DIR``): a rerun is
served from it and the ledger printed at the end says how many calls reached a model.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.results import Result

RAG_DATASET = "ragchecker_meta_eval"
TABLE_DATASET = "lftqa_mitigation_pradhumant"
SWAP_METRIC = "geval_faithfulness"
REPORT_FILE = "report.md"


@dataclass(frozen=True)
class DemoOptions:
    """What the judge section runs: subset sizes, seed, backbones, bootstrap, context cut."""

    n_rag: int = 6
    n_table: int = 4
    seed: int = 0
    backbones: tuple[str, str] = ("smollm2-135m", "gemma3-270m")
    n_boot: int = 1000
    context_chars: int = 1200

    def __post_init__(self) -> None:
        from metajudge.errors import InputError

        for name in ("n_rag", "n_table", "context_chars"):
            if int(getattr(self, name)) < 1:
                raise InputError(f"must be >= 1, got {getattr(self, name)!r}", field=name)
        if len(self.backbones) != 2 or self.backbones[0] == self.backbones[1]:
            raise InputError("give two different backbones", field="backbones")


@dataclass
class JudgeRun(Result):
    """One judge metric under one backbone: its human correlations and what it cost."""

    section: str
    metric: str
    backbone: str
    n_responses: int
    unscored: int
    parse_attempts: int
    parse_failures: int
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    context_cut: int = 0
    correlations: list[dict[str, Any]] = field(default_factory=list)
    #: what the cache hits cost when the model computed them (stored tokens and latencies)
    cached_cost: dict[str, float] = field(default_factory=dict)
    #: prompt tokens the server evaluated (its prefix cache's reuse excluded)
    processed_prompt_tokens: int = 0
    #: a non-default option the demo chose for this judge, and why (printed with the run)
    note: str = ""

    @property
    def parse_failure_rate(self) -> float:
        return self.parse_failures / self.parse_attempts if self.parse_attempts else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "parse_failure_rate": round(self.parse_failure_rate, 4)}


@dataclass
class DemoResult(Result):
    """The judge section: runs, the swap, the subsets drawn, the total ledger."""

    options: DemoOptions
    subsets: dict[str, dict[str, Any]]
    runs: list[JudgeRun]
    swap: dict[str, Any]
    ledger: dict[str, int]
    wall_s: float
    paths: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "options": dataclasses.asdict(self.options),
            "subsets": self.subsets,
            "runs": [r.to_dict() for r in self.runs],
            "swap": self.swap,
            "ledger": self.ledger,
            "wall_s": self.wall_s,
            "paths": self.paths,
        }

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.runs])


# ---------------------------------------------------------------------------------------------
# Subsets


def draw_subset(
    name: str,
    n: int,
    seed: int,
    out: Path,
    *,
    data_dir: str | Path | None = None,
    reference_as_context: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """``n`` of the labelled records of dataset ``name`` drawn without replacement (kept in
    dataset order) with ``seed`` by :func:`metajudge.data.subsample.select` (the ``--limit`` rule
    of every command: ``metajudge matrix run --limit n --seed S`` draws the same items), written
    as canonical JSONL (card header renamed ``<name>_demo``) into ``out``; returns the file and
    a description of the draw. ``reference_as_context``: give records without a context the
    gold answer as ``input.context`` (RAGChecker for G-Eval), uncut — the judge cuts it."""
    from metajudge.data.formats import write_jsonl
    from metajudge.data.loading import load
    from metajudge.data.subsample import HOW, select

    ds = load(name, data_dir)
    draw = select(ds.records, limit=n, seed=seed, strict=True)
    recs = draw.records
    if reference_as_context:
        recs = [_with_reference_context(r) for r in recs]
    card = dataclasses.replace(ds.card, name=f"{name}_demo")
    path = out / "subsets" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(path, recs, card)
    drawn = {
        "dataset": name,
        "n": n,
        "of": draw.of,
        "records": len(ds.records),
        "ids": [r.id for r in recs],
        "how": HOW,
        "context": "gold answer (input.reference)" if reference_as_context else "as shipped",
        "file": str(path),
    }
    return path, drawn


def _with_reference_context(rec: Any) -> Any:
    inp = rec.input
    if inp is None or inp.context or not inp.reference:
        return rec
    return dataclasses.replace(rec, input=dataclasses.replace(inp, context=inp.reference))


# ---------------------------------------------------------------------------------------------
# Judge runs


def _delta(after: dict[str, Any], before: dict[str, Any], key: str) -> int:
    return int(after.get(key, 0)) - int(before.get(key, 0))


def score_judge(
    dataset_file: Path,
    metric: str,
    backend: Any,
    *,
    section: str,
    options: dict[str, Any],
) -> tuple[list[dict[str, Any]], JudgeRun]:
    """Score every response of ``dataset_file`` with judge ``metric`` on a shared ``backend``
    (:func:`~metajudge.scores.scoring.score_dataset`); the run's cost from the backend ledger."""
    from metajudge.backends.ledger import CACHED_COST
    from metajudge.scores.scoring import score_dataset

    before = backend.ledger.summary()
    t0 = time.perf_counter()
    rows = score_dataset(
        dataset_file,
        [metric],
        options={metric: {"backend": backend, **options}},
        progress=False,
        backbone=backend.name,
    )
    wall = time.perf_counter() - t0
    after = backend.ledger.summary()
    attempts = sum(int((r["details"] or {}).get("parse_attempts", 0)) for r in rows)
    fails = sum(int((r["details"] or {}).get("parse_failures", 0)) for r in rows)
    run = JudgeRun(
        section=section,
        metric=metric,
        backbone=backend.name,
        n_responses=len(rows),
        unscored=sum(r["score"] is None for r in rows),
        parse_attempts=attempts,
        parse_failures=fails,
        calls=_delta(after, before, "calls"),
        cache_hits=_delta(after, before, "cached"),
        prompt_tokens=_delta(after, before, "prompt_tokens"),
        completion_tokens=_delta(after, before, "completion_tokens"),
        wall_s=round(wall, 2),
        context_cut=sum(
            bool(((r["details"] or {}).get("tables") or {}).get("truncated")) for r in rows
        ),
        cached_cost={k: after[k] - before[k] for k in CACHED_COST},
        processed_prompt_tokens=_delta(after, before, "processed_prompt_tokens"),
    )
    return rows, run


def _correlations(res: Any, metric: str) -> list[dict[str, Any]]:
    """Pearson per human dimension with its CI and the CI's method (percentile bootstrap, Fisher
    z below the meta-evaluation's ``small_n`` pairs, none below 5), from a meta-eval result."""
    out = []
    for dim in res.dimensions:
        cell = res.cell(metric, dim)
        ent = cell["stats"].get("pearson", {})
        out.append(
            {
                "dimension": dim,
                "pearson": ent.get("value"),
                "ci": ent.get("ci"),
                "ci_method": ent.get("ci_method"),
                "undefined": ent.get("undefined"),
                "n_pairs": cell.get("n_pairs"),
            }
        )
    return out


def meta_evaluate_section(
    section: str,
    dataset_file: Path,
    rows: list[dict[str, Any]],
    metrics: Sequence[str],
    out: Path,
    opts: DemoOptions,
) -> Any:
    """The judge scores of one section through ``run_meta_eval`` (a score file in its folder)."""
    from metajudge.analyses.metric_vs_human.protocol import AUTO_CORRELATE, Protocol
    from metajudge.data.source import DataSource
    from metajudge.run_folder import run_lock
    from metajudge.runs.meta_eval import meta_eval_into
    from metajudge.scores.scoring import write_scores
    from metajudge.scores.spec import file_spec

    folder = out / section
    with run_lock(folder):  # its score file is the demo's own, written here beside the run
        folder.mkdir(parents=True, exist_ok=True)
        scores = folder / "judge_scores.jsonl"
        write_scores(scores, rows)
        res, _ = meta_eval_into(
            DataSource(path=str(dataset_file), scores=(file_spec(scores),)),
            out_dir=folder,
            metrics=list(metrics),
            plots=False,
            progress=False,
            protocol=Protocol(
                correlate=AUTO_CORRELATE, n_boot=opts.n_boot, seed=opts.seed, missing="drop"
            ),
        )
    return res


# ---------------------------------------------------------------------------------------------
# The whole judge section

LEDGER_KEYS = ("requests", "calls", "cached", "errors", "prompt_tokens", "completion_tokens")


def total_ledger(first: dict[str, Any], swap: dict[str, Any]) -> dict[str, int]:
    """LLM requests, model calls (cache misses), cache hits, errors and tokens of the whole
    section: the first backbone's backend ledger plus every swap judge's own ledger."""
    parts = [first] + [dict(r.get("cost") or {}) for r in (swap.get("runs") or {}).values()]
    return {k: sum(int(p.get(k, 0)) for p in parts) for k in LEDGER_KEYS}


#: (section folder, dataset, judge metrics) run under the first backbone: one dimension per judge
#: family (G-Eval, answer equivalence, MT-RAIG Eval), so that ``make demo`` stays under 5 minutes
#: on 2 cores (each completeness judge added ~25-30 s); ``metajudge metrics run`` runs the others
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("ragchecker_judges", RAG_DATASET, ("geval_faithfulness", "answer_equivalence")),
    ("table_qa_mtraig", TABLE_DATASET, ("mtraig_faithfulness",)),
)


#: options the demo chooses that are not the metric's default, with the line that says so
DEMO_CHOICES: dict[str, tuple[dict[str, Any], str]] = {
    "mtraig_faithfulness": (
        {"mode": "batched"},
        (
            "demo option mode=batched: all claims verified in one call per response (ours), not "
            "the paper's per-claim default, to keep the demo short"
        ),
    ),
}


def _metric_options(metric: str, opts: DemoOptions) -> dict[str, Any]:
    """G-Eval reads its context cut to ``context_chars`` (the cut recorded per row); the
    :data:`DEMO_CHOICES`."""
    out = {"max_table_chars": opts.context_chars} if metric.startswith("geval_") else {}
    return {**out, **DEMO_CHOICES.get(metric, ({}, ""))[0]}


def run_sections(
    files: dict[str, Path], out: Path, opts: DemoOptions, say: Callable[[str], None]
) -> tuple[list[JudgeRun], dict[str, int]]:
    """Every judge of :data:`SECTIONS` under the first backbone (one server, shared), then each
    section's meta-evaluation against the humans. Returns the runs and the backbone's ledger."""
    from metajudge.backends.registry import get_backend
    from metajudge.metrics.judges.parsers.ratings import PARSER_VERSION

    runs: list[JudgeRun] = []
    backend = get_backend(opts.backbones[0], parser_version=PARSER_VERSION, seed=opts.seed)
    try:
        for section, dataset, metrics in SECTIONS:
            rows: list[dict[str, Any]] = []
            section_runs = []
            for m in metrics:
                note = DEMO_CHOICES.get(m, ({}, ""))[1]
                say(f"  scoring {m} on {files[dataset].name} under {backend.name} ...")
                if note:
                    say(f"    ({note})")
                r, run = score_judge(
                    files[dataset], m, backend, section=section, options=_metric_options(m, opts)
                )
                run.note = note
                rows += r
                section_runs.append(run)
            res = meta_evaluate_section(section, files[dataset], rows, metrics, out, opts)
            for run in section_runs:
                run.correlations = _correlations(res, run.metric)
            runs += section_runs
        ledger = dict(backend.ledger.summary())
    finally:
        backend.close()
    return runs, ledger


def run_swap(
    rag_file: Path, out: Path, opts: DemoOptions, judged: dict[str, Any] | None = None
) -> dict[str, Any]:
    """G-Eval faithfulness under both backbones on the RAGChecker subset (the swap pipeline),
    written to ``out/swap`` with its per-backbone score files and ``report.html``; ``judged``:
    backbones already judged (:class:`SwapPrefetch`), taken as they are."""
    from metajudge.reports.html_run import write_html_report
    from metajudge.reports.swap_report import write_swap_report
    from metajudge.run_folder import run_folder
    from metajudge.runs.backbone_swap import run_backbone_swap

    with run_folder(out / "swap") as rf:  # the swap folder as a set, like every run folder
        res = run_backbone_swap(
            None,
            SWAP_METRIC,
            input_file=rag_file,
            backbones=list(opts.backbones),
            dimension="correctness",
            n_boot=opts.n_boot,
            seed=opts.seed,
            metric_options=_metric_options(SWAP_METRIC, opts),
            out_dir=rf.stage,
            judged=judged,
        )
        write_swap_report(res, rf.stage, plots=False)
        write_html_report(rf.stage, input_file=rag_file)
    return res.to_dict()


class SwapPrefetch:
    """The swap's judge under the second backbone, run in a worker thread while the first
    backbone's sections run (the 2 cores are otherwise half idle at the tail of each judge,
    at model start-up and during the meta-evaluations), handed to the swap by :meth:`result`.

    The metric is built as :func:`~metajudge.runs.backbone_swap.judge_scores` builds it (same
    backbone, seed and options, so the same signature and cache keys) and scores the responses
    the swap loads, in its order, on its own backend (its own replicas, routing state and
    cache connection): its calls and their order, hence its scores, are those of a swap run
    alone. The worker's error is raised by :meth:`result`; the metric (its backend and servers)
    is closed by the worker on every path."""

    def __init__(
        self, metric: Any, items: list[Any], backbone: str, *, backend: Any = None, note: str = ""
    ) -> None:
        self.backbone = backbone
        self.note = note
        self._metric = metric
        self._backend = backend  # the metric's backend, for stop()
        self._items = items
        self._done: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"metajudge-swap-{backbone}", daemon=True
        )

    @classmethod
    def for_demo(cls, rag_file: Path, opts: DemoOptions) -> SwapPrefetch:
        """The demo's swap judge (:data:`SWAP_METRIC`) under ``opts.backbones[1]``."""
        from metajudge.metrics.registry import get_metric
        from metajudge.runs.backbone_swap import subset_records, swap_dataset, swap_items

        bb = opts.backbones[1]
        records = subset_records(swap_dataset(None, rag_file, None, None).records, None)
        metric = get_metric(
            SWAP_METRIC, backbone=bb, seed=opts.seed, **_metric_options(SWAP_METRIC, opts)
        )
        note = f"judged while the {opts.backbones[0]} sections ran (its own replicas)"
        backend = metric.client.backend  # built here, its servers start on the first call
        return cls(metric, swap_items(records), bb, backend=backend, note=note)

    def start(self) -> SwapPrefetch:
        from metajudge.backends.server import install_handlers

        install_handlers()  # from the main thread: the worker's servers stop on SIGTERM too
        self._thread.start()
        return self

    def _run(self) -> None:
        from metajudge.runs.backbone_swap import judge_backbone

        try:
            scores, sig, run = judge_backbone(self._metric, self._items)
            self._done = (scores, sig, {**run, "note": self.note} if self.note else run)
        except BaseException as e:  # noqa: BLE001 - raised again by result() in the main thread
            self._error = e
        finally:
            try:
                self._metric.close()
            except BaseException as e:  # noqa: BLE001 - raised again by result()
                self._error = self._error or e

    def result(self) -> dict[str, Any]:
        """Wait for the worker; its run for ``judged=`` of the swap, or its error raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return {self.backbone: self._done}

    def stop(self, timeout_s: float = 10.0) -> BaseException | None:
        """After the main thread failed: stop the worker's servers (its calls then fail at
        once and the worker closes its backend), wait up to ``timeout_s``; its error, if any."""
        inner = getattr(self._backend, "inner", self._backend)  # behind the response cache
        for server in list(getattr(inner, "servers", None) or []):
            server.stop()
        self._thread.join(timeout_s)
        return self._error


def run_judges(
    files: dict[str, Path], out: Path, opts: DemoOptions, say: Callable[[str], None]
) -> tuple[list[JudgeRun], dict[str, int], dict[str, Any]]:
    """:func:`run_sections` under the first backbone with the swap's second-backbone judge
    (:class:`SwapPrefetch`) alongside, then :func:`run_swap` with that judge's run handed
    over (the first backbone's swap half is served from the response cache). A failure of
    either side is raised (the other's, if any, as a note); both backends are closed."""
    rag = files[RAG_DATASET]
    say(f"  judging {SWAP_METRIC} under {opts.backbones[1]} for the backbone swap, alongside ...")
    pre = SwapPrefetch.for_demo(rag, opts).start()
    try:
        runs, ledger = run_sections(files, out, opts, say)
        judged = pre.result()
    except BaseException as e:
        other = pre.stop()
        if other is not None and other is not e:
            e.add_note(f"the {opts.backbones[1]} swap judge also failed: {other!r}")
        raise
    say(f"  backbone swap: {SWAP_METRIC} under {' vs '.join(opts.backbones)} ...")
    return runs, ledger, run_swap(rag, out, opts, judged)


def run_demo(out_dir: str | Path, *args: Any, **kwargs: Any) -> DemoResult:
    """:func:`demo_into` holding the lock of ``out_dir`` (one run at a time per folder)."""
    from metajudge.out_folder import check_out_folder
    from metajudge.run_folder import run_lock

    own = ("subsets", "swap", *(s[0] for s in SECTIONS))  # a killed demo's folders
    check_out_folder(out_dir, allow=own)  # before the lock and any work
    with run_lock(out_dir):
        return demo_into(out_dir, *args, **kwargs)


def demo_into(
    out_dir: str | Path,
    options: DemoOptions | None = None,
    *,
    data_dir: str | Path | None = None,
    lexical_run: str | Path | None = None,
    say: Callable[[str], None] = print,
) -> DemoResult:
    """The judge section into ``out_dir``; ``lexical_run``: the meta-eval folder of the lexical
    + BERTScore table, shown first in the report. Writes ``demo.json``, :data:`REPORT_FILE` and
    the demo's one page, ``report.html`` (the last report: ``paths["html"]``)."""
    from metajudge.run_folder import run_folder

    opts = options or DemoOptions()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rag, rag_draw = draw_subset(
        RAG_DATASET, opts.n_rag, opts.seed, out, data_dir=data_dir, reference_as_context=True
    )
    tab, tab_draw = draw_subset(TABLE_DATASET, opts.n_table, opts.seed, out, data_dir=data_dir)
    subsets = {RAG_DATASET: rag_draw, TABLE_DATASET: tab_draw}
    for d in subsets.values():
        say(
            f"Subset: n = {d['n']} of {d['of']} labelled {d['dataset']} pairs, drawn {d['how']} "
            f"(seed {opts.seed})"
        )
    runs, ledger, swap = run_judges({RAG_DATASET: rag, TABLE_DATASET: tab}, out, opts, say)
    result = DemoResult(opts, subsets, runs, swap, total_ledger(ledger, swap), 0.0)
    result.wall_s = round(time.perf_counter() - t0, 1)
    from metajudge.reports.demo_report import demo_markdown, write_demo_html

    with run_folder(out) as rf:  # the demo's own files as a set (sections: their own runs)
        rf.write_text("demo.json", result.to_json(indent=2, default=str))
        rf.write_text(REPORT_FILE, demo_markdown(result, lexical_run=lexical_run))
        page = out / write_demo_html(result, rf.stage, lexical_run=lexical_run).name
    report = out / REPORT_FILE
    result.paths = {"report": str(report), "json": str(out / "demo.json"), "html": str(page)}
    return result
