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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.errors import InputError

#: the card's parts, in the order the card shows its evidence
PARTS = (
    "agreement",
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
class CardInput:
    """The labelled data and the judge: ``scores`` (the --scores grammar) holds the judge's
    column ``judge``; or ``metric`` (a registry judge or ``judge:PATH``) run under ``backbone``
    by the meta-eval part, whose score file the other parts then read."""

    dataset: str | None = None
    input_file: str | None = None
    subset: str | None = None
    scores: tuple[str, ...] = ()
    judge: str | None = None
    metric: str | None = None
    backbone: str | None = None
    dimension: str | None = None
    family: tuple[str, ...] = ()
    data_dir: str | Path | None = None


@dataclass(frozen=True)
class CardOptions:
    """The settings the card passes on: the Alt-Test's ε (None: the command's default), the
    selective risk, the conformal miscoverage, the seed, bootstrap resamples and splits."""

    epsilon: float | None = None
    risk: float = 0.15
    miscoverage: float = 0.1
    seed: int = 0
    n_boot: int = 1000
    repeats: int = 50


@dataclass
class CardRun:
    """The card (JSON-ready), its Markdown and the files written."""

    card: dict[str, Any]
    markdown: str
    written: list[Path] = field(default_factory=list)


def _src_args(inp: CardInput) -> list[str]:
    """The data options of every part's command line."""
    a = ["--dataset", inp.dataset] if inp.dataset else ["--input", str(inp.input_file)]
    return a + (["--subset", inp.subset] if inp.subset else [])


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


def _attempt(command: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A part, or absent with the message its ``command`` would exit 2 with."""
    try:
        return make()
    except InputError as e:
        return _absent(f"`metajudge {command}` refuses this input: {e}")


def _as_dict(res: Any) -> dict[str, Any]:
    return json.loads(res.to_json())


def _judge_spec(inp: CardInput) -> tuple[str, list[str]]:
    """The judge's name and the one-column --scores spec the calibrate parts read."""
    if inp.metric:
        return inp.metric, []
    judge = inp.judge
    specs = list(inp.scores) or ["shipped"]
    if judge is None:
        raise InputError("name the judge's column (--judge) or a judge metric", field="--judge")
    return judge, [_one_column(s, judge) for s in specs]


def _meta_eval(
    inp: CardInput, opts: CardOptions, out_dir: Path, specs: list[str], **kw: Any
) -> Any:
    """``meta-eval`` of the card's data and ``specs`` into ``out_dir`` (no plots, no progress),
    with the card's resamples and seed; ``kw``: run_meta_eval's other options."""
    from metajudge.analyses.metric_vs_human.protocol import Protocol
    from metajudge.runs.meta_eval import run_meta_eval

    res, _ = run_meta_eval(
        inp.dataset,
        input_file=inp.input_file,
        out_dir=out_dir,
        scores=specs,
        data_dir=inp.data_dir,
        subset=inp.subset,
        plots=False,
        progress=False,
        protocol=Protocol.from_options({"n_boot": opts.n_boot, "seed": opts.seed}),
        **kw,
    )
    return res


def agreement_part(
    inp: CardInput, opts: CardOptions, out_dir: Path
) -> tuple[dict[str, Any], Any, Any]:
    """``meta-eval`` of the judge into ``out_dir`` (its run folder with report.html): the part,
    the result object and the loaded dataset."""
    from metajudge.data.loading import open_dataset

    specs = _judge_spec(inp)[1]
    kw: dict[str, Any] = {"metrics": [inp.metric], "backbone": inp.backbone} if inp.metric else {}
    res = _meta_eval(inp, opts, out_dir, specs, **kw)
    cmd = ["meta-eval", *_src_args(inp)]
    cmd += ["--metrics", inp.metric] if inp.metric else [a for s in specs for a in ("--scores", s)]
    cmd += (["--backbone", inp.backbone] if inp.metric and inp.backbone else []) + [
        "--n-boot",
        str(opts.n_boot),
        "--seed",
        str(opts.seed),
        "--out",
        "DIR",
        "--format",
        "json",
    ]
    data = res.to_dict() if hasattr(res, "to_dict") else res.data
    ds = open_dataset(inp.dataset, inp.input_file, subset=inp.subset, data_dir=inp.data_dir)
    return _ok(cmd, json.loads(json.dumps(data, default=str))), res, ds


def _scores_for(inp: CardInput, meta_dir: Path) -> list[str]:
    """The one-column spec of the judge for the calibrate parts: a metric's scores are read
    from the meta-eval folder's score file."""
    if inp.metric:  # the file holds the metric's rows only (a metric name may hold ':')
        return [str(meta_dir / "scores.jsonl")]
    return _judge_spec(inp)[1]


def alt_test_part(inp: CardInput, opts: CardOptions, ds: Any) -> dict[str, Any]:
    """``decide alt-test``: the built-in Alt-Test sets by their own loader, a judge metric on
    any labelled data with two or more annotators per item."""
    from metajudge.runs.alt_test import run_alt_test

    judge = _judge_spec(inp)[0]
    eps = [] if opts.epsilon is None else ["--alt-epsilon", f"{opts.epsilon:g}"]
    if inp.dataset == "alt_test_calderon2025" and not inp.metric:
        run = run_alt_test(
            inp.dataset, inp.subset, data_dir=inp.data_dir, epsilon=opts.epsilon, llms=[judge]
        )
        cmd = ["decide", "alt-test", *_src_args(inp), "--llm", judge, *eps, "--format", "json"]
        return _ok(cmd, run.payload)
    if (ds.card.annotators or 1) < 2:
        return _absent(
            f"the Alt-Test compares the judge with each annotator against the others: it needs "
            f"two or more annotators per item ({ds.card.name} has "
            f"{ds.card.annotators or 1} label per item)"
        )
    if not inp.metric:
        return _absent(
            "the Alt-Test of a score column runs on an annotation folder (decide alt-test "
            "--input DIR); on a labelled dataset it runs a judge metric (--metric)"
        )
    judge_kw = {"metric": inp.metric, "backbone": inp.backbone, "dimension": inp.dimension}
    run = run_alt_test(
        inp.dataset, None, inp.input_file, inp.data_dir, epsilon=opts.epsilon, judge=judge_kw
    )
    cmd = ["decide", "alt-test", *_src_args(inp), "--metric", inp.metric, *eps]
    cmd += (["--backbone", inp.backbone] if inp.backbone else []) + ["--format", "json"]
    return _ok(cmd, run.payload)


def selective_part(inp: CardInput, opts: CardOptions, ds: Any, specs: list[str]) -> dict[str, Any]:
    """``calibrate selective`` of the judge alone (Trust or Escalate)."""
    from metajudge.runs.calibrate import run_selective

    if ds.card.label_kind not in ("pairwise", "categorical", "binary"):
        return _absent(
            "selective judging keeps the verdicts whose class probability clears a threshold: "
            "it needs a pairwise or categorical verdict with class probabilities; these are ratings"
        )
    judge = _judge_spec(inp)[0]
    run = run_selective(
        inp.dataset,
        inp.input_file,
        [judge],
        scores=specs,
        dimension=inp.dimension,
        alpha=opts.risk,
        seed=opts.seed,
        thresholds="grid",
        data_dir=inp.data_dir,
    )
    cmd = ["calibrate", "selective", *_src_args(inp), *_spec_args(specs), "--judge", judge]
    cmd += ["--risk", f"{opts.risk:g}", "--seed", str(opts.seed), "--format", "json"]
    return _ok(cmd, _as_dict(run.result))


def _ratings(ds: Any) -> bool:
    """Rated responses (Likert or numeric labels), not verdicts."""
    return ds.card.label_kind not in ("pairwise", "categorical", "binary")


def _spec_args(specs: Sequence[str]) -> list[str]:
    return [a for s in specs for a in ("--scores", s)]


def _calibration_input(inp: CardInput, specs: list[str]) -> Any:
    from metajudge.runs.calibrate import CalibrationInput

    return CalibrationInput(
        input_file=inp.input_file,
        dataset=inp.dataset,
        scores=specs,
        dimension=inp.dimension,
        data_dir=inp.data_dir,
    )


def _dim_args(inp: CardInput) -> list[str]:
    return ["--dimension", inp.dimension] if inp.dimension else []


def conformal_part(inp: CardInput, opts: CardOptions, specs: list[str]) -> dict[str, Any]:
    """``calibrate conformal``: every method that applies, at the card's miscoverage."""
    from metajudge.runs.calibrate import ConformalOptions, run_conformal

    if inp.subset:
        return _absent("calibrate conformal reads a whole dataset (no --subset)")
    o = ConformalOptions(
        alpha=opts.miscoverage,
        bins=3,
        min_bin=30,
        fit_fraction=0.5,
        seed=opts.seed,
        repeats=opts.repeats,
    )
    run = run_conformal(_calibration_input(inp, specs), o)
    cmd = ["calibrate", "conformal", *_src_args(inp), *_spec_args(specs), *_dim_args(inp)]
    cmd += ["--miscoverage", f"{opts.miscoverage:g}", "--seed", str(opts.seed)]
    cmd += ["--repeats", str(opts.repeats), "--format", "json"]
    return _ok(cmd, _as_dict(run.result))


def calibration_part(
    inp: CardInput, opts: CardOptions, specs: list[str], ds: Any
) -> tuple[dict[str, Any], Any]:
    """``calibrate fit`` (isotonic) of a rating judge: held-out errors, reliability, ECE; the
    part and the fit result (for the reliability diagram)."""
    from metajudge.runs.calibrate import run_fit

    if inp.subset:
        return _absent("calibrate fit reads a whole dataset (no --subset)"), None
    if not _ratings(ds):
        return _absent(
            "calibrate fit maps a rating onto the human scale; a verdict's calibration is its "
            "selective and conformal parts"
        ), None
    run = run_fit(_calibration_input(inp, specs), "isotonic", seed=opts.seed, repeats=opts.repeats)
    cmd = ["calibrate", "fit", *_src_args(inp), *_spec_args(specs), *_dim_args(inp)]
    cmd += ["--seed", str(opts.seed), "--repeats", str(opts.repeats), "--format", "json"]
    d = _as_dict(run.result)
    d.get("calibrator", {}).get("data", {}).pop("judge_scores", None)  # the rows, not a result
    return _ok(cmd, d), run.result


def estimate_part(inp: CardInput, opts: CardOptions, specs: list[str], ds: Any) -> dict[str, Any]:
    """``calibrate estimate``: each system's calibrated mean beside the judge's raw mean."""
    from metajudge.runs.calibrate_estimate import EstimateInput, run_estimate

    systems = {getattr(r, "system", None) for r in ds.records} - {None}
    if not _ratings(ds) or len(systems) < 2:
        return _absent(
            "calibrated system estimates need rated responses of two or more systems "
            f"({ds.card.name}: {ds.card.label_kind} labels, {len(systems)} system(s))"
        )
    if inp.subset:
        return _absent("calibrate estimate reads a whole dataset (no --subset)")
    src = EstimateInput(
        input_path=inp.input_file,
        dataset=inp.dataset,
        scores=specs,
        dimension=inp.dimension,
        data_dir=inp.data_dir,
    )
    run = run_estimate(src, seed=opts.seed)
    cmd = ["calibrate", "estimate", *_src_args(inp), *_spec_args(specs), *_dim_args(inp)]
    return _ok(cmd + ["--seed", str(opts.seed), "--format", "json"], _as_dict(run.result))


def biases_part(inp: CardInput, ds: Any) -> dict[str, Any]:
    """Position and length bias: ``judge diagnostics`` runs a pairwise judge in both orders."""
    if ds.card.label_kind != "pairwise":
        return _absent("position and length bias are measured on pairwise judges; this is not")
    how = "metajudge judge diagnostics --metric METRIC --backbones NAME"
    if not inp.metric:
        return _absent(
            "position bias needs the judge run in both orders (A/B and B/A); released verdicts "
            f"hold one order. Run the judge with `{how}`"
        )
    return _absent(f"the card makes no model calls beyond meta-eval's; run `{how}`")


def self_preference_part(inp: CardInput, opts: CardOptions, ds: Any) -> dict[str, Any]:
    """``judge self-preference`` (binary verdicts, with the judge's family named)."""
    from metajudge.runs.jury import run_self_preference

    if ds.card.label_kind != "binary":
        return _absent("self-preference is measured on binary accept/reject verdicts")
    if not inp.family:
        return _absent("no --family: name the systems of the judge's model family")
    judge, specs = _judge_spec(inp)
    res = run_self_preference(
        inp.dataset,
        input_file=inp.input_file,
        subset=inp.subset,
        scores=specs,
        judge=judge,
        family=list(inp.family),
        dimension=inp.dimension,
        data_dir=inp.data_dir,
        n_boot=opts.n_boot,
        seed=opts.seed,
    )
    cmd = ["judge", "self-preference", *_src_args(inp), *_spec_args(specs), "--judge", judge]
    cmd += ["--family", ",".join(inp.family), "--n-boot", str(opts.n_boot)]
    return _ok(cmd + ["--seed", str(opts.seed), "--format", "json"], res.to_dict())


def _signature(inp: CardInput, ds: Any, agreement: dict[str, Any]) -> dict[str, Any]:
    """What a reader cites: the data's hash, the judge definition's hash, the backbone and the
    metajudge version."""
    from metajudge import __version__
    from metajudge.io import sha256_file, sha256_text

    if inp.input_file:
        data_hash = sha256_file(inp.input_file)
    else:
        recs = [r.to_dict() for r in ds.records]
        data_hash = sha256_text(json.dumps(recs, sort_keys=True, ensure_ascii=False, default=str))
    judge = _judge_spec(inp)[0]
    sigs = sorted(
        {
            s
            for m in (agreement.get("result") or {}).get("metrics", [])
            for v in (m.get("signatures") or {}).values()
            for s in v
        }
    )
    definition = None
    if inp.metric and inp.metric.startswith("judge:"):
        from metajudge.metrics.judges.defined import load_definition

        definition = load_definition(inp.metric.split(":", 1)[1].split("@")[0]).digest
    text = json.dumps({"judge": judge, "signatures": sigs, "definition": definition})
    return {
        "data": {"source": inp.dataset or str(inp.input_file), "subset": inp.subset},
        "data_sha256": data_hash,
        "judge": judge,
        "judge_signatures": sigs,
        "judge_definition_sha256": sha256_text(text),
        "definition_digest": definition,
        "backbone": inp.backbone if inp.metric else None,
        "metajudge_version": __version__,
    }


def _parts(inp: CardInput, opts: CardOptions, stage: Path) -> tuple[dict[str, Any], Any, Any]:
    """Every part of the card (absent ones with their reason), the dataset and the fit result."""
    agreement, _, ds = agreement_part(inp, opts, stage / "meta_eval")
    specs = _scores_for(inp, stage / "meta_eval")
    parts: dict[str, Any] = {"agreement": agreement}
    parts["alt_test"] = _attempt("decide alt-test", lambda: alt_test_part(inp, opts, ds))
    parts["selective"] = _attempt(
        "calibrate selective", lambda: selective_part(inp, opts, ds, specs)
    )
    parts["conformal"] = _attempt("calibrate conformal", lambda: conformal_part(inp, opts, specs))
    fit: list[Any] = [None]

    def calibration() -> dict[str, Any]:
        part, fit[0] = calibration_part(inp, opts, specs, ds)
        return part

    parts["calibration"] = _attempt("calibrate fit", calibration)
    parts["estimate"] = _attempt("calibrate estimate", lambda: estimate_part(inp, opts, specs, ds))
    parts["biases"] = biases_part(inp, ds)
    parts["self_preference"] = _attempt(
        "judge self-preference", lambda: self_preference_part(inp, opts, ds)
    )
    return parts, ds, fit[0]


def _labels(ds: Any, dimension: str | None) -> dict[str, Any]:
    """How many records carry a human label (complete or partial labels)."""
    from metajudge.data.partial import labelled_only

    kept, left = labelled_only(ds, what="judge card")
    return {"records": len(ds.records), "labelled": len(kept.records), "partial": bool(left)}


def run_card(inp: CardInput, opts: CardOptions, out: str | Path) -> CardRun:
    """The card of one judge into the run folder ``out``: card.json, card.html, the meta-eval
    run folder under ``meta_eval/`` and the reliability diagram where calibrate fit ran."""
    from metajudge.io import check_out_dir
    from metajudge.reports.judge_card import card_html, card_markdown, verdict
    from metajudge.results import finite
    from metajudge.run_folder import run_folder

    check_out_dir(out, inputs=[inp.input_file])
    with run_folder(out) as rf:
        parts, ds, fit = _parts(inp, opts, rf.stage)
        for p in parts.values():  # a part's command names the folder where it will lie
            if "command" in p:
                p["command"] = p["command"].replace(str(rf.stage), str(rf.out))
        card = {
            "schema": CARD_SCHEMA,
            "judge": _judge_spec(inp)[0],
            "dataset": ds.card.name,
            "label_kind": ds.card.label_kind,
            "dimension": inp.dimension,
            "labels": _labels(ds, inp.dimension),
            "settings": {
                "alt_epsilon": opts.epsilon,
                "risk": opts.risk,
                "miscoverage": opts.miscoverage,
                "seed": opts.seed,
                "n_boot": opts.n_boot,
                "repeats": opts.repeats,
            },
            "signature": _signature(inp, ds, parts["agreement"]),
            "parts": parts,
        }
        card["verdict"] = verdict(card)
        card = finite(card)
        rf.write_text(CARD_FILE, json.dumps(card, indent=1, ensure_ascii=False) + "\n")
        rf.write_text(CARD_HTML, card_html(card, rf.stage, ds, fit))
    written = [rf.final(rf.stage / n) for n in (CARD_FILE, CARD_HTML)]
    return CardRun(card, card_markdown(card), written)


CARDS_FILE = "cards.json"
CARDS_HTML = "cards.html"


def folder_name(judge: str) -> str:
    """A judge's card folder under a comparison: its name with path characters replaced."""
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "_", judge).strip("._") or "judge"


def comparison_tests(
    inp: CardInput, judges: Sequence[str], opts: CardOptions, out_dir: Path
) -> dict[str, Any]:
    """The judges' paired tests (``meta-eval`` of all their columns at once: bootstrap,
    permutation and Williams tests, Holm-adjusted), or absent with the reason."""
    specs = [_one_column(s, j) for j in judges for s in (list(inp.scores) or ["shipped"])]
    res = _meta_eval(inp, opts, out_dir, specs, baselines=False)
    data = res.to_dict() if hasattr(res, "to_dict") else res.data
    comps = data.get("comparisons")
    if not comps:
        why = "categorical labels: meta-eval runs no paired test between judges"
        return _absent(why if data.get("kind") == "categorical" else "no paired test ran")
    cmd = ["meta-eval", *_src_args(inp), *_spec_args(specs), "--no-baselines"]
    cmd += ["--n-boot", str(opts.n_boot), "--seed", str(opts.seed), "--out", "DIR"]
    return _ok(cmd, {"comparisons": json.loads(json.dumps(comps, default=str))})


def run_cards(inp: CardInput, judges: Sequence[str], opts: CardOptions, out: str | Path) -> CardRun:
    """Several judges on one dataset: each judge's card under ``out/<judge>/``, their paired
    tests, and the comparison page ``cards.html`` (``cards.json`` beside it)."""
    import dataclasses

    from metajudge.io import check_out_dir
    from metajudge.reports.judge_card import cards_html
    from metajudge.results import finite
    from metajudge.run_folder import run_folder

    check_out_dir(out, inputs=[inp.input_file])
    with run_folder(out) as rf:
        cards, links = [], []
        for j in judges:
            run = run_card(dataclasses.replace(inp, judge=j), opts, rf.stage / folder_name(j))
            cards.append(run.card)
            links.append(f"{folder_name(j)}/{CARD_HTML}")
        tests = _attempt(
            "meta-eval", lambda: comparison_tests(inp, judges, opts, rf.stage / "tests")
        )
        doc = finite({"schema": "metajudge.judge_cards/1", "cards": links, "tests": tests})
        rf.write_text(CARDS_FILE, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        rf.write_text(CARDS_HTML, cards_html(cards, links, tests))
    from metajudge.reports.judge_card import board_markdown

    written = [rf.final(rf.stage / n) for n in (*links, CARDS_FILE, CARDS_HTML)]
    return CardRun(doc, board_markdown(cards, tests), written)


def cards_page(folder: str | Path) -> Path:
    """The page of the cards in ``folder``'s subfolders (each a ``judge card`` run folder),
    side by side: ``folder/cards.html`` (what ``make demo`` prints last). No paired test: the
    cards may be on different datasets."""
    from metajudge.io import read_json
    from metajudge.reports.judge_card import cards_html
    from metajudge.run_folder import write_file

    root = Path(folder)
    found = sorted(p for p in root.glob(f"*/{CARD_FILE}") if p.is_file())
    if not found:
        raise InputError(f"no judge card ({CARD_FILE}) in a subfolder", path=root)
    cards = [read_json(p) for p in found]
    links = [f"{p.parent.name}/{CARD_HTML}" for p in found]
    tests = _absent("cards of different datasets or settings: no paired test between them")
    return write_file(root, CARDS_HTML, cards_html(cards, links, tests))
