"""The command-line options that several commands share, defined once, each with its one meaning
(:data:`MEANINGS`; issue 10's CLI vocabulary, issue 18's validators from
:mod:`metajudge.cli.types`, issue 37's one meaning per word): ``--dataset NAME | --input FILE``,
``--format``, ``--quiet``, ``--paths-only``, ``--n-boot``, ``--seed``, ``--alpha``,
``--tie-band``, ``--level``, ``--cache-file``, ``--out DIR``, ``--data-dir``, ``--scores SPEC``
and comma-separated lists. No option has a hidden old spelling (release 0.3.0 removed them).

Only argparse is imported here.

>>> p = argparse.ArgumentParser(exit_on_error=False)
>>> add_n_boot(p); add_seed(p); add_tie_band(p)
>>> a = p.parse_args(["--n-boot", "200", "--tie-band", "0.1"])
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

#: The one meaning of each option name several commands share (``docs/cli.md`` states them; the
#: grammar test holds every command to them: each is defined by one function of this module,
#: which marks its action with ``meaning``).
MEANINGS: dict[str, str] = {
    "--quiet": "no progress bar (and nothing else)",
    "--paths-only": "print only the paths written (no table; implies --quiet)",
    "--tie-band": "differences with |d| <= E count as ties",
    "--alt-epsilon": "the Alt-Test's cost-benefit margin epsilon",
    "--alpha": "a significance-test level",
    "--miscoverage": "conformal miscoverage (1 - target coverage)",
    "--risk": "tolerated disagreement of selective judging (Trust or Escalate's alpha)",
    "--cache-file": "the LLM response cache file (SQLite)",
    "--level": "the correlation level: global, item, system-grouped or system",
    "--n-boot": "bootstrap resamples",
    "--n-perm": "permutations of a permutation test",
    "--seed": "the seed of the command's random draws",
    "--engine": "the resampling engine: fast, or the plain reference loop (the same values)",
    "--repeats": "seeded calibration/test splits",
    "--id-field": "the field of a judge framework's score file that carries the item id",
    "--system": "the dataset system a judge framework's score file scored",
    "--epochs": "a judge framework's epochs or repeats: averaged or kept",
}


def _mark(action: argparse.Action, name: str) -> argparse.Action:
    """Mark ``action`` as the shared option ``name`` of :data:`MEANINGS`."""
    action.meaning = name  # type: ignore[attr-defined]
    return action


#: Most bootstrap resamples a command accepts (the memory needed is checked as well, see
#: :func:`metajudge.limits.check_allocation`).
MAX_N_BOOT = 10_000_000

#: Most seeded splits ``--repeats`` accepts (each split is a whole fit and evaluation; the memory
#: the splits need is checked as well, :func:`metajudge.limits.check_allocation`).
MAX_REPEATS = 100_000

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
    """``--format`` of what is printed."""
    _mark(
        p.add_argument(
            "--format", choices=choices, default=default, help=f"what to print (default {default})"
        ),
        "--format",
    )


def add_quiet(p: Any) -> None:
    """``--quiet``: no progress bar, and nothing else."""
    _mark(p.add_argument("--quiet", action="store_true", help="no progress bar"), "--quiet")


def add_paths_only(p: argparse.ArgumentParser) -> None:
    """``--paths-only``: print only the paths written (no table; implies ``--quiet``)."""
    _mark(
        p.add_argument(
            "--paths-only",
            action="store_true",
            help="print only the paths written (no table; implies --quiet)",
        ),
        "--paths-only",
    )


def add_alpha(
    p: argparse.ArgumentParser, what: str = "the test", default: float | None = 0.05
) -> argparse.Action:
    """``--alpha A``: a significance-test level (its one meaning; a conformal miscoverage is
    ``--miscoverage``, a tolerated disagreement ``--risk``). ``default=None``: the command
    resolves it, 0.05 when not given."""
    from metajudge.cli.types import probability

    return _mark(
        p.add_argument(
            "--alpha",
            type=probability,
            default=default,
            metavar="A",
            help=f"significance level of {what} (default {default or 0.05:g})",
        ),
        "--alpha",
    )


def _open_unit(text: str) -> float:
    """A number strictly between 0 and 1 (a miscoverage, a tolerated disagreement)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def add_miscoverage(
    p: argparse.ArgumentParser, default: float = 0.1, *, dest: str = "alpha"
) -> None:
    """``--miscoverage A``: conformal miscoverage, 1 - target coverage (``dest`` another name: in
    a command that also takes ``--risk``)."""
    _mark(
        p.add_argument(
            "--miscoverage",
            dest=dest,
            type=_open_unit,
            default=default,
            metavar="A",
            help=f"conformal miscoverage in (0, 1): 1 - the target coverage (default {default:g})",
        ),
        "--miscoverage",
    )


def add_risk(p: argparse.ArgumentParser, default: float = 0.15, *, dest: str = "alpha") -> None:
    """``--risk A``: the disagreement with the humans selective judging tolerates (Trust or
    Escalate's alpha; ``dest`` another name: in a command that also takes ``--miscoverage``)."""
    _mark(
        p.add_argument(
            "--risk",
            dest=dest,
            type=_open_unit,
            default=default,
            metavar="A",
            help="tolerated disagreement with the humans on the judged items, Trust or "
            f"Escalate's alpha (default {default:g})",
        ),
        "--risk",
    )


def add_alt_epsilon(p: argparse.ArgumentParser, help: str, **kw: Any) -> None:
    """``--alt-epsilon E``: the Alt-Test's cost-benefit margin epsilon; ``kw``: the command's
    ``action``/``default``."""
    _mark(
        p.add_argument(
            "--alt-epsilon", dest="epsilon", type=nonneg_float, metavar="E", help=help, **kw
        ),
        "--alt-epsilon",
    )


def add_margin(p: argparse.ArgumentParser, what: str) -> None:
    """``--margin δ``: the non-inferiority margin on the agreement statistic (``judge swap``,
    ``judge verdicts --choose``); unset, the command uses 0.05."""
    p.add_argument(
        "--margin",
        type=nonneg_float,
        metavar="D",
        help=f"non-inferiority margin δ on the agreement statistic{what} (default 0.05: five "
        "points of correlation/accuracy, the smallest backbone gap the published comparisons "
        "call meaningful)",
    )


#: ``--level``'s choices (:mod:`metajudge.analyses.metric_vs_human.levels`).
LEVELS = ("global", "item", "system-grouped", "system")
LEVEL_HELP = (
    "correlate all rows at once (global), per input then averaged (item), per system then "
    "averaged (system-grouped), or the systems' mean scores (system)"
)


def _level(text: str) -> str:
    if text not in LEVELS:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(LEVELS)})"
        )
    return text


def add_level(p: argparse.ArgumentParser, default: str | None, note: str = "") -> None:
    """``--level``: one of :data:`LEVELS`."""
    shown = f"; default {default}" if default else ""
    _mark(
        p.add_argument(
            "--level",
            type=_level,
            default=default,
            metavar="{" + ",".join(LEVELS) + "}",
            help=LEVEL_HELP + note + shown,
        ),
        "--level",
    )


def add_cache_file(p: argparse.ArgumentParser, dest: str) -> None:
    """``--cache-file FILE``: the LLM response cache (SQLite), into ``args.<dest>``."""
    _mark(
        p.add_argument(
            "--cache-file",
            dest=dest,
            metavar="FILE",
            help="the LLM response cache file, SQLite (default: <user cache>/llm-cache.sqlite, "
            "the one live runs use)",
        ),
        "--cache-file",
    )


def add_n_boot(p: argparse.ArgumentParser, default: int | None = 1000, what: str = "") -> None:
    """``--n-boot``: bootstrap resamples, an integer in [1, :data:`MAX_N_BOOT`] (the one spelling
    of a bootstrap count; ``default=None``: the command resolves it, 1000 when not given)."""
    a = p.add_argument(
        "--n-boot",
        type=bounded_int(1, MAX_N_BOOT),
        default=default,
        metavar="N",
        help=f"bootstrap resamples{what} (1 to {MAX_N_BOOT:,}; default {default or 1000})",
    )
    _mark(a, "--n-boot")


def add_repeats(p: argparse.ArgumentParser, default: int, what: str = "") -> None:
    """``--repeats K``: seeded calibration/test splits, an integer in [1, :data:`MAX_REPEATS`]
    (bounded like ``--n-boot``: a huge count is refused before anything is allocated)."""
    a = p.add_argument(
        "--repeats",
        type=bounded_int(1, MAX_REPEATS),
        default=default,
        metavar="K",
        help=f"seeded{what} splits (1 to {MAX_REPEATS:,}; default {default})",
    )
    _mark(a, "--repeats")


def add_n_perm(p: argparse.ArgumentParser, default: int | None = 1000, what: str = "") -> None:
    """``--n-perm``: permutations of a permutation test (the one spelling of a permutation count;
    ``default=None``: the command resolves it, 1000 when not given)."""
    a = p.add_argument(
        "--n-perm",
        type=bounded_int(1, MAX_N_BOOT),
        default=default,
        metavar="N",
        help=f"permutations{what} (1 to {MAX_N_BOOT:,}; default {default or 1000})",
    )
    _mark(a, "--n-perm")


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
    a = p.add_argument(
        "--seed", type=seed, default=0, metavar="N", help=f"seed of {what} (default 0)"
    )
    _mark(a, "--seed")


#: the resampling engines (``metajudge.engine.ENGINES``; only argparse is imported here)
_ENGINE_CHOICES = ("fast", "reference")


def add_engine(p: argparse.ArgumentParser) -> None:
    """``--engine fast|reference``: which resampling engine computes the bootstrap's values
    (:func:`metajudge.engine.statistics`); ``reference`` is the slow, plain loop, for checking."""
    a = p.add_argument(
        "--engine",
        choices=_ENGINE_CHOICES,
        default="fast",
        help="resampling engine of every bootstrap value (cells, inter-human reference, "
        "comparisons, grouped means): fast (default) or reference, a plain loop over resamples "
        "with scipy that gives the same values (to 1e-12), slowly, for checking a result; the "
        "permutation tests and system-level values do not resample items and are unchanged",
    )
    _mark(a, "--engine")


def add_tie_band(
    p: argparse.ArgumentParser,
    what: str = "sign decisions",
    *,
    dest: str = "epsilon",
) -> None:
    """``--tie-band E``: differences with ``|d| <= E`` count as ties, a finite number >= 0."""
    _mark(
        p.add_argument(
            "--tie-band",
            dest=dest,
            type=nonneg_float,
            default=0.0,
            metavar="E",
            help=f"tie band of {what}: differences with |d| <= E count as ties (default 0)",
        ),
        "--tie-band",
    )


def add_out(p: argparse.ArgumentParser, what: str, *, required: bool = False) -> None:
    """``--out DIR``: the run folder (checked and created by :func:`metajudge.io.prepare_out_dir`
    before any work)."""
    p.add_argument("--out", metavar="DIR", required=required, help=what)


def add_baselines(p: argparse.ArgumentParser, what: str, default: str | None = None) -> None:
    """``--baselines DIR``: the stored baselines folder (``baselines/``: ``judges/``, the
    deterministic baselines' JSON files)."""
    p.add_argument("--baselines", metavar="DIR", default=default, help=what)


#: The options of ``metajudge`` itself, which every command reads from its namespace and takes
#: anywhere on the line (:func:`lift_root_options`): name -> whether it takes a value.
ROOT_OPTIONS = {"--data-dir": True, "--strict-ids": False, "--quiet": False, "--tracking-uri": True}


def add_root_options(p: argparse.ArgumentParser) -> None:
    """The :data:`ROOT_OPTIONS` on the root parser: ``--data-dir DIR`` (``args.data_dir``),
    ``--strict-ids`` (``args.strict_ids``, read by :func:`id_policy`), ``--quiet``
    (``args.quiet``), ``--tracking-uri URI`` (``args.tracking_uri``: handed to the reader of ``mlflow:EXPERIMENT``
    and to ``--log-to-mlflow``; the environment is never set)."""
    g = p.add_argument_group("options of every command (also taken after the command)")
    g.add_argument(
        "--data-dir",
        metavar="DIR",
        help="local data folder (default: $METAJUDGE_DATA_DIR)",
    )
    g.add_argument(
        "--strict-ids",
        action="store_true",
        help="refuse a score file's rows for items or systems the dataset does not contain "
        "(exit 2 naming file, line and field); by default they are dropped, counted and named "
        "in one warning (judge swap and decide drift refuse them always)",
    )
    add_quiet(g)
    g.add_argument(
        "--tracking-uri",
        metavar="URI",
        help="the MLflow tracking URI of --input mlflow:EXPERIMENT and --log-to-mlflow "
        "(a sqlite:/// store, a folder, a server; default: $MLFLOW_TRACKING_URI)",
    )


def add_log_to_mlflow(p: argparse.ArgumentParser, what: str) -> None:
    """``--log-to-mlflow``: with ``--input mlflow:EXPERIMENT``, ``what`` goes back into that
    experiment (:mod:`metajudge.runs.mlflow_log`)."""
    p.add_argument(
        "--log-to-mlflow",
        action="store_true",
        help=f"with --input mlflow:EXPERIMENT: {what} (needs pip install metajudge[mlflow])",
    )


def lift_root_options(argv: list[str]) -> list[str]:
    """``argv`` with every :data:`ROOT_OPTIONS` (``--data-dir DIR`` / ``--data-dir=DIR``,
    ``--strict-ids``, ``--quiet``) moved to the front, where the root parser reads them, so
    that they may follow the command (nothing after a ``--`` is touched). ``--data-dir``
    without its value is refused (:class:`argparse.ArgumentError`)."""
    lifted: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            rest += argv[i:]
            break
        name = tok.split("=", 1)[0]
        takes_value = ROOT_OPTIONS.get(name)
        if takes_value and tok == name:
            if i + 1 == len(argv) or argv[i + 1].startswith("-"):
                raise argparse.ArgumentError(None, f"argument {name}: expected one argument")
            lifted += argv[i : i + 2]
            i += 2
            continue
        (lifted if takes_value is not None else rest).append(tok)
        i += 1
    return lifted + rest


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


def add_scores(
    p: argparse.ArgumentParser,
    *,
    help: str = SCORES_HELP,
) -> None:
    """``--scores SPEC`` (repeatable, :mod:`metajudge.scores.spec`) into ``args.scores``; rows
    for unknown ids are dropped and counted through :func:`id_policy` unless ``metajudge
    --strict-ids`` (:data:`ROOT_OPTIONS`) is given."""
    p.add_argument(
        "--scores", action="append", type=score_spec, default=[], metavar="SPEC", help=help
    )


def add_score_reading(p: argparse.ArgumentParser) -> None:
    """How a judge framework's ``--scores`` file (inspect_ai, promptfoo, deepeval, ragas) is
    joined to the dataset: ``--id-field``, ``--system``, ``--epochs`` (:func:`score_reading`)."""
    g = p.add_argument_group("judge framework files (inspect_ai, promptfoo, deepeval, ragas)")
    _mark(_add_id_field(g), "--id-field")
    _mark(_add_system(g), "--system")
    _mark(_add_epochs(g), "--epochs")


def _add_id_field(g: Any) -> argparse.Action:
    return g.add_argument(
        "--id-field",
        metavar="FIELD",
        help="the field of a framework's score file that carries the item id, when it is not "
        "the obvious one (inspect_ai: a sample metadata key; promptfoo: a test variable; "
        "deepeval: a metadata key or name; ragas: a column)",
    )


def _add_system(g: Any) -> argparse.Action:
    return g.add_argument(
        "--system",
        metavar="NAME",
        help="the dataset system a framework's score file scored, instead of the one the file "
        "implies (inspect_ai: eval.model; promptfoo: the provider)",
    )


def _add_epochs(g: Any) -> argparse.Action:
    return g.add_argument(
        "--epochs",
        choices=("mean", "each"),
        default="mean",
        help="a framework's epochs or repeats: averaged per item (default) or kept, one column "
        "per epoch (SCORER@1, SCORER@2 …); the signature of each column says which",
    )


def score_reading(args: argparse.Namespace) -> Any:
    """The :class:`~metajudge.scores.readers.base.Reading` of :func:`add_score_reading`'s options."""
    from metajudge.scores.readers.base import Reading

    return Reading(
        id_field=getattr(args, "id_field", None),
        system=getattr(args, "system", None),
        epochs=getattr(args, "epochs", None) or "mean",
    )


def id_policy(args: argparse.Namespace) -> Any:
    """The :class:`~metajudge.scores.readers.alignment.IdPolicy` of a command with :func:`add_scores`
    (``metajudge --strict-ids``, a root option: every namespace has it)."""
    from metajudge.scores.readers.alignment import IdPolicy

    return IdPolicy(strict=bool(args.strict_ids))


def warn_dropped(ids: Any) -> None:
    """The one stderr warning of the score rows ``ids`` dropped (nothing when none was)."""
    import sys

    line = ids.warning()
    if line:
        print(f"metajudge: warning: {line}", file=sys.stderr)


def add_judge_scores(p: argparse.ArgumentParser) -> None:
    """Where the scores of one judge metric under several backbones come from (``backbone-swap``,
    ``judge swap``, ``decide drift``): ``--dataset | --input``, ``--metric``, ``--scores`` (each column
    one backbone), ``--backbones``, ``--subset``, ``--limit``."""
    add_dataset_args(p)
    p.add_argument(
        "--metric",
        required=True,
        help="judge metric, e.g. geval_faithfulness, or judge:PATH (a judge defined in a file)",
    )
    add_scores(
        p,
        help="a judge's score column per backbone, repeatable: LABEL=PATH[:COL], PATH:COL, or "
        "shipped:BACKBONE[,BACKBONE] for the judge columns the dataset's card declares "
        "(lftqa_eval: gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo)",
    )
    p.add_argument(
        "--backbones",
        type=csv_list,
        default=[],
        metavar="NAMES",
        help="run the judge under these backbone configs, e.g. smollm2-135m,gemma3-270m; a "
        "judge variant METRIC@BACKBONE runs another metric there (judge:new.yaml@smollm2-135m: "
        "two judge definitions compared on the same items)",
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
