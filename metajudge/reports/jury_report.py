"""The Markdown of ``metajudge judge jury`` (:class:`metajudge.analyses.juries.JuryResult`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _f(v: Any, nd: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{-nd}g}" if nd < 0 else f"{v:.{nd}f}"


def jury_markdown(j: Mapping[str, Any], sentence: str) -> str:
    """The Markdown of a jury result (:func:`metajudge.analyses.juries.jury`): votes on labels
    or, for a score jury (``fit_pearson`` in ``j``), mean scores."""
    if "fit_pearson" in j:
        return _score_jury_markdown(j, sentence)
    lines = [
        f"# Juries of {len(j['judges'])} judges: {j['dataset']} / {j['dimension']}",
        "",
        sentence,
        "",
        (
            f"Split by input (seed {j['seed']}): {j['n_fit']} responses fit the weights and pick the "
            f"best single judge, {j['n_eval']} evaluate. Dropped: {j['dropped']}. Tie rule: "
            f"{j['tie_rule']}. Weighted vote: w = log((K-1) acc / (1 - acc)), acc on the fitting split."
        ),
        "",
        "| judge / jury | accuracy | Cohen κ | vs best | McNemar p | fit accuracy | weight |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in j["rows"]:
        name = r["name"]
        lines.append(
            f"| {name}{' (best)' if name == j['best_single'] else ''} | {_f(r['accuracy'])} "
            f"| {_f(r['cohen_kappa'])} | {_f(r.get('vs_best'))} | {_f(r.get('mcnemar_p'), -3)} "
            f"| {_f(j['fit_accuracy'].get(name))} | {_f(j['weights'].get(name), 2)} |"
        )
    return _with_error_table(lines, j, "the error indicators, 1 = wrong; raw")


def _score_jury_markdown(j: Mapping[str, Any], sentence: str) -> str:
    """The Markdown of a score jury (:class:`metajudge.analyses.juries.ScoreJuryResult`)."""
    lines = [
        f"# Juries of {len(j['judges'])} judges (scores): {j['dataset']} / {j['dimension']}",
        "",
        sentence,
        "",
        (
            f"Split by input (seed {j['seed']}): {j['n_fit']} responses fit the weights and pick "
            f"the best single judge (highest Pearson r), {j['n_eval']} evaluate. Dropped: "
            f"{j['dropped']}. Mean score: the plain mean of the judges' scores. Weighted mean: "
            "w ∝ 1 / MSE against the human mean on the fitting split. Test against the best "
            f"single judge: {j['test']} ({j['n_resamples']} permutations)."
        ),
        "",
        "| judge / jury | Pearson r | Kendall τ_b | RMSE | vs best (Δr) | p | fit r | weight |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in j["rows"]:
        name = r["name"]
        lines.append(
            f"| {name}{' (best)' if name == j['best_single'] else ''} | {_f(r['pearson'])} "
            f"| {_f(r['kendall'])} | {_f(r['rmse'])} | {_f(r.get('vs_best'))} "
            f"| {_f(r.get('p_value'), -3)} | {_f(j['fit_pearson'].get(name))} "
            f"| {_f(j['weights'].get(name), 3)} |"
        )
    raw = j.get("mean_raw_error_correlation")
    return _with_error_table(
        lines,
        j,
        "the errors, score − human mean, with the human mean partialled out"
        + (f"; raw mean {_f(raw, 2)}" if raw is not None else ""),
    )


def _with_error_table(lines: list[str], j: Mapping[str, Any], errors: str) -> str:
    """``lines`` and the judges' error correlation table (Pearson of ``errors``)."""
    names = j["judges"]
    lines = [
        *lines,
        "",
        (
            f"Error correlation (Pearson of {errors}; mean over pairs "
            f"{_f(j['mean_error_correlation'], 2)}, effective number of judges "
            f"{_f(j['effective_judges'], 2)} = k / (1 + (k-1) ρ̄)):"
        ),
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for a in names:
        cells = " | ".join(_f(j["error_correlation"][a][b], 2) for b in names)
        lines.append(f"| {a} | {cells} |")
    return "\n".join(lines) + "\n"
