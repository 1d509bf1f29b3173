"""The command-line options that several commands share, defined once (issue 10's CLI vocabulary,
issue 18's validators from :mod:`metajudge.cli.types`): ``--dataset NAME | --input FILE``,
``--format`` (``--json`` hidden), ``--quiet`` (``--no-progress`` hidden), ``--n-boot``, ``--seed``,
``--epsilon`` (``--eps`` hidden), ``--out DIR``, ``--data-dir``, ``--scores SPEC`` (``--external``
hidden) and comma-separated lists.

Only argparse is imported here.

>>> p = argparse.ArgumentParser(exit_on_error=False)
>>> add_n_boot(p); add_seed(p); add_epsilon(p)
>>> a = p.parse_args(["--n-boot", "200", "--eps", "0.1"])
>>> (a.n_boot, a.seed, a.epsilon)
(200, 0, 0.1)
>>> csv_list(" a, b,,c ")
['a', 'b', 'c']
"""

from __future__ import annotations

import argparse
from typing import Any

from metajudge.cli.types import (
    bounded_int,
    nonneg_float,
    nonneg_int,
    positive_int,
    score_spec,
    seed,
)

#: Most bootstrap resamples a command accepts (the memory needed is checked as well, see
#: :func:`metajudge.limits.check_allocation`).
MAX_N_BOOT = 10_000_000

#: ``--backbone``'s help: the command line's default is :func:`metajudge.cli.backends.cli_backbone`'s.
BACKBONE_HELP = "judge backbone (default: $METAJUDGE_BACKBONE or smollm2-135m)"


def notice(fmt: str | None, text: str) -> None:
    """A line about what was written (``wrote PATH``): on standard output, or on standard error
    when standard output carries ``--format json``, which stays one JSON document (for ``| jq``)."""
    import sys

    print(text, file=sys.stderr if fmt == "json" else sys.stdout)


def csv_list(text: str) -> list[str]:
    """A comma-separated list (``--backbones a,b``), blanks dropped."""
    return [x.strip() for x in text.split(",") if x.strip()]


def add_dataset_args(p: argparse.ArgumentParser) -> None:
    """``--dataset NAME | --input FILE`` (one of them required)."""
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--dataset", metavar="NAME", help="registry dataset name (see `metajudge data list`)"
    )
    g.add_argument("--input", metavar="FILE", help="a canonical JSONL dataset file")


def add_format(
    p: argparse.ArgumentParser, choices: tuple[str, ...] = ("md", "json"), default: str = "md"
) -> None:
    """``--format`` of what is printed (``--json`` a hidden alias)."""
    p.add_argument(
        "--format", choices=choices, default=default, help=f"what to print (default {default})"
    )
    p.add_argument(
        "--json", dest="format", action="store_const", const="json", help=argparse.SUPPRESS
    )


def add_quiet(p: argparse.ArgumentParser) -> None:
    """``--quiet`` (``--no-progress`` a hidden alias)."""
    p.add_argument("--quiet", action="store_true", help="print only the paths written")
    p.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)


def add_n_boot(p: argparse.ArgumentParser, default: int | None = 1000, what: str = "") -> None:
    """``--n-boot``: bootstrap resamples, an integer in [1, :data:`MAX_N_BOOT`] (the one spelling
    of a bootstrap count; ``default=None``: the command resolves it, 1000 when not given)."""
    p.add_argument(
        "--n-boot",
        type=bounded_int(1, MAX_N_BOOT),
        default=default,
        metavar="N",
        help=f"bootstrap resamples{what} (1 to {MAX_N_BOOT:,}; default {default or 1000})",
    )


def add_n_perm(p: argparse.ArgumentParser, default: int | None = 1000, what: str = "") -> None:
    """``--n-perm``: permutations of a permutation test (the one spelling of a permutation count;
    ``default=None``: the command resolves it, 1000 when not given)."""
    p.add_argument(
        "--n-perm",
        type=bounded_int(1, MAX_N_BOOT),
        default=default,
        metavar="N",
        help=f"permutations{what} (1 to {MAX_N_BOOT:,}; default {default or 1000})",
    )


def add_backbone(p: argparse.ArgumentParser, what: str = "") -> None:
    """``--backbone NAME``: one judge backbone (a config name, config file or GGUF path); unset,
    the command uses :func:`metajudge.cli.backends.cli_backbone`'s default."""
    p.add_argument("--backbone", metavar="NAME", help=what + BACKBONE_HELP)


def add_prompt_variant(p: argparse.ArgumentParser) -> None:
    """``--prompt-variant paper|small`` of the LLM judges."""
    p.add_argument(
        "--prompt-variant",
        choices=("paper", "small"),
        default=None,
        help="judge prompt variant (default: small for embedded or base models, else paper)",
    )


def add_seed(p: argparse.ArgumentParser, what: str = "the bootstrap") -> None:
    """``--seed``: an integer in [0, 2**63-1]."""
    p.add_argument("--seed", type=seed, default=0, metavar="N", help=f"seed of {what} (default 0)")


def add_epsilon(p: argparse.ArgumentParser, what: str = "sign decisions") -> None:
    """``--epsilon`` (``--eps`` a hidden alias): the tie band, a finite number >= 0."""
    p.add_argument(
        "--epsilon", type=nonneg_float, default=0.0, help=f"tie band of {what} (default 0)"
    )
    p.add_argument("--eps", dest="epsilon", type=nonneg_float, help=argparse.SUPPRESS)


def add_out(p: argparse.ArgumentParser, what: str, *, required: bool = False) -> None:
    """``--out DIR``: the run folder (checked and created by :func:`metajudge.io.prepare_out_dir`
    before any work)."""
    p.add_argument("--out", metavar="DIR", required=required, help=what)


def add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir", metavar="DIR", help="local data folder (default: $METAJUDGE_DATA_DIR)"
    )


def add_browser_cap(p: argparse.ArgumentParser) -> None:
    """``--browser-cap N``: the units (pairs / responses) one view of report.html's
    disagreement browser shows at most (:data:`metajudge.reports.html_items.BROWSER_CAP`)."""
    p.add_argument(
        "--browser-cap",
        type=nonneg_int,
        metavar="N",
        help="report.html's disagreement browser shows at most N pairs / responses per metric, "
        "the largest metric-human gaps first (ties in dataset order), and says so beside the "
        "view; the tables use every unit (default 5000: every shipped dataset fits; 0: all)",
    )


def add_report_display(p: argparse.ArgumentParser, *, recorded: bool = False) -> None:
    """``--published FILE`` (the paper's numbers beside ours) and ``--percent`` (every table
    ×100; :mod:`metajudge.reports.scale`) of ``meta-eval``; with ``recorded`` (``report``),
    ``--percent/--no-percent`` overrides what the run folder recorded."""
    p.add_argument(
        "--published",
        metavar="FILE",
        help="CSV or JSONL of published numbers (columns metric, dimension, statistic, value, "
        "source; optional scale 1 or 100) shown beside ours in every table and report.html",
    )
    if recorded:
        p.add_argument(
            "--percent",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="print every table x100 (--no-percent: on 0-1; default: as the run recorded)",
        )
        return
    p.add_argument(
        "--percent",
        action="store_true",
        help="print every table x100 with two decimals (default: correlations on [-1, 1] with "
        "four decimals, as the literature writes them); terminal, files, plots and report.html",
    )


SCORES_HELP = (
    "where scores come from, repeatable: a score file PATH (JSONL score rows; CSV/JSON with "
    "item,system[,side],<metric>...; RAGChecker baseline_*.json; LFTQA-Eval metric_scores/*.json; "
    "HANNA metric CSV; a name that is not a path is looked up among the dataset's upstream "
    "files), PATH:COL[,COL] (only these columns), LABEL=PATH[:COL] (one column under a name), "
    "'shipped' (every column the dataset ships) or shipped:COL[,COL]"
)


class _DeprecatedExternal(argparse.Action):
    """The old ``--external``: mapped onto ``--scores`` specs, with one deprecation line on stderr.

    ``nargs=0`` (``meta-eval``, ``kendall``, ``rank-clusters``): ``--scores shipped``; with a
    value (``backbone-swap``, ``decide``): a comma-separated ``LABEL=PATH[:COL]``/``NAME`` list
    (:func:`metajudge.scores.spec.from_external_list`)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        import sys

        from metajudge.errors import InputError
        from metajudge.scores.spec import SHIPPED, from_external_list

        try:
            specs = [SHIPPED] if self.nargs == 0 else from_external_list(csv_list(values))
        except InputError as e:
            parser.error(f"argument --external: {e.message}")
        new = " ".join(f"--scores {s.text}" for s in specs)
        print(f"metajudge: --external is deprecated; use {new}", file=sys.stderr)
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), *specs])


def add_scores(
    p: argparse.ArgumentParser,
    *,
    external_list: bool = False,
    help: str = SCORES_HELP,
    strict_ids: bool = True,
) -> None:
    """``--scores SPEC`` (repeatable, :mod:`metajudge.scores.spec`) into ``args.scores``, and the
    hidden old ``--external`` mapped onto it (a flag, or with ``external_list`` a list).
    ``strict_ids``: add ``--strict-ids`` (the command drops and counts rows for unknown ids
    through :func:`id_policy` unless it is given); without it the command refuses them always."""
    p.add_argument(
        "--scores", action="append", type=score_spec, default=[], metavar="SPEC", help=help
    )
    p.add_argument(
        "--external",
        dest="scores",
        action=_DeprecatedExternal,
        nargs=None if external_list else 0,
        metavar="SPECS",
        help=argparse.SUPPRESS,
    )
    if not strict_ids:
        return
    p.add_argument(
        "--strict-ids",
        action="store_true",
        help="refuse a score file's rows for items or systems the dataset does not contain "
        "(exit 2 naming file, line and field); by default they are dropped, counted and named "
        "in one warning",
    )


def id_policy(args: argparse.Namespace) -> Any:
    """The :class:`~metajudge.scores.alignment.IdPolicy` of a command with :func:`add_scores`
    (``--strict-ids``)."""
    from metajudge.scores.alignment import IdPolicy

    return IdPolicy(strict=bool(getattr(args, "strict_ids", False)))


def warn_dropped(ids: Any) -> None:
    """The one stderr warning of the score rows ``ids`` dropped (nothing when none was)."""
    import sys

    line = ids.warning()
    if line:
        print(f"metajudge: warning: {line}", file=sys.stderr)


def add_judge_scores(p: argparse.ArgumentParser) -> None:
    """Where the scores of one judge metric under several backbones come from (``backbone-swap``,
    ``decide swap|drift|ppi``): ``--dataset | --input``, ``--metric``, ``--scores`` (each column
    one backbone; ``--external`` hidden), ``--backbones``, ``--subset``, ``--limit``."""
    add_dataset_args(p)
    p.add_argument("--metric", required=True, help="judge metric, e.g. geval_faithfulness")
    add_scores(
        p,
        external_list=True,
        strict_ids=False,  # backbone-swap / decide refuse unknown ids, as before
        help="a judge's score column per backbone, repeatable: LABEL=PATH[:COL], PATH:COL, or "
        "shipped:BACKBONE[,BACKBONE] for the judge columns the dataset's card declares "
        "(lftqa_eval: gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo)",
    )
    p.add_argument(
        "--backbones",
        type=csv_list,
        default=[],
        metavar="NAMES",
        help="run the judge under these backbone configs, e.g. smollm2-135m,gemma3-270m",
    )
    p.add_argument("--subset", help="only this subset of the dataset (e.g. qtsumm)")
    add_limit(p)


#: ``--limit``'s help: the one subset rule (:func:`metajudge.data.subsample.select`).
LIMIT_HELP = (
    "a seeded random subset of N {unit}, drawn with --seed (the same N and seed give the same "
    "items in every command){default}"
)


def add_limit(
    p: argparse.ArgumentParser,
    unit: str = "inputs (each with all its responses) or pairs",
    *,
    default: int | None = None,
    first: bool = True,
) -> None:
    """``--limit N``: the seeded random draw of :func:`metajudge.data.subsample.select` (with the
    command's ``--seed``), and ``--first N`` (``first``): the first N in dataset order, the old
    meaning of ``--limit``; the two exclude each other."""
    g = p.add_mutually_exclusive_group() if first else p
    shown = f"; default {default}" if default is not None else "; default all"
    g.add_argument(
        "--limit",
        type=positive_int,
        default=default,
        metavar="N",
        help=LIMIT_HELP.format(unit=unit, default=shown),
    )
    if first:
        g.add_argument(
            "--first",
            type=positive_int,
            metavar="N",
            help=f"the first N {unit} in dataset order instead of a draw",
        )


#: What ``--source-field`` names (the judges' message for a record without a source points here).
SOURCE_FIELD_HELP = (
    "the dotted record field holding the source document that reference-free judges (G-Eval's "
    "SummEval dimensions, G-Eval faithfulness) read instead of input.context, e.g. "
    "input.documents, input.reference, meta.article"
)


def add_source_field(p: argparse.ArgumentParser) -> None:
    """``--source-field FIELD`` (:func:`metajudge.scores.scoring.score_dataset`'s ``source_field``)."""
    p.add_argument("--source-field", metavar="FIELD", help=SOURCE_FIELD_HELP)


def limit_kw(args: argparse.Namespace) -> dict[str, int | None]:
    """``limit`` and ``first`` of :func:`add_limit` for the library (``--first`` overrides a
    default ``--limit``)."""
    first = getattr(args, "first", None)
    return {"limit": None if first is not None else args.limit, "first": first}
