"""THE number scale of a meta-evaluation's reports: one for the terminal, ``table.md``,
``table.csv``, ``table.tex``, the plots and ``report.html`` (issue 26: the terminal was ×100
without CIs while the HTML was on 0–1).

The default is the statistic's own scale: correlations in [−1, 1] and accuracies in [0, 1], four
decimals (as much as ×100 with two: RAGChecker's 49.66 prints 0.4966), each with its CI. That
is how correlations with humans are written in the meta-evaluation literature and how the
statistics themselves are defined. ``--percent`` chooses ×100 with two decimals (MT-RAIG
Table 17's layout) for every renderer of that run; the choice is recorded in ``result.json``
(``display.percent``) so ``metajudge report DIR`` renders the same way unless told otherwise.

Machine-readable files that hold values (``table.json``, ``cells.csv``) always keep the raw
scale and say so; only what is printed for reading follows the choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

DISPLAY_KEY = "display"

#: how the reports name a statistic
STAT_LABEL = {
    "pearson": "Pearson",
    "spearman": "Spearman",
    "kendall": "Kendall τb",
    "acc_ties": "Acc (ties)",
    "acc_no_ties": "Acc (no ties)",
}


def is_percent(data: Mapping[str, Any]) -> bool:
    """Whether a ``result.json`` asks for ×100 (``display.percent``; default: no, 0–1)."""
    return bool((data.get(DISPLAY_KEY) or {}).get("percent", False))


def set_percent(data: dict[str, Any], percent: bool | None) -> None:
    """Record the display choice in a result's data (``None`` leaves the recorded one)."""
    if percent is not None:
        data[DISPLAY_KEY] = {**(data.get(DISPLAY_KEY) or {}), "percent": bool(percent)}


def factor(percent: bool) -> float:
    return 100.0 if percent else 1.0


def digits(percent: bool) -> int:
    """Decimals printed: 2 at ×100, 4 on 0–1 (the same resolution)."""
    return 2 if percent else 4


def num(v: float | None, percent: bool, *, extra: int = 0) -> str:
    """One value on the display scale (``—`` when absent); ``extra`` more decimals (CSV).

    >>> num(0.49664, False), num(0.49664, True), num(None, False)
    ('0.4966', '49.66', '—')
    """
    if v is None:
        return "—"
    return f"{v * factor(percent):.{digits(percent) + extra}f}"


def ci_text(ci: Sequence[float] | None, percent: bool) -> str:
    """``[lo, hi]`` on the display scale (``—`` when there is no CI)."""
    if not ci:
        return "—"
    return f"[{num(ci[0], percent)}, {num(ci[1], percent)}]"


def scale_words(percent: bool) -> str:
    """How a table names its scale: ``×100`` or ``on [−1, 1]``."""
    return "×100" if percent else "on [−1, 1]"


def published_value(entry: Mapping[str, Any]) -> float:
    """A published entry's value on the statistic's own scale (entries are stored ×100, as
    ``baselines/published_*.json`` prints the papers' numbers)."""
    return float(entry["value"]) / 100.0
