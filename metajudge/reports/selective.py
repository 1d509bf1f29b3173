"""Markdown of a selective-judging result (:class:`metajudge.analyses.selective.SelectiveResult`)."""

from __future__ import annotations

from typing import Any

from metajudge.results import as_data


def _f(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _thresholds(c: dict[str, Any]) -> str:
    return " / ".join(_f(t, 4) for t in c["threshold_mean"])


def _row(c: dict[str, Any], repeats: int) -> str:
    empty = f"{c['splits_empty']}/{repeats}"
    reached = _f(c["reached_share"], 2)
    shares = " / ".join(f"{s:.0%}" for s in c["share_by_judge_mean"])
    return (
        f"| {c['name']} | {_thresholds(c)} | {c['coverage_mean']:.1%} | {shares} | "
        f"{_f(c['agreement_mean'])} | {c['raw_agreement_mean']:.3f} | {reached} | {empty} | "
        f"{c['cost_per_1000']:,.1f} | {c['reference_cost_per_1000']:,.1f} |"
    )


def selective_markdown(result: Any, cost_unit: str = "calls") -> str:
    """The table of every configuration, with the procedure and the split stated."""
    d = as_data(result)
    a = d["alpha"]
    cands = (
        "the paper's grid linspace(0, 1, 5000)"
        if d["thresholds"] == "grid"
        else "every distinct calibration confidence"
    )
    lines = [
        f"# Selective judging (Trust or Escalate): alpha = {a:g}, delta = {d['delta']:g}",
        "",
        (
            f"Guarantee sought: agreement with humans on kept items >= {1 - a:.3g} with probability "
            f">= {1 - d['delta']:.3g}. Fixed-sequence testing over descending confidence thresholds, "
            f"exact binomial (Clopper-Pearson) upper bound on disagreement, at least {d['min_n']} "
            f"calibration items above a threshold; candidate thresholds: {cands}; a cascade calibrates each judge on the items the "
            f"judges before it left. Confidence: {d['confidence']}."
        ),
        "",
        (
            f"{d['repeats']} seeded split(s) (seed {d['seed']}) of {d['n_units']} units: "
            f"{d['n_calibration']} calibration / {d['n_test']} test. Means over the splits; "
            "agreement on kept items over the splits that kept any."
        ),
        "",
        (
            "| configuration | threshold(s) | coverage | kept by each judge | agreement (kept) | "
            f"raw agreement | share of splits >= {1 - a:.3g} | splits keeping none | "
            f"cost / 1,000 items ({cost_unit}) | all to strongest judge |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
        *(_row(c, d["repeats"]) for c in d["configs"]),
        "",
        "Threshold(s): mean over the splits where the judge's test rejected a threshold; "
        "splits where it rejected none (the judge keeps nothing there), per judge: "
        + "; ".join(
            f"{c['name']}: {', '.join(str(n) for n in c['splits_without_threshold'])}"
            for c in d["configs"]
        )
        + ". Raw agreement: the configuration's strongest (last) judge on every test item.",
    ]
    if d.get("notes"):
        lines += ["", *(f"- {n}" for n in d["notes"])]
    return "\n".join(lines) + "\n"
