"""LaTeX (booktabs) rendering of a meta-evaluation table in the MT-RAIG Table 17 layout."""

from __future__ import annotations

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.reports.scale import STAT_LABEL, is_percent
from metajudge.reports.sections import aggregation_words
from metajudge.reports.tables import _cell_text, table_rows

_TEX_ESC = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
    "\\": r"\textbackslash{}",
}


def _tex(s: str) -> str:
    return "".join(_TEX_ESC.get(ch, ch) for ch in s)


def _control_words(p: dict) -> str:  # type: ignore[type-arg]
    """``; partial correlation controlling for system (Spearman: ...)`` of a ``--control`` run."""
    c = p.get("control")
    if not c:
        return ""
    return (
        f"; partial correlation controlling for {_tex(c['field'])} (Spearman: "
        f"{_tex(c['spearman_definition'])}; inter-human row not controlled)"
    )


def latex_table(res: MetaEvalResult) -> str:
    """LaTeX (booktabs) in the Table 17 layout on the run's scale, ceiling as the last row."""
    t = table_rows(res)
    pct = is_percent(res.data)
    cols = t["columns"]
    dims = list(dict.fromkeys(c["dimension"] for c in cols))
    spans = [(d, sum(1 for c in cols if c["dimension"] == d)) for d in dims]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{l" + "r" * len(cols) + "}",
        r"\toprule",
    ]
    lines.append(
        "Metric & "
        + " & ".join(rf"\multicolumn{{{n}}}{{c}}{{{_tex(d.capitalize())}}}" for d, n in spans)
        + r" \\"
    )
    pos = 2
    rules = []
    for _, n in spans:
        rules.append(rf"\cmidrule(lr){{{pos}-{pos + n - 1}}}")
        pos += n
    lines.append(" ".join(rules))
    lines.append(
        " & "
        + " & ".join(
            STAT_LABEL[c["statistic"]].replace("τb", r"$\tau_b$")
            + (" (pub.)" if c["published"] else "")
            for c in cols
        )
        + r" \\"
    )
    lines.append(r"\midrule")
    for r in t["rows"]:
        if r.get("ceiling"):
            lines.append(r"\midrule")
        cells = [_cell_text(c, ci=False, percent=pct).replace("—", "--") for c in r["cells"]]
        lines.append(_tex(r["metric"]) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    p = res.data["protocol"]
    how = (
        f"protocol pointwise, level {_tex(str(p.get('correlation_level')))}"
        if p.get("correlate") == "pointwise"
        else f"normalisation {_tex(p['normalize'])}"
    )
    cap = (
        "Correlation"
        + (" ($\\times$100)" if pct else "")
        + f" with human labels on {_tex(res.data['dataset']['name'])}; "
        f"{how}, aggregation {_tex(aggregation_words(p).replace('_', ' '))}"
        + (", grouped per input" if p["grouped"] else "")
        + _control_words(p)
        + "; last row: inter-human correlation."
    )
    lines += [rf"\caption{{{cap}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"
