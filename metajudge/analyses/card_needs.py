"""What each part of a judge card needs of the data, and whether its answer stands.

A card's row is an answer only where the data supports it. Each part states the least data its
claim needs (:func:`part_need`): below it the part does not run and its row says what is
missing and how to get it, instead of a number. A part that ran may still give no answer
(:func:`withheld`): a NaN, a confidence interval of zero width, or a conformal interval as wide
as the whole scale is kept in ``card.json`` with its command (the numbers reproduce) but never
stands as the row's answer. Nothing here renders or calls a model.

The floors, each the analysis's own:

- agreement: :data:`~metajudge.stats.intervals.MIN_CI_N` labelled items (no interval below);
- selective: twice :func:`~metajudge.analyses.selective.smallest_calibration` at the card's
  risk and δ (the calibration half can keep anything only from there);
- conformal: :func:`~metajudge.stats.calibration.min_calibration_rows` calibration rows at the
  card's miscoverage, the calibration share of the labels (a finite conformal quantile: an
  interval narrower than the scale);
- calibration: :data:`~metajudge.stats.calibration.MIN_HELD_OUT` held-out rows per
  split, the held-out share of the labels;
- estimate: :data:`~metajudge.stats.intervals.MIN_CI_N` labels for a system estimated from its
  own labels (a borrowed system leans on the transport gate instead).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: the split shares the card's calibrate parts use (calibrate conformal and fit's defaults)
CALIBRATION_SHARE = 0.5
HELD_OUT_SHARE = 0.5
SELECTIVE_DELTA = 0.1  # calibrate selective's default δ, which the card keeps


@dataclass(frozen=True)
class Need:
    """The least data a part's claim needs: ``need`` labelled units for ``claim``; ``have``
    the data's; ``how``: how to get more (a command or an instruction)."""

    part: str
    claim: str
    have: int
    need: int
    how: str = ""

    @property
    def met(self) -> bool:
        return self.have >= self.need

    def missing(self) -> str | None:
        """What is missing, in the row's words ("12 labels, 18 needed for …: …"), or None."""
        if self.met:
            return None
        more = self.need - self.have
        how = f": {self.how.format(more=more)}" if self.how else ""
        return f"{self.have} labels, {self.need} needed for {self.claim}{how}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "have": self.have,
            "need": self.need,
            "met": self.met,
            "missing": self.missing(),
        }


def _how_ratings(plan: str | None) -> str:
    if plan:
        return f"label {{more}} more responses (`{plan} --budget {{more}}` picks which)"
    return "label {more} more responses"


def part_need(
    part: str,
    *,
    labelled: int,
    settings: Mapping[str, Any],
    plan: str | None = None,
) -> Need | None:
    """The least data of ``part`` (None: a part without a floor of labels) with ``labelled``
    labelled units and the card's ``settings`` (risk, miscoverage); ``plan``: the ``calibrate
    plan`` command line of the data, which picks the next labels of a rating judge."""
    from metajudge.analyses.selective import smallest_calibration
    from metajudge.stats.calibration import MIN_HELD_OUT, min_calibration_rows
    from metajudge.stats.intervals import MIN_CI_N

    if part == "agreement":
        claim = "a confidence interval of the agreement"
        return Need(part, claim, labelled, MIN_CI_N, "label {more} more items")
    if part == "selective":
        cal = smallest_calibration(settings["risk"], SELECTIVE_DELTA)
        need = math.ceil(cal / CALIBRATION_SHARE)
        claim = f"a threshold keeping anything at agreement >= {1 - settings['risk']:.2f}"
        return Need(part, claim, labelled, need, "label {more} more items")
    if part == "conformal":
        rows = min_calibration_rows(settings["miscoverage"])
        need = math.ceil(rows / CALIBRATION_SHARE)
        claim = "a conformal interval narrower than the scale"
        return Need(part, claim, labelled, need, _how_ratings(plan))
    if part == "calibration":
        need = math.ceil(MIN_HELD_OUT / HELD_OUT_SHARE)
        claim = f"held-out calibration errors ({MIN_HELD_OUT} held-out rows per split)"
        return Need(part, claim, labelled, need, _how_ratings(plan))
    return None


def best_conformal(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The narrowest method of a conformal result whose coverage reached the target."""
    target = 1 - r["options"]["alpha"]
    key = "width" if "width" in r["methods"][0] else "size"
    ok = [m for m in r["methods"] if m["coverage"] >= target - 1e-9] or list(r["methods"])
    return min(ok, key=lambda m: m[key]) if ok else None


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and math.isfinite(v)


def ci_flaw(value: Any, lo: Any, hi: Any, n: int | None = None) -> str | None:
    """Why an estimate with its CI is no answer: undefined, no interval, or zero width."""
    if not _finite(value):
        return "undefined (no finite value)"
    if not (_finite(lo) and _finite(hi)):
        return f"no confidence interval{f' from {n} labels' if n is not None else ''}"
    if hi - lo <= 1e-12:
        return (
            f"a confidence interval of zero width{f' from {n} labels' if n is not None else ''}"
            " (every resample agrees: too few labels to measure the uncertainty)"
        )
    return None


def conformal_flaw(best: Mapping[str, Any] | None, scale: Sequence[float] | None) -> str | None:
    """Why the narrowest covering conformal method is no answer: none, or the whole scale."""
    if best is None:
        return "no conformal method ran"
    if "width" not in best:
        return None
    whole = best.get("whole_scale") or 0
    span = (scale[1] - scale[0]) if scale else None
    if whole >= 0.5 or (span is not None and best["width"] >= span - 1e-9):
        return (
            f"the intervals are the whole scale ({whole:.0%} of them): too few calibration rows "
            "for a conformal quantile, so they carry no information"
        )
    return None


def system_flaws(systems: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Per system of a ``calibrate estimate`` result: why its level is no answer (a system
    estimated from its own labels with fewer than MIN_CI_N of them; an undefined or zero-width
    CI)."""
    from metajudge.stats.intervals import MIN_CI_N

    out = {}
    for s in systems:
        flaw = ci_flaw(s.get("value"), s.get("lo"), s.get("hi"), s.get("labelled"))
        if flaw is None and s.get("route") == "augmented" and s.get("labelled", 0) < MIN_CI_N:
            flaw = f"{s['labelled']} labels, {MIN_CI_N} needed for a system's own level"
        if flaw:
            out[str(s["system"])] = flaw
    return out
