"""Pictures as inline SVG text: seen without a script, a plotting library or a file beside the
page (the judge card, :mod:`metajudge.reports.card_figures`).

Each picture takes plain numbers and returns one ``<svg>`` element as a string, well-formed XML
(every text escaped), with a ``<title>`` that says what it shows:

* :func:`risk_coverage` — agreement with humans of the judge's most confident share of the
  items against that share, the guaranteed level and the chosen operating point marked;
* :func:`reliability_svg` — mean human score (or share of label 1) per bin of the prediction,
  before and after calibration, with the diagonal;
* :func:`confusion_svg` — human label (rows) against the judge's verdict (columns), counts shaded;
* :func:`forest` — per system, the calibrated estimate and the raw judge mean with their CIs;
* :func:`bars_by_bin` — one bar per human-score bin (the conformal interval's mean width).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

BLUE, GREY, RED, INK = "#1f6feb", "#888888", "#c44e52", "#1d232a"
_FONT = 'font-family="system-ui,sans-serif"'


def _n(v: float) -> str:
    """A coordinate, short: 12.5, 3."""
    return f"{v:.1f}".rstrip("0").rstrip(".")


def el(tag: str, text: str = "", **attrs: object) -> str:
    """One element; ``text`` escaped, attribute names with ``_`` written with ``-``."""
    a = "".join(
        f" {k.rstrip('_').replace('_', '-')}={quoteattr(_n(v) if isinstance(v, float) else str(v))}"
        for k, v in attrs.items()
        if v is not None
    )
    return f"<{tag}{a}>{escape(text)}</{tag}>" if text else f"<{tag}{a}/>"


def document(width: int, height: int, title: str, body: Sequence[str], *, id_: str) -> str:
    """The ``<svg>`` element: its size, a title (shown on hover, read by screen readers)."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id={quoteattr(id_)} class="figure" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'{_FONT} font-size="11">' + el("title", title) + "".join(body) + "</svg>"
    )


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi].

    >>> ticks(0, 1)
    [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    """
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 10) for k in range(first, math.floor(hi / step + 1e-9) + 1)]


@dataclass(frozen=True)
class Frame:
    """A plotting area: data ranges mapped onto pixels (y grows upwards)."""

    x: tuple[float, float]
    y: tuple[float, float]
    left: int = 52
    top: int = 14
    width: int = 300
    height: int = 220

    def px(self, v: float) -> float:
        lo, hi = self.x
        v = min(max(v, lo), hi)
        return self.left + self.width * (v - lo) / ((hi - lo) or 1)

    def py(self, v: float) -> float:
        lo, hi = self.y
        v = min(max(v, lo), hi)
        return self.top + self.height * (1 - (v - lo) / ((hi - lo) or 1))

    def axes(self, xlabel: str, ylabel: str, fmt: str = ".2g") -> list[str]:
        """Grid lines, tick labels and the two axis names."""
        out = []
        bottom, right = self.top + self.height, self.left + self.width
        for t in ticks(*self.x):
            x = self.px(t)
            out.append(el("line", x1=x, x2=x, y1=self.top, y2=bottom, stroke="#e3e6ea"))
            out.append(el("text", format(t, fmt), x=x, y=bottom + 14, text_anchor="middle"))
        for t in ticks(*self.y):
            y = self.py(t)
            out.append(el("line", x1=self.left, x2=right, y1=y, y2=y, stroke="#e3e6ea"))
            out.append(el("text", format(t, fmt), x=self.left - 5, y=y + 4, text_anchor="end"))
        out.append(
            el(
                "rect",
                x=self.left,
                y=self.top,
                width=self.width,
                height=self.height,
                fill="none",
                stroke="#aab1ba",
            )
        )
        out.append(
            el("text", xlabel, x=self.left + self.width / 2, y=bottom + 30, text_anchor="middle")
        )
        mid = self.top + self.height / 2
        out.append(
            el(
                "text",
                ylabel,
                x=12,
                y=mid,
                text_anchor="middle",
                transform=f"rotate(-90 12 {_n(mid)})",
            )
        )
        return out

    def path(self, pts: Sequence[tuple[float, float]], colour: str, **attrs: object) -> str:
        d = " ".join(f"{_n(self.px(x))},{_n(self.py(y))}" for x, y in pts)
        return el("polyline", points=d, fill="none", stroke=colour, stroke_width=2, **attrs)

    def level_line(self, v: float, **attrs: object) -> str:
        """A dashed red line across the plot at y = ``v`` (a guarantee, a reference)."""
        y = self.py(v)
        return el(
            "line",
            x1=self.left,
            x2=self.left + self.width,
            y1=y,
            y2=y,
            stroke=RED,
            stroke_dasharray="5 3",
            **attrs,
        )


def _legend(x: int, y: int, entries: Sequence[tuple[str, str, str]]) -> list[str]:
    """Entries (shape: line, dash, dot; colour; text), one per line from (x, y)."""
    out = []
    for j, (shape, colour, text) in enumerate(entries):
        yy = y + 15 * j
        if shape == "dot":
            out.append(el("circle", cx=x + 8, cy=yy - 4, r=4, fill=colour))
        else:
            dash = "5 3" if shape == "dash" else None
            out.append(
                el(
                    "line",
                    x1=x,
                    x2=x + 16,
                    y1=yy - 4,
                    y2=yy - 4,
                    stroke=colour,
                    stroke_width=2,
                    stroke_dasharray=dash,
                )
            )
        out.append(el("text", text, x=x + 22, y=yy))
    return out


def risk_coverage(
    curve: Sequence[Sequence[float]],
    level: float,
    chosen: tuple[float, float] | None,
    *,
    chosen_label: str,
    title: str,
) -> str:
    """``curve``: (share kept, agreement) of the most confident shares; ``level``: the
    guaranteed agreement (dashed); ``chosen``: (share kept, agreement) of the operating point."""
    pts = [(float(c[0]), float(c[1])) for c in curve if c[1] is not None]
    ys = [y for _, y in pts] + [level] + ([chosen[1]] if chosen else [])
    lo = max(0.0, math.floor(min(ys) * 10 - 0.5) / 10)
    f = Frame(x=(0.0, 1.0), y=(lo, 1.0))
    body = f.axes("share of the items kept (most confident first)", "agreement with humans")
    body.append(f.path(pts, BLUE, class_="curve"))
    body.append(f.level_line(level, class_="guarantee"))
    legend = [
        ("line", BLUE, "agreement of the top share"),
        ("dash", RED, f"guaranteed level {level:.2f}"),
    ]
    if chosen:
        cx, cy = f.px(chosen[0]), f.py(chosen[1])
        body.append(
            el(
                "line",
                x1=cx,
                x2=cx,
                y1=f.top,
                y2=f.top + f.height,
                stroke=INK,
                stroke_dasharray="2 2",
            )
        )
        body.append(el("circle", cx=cx, cy=cy, r=5, fill=INK, class_="chosen"))
        legend.append(("dot", INK, chosen_label))
    body += _legend(f.left + f.width + 14, f.top + 14, legend)
    width = f.left + f.width + 240
    return document(width, f.top + f.height + 40, title, body, id_="fig-risk-coverage")


def reliability_svg(
    before: Sequence[tuple[float, float]],
    after: Sequence[tuple[float, float]],
    scale: tuple[float, float],
    *,
    ylabel: str,
    title: str,
) -> str:
    """(mean prediction, mean outcome) per bin, before (grey) and after (blue), the diagonal."""
    f = Frame(x=scale, y=scale, width=240, height=240)
    body = f.axes("mean prediction (bin)", ylabel)
    body.append(
        f.path([(scale[0], scale[0]), (scale[1], scale[1])], "#bbbbbb", stroke_dasharray="4 3")
    )
    legend = [("dash", "#bbbbbb", "calibrated (diagonal)")]
    for tag, pts, colour in (("before", before, GREY), ("after", after, BLUE)):
        if pts:
            body.append(f.path(pts, colour, class_=tag))
            body += [el("circle", cx=f.px(x), cy=f.py(y), r=3, fill=colour) for x, y in pts]
            legend.append(("line", colour, f"{tag} calibration ({len(pts)} bins)"))
    body += _legend(f.left + f.width + 14, f.top + 14, legend)
    return document(
        f.left + f.width + 200, f.top + f.height + 40, title, body, id_="fig-reliability"
    )


def confusion_svg(labels: Sequence[str], matrix: Sequence[Sequence[int]], *, title: str) -> str:
    """Rows: the human label, columns: the judge's verdict; each cell its count and the share
    of its row, shaded by that share (the diagonal blue, errors red)."""
    k, cell, left, top = len(labels), 78, 150, 44
    body = [el("text", "judge's verdict →", x=left + k * cell / 2, y=14, text_anchor="middle")]
    body.append(el("text", "human label ↓", x=left - 8, y=top - 8, text_anchor="end"))
    for j, lab in enumerate(labels):
        body.append(
            el("text", _short(lab, 12), x=left + cell * (j + 0.5), y=top - 8, text_anchor="middle")
        )
    for i, row in enumerate(matrix):
        total = sum(row) or 1
        y = top + cell * i
        body.append(
            el("text", _short(labels[i], 22), x=left - 8, y=y + cell / 2 + 4, text_anchor="end")
        )
        for j, n in enumerate(row):
            share = n / total
            colour = BLUE if i == j else RED
            body.append(
                el(
                    "rect",
                    x=left + cell * j,
                    y=y,
                    width=cell,
                    height=cell,
                    fill=colour,
                    fill_opacity=f"{0.08 + 0.8 * share:.2f}",
                    stroke="#fff",
                    class_="cell",
                )
            )
            ink = "#fff" if share > 0.55 else INK
            cx = left + cell * (j + 0.5)
            body.append(
                el(
                    "text",
                    str(n),
                    x=cx,
                    y=y + cell / 2,
                    text_anchor="middle",
                    fill=ink,
                    font_weight="600",
                )
            )
            body.append(
                el(
                    "text",
                    f"{share:.0%} of row",
                    x=cx,
                    y=y + cell / 2 + 14,
                    text_anchor="middle",
                    fill=ink,
                    font_size="10",
                )
            )
    return document(left + cell * k + 10, top + cell * k + 10, title, body, id_="fig-confusion")


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass(frozen=True)
class ForestRow:
    """One system: the calibrated estimate and the raw judge mean, each (value, lo, hi);
    ``label``: the name shown (default the system's)."""

    system: str
    cal: tuple[float, float, float]
    raw: tuple[float, float, float]
    refused: bool = False
    label: str = ""


def forest(
    rows: Sequence[ForestRow], scale: tuple[float, float], *, title: str, id_: str = "fig-forest"
) -> str:
    """Per system, the calibrated estimate (circle; hollow, and "level refused" under the name,
    where its level claim is refused) and the raw judge mean (square), each with its CI and a
    hover title of four decimals, on a shared axis. Marks carry the classes ``fmark cal`` /
    ``fmark raw``, names ``fname`` (the page's self-test measures them)."""
    ends = [v for r in rows for v in (*r.cal, *r.raw) if v is not None and math.isfinite(v)]
    pad = 0.05 * ((max(ends) - min(ends)) or 1)
    lo, hi = max(scale[0], min(ends) - pad), min(scale[1], max(ends) + pad)
    rh, top = 30, 26
    f = Frame(x=(lo, hi), y=(0.0, 1.0), left=230, top=top, width=460, height=rh * len(rows))
    body = []
    axis_y = top + rh * len(rows)
    for t in ticks(lo, hi):
        x = f.px(t)
        body.append(el("line", x1=x, x2=x, y1=top, y2=axis_y, stroke="#e3e6ea"))
        body.append(el("text", f"{t:g}", x=x, y=axis_y + 14, text_anchor="middle"))
    for j, r in enumerate(rows):
        y = top + rh * j + 10
        name = _short(r.label or r.system, 36)
        body.append(el("text", name, x=f.left - 8, y=y + 4, text_anchor="end", class_="fname"))
        if r.refused:
            body.append(
                el("text", "level refused", x=f.left - 8, y=y + 17, text_anchor="end", fill=RED)
            )
        for (v, a, b), dy, colour, cls in ((r.cal, 0, BLUE, "cal"), (r.raw, 10, GREY, "raw")):
            body.append(
                el(
                    "line",
                    x1=f.px(a),
                    x2=f.px(b),
                    y1=y + dy,
                    y2=y + dy,
                    stroke=colour,
                    stroke_width=2,
                )
            )
            what = "calibrated" if cls == "cal" else "raw judge mean"
            tip = f"{r.system} {what}: {v:.4f} [{a:.4f}, {b:.4f}]"
            if cls == "cal":
                fill = "#fff" if r.refused else colour
                body.append(
                    f'<circle class="fmark cal" cx="{_n(f.px(v))}" cy="{_n(y)}" r="4.5" '
                    f'fill="{fill}" stroke="{colour}">{el("title", tip)}</circle>'
                )
            else:
                body.append(
                    f'<rect class="fmark raw" x="{_n(f.px(v) - 4)}" y="{_n(y + dy - 4)}" '
                    f'width="8" height="8" fill="{colour}">{el("title", tip)}</rect>'
                )
    body += _legend(f.left, 14, [("dot", BLUE, "calibrated estimate [CI]")])
    body += _legend(f.left + 190, 14, [("line", GREY, "raw judge mean [naive CI]")])
    return document(f.left + f.width + 30, axis_y + 24, title, body, id_=id_)


def bars_by_bin(
    bins: Sequence[str],
    values: Sequence[float | None],
    notes: Sequence[Sequence[str]],
    *,
    ymax: float,
    ylabel: str,
    ref: tuple[float, str] | None,
    title: str,
) -> str:
    """One bar per bin (None: no bar, "no rows"), its value above it and its ``notes`` (lines)
    below;
    ``ref``: a dashed reference line (value, label), e.g. the whole scale."""
    f = Frame(x=(0.0, float(len(bins))), y=(0.0, ymax), width=max(240, 80 * len(bins)))
    body = [el("line", x1=f.left, x2=f.left + f.width, y1=f.py(0), y2=f.py(0), stroke="#aab1ba")]
    for t in ticks(0.0, ymax):
        y = f.py(t)
        body.append(el("line", x1=f.left, x2=f.left + f.width, y1=y, y2=y, stroke="#e3e6ea"))
        body.append(el("text", f"{t:g}", x=f.left - 5, y=y + 4, text_anchor="end"))
    bw = f.width / len(bins)
    for j, (b, v, note) in enumerate(zip(bins, values, notes, strict=True)):
        x = f.left + bw * j
        body.append(el("text", b, x=x + bw / 2, y=f.top + f.height + 14, text_anchor="middle"))
        for i, line in enumerate(note):
            y = f.top + f.height + 27 + 12 * i
            body.append(
                el("text", line, x=x + bw / 2, y=y, text_anchor="middle", fill=GREY, font_size="10")
            )
        if v is None:
            body.append(el("text", "no rows", x=x + bw / 2, y=f.py(0) - 6, text_anchor="middle"))
            continue
        body.append(
            el(
                "rect",
                x=x + bw * 0.2,
                y=f.py(v),
                width=bw * 0.6,
                height=f.py(0) - f.py(v),
                fill=BLUE,
                class_="bar",
            )
        )
        body.append(el("text", f"{v:.2f}", x=x + bw / 2, y=f.py(v) - 4, text_anchor="middle"))
    if ref is not None:
        body.append(f.level_line(ref[0]))
        y = f.py(ref[0])
        body.append(
            el("text", ref[1], x=f.left + f.width - 4, y=y - 4, text_anchor="end", fill=RED)
        )
    mid = f.top + f.height / 2
    body.append(
        el("text", ylabel, x=12, y=mid, text_anchor="middle", transform=f"rotate(-90 12 {_n(mid)})")
    )
    height = f.top + f.height + 34 + 12 * max((len(n) for n in notes), default=0)
    return document(f.left + f.width + 20, height, title, body, id_="fig-width-by-bin")
