"""``metajudge judge …``: the LLM-judge commands, all registered here (this module builds the group).

- ``judge mudabench --predictions FILE`` — final / process / full accuracy of a predictions file.
- ``judge equivalence-probe`` — the answer-equivalence judge on rule-generated probes.
- ``judge mtraig-perturb`` — MT-RAIG faithfulness on reference vs number-perturbed insights,
  ``per_claim`` vs ``batched`` verification (scores, agreement, cost).
- ``judge swap`` and ``judge diagnostics`` (:mod:`metajudge.cli.swap`), ``judge verdicts``
  (:mod:`metajudge.cli.verdicts`), ``judge run-bench`` (:mod:`metajudge.cli.judge_bench`),
  ``judge export-batch`` / ``import-batch`` (:mod:`metajudge.cli.judge_batch`): their modules
  hold the options and the work; :func:`register` adds them to the group.
"""

from __future__ import annotations

import argparse
from typing import Any

from metajudge.cli import judge_batch, judge_bench, judge_card, swap, verdicts
from metajudge.cli.options import (
    add_backbone,
    add_prompt_variant,
    add_seed,
)
from metajudge.cli.types import positive_int


def _output(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("-o", "--output", metavar="FILE", help=f"write {what} as JSON to this file")


def register(subparsers: Any) -> None:
    j = subparsers.add_parser(
        "judge",
        help="LLM judges: backbone swap, released verdicts, diagnostics, JUDGE-BENCH and "
        "MuDABench runs, experiments, batch files",
    )
    jsub = j.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")
    j.set_defaults(func=lambda args: (j.print_help(), 2)[1])
    swap.add_swap(jsub)
    verdicts.add_verdicts(jsub)
    swap.add_diagnostics(jsub)
    judge_bench.add_run_bench(jsub)
    _add_mudabench(jsub)
    _add_equivalence_probe(jsub)
    _add_mtraig_perturb(jsub)
    _add_jury(jsub)
    _add_self_preference(jsub)
    judge_batch.add_export_batch(jsub)
    judge_batch.add_import_batch(jsub)
    judge_card.add_card(jsub)


def _add_mudabench(jsub: Any) -> None:
    m = jsub.add_parser(
        "mudabench", help="judge a MuDABench predictions file: final, process and full accuracy"
    )
    m.add_argument(
        "--predictions",
        required=True,
        metavar="FILE",
        help="JSONL: {question_id (or index), answer, facts?} per line",
    )
    m.add_argument(
        "--subset", choices=("simple", "complex"), default="simple", help="MuDABench subset"
    )
    add_backbone(m)
    add_prompt_variant(m)
    m.add_argument("--no-fast-path", action="store_true", help="send every answer to the LLM judge")
    m.add_argument(
        "--no-process",
        action="store_true",
        help="final accuracy only (no gold-fact coverage judging)",
    )
    _output(m, "the full result (per-question verdicts)")
    m.set_defaults(func=_cmd_mudabench)


def _add_equivalence_probe(jsub: Any) -> None:
    p = jsub.add_parser(
        "equivalence-probe",
        help="answer-equivalence judge on probes made by rule from MuDABench gold answers",
    )
    p.add_argument(
        "--backbones",
        default=None,
        metavar="NAMES",
        help="comma-separated (default: $METAJUDGE_BACKBONE or smollm2-135m)",
    )
    p.add_argument(
        "--golds",
        type=positive_int,
        default=20,
        help="gold answers to derive probes from (default 20)",
    )
    add_seed(p, "the probes")
    add_prompt_variant(p)
    _output(p, "probes and results")
    p.set_defaults(func=_cmd_probe)


def _add_mtraig_perturb(jsub: Any) -> None:
    t = jsub.add_parser(
        "mtraig-perturb",
        help="MT-RAIG faithfulness: references vs number-perturbed copies, per_claim vs batched",
    )
    add_backbone(t)
    t.add_argument(
        "--items",
        type=positive_int,
        default=20,
        help="multi-table MT-RAIG items, drawn with --seed (default 20)",
    )
    add_seed(t, "the perturbations")
    t.add_argument(
        "--modes",
        default="per_claim,batched",
        help="comma-separated claim-verification modes, per_claim and/or batched (default both)",
    )
    add_prompt_variant(t)
    _output(t, "the result")
    t.set_defaults(func=_cmd_perturb)


def _wrote(path: str | None) -> None:
    if path:
        print(f"wrote {path}")


def _cmd_mudabench(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.runs.judge_experiments import run_mudabench

    res = run_mudabench(
        args.predictions,
        variant=args.subset,
        backbone=cli_backbone(args.backbone),
        prompt_variant=args.prompt_variant,
        fast_path=not args.no_fast_path,
        process=not args.no_process,
        data_dir=args.data_dir,
        output=args.output,
    )
    agg = res["aggregate"]
    print(
        f"MuDABench {res['variant']}  backbone={res['backbone']}  predictions={res['n_predictions']}  unjudged={res['unjudged']}"
    )
    for k in ("final_accuracy", "process_accuracy", "full_accuracy"):
        print(f"  {k:<17} {accuracy_text(agg, k)}")
    eq = res["equivalence"]
    print(
        f"  fast path decided {eq['fast_path_decided']} of {eq['fast_path_decided'] + eq['llm_judged']} answers ({eq['fast_path_share']:.1%}); "
        f"parse failures: equivalence {eq['parse_failures']}/{eq['parse_attempts']}, facts {res['fact_coverage']['parse_failures']}/{res['fact_coverage']['parse_attempts']}"
    )
    _wrote(args.output)
    return 0


def accuracy_text(agg: dict[str, Any], key: str) -> str:
    """A MuDABench accuracy over |Q| with its unparsed verdicts beside it.

    >>> accuracy_text({"n": 3, "final_accuracy": 2 / 3, "unparsed_final": 1, "unparsed_process": 0}, "final_accuracy")
    '0.6667  (over |Q| = 3; 1 unparsed verdict counted not correct)'
    """
    v = agg.get(key)
    if v is None:
        return "n/a"
    bad = {
        "final_accuracy": agg.get("unparsed_final", 0),
        "process_accuracy": agg.get("unparsed_process", 0),
        "full_accuracy": agg.get("unparsed_any", 0),
    }[key]
    return f"{v:.4f}  (over |Q| = {agg['n']}; {bad} unparsed verdict{'s' * (bad != 1)} counted not correct)"


def _fmt(v: Any) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _cmd_probe(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.runs.judge_experiments import run_equivalence_probe

    bbs = [b.strip() for b in cli_backbone(args.backbones).split(",") if b.strip()]
    res = run_equivalence_probe(
        bbs,
        golds=args.golds,
        seed=args.seed,
        data_dir=args.data_dir,
        prompt_variant=args.prompt_variant,
        output=args.output,
    )
    n = len(res["probes"])
    pos = sum(p["label"] for p in res["probes"])
    print(
        f"equivalence probe: {n} probes from {args.golds} MuDABench gold answers ({pos} must-accept, {n - pos} must-reject), seed {args.seed}"
    )
    print(
        "| backbone | judge | accuracy | false accept | false reject | unparseable | fast-path share |"
    )
    print("|---|---|---|---|---|---|---|")
    for bb, r in res["backbones"].items():
        for label, key in (("LLM only", "llm_only"), ("LLM + fast path", "with_fast_path")):
            x = r[key]
            share = _fmt(x.get("fast_path_share")) if key == "with_fast_path" else "0"
            print(
                f"| {bb} | {label} | {_fmt(x['accuracy'])} | {_fmt(x['false_accept_rate'])} | {_fmt(x['false_reject_rate'])} | {x['unparseable']}/{x['n']} | {share} |"
            )
    _wrote(args.output)
    return 0


def _cmd_perturb(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.runs.judge_experiments import run_mtraig_perturb

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    res = run_mtraig_perturb(
        backbone=cli_backbone(args.backbone),
        n_items=args.items,
        seed=args.seed,
        modes=modes,
        data_dir=args.data_dir,
        prompt_variant=args.prompt_variant,
        output=args.output,
    )
    print(
        f"MT-RAIG faithfulness, {res['n_items']} multi-table items, backbone {res['backbone']}: reference insight vs perturbed copy"
    )
    for mode, r in res["modes"].items():
        (mr, lr, hr), (mp, lp, hp), (md, ld, hd) = (
            r["reference_mean_ci"],
            r["perturbed_mean_ci"],
            r["difference_mean_ci"],
        )
        print(
            f"  {mode:<9} reference {mr:.3f} [{lr:.3f}, {hr:.3f}]  perturbed {mp:.3f} [{lp:.3f}, {hp:.3f}]  "
            f"diff {md:+.3f} [{ld:+.3f}, {hd:+.3f}]  pairs={r['scored_pairs']}  parse failures {r['parse_failures']}/{r['parse_attempts']}"
        )
        c = r["cost_per_insight"]
        print(
            f"            per insight: calls {c['calls']:.2f}  prompt sent {c['prompt_tokens']:.0f}  processed {c['processed_prompt_tokens']:.0f}  "
            f"completion {c['completion_tokens']:.1f}  wall {c['wall_s']:.2f}s"
        )
    if "agreement" in res:
        a = res["agreement"]
        print(
            f"  per_claim vs batched verdict agreement: {a['agree']}/{a['claims_compared']} claims = {_fmt(a['share'])}"
        )
        print(
            f"  ratios {res['agreement']['modes'][0]}/{res['agreement']['modes'][1]} (whole pipeline): {res['ratios']}"
        )
        print(f"  ratios (verification only): {res['verify_ratios']}")
    _wrote(args.output)
    return 0


def _add_label_columns(p: argparse.ArgumentParser, dataset_help: str) -> None:
    """Where a judge command's human labels and judge label columns come from (``jury``,
    ``self-preference``): ``--dataset | --input``, ``--subset``, ``--scores``, ``--dimension``."""
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--dataset", metavar="NAME", help=dataset_help)
    g.add_argument("--input", metavar="FILE", help="a canonical JSONL file")
    p.add_argument("--subset", help="only this subset of the dataset")
    p.add_argument(
        "--scores",
        action="append",
        help="label columns (the --scores grammar; default: shipped, the released judges)",
    )
    p.add_argument("--dimension", help="the human dimension (default: the first)")


def _add_jury(jsub: Any) -> None:
    from metajudge.cli import options as opt
    from metajudge.cli.types import probability

    p = jsub.add_parser(
        "jury",
        help="combine a dataset's judge columns: majority and weighted vote of labels (weights "
        "fitted on a seeded split; McNemar), or mean and weighted mean of numeric scores "
        "(Perm-Inp), vs the best single judge; error correlation, effective number of judges",
    )
    _add_label_columns(
        p,
        "a built-in dataset: categorical or binary labels (votes), or numeric ratings (mean scores)",
    )
    p.add_argument("--judges", help="comma-separated columns to combine (default: all)")
    p.add_argument(
        "--fit-fraction",
        type=probability,
        default=0.5,
        help="share of the inputs that fit the weights and pick the best judge (default 0.5)",
    )
    add_seed(p)
    opt.add_format(p)
    p.set_defaults(func=_cmd_jury)


def _cmd_jury(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json
    from metajudge.cli.source import data_source
    from metajudge.reports.jury_report import jury_markdown
    from metajudge.results import finite
    from metajudge.runs.jury import run_jury

    res = run_jury(
        data_source(args),
        [j.strip() for j in args.judges.split(",")] if args.judges else None,
        fit_fraction=args.fit_fraction,
        seed=args.seed,
    )
    j = finite(res.to_dict())
    if args.format == "json":
        print_json(j, indent=1)
    else:
        print(jury_markdown(j, res.sentence()))
    return 0


def _add_self_preference(jsub: Any) -> None:
    from metajudge.cli import options as opt

    p = jsub.add_parser(
        "self-preference",
        help="does a judge accept its own model family's answers more than the humans do, beyond "
        "its leniency with the other systems? (binary verdicts; CIs resample inputs)",
    )
    _add_label_columns(p, "a built-in binary dataset")
    p.add_argument("--judge", required=True, help="the judge column, e.g. GPT-4")
    p.add_argument(
        "--family",
        required=True,
        help="comma-separated systems of the judge's model family, e.g. gpt-4t",
    )
    p.add_argument("--positive", help="the accepting label (default: the card's last label)")
    opt.add_n_boot(p)
    add_seed(p)
    opt.add_format(p)
    p.set_defaults(func=_cmd_self_preference)


def _cmd_self_preference(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json, print_text
    from metajudge.cli.source import data_source
    from metajudge.results import finite
    from metajudge.runs.jury import run_self_preference

    res = run_self_preference(
        data_source(args),
        judge=args.judge,
        family=[f.strip() for f in args.family.split(",") if f.strip()],
        positive=args.positive,
        n_boot=args.n_boot,
        seed=args.seed,
    )
    if args.format == "json":
        print_json(finite(res.to_dict()), indent=1)
    else:
        print_text(res.sentence(), end="\n")
    return 0
