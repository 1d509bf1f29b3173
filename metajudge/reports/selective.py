"""Markdown of a selective-judging result (:class:`metajudge.analyses.selective.SelectiveResult`)."""

from __future__ import annotations

from typing import Any

from metajudge.results import as_data


def _f(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _thresholds(c: dict[str, Any]) -> str:
    return " / ".join(_f(t, 4) for t in c["threshold_mean"])


def _reached(c: dict[str, Any], repeats: int) -> str:
    """The realised test-set share with its count: "0.82 (32 of 39)"."""
    kept = repeats - c["splits_empty"]
    if c["reached_share"] is None:
        return "– (0 kept any)"
    return f"{c['reached_share']:.2f} ({round(c['reached_share'] * kept)} of {kept})"


def _violations(c: dict[str, Any], repeats: int) -> str:
    v = c.get("population_violation_share")
    if v is None:
        return "–"
    return f"{v:.3f} ({c.get('population_draws_kept', 0)} of {repeats} keep any)"


def _coverage(c: dict[str, Any], repeats: int) -> str:
    """The mean share kept; over several splits its median and quartiles beside it."""
    q = c.get("coverage_quartiles")
    if repeats < 2 or not q:
        return f"{c['coverage_mean']:.1%}"
    return (
        f"{c['coverage_mean']:.1%} (median {c['coverage_median']:.1%}, IQR {q[0]:.1%}–{q[1]:.1%})"
    )


def _row(c: dict[str, Any], repeats: int) -> str:
    empty = f"{c['splits_empty']}/{repeats}"
    shares = " / ".join(f"{s:.0%}" for s in c["share_by_judge_mean"])
    return (
        f"| {c['name']} | {_thresholds(c)} | {_coverage(c, repeats)} | {shares} | "
        f"{_f(c['agreement_mean'])} | {c['raw_agreement_mean']:.3f} | {_reached(c, repeats)} | "
        f"{_violations(c, repeats)} | {empty} | "
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
        *(f"**Warning: {w}.**\n" for w in d.get("warnings") or ()),
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
            f"raw agreement | test agreement >= {1 - a:.3g} (splits keeping any) | "
            f"population violations (<= {d['delta']:g} promised) | splits keeping none | "
            f"cost / 1,000 items ({cost_unit}) | all to strongest judge |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(_row(c, d["repeats"]) for c in d["configs"]),
        "",
        "Threshold(s): mean over the splits where the judge's test rejected a threshold; "
        "splits where it rejected none (the judge keeps nothing there), per judge: "
        + "; ".join(
            f"{c['name']}: {', '.join(str(n) for n in c['splits_without_threshold'])}"
            for c in d["configs"]
        )
        + ". Raw agreement: the configuration's strongest (last) judge on every test item.",
        "",
        (
            f"Test agreement >= {1 - a:.3g}: the share of the splits that kept any test item whose "
            f"agreement on their {d['n_test']} test items reached {1 - a:.3g}, realised on a finite "
            "test set (its sampling noise included), so it can fall below "
            f"{1 - d['delta']:.3g} while the guarantee holds; it is not the guarantee's probability. "
            "Population violations: the guarantee's own quantity with the dataset as the population: "
            f"{d['repeats']} calibration sets of {d['n_calibration']} drawn i.i.d. (with replacement, "
            f"seed {d['seed']}) from all {d['n_units']} units, the thresholds applied to every unit; "
            f"the share of draws whose agreement on the units kept is below {1 - a:.3g} (a draw "
            f"keeping nothing violates nothing); the guarantee promises at most {d['delta']:g}."
        ),
    ]
    lines += _curve_md(d)
    if d.get("notes"):
        lines += ["", *(f"- {n}" for n in d["notes"])]
    return "\n".join(lines) + "\n"


def _curve_md(d: dict[str, Any]) -> list[str]:
    """Agreement of each judge's most confident 10%, 20%, ... of all units (no split)."""
    curves = d.get("curves") or {}
    if not curves:
        return []
    names = list(curves)
    out = [
        "",
        "Agreement with humans of each judge's most confident share of all units (no split):",
        "",
        "| coverage | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for pts in zip(*curves.values(), strict=True):
        if round(pts[0][0] * 100) % 10 == 0:
            out.append(f"| {pts[0][0]:.0%} | " + " | ".join(f"{p[1]:.3f}" for p in pts) + " |")
    return out


PLOT_FILE = "coverage_agreement.png"


def plot_coverage_agreement(result: Any, path: Any) -> Any:
    """Each judge's agreement with humans on its most confident share of the items against
    that share (coverage), the calibrated operating points (mean over the splits) as markers,
    and the target 1 - alpha as a dashed line."""
    from pathlib import Path

    from metajudge.reports.plots import _plt, _save

    d = as_data(result)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for judge, pts in d["curves"].items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=f"{judge} (top share)")
    for c in d["configs"]:
        if c["agreement_mean"] is not None:
            ax.scatter([c["coverage_mean"]], [c["agreement_mean"]], marker="*", s=120, zorder=3)
            ax.annotate(c["name"], (c["coverage_mean"], c["agreement_mean"]), fontsize=7)
    ax.axhline(1 - d["alpha"], ls="--", color="grey", label=f"1 - alpha = {1 - d['alpha']:.2f}")
    ax.set_xlabel("coverage (share of items the judge keeps)")
    ax.set_ylabel("agreement with humans on kept items")
    ax.set_xlim(0, 1.02)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title("Selective judging: coverage vs agreement", fontsize=10)
    out = _save(fig, Path(path))
    plt.close(fig)
    return out


def selective_payload(result: Any, source: str) -> dict[str, Any]:
    """The HTML page's payload: the configurations' table and the curve's points."""
    d = as_data(result)
    cols = ["configuration", "threshold(s)", "coverage", "agreement (kept)", "raw agreement"]
    cols += [
        f"test agreement >= {1 - d['alpha']:.3g} (share of splits keeping any)",
        "population violations",
        "splits keeping none",
        "cost / 1,000",
    ]
    rows = [
        [
            c["name"],
            _thresholds(c),
            round(c["coverage_mean"], 4),
            None if c["agreement_mean"] is None else round(c["agreement_mean"], 4),
            round(c["raw_agreement_mean"], 4),
            None if c["reached_share"] is None else round(c["reached_share"], 3),
            _violations(c, d["repeats"]),
            c["splits_empty"],
            round(c["cost_per_1000"], 1),
        ]
        for c in d["configs"]
    ]
    curve_cols = ["coverage", *d["curves"]]
    curve_rows = [
        [pts[0][0], *(round(p[1], 4) for p in pts)]
        for pts in zip(*d["curves"].values(), strict=True)
    ]
    return {
        "kind": "selective",
        "title": f"Selective judging on {source}",
        "question": "Which verdicts can be kept without a human, with agreement >= "
        f"{1 - d['alpha']:.3g} guaranteed with probability >= {1 - d['delta']:.3g}?",
        "protocol": f"alpha={d['alpha']:g} delta={d['delta']:g} repeats={d['repeats']} "
        f"seed={d['seed']} calibration={d['n_calibration']} test={d['n_test']} "
        f"min_n={d['min_n']} thresholds={d['thresholds']}",
        "signatures": [],
        "warnings": list(d.get("notes") or ()),
        "tables": [
            {"title": "Configurations (means over the splits)", "columns": cols, "rows": rows},
            {
                "title": "Agreement of each judge's most confident share of all items",
                "columns": curve_cols,
                "rows": curve_rows,
                "note": "no split: what a threshold at that share's confidence would give",
            },
        ],
        "links": [{"href": "result.json", "text": "the result as JSON"}],
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }
