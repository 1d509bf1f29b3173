"""``metajudge judge card``: one judge on one labelled dataset, every analysis the data allows.

The card computes nothing of its own: each part is the run function of an existing command,
called with the card's data, judge and seeds, and its result kept as that command prints it
with ``--format json`` (the part's ``command`` is the command line that prints the same numbers):

- ``agreement``: ``meta-eval`` (correlations or accuracy with CIs, the inter-human reference);
- ``alt_test``: ``decide alt-test`` (needs two or more annotators per item);
- ``selective``: ``calibrate selective`` (needs the judge's class probabilities);
- ``conformal``: ``calibrate conformal`` (intervals for ratings, prediction sets for verdicts);
- ``calibration``: ``calibrate fit`` (held-out errors, reliability, ECE where the judge gives a
  distribution);
- ``estimate``: ``calibrate estimate`` (each system's calibrated mean beside the judge's raw
  mean, with the support and transport gates; needs several systems of rated responses);
- ``self_preference``: ``judge self-preference`` (binary data, with ``--family``);
- ``biases``: position and length bias are measured by ``judge diagnostics``, which runs a
  pairwise judge in both orders: a card of a score column says so, and why.

A part the data does not allow is kept as ``{"status": "absent", "reason": ...}``; a part
whose command refuses the input (exit 2) is absent with that command's message as the reason.
The verdict (:mod:`metajudge.reports.judge_card`) reads the parts' results; ``card.json`` and
``card.html`` are written into ``--out`` as one run folder (:func:`metajudge.run_folder.run_folder`),
with the meta-eval run folder (its report and disagreement browser) under ``meta_eval/``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.data.source import DataSource
from metajudge.errors import InputError

#: the card's parts, in the order the card shows its evidence
PARTS = (
    "agreement",
    "verdicts",
    "disagreements",
    "alt_test",
    "selective",
    "conformal",
    "calibration",
    "estimate",
    "biases",
    "self_preference",
)
CARD_FILE = "card.json"
CARD_HTML = "card.html"
CARD_SCHEMA = "metajudge.judge_card/1"


@dataclass(frozen=True)
class CardOptions:
    """The judge and the settings the card passes on. The data (a
    :class:`~metajudge.data.source.DataSource`) names the judge's column ``judge`` in its
    ``scores``; or ``metric`` (a registry judge or ``judge:PATH``) is run under ``backbone`` by
    the meta-eval part, whose score file the other parts then read; ``family``: the systems of
    the judge's model family. Then the Alt-Test's ε (None: the command's default), the selective
    risk, the conformal miscoverage, the seed, bootstrap resamples and splits, and the agreement
    ``statistic`` the verdict shows (``pearson``)."""

    metric: str | None = None
    backbone: str | None = None
    family: tuple[str, ...] = ()
    epsilon: float | None = None
    risk: float = 0.15
    miscoverage: float = 0.1
    seed: int = 0
    n_boot: int = 1000
    repeats: int = 50
    statistic: str = "pearson"
    #: ``--require``: parsed requirements (:mod:`metajudge.analyses.card_decision`)
    require: tuple[Any, ...] = ()
    #: ``--probes``: a CJE probe folder (the transport audit of a CJE folder's estimate)
    probes: str | None = None

    def settings(self) -> dict[str, Any]:
        """The settings as ``card.json`` records them."""
        return {
            "alt_epsilon": self.epsilon,
            "risk": self.risk,
            "miscoverage": self.miscoverage,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "repeats": self.repeats,
        }


@dataclass
class CardRun:
    """The card (JSON-ready), its Markdown and the files written."""

    card: dict[str, Any]
    markdown: str
    written: list[Path] = field(default_factory=list)


def _one_column(spec: str, judge: str) -> str:
    """A --scores spec narrowed to the judge's column (``shipped`` -> ``shipped:JUDGE``, a file
    -> ``FILE:JUDGE``); a spec naming columns already is kept."""
    if spec == "shipped":
        return f"shipped:{judge}"
    if ":" in spec or "=" in spec:
        return spec
    return f"{spec}:{judge}"


def _ok(command: list[str], result: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "command": shlex.join(["metajudge", *command]), "result": result}


def _absent(reason: str) -> dict[str, Any]:
    return {"status": "absent", "reason": reason}


#: a refusal's field, and the reason a user reads for it
PLAIN = {
    "details.probs": "it needs the judge's confidence in each verdict (class probabilities in "
    "details.probs, or a graded score); this judge gives verdicts without one",
    "--fraction": "too few labelled items to split them into calibration and test halves",
    "calibration": "too few labelled items to split them into calibration and test halves",
    "--repeats": "the splits asked for (--repeats) do not fit in memory; ask fewer",
}


def _attempt(command: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A part, or absent with the reason its ``command`` refuses the input, in a user's words
    (:data:`PLAIN`, else the refusal's own sentence without its location); ``detail`` keeps
    the refusal as the command prints it."""
    try:
        return make()
    except InputError as e:
        why = PLAIN.get(str(e.field), e.message)
        return {**_absent(f"`metajudge {command}` cannot run here: {why}"), "detail": str(e)}


def _judge_spec(src: DataSource, opts: CardOptions) -> tuple[str, list[str]]:
    """The judge's name and the one-column --scores spec the calibrate parts read."""
    if opts.metric:
        return opts.metric, []
    judge = src.judge
    specs = list(src.scores) or ["shipped"]
    if judge is None:
        raise InputError("name the judge's column (--judge) or a judge metric", field="--judge")
    return judge, [_one_column(s, judge) for s in specs]


def _meta_eval(
    src: DataSource, opts: CardOptions, out_dir: Path, specs: list[str], **kw: Any
) -> Any:
    """``meta-eval`` of the card's data (read once: ``src.loaded_once()``) and ``specs`` into
    ``out_dir`` (no plots, no progress), with the card's resamples and seed; ``kw``:
    run_meta_eval's other options."""
    from metajudge.analyses.metric_vs_human.protocol import Protocol
    from metajudge.runs.meta_eval import run_meta_eval

    res, _ = run_meta_eval(
        src.loaded_once().but(scores=tuple(specs)),
        out_dir=out_dir,
        plots=False,
        progress=False,
        protocol=Protocol.from_options({"n_boot": opts.n_boot, "seed": opts.seed}),
        **kw,
    )
    return res


def agreement_part(
    src: DataSource, opts: CardOptions, out_dir: Path, page: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Any]:
    """``meta-eval`` of the judge into ``out_dir`` (its run folder with report.html): the part
    and the result object; ``page``: filled with report.html's payload (the card's page)."""
    specs = _judge_spec(src, opts)[1]
    kw: dict[str, Any] = (
        {"metrics": [opts.metric], "backbone": opts.backbone} if opts.metric else {}
    )
    kw["report"] = {"page": page}
    res = _meta_eval(src, opts, out_dir, specs, **kw)
    cmd = ["meta-eval", *src.args()]
    cmd += ["--metrics", opts.metric] if opts.metric else _spec_args(specs)
    cmd += (["--backbone", opts.backbone] if opts.metric and opts.backbone else []) + [
        "--n-boot",
        str(opts.n_boot),
        "--seed",
        str(opts.seed),
        "--out",
        "DIR",
        "--format",
        "json",
    ]
    return _ok(cmd, res.to_dict()), res


def _scores_for(src: DataSource, opts: CardOptions, meta_dir: Path) -> list[str]:
    """The one-column spec of the judge for the calibrate parts: a metric's scores are read
    from the meta-eval folder's score file."""
    if opts.metric:  # the file holds the metric's rows only (a metric name may hold ':')
        return [str(meta_dir / "scores.jsonl")]
    return _judge_spec(src, opts)[1]


def alt_test_part(src: DataSource, opts: CardOptions) -> dict[str, Any]:
    """``decide alt-test``: the built-in Alt-Test sets by their own loader, a judge metric on
    any labelled data with two or more annotators per item."""
    from metajudge.runs.alt_test import run_alt_test

    ds = src.load()
    judge = _judge_spec(src, opts)[0]
    eps = [] if opts.epsilon is None else ["--alt-epsilon", f"{opts.epsilon:g}"]
    if src.dataset == "alt_test_calderon2025" and not opts.metric:
        run = run_alt_test(src, epsilon=opts.epsilon, llms=[judge])
        cmd = ["decide", "alt-test", *src.args(), "--llm", judge, *eps, "--format", "json"]
        return _ok(cmd, run.payload)
    if (ds.card.annotators or 1) < 2:
        return _absent(
            f"the Alt-Test compares the judge with each annotator against the others: it needs "
            f"two or more annotators per item ({ds.card.name} has "
            f"{ds.card.annotators or 1} label per item)"
        )
    if not opts.metric:
        return _absent(
            "the Alt-Test of a score column runs on an annotation folder (decide alt-test "
            "--input DIR); on a labelled dataset it runs a judge metric (--metric)"
        )
    judge_kw = {"metric": opts.metric, "backbone": opts.backbone}
    run = run_alt_test(src, epsilon=opts.epsilon, judge=judge_kw)
    cmd = ["decide", "alt-test", *src.args(), "--metric", opts.metric, *eps]
    cmd += ["--dimension", src.dimension] if src.dimension else []
    cmd += (["--backbone", opts.backbone] if opts.backbone else []) + ["--format", "json"]
    return _ok(cmd, run.payload)


def selective_part(
    src: DataSource, opts: CardOptions, specs: list[str], class_reading: Any = None
) -> dict[str, Any]:
    """``calibrate selective`` of the judge alone (Trust or Escalate), over the card's
    ``repeats`` seeded calibration/test splits (``class_reading``: :func:`_class_reading`)."""
    from metajudge.runs.calibrate import run_selective

    if src.load().card.label_kind not in ("pairwise", "categorical", "binary"):
        return _absent(
            "selective judging keeps the verdicts whose class probability clears a threshold: "
            "it needs a pairwise or categorical verdict with class probabilities; these are ratings"
        )
    judge = _judge_spec(src, opts)[0]
    run = run_selective(
        _whole(src, specs),
        [judge],
        alpha=opts.risk,
        seed=opts.seed,
        repeats=opts.repeats,
        thresholds="grid",
        class_reading=class_reading,
    )
    cmd = ["calibrate", "selective", *src.args(), *_spec_args(specs), "--judge", judge]
    cmd += ["--risk", f"{opts.risk:g}", "--seed", str(opts.seed)]
    cmd += ["--repeats", str(opts.repeats), "--format", "json"]
    return _ok(cmd, _data(run.result))


def _class_reading(src: DataSource, opts: CardOptions, specs: list[str]) -> Any:
    """The judge's class probabilities and the human classes of the units
    (:func:`~metajudge.analyses.selective.read_classes` of the rows read once), read once for the
    selective and conformal parts; None where each part reads them itself: ratings, a judge
    metric, a subset (the parts read the whole dataset), label cells read as labels (categorical
    or binary data: the parts read numbers), or probabilities a part refuses (it then says why,
    as its command does)."""
    from metajudge.analyses.selective import read_classes
    from metajudge.scores.source_rows import read_for

    ds = src.load()
    read = read_for(_whole(src, specs), ds, labels=False)
    if read is None or _ratings(ds):
        return None
    try:
        dim = src.dimension or ds.card.dimensions[0]
        return read_classes(ds, read.rows, _judge_spec(src, opts)[0], dim)
    except InputError:
        return None


def _verdicts(ds: Any) -> bool:
    """Verdicts (pairwise, categorical or binary labels), not ratings."""
    return not _ratings(ds)


def _ratings(ds: Any) -> bool:
    """Rated responses (Likert or numeric labels), not verdicts."""
    return ds.card.label_kind not in ("pairwise", "categorical", "binary")


def _spec_args(specs: Sequence[str]) -> list[str]:
    return [a for s in specs for a in ("--scores", s)]


def _whole(src: DataSource, specs: list[str]) -> DataSource:
    """The source a calibrate part reads: the judge's one column ``specs`` of the whole dataset
    (the card's, read once, unless it is a subset: calibrate reads no --subset)."""
    whole = src.but(subset=None, dataset_obj=None, scores_read=None) if src.subset else src
    return whole.but(scores=tuple(specs), judge=None)


def _data(res: Any) -> dict[str, Any]:
    """A part's result as the card keeps it: JSON data, NaN as None."""
    from metajudge.results import finite

    return finite(res.to_dict())


def _dim_args(src: DataSource) -> list[str]:
    return ["--dimension", src.dimension] if src.dimension else []


def conformal_part(
    src: DataSource, opts: CardOptions, specs: list[str], class_reading: Any = None
) -> dict[str, Any]:
    """``calibrate conformal``: every method that applies, at the card's miscoverage
    (``class_reading``: :func:`_class_reading`)."""
    from metajudge.runs.calibrate import ConformalOptions, run_conformal

    if src.subset:
        return _absent("calibrate conformal reads a whole dataset (no --subset)")
    o = ConformalOptions(
        alpha=opts.miscoverage,
        bins=3,
        min_bin=30,
        fit_fraction=0.5,
        seed=opts.seed,
        repeats=opts.repeats,
    )
    run = run_conformal(_whole(src, specs), o, class_reading=class_reading)
    cmd = ["calibrate", "conformal", *src.args(), *_spec_args(specs), *_dim_args(src)]
    cmd += ["--miscoverage", f"{opts.miscoverage:g}", "--seed", str(opts.seed)]
    cmd += ["--repeats", str(opts.repeats), "--format", "json"]
    return _ok(cmd, _data(run.result))


def calibration_part(
    src: DataSource, opts: CardOptions, specs: list[str]
) -> tuple[dict[str, Any], Any]:
    """``calibrate fit`` (isotonic) of a rating judge: held-out errors, reliability, ECE; the
    part and the fit result (for the reliability diagram)."""
    from metajudge.runs.calibrate import run_fit

    if src.subset:
        return _absent("calibrate fit reads a whole dataset (no --subset)"), None
    if not _ratings(src.load()):
        return _absent(
            "calibrate fit maps a rating onto the human scale; a verdict's calibration is its "
            "selective and conformal parts"
        ), None
    run = run_fit(_whole(src, specs), "isotonic", seed=opts.seed, repeats=opts.repeats)
    cmd = ["calibrate", "fit", *src.args(), *_spec_args(specs), *_dim_args(src)]
    cmd += ["--seed", str(opts.seed), "--repeats", str(opts.repeats), "--format", "json"]
    d = _data(run.result)
    d.get("calibrator", {}).get("data", {}).pop("judge_scores", None)  # the rows, not a result
    return _ok(cmd, d), run.result


def estimate_part(src: DataSource, opts: CardOptions, specs: list[str]) -> dict[str, Any]:
    """``calibrate estimate``: each system's calibrated mean beside the judge's raw mean."""
    from metajudge.runs.calibrate_estimate import run_estimate

    ds = src.load()
    systems = {getattr(r, "system", None) for r in ds.records} - {None}
    if ds.card.label_kind == "binary":
        return _absent(
            "binary labels: each system's pass rate corrected for the judge's errors is in "
            "'What does it pass?': Rogan–Gladen, and PPI++ where rows are unlabelled"
        )
    if not _ratings(ds) or len(systems) < 2:
        return _absent(
            "calibrated system estimates need rated responses of two or more systems "
            f"({ds.card.name}: {ds.card.label_kind} labels, {len(systems)} system(s))"
        )
    if src.subset:
        return _absent("calibrate estimate reads a whole dataset (no --subset)")
    run = run_estimate(_whole(src, specs), seed=opts.seed)
    cmd = ["calibrate", "estimate", *src.args(), *_spec_args(specs), *_dim_args(src)]
    return _ok(cmd + ["--seed", str(opts.seed), "--format", "json"], _data(run.result))


def biases_part(src: DataSource, opts: CardOptions) -> dict[str, Any]:
    """Position and length bias: ``judge diagnostics`` runs a pairwise judge in both orders."""
    if src.load().card.label_kind != "pairwise":
        return _absent("position and length bias are measured on pairwise judges; this is not")
    how = "metajudge judge diagnostics --metric METRIC --backbones NAME"
    if not opts.metric:
        return _absent(
            "position bias needs the judge run in both orders (A/B and B/A); released verdicts "
            f"hold one order. Run the judge with `{how}`"
        )
    return _absent(f"the card makes no model calls beyond meta-eval's; run `{how}`")


def self_preference_part(src: DataSource, opts: CardOptions) -> dict[str, Any]:
    """``judge self-preference`` (binary verdicts, with the judge's family named)."""
    from metajudge.runs.jury import run_self_preference

    if src.load().card.label_kind != "binary":
        return _absent("self-preference is measured on binary accept/reject verdicts")
    if not opts.family:
        return _absent("no --family: name the systems of the judge's model family")
    judge, specs = _judge_spec(src, opts)
    res = run_self_preference(
        src.but(scores=tuple(specs)),
        judge=judge,
        family=list(opts.family),
        n_boot=opts.n_boot,
        seed=opts.seed,
    )
    cmd = ["judge", "self-preference", *src.args(), *_spec_args(specs), "--judge", judge]
    cmd += ["--family", ",".join(opts.family), "--n-boot", str(opts.n_boot)]
    return _ok(cmd + ["--seed", str(opts.seed), "--format", "json"], res.to_dict())


def verdicts_part(src: DataSource, opts: CardOptions) -> dict[str, Any]:
    """A binary judge's TPR/TNR and the pass rates corrected for its errors, per system
    (:mod:`metajudge.analyses.binary_verdicts`: computed by the card, ``by`` names it)."""
    from metajudge.analyses.binary_verdicts import binary_verdicts
    from metajudge.analyses.metric_vs_human.categorical import gold_labels
    from metajudge.runs.jury import label_columns

    kind = src.load().card.label_kind
    if kind != "binary":
        return _absent(
            "true-positive and true-negative rates and corrected pass rates are those of a "
            f"pass/fail judge; these are {kind} labels (their per-class errors: the confusion "
            "matrix of the agreement part)"
        )
    judge, specs = _judge_spec(src, opts)
    if opts.metric:  # the metric's scores lie in the meta-eval folder, read by label_columns
        return _absent("the pass rates of a judge metric: give its score file with --scores")
    ds, dim, preds = label_columns(src.but(scores=tuple(specs)), [judge])
    res = binary_verdicts(
        gold_labels(ds, dim).labels,
        preds[judge],
        [str(r.system) for r in ds.records],
        ds.card.scale_of(dim).labels or (),
        judge=judge,
        seed=opts.seed,
    )
    return {"status": "ok", "by": "metajudge.analyses.binary_verdicts", "result": _data(res)}


def disagreements_part(src: DataSource, opts: CardOptions) -> dict[str, Any]:
    """The items where a binary or categorical judge disagrees with the humans, with its
    explanation (:mod:`metajudge.analyses.disagreements`)."""
    from metajudge.analyses.disagreements import label_disagreements
    from metajudge.analyses.metric_vs_human.categorical import gold_labels
    from metajudge.runs.jury import label_columns
    from metajudge.scores.source_rows import source_rows

    kind = src.load().card.label_kind
    if kind not in ("binary", "categorical"):
        return _absent(f"{kind} labels: the meta-eval report's disagreement browser lists them")
    judge, specs = _judge_spec(src, opts)
    if opts.metric:
        return _absent("the items of a judge metric: the meta-eval report's browser lists them")
    one = src.but(scores=tuple(specs))
    ds, dim, preds = label_columns(one, [judge])
    rows = source_rows(one, labels=True)
    said = {
        r["key"]: (r.get("details") or {}).get("explanation")
        for r in rows
        if r["metric"] == judge and (r.get("details") or {}).get("explanation")
    }
    res = label_disagreements(ds.records, gold_labels(ds, dim).labels, preds[judge], said)
    return {"status": "ok", "by": "metajudge.analyses.disagreements", "result": res}


def _signature(src: DataSource, opts: CardOptions, agreement: Any) -> dict[str, Any]:
    """What a reader cites: the data's hash, the judge definition's hash, the backbone and the
    metajudge version (``agreement``: the meta-eval result, its judges' signatures)."""
    from metajudge import __version__
    from metajudge.io import sha256_file, sha256_text

    if src.path and not src.is_mlflow:  # a file; an MLflow experiment: its records' hash
        data_hash = sha256_file(src.path)
    else:
        recs = [r.to_dict() for r in src.load().records]
        data_hash = sha256_text(json.dumps(recs, sort_keys=True, ensure_ascii=False, default=str))
    judge = _judge_spec(src, opts)[0]
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult

    sigs = agreement.signatures() if isinstance(agreement, MetaEvalResult) else []
    definition = None
    if opts.metric and opts.metric.startswith("judge:"):
        from metajudge.metrics.judges.defined import load_definition

        definition = load_definition(opts.metric.split(":", 1)[1].split("@")[0]).digest
    text = json.dumps({"judge": judge, "signatures": sigs, "definition": definition})
    return {
        "data": {"source": src.name, "subset": src.subset},
        "data_sha256": data_hash,
        "judge": judge,
        "judge_signatures": sigs,
        "judge_definition_sha256": sha256_text(text),
        "definition_digest": definition,
        "backbone": opts.backbone if opts.metric else None,
        "metajudge_version": __version__,
    }


def _plan_command(src: DataSource, specs: list[str], labels: Mapping[str, Any]) -> str | None:
    """``calibrate plan`` of the data (it picks the next labels of a rating judge among the
    unlabelled rows): only with partial labels, one judge column."""
    if not labels["partial"] or len(specs) != 1 or _verdicts(src.load()):
        return None
    return shlex.join(["metajudge", "calibrate", "plan", *src.args(), "--scores", specs[0]])


def _needed(
    name: str,
    src: DataSource,
    opts: CardOptions,
    specs: list[str],
    make: Callable[[], Any],
    labels: Mapping[str, Any],
) -> dict[str, Any]:
    """A part with the least data its claim needs (``labels``: the data's, :func:`_labels`):
    below it, absent with what is missing and how to get it (the part does not run); else the
    part (``make``) with its need stated. A part the data's kind does not allow (selective on
    ratings) says so first."""
    from metajudge.analyses.card_needs import part_need

    if name == "selective" and _ratings(src.load()):
        return _attempt(COMMANDS[name], make)
    need = part_need(
        name,
        labelled=labels["labelled"],
        settings={"risk": opts.risk, "miscoverage": opts.miscoverage},
        plan=_plan_command(src, specs, labels),
    )
    if need is not None and not need.met:
        return {**_absent(str(need.missing())), "needs": need.to_dict()}
    part = _attempt(COMMANDS[name], make)
    return part if need is None else {**part, "needs": need.to_dict()}


#: each part's command, as an absent part's reason names it
COMMANDS = {
    "alt_test": "decide alt-test",
    "selective": "calibrate selective",
    "conformal": "calibrate conformal",
    "calibration": "calibrate fit",
    "estimate": "calibrate estimate",
    "self_preference": "judge self-preference",
}


def _parts(
    src: DataSource, opts: CardOptions, stage: Path, page: dict[str, Any], labels: Any
) -> tuple[dict[str, Any], Any]:
    """Every part of the card (absent ones with their reason) of ``src`` (its dataset read
    once, ``labels`` its :func:`_labels`) and the meta-eval result; ``page``: as
    :func:`agreement_part`'s."""
    agreement, res = agreement_part(src, opts, stage / "meta_eval", page)
    specs = _scores_for(src, opts, stage / "meta_eval")
    parts: dict[str, Any] = {"agreement": agreement}
    parts["verdicts"] = _attempt("judge card", lambda: verdicts_part(src, opts))
    parts["disagreements"] = _attempt("judge card", lambda: disagreements_part(src, opts))
    parts["alt_test"] = _attempt("decide alt-test", lambda: alt_test_part(src, opts))
    class_reading = _class_reading(src, opts, specs)  # read once for both parts

    def selective() -> dict[str, Any]:
        return selective_part(src, opts, specs, class_reading)

    def conformal() -> dict[str, Any]:
        return conformal_part(src, opts, specs, class_reading)

    parts["selective"] = _needed("selective", src, opts, specs, selective, labels)
    parts["conformal"] = _needed("conformal", src, opts, specs, conformal, labels)

    def calibration() -> dict[str, Any]:
        return calibration_part(src, opts, specs)[0]

    parts["calibration"] = (
        _needed("calibration", src, opts, specs, calibration, labels)
        if _ratings(src.load()) and not src.subset
        else _attempt("calibrate fit", calibration)
    )
    parts["estimate"] = _attempt("calibrate estimate", lambda: estimate_part(src, opts, specs))
    parts["biases"] = biases_part(src, opts)
    parts["self_preference"] = _attempt(
        "judge self-preference", lambda: self_preference_part(src, opts)
    )
    withhold(parts, src, opts)
    return parts, res


def _agreement_flaw(r: Mapping[str, Any], judge: str, dim: str | None, stat: str) -> str | None:
    """Why the agreement part's headline (accuracy of verdicts, else ``stat`` of the judge's
    first cell) is no answer, or None."""
    from metajudge.analyses.card_needs import ci_flaw
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult

    if r.get("kind") == "categorical":
        rows = [x for x in r.get("rows", []) if x["metric"] == judge]
        if not rows:
            return "the judge has no verdict on a labelled item"
        lo, hi = rows[0]["ci"]["accuracy"] or (None, None)
        return ci_flaw(rows[0]["accuracy"], lo, hi, rows[0]["n"])
    cells = MetaEvalResult(dict(r)).cells_of(judge, dim)
    if not cells:
        return "the judge has no score on a labelled item"
    s = cells[0]["stats"].get(stat) or {}
    lo, hi = s.get("ci") or (None, None)
    return ci_flaw(s.get("value"), lo, hi, cells[0].get("n_items"))


def withhold(parts: dict[str, Any], src: DataSource, opts: CardOptions) -> None:
    """Mark what ran but is no answer (:mod:`metajudge.analyses.card_needs`): ``withheld``,
    the reason, on the agreement or conformal part; ``withheld_systems`` on the estimate part.
    The part's numbers stay (its command reproduces them)."""
    from metajudge.analyses.card_needs import best_conformal, conformal_flaw, system_flaws

    judge = _judge_spec(src, opts)[0]
    flaws: dict[str, Any] = {}
    if parts["agreement"]["status"] == "ok":
        r = parts["agreement"]["result"]
        flaws["agreement"] = _agreement_flaw(r, judge, src.dimension, opts.statistic)
    if parts["conformal"]["status"] == "ok":
        sc = src.load().card.scale
        span = (sc.min, sc.max) if sc is not None and sc.min is not None else None
        flaws["conformal"] = conformal_flaw(best_conformal(parts["conformal"]["result"]), span)
    for name, flaw in flaws.items():
        if flaw:
            parts[name]["withheld"] = flaw
    if parts["estimate"]["status"] == "ok":
        systems = system_flaws(parts["estimate"]["result"]["systems"])
        if systems:
            parts["estimate"]["withheld_systems"] = systems


def card_texts(src: DataSource, opts: CardOptions) -> bool:
    """Does the card read the dataset's texts? As ``meta-eval`` (its
    :func:`~metajudge.runs.meta_eval.text_free` rule): not when no judge metric runs, every
    ``--scores`` is a score table joined by key and the file is large. No part reads a text
    then (the text-free load keeps every label, id, system and word count; only pairwise
    records lose their texts, and the verdict and disagreement parts are those of binary and
    categorical records); the disagreement browser shows the pairs without text and says so."""
    from metajudge.runs.meta_eval import text_free
    from metajudge.scores.run_scores import score_specs

    specs = score_specs(list(src.scores) or ["shipped"])
    return bool(opts.metric) or not text_free(src.path, specs)


def _labels(ds: Any) -> dict[str, Any]:
    """How many records carry a human label (complete or partial labels)."""
    from metajudge.data.partial import labelled_only

    kept, left = labelled_only(ds, what="judge card")
    return {"records": len(ds.records), "labelled": len(kept.records), "partial": bool(left)}


def _read_once(src: DataSource, opts: CardOptions) -> DataSource:
    """``src`` (its dataset loaded) carrying the judge's score rows, gathered once with one id
    policy (one count of the rows dropped, meta-eval's ``run.score_ids``): the meta-eval,
    selective and conformal parts read the same rows. A judge metric's rows are meta-eval's
    to compute (read back from its folder)."""
    if opts.metric:
        return src
    from metajudge.scores.source_rows import scored_once

    specs = _judge_spec(src, opts)[1]
    return scored_once(src.but(scores=tuple(specs))).but(scores=src.scores)


def run_card(src: DataSource, opts: CardOptions, out: str | Path) -> CardRun:
    """The card of one judge on ``src`` into the run folder ``out``: card.json, card.html, the
    meta-eval run folder under ``meta_eval/``. The dataset and the judge's score rows are read
    once and handed to every part (:func:`_read_once`)."""
    from metajudge.io import check_out_dir
    from metajudge.reports.judge_card import card_html, card_markdown, verdict
    from metajudge.results import finite
    from metajudge.run_folder import run_folder
    from metajudge.scores.spec import input_paths

    if opts.probes:
        raise InputError("--probes goes with a CJE folder (--input DIR)", field="--probes")
    check_out_dir(out, inputs=input_paths(src))
    src = _read_once(src.loaded_once(texts=card_texts(src, opts)), opts)
    ds = src.load()
    labels = _labels(ds)  # the parts' needs and the card's count, counted once
    with run_folder(out) as rf:
        page: dict[str, Any] = {}  # the meta-eval page's payload: the card's page builds on it
        parts, res = _parts(src, opts, rf.stage, page, labels)
        for p in parts.values():  # a part's command names the folder where it will lie
            if p.get("command"):
                p["command"] = p["command"].replace(str(rf.stage), str(rf.out))
        card = {
            "schema": CARD_SCHEMA,
            "judge": _judge_spec(src, opts)[0],
            "name": card_name(_judge_spec(src, opts)[0]),
            "dataset": ds.card.name,
            "label_kind": ds.card.label_kind,
            "annotators": ds.card.annotators or 1,
            "dimension": src.dimension,
            "labels": labels,
            "settings": opts.settings(),
            "signature": _signature(src, opts, res),
            "parts": parts,
        }
        card["verdict"] = verdict(card, opts.statistic)
        _decision(card, opts)
        card = finite(card)
        rf.write_text(CARD_FILE, json.dumps(card, indent=1, ensure_ascii=False) + "\n")
        rf.write_text(CARD_HTML, card_html(card, rf.stage, ds, page))
    written = [rf.final(rf.stage / n) for n in (CARD_FILE, CARD_HTML)]
    return CardRun(card, card_markdown(card), written)


def _decision(card: dict[str, Any], opts: CardOptions) -> None:
    """The card's measures, its decision (the rules and their outcomes) and, with
    ``--require``, each requirement's outcome (:mod:`metajudge.analyses.card_decision`)."""
    from metajudge.analyses.card_decision import check_requirements, decide, measures
    from metajudge.reports.judge_card import headline

    have = measures(card, headline(card, opts.statistic))
    card["measures"] = have
    card["decision"] = decide(card, have)
    if opts.require:
        card["requirements"] = check_requirements(opts.require, have)


def card_name(judge: str) -> str:
    """A judge's name on its card: a ``judge:PATH[@BACKBONE]`` definition's ``name`` (with the
    backbone), else ``judge`` itself."""
    from metajudge.metrics.judges.definition import PREFIX

    if not judge.startswith(PREFIX):
        return judge
    from metajudge.metrics.judges.defined import load_definition

    path, at, backbone = judge[len(PREFIX) :].partition("@")
    return load_definition(path).name + (f"@{backbone}" if at else "")
