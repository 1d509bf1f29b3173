"""One self-contained HTML page per run folder (``report.html``): overview, disagreements, flips.

The page is a Jinja2 template (``templates/report.html.j2``) with its CSS and plain JavaScript
inlined from ``static/``, the run's PNG plots inlined as ``data:`` URIs, and the data embedded
as JSON in a ``<script type="application/json">`` element (:func:`safe_json`: ``<``, ``>``,
``&`` and the JavaScript line separators are written as ``\\u`` escapes, so no dataset text
can close the element). The script only ever writes dataset text with ``textContent``: a
response containing ``<script>`` or HTML shows as text.

This module renders a *payload* (a JSON-ready dict) and builds the overview tables of the three
result kinds; :mod:`metajudge.reports.html_run` gathers the per-item data of a run folder.

Payload keys: ``kind``, ``title``, ``question``, ``protocol``, ``signatures`` ([name, sig]),
``warnings`` (strings), ``tables`` ([{title, columns, rows, refs, note}]; a cell is a number,
a string or ``{"v", "lo", "hi"}``), ``items`` (inputs), ``resp`` (responses), ``views``
(disagreement rankings) and ``compare`` (backbone flips); a judge card adds ``decision`` (a
sentence shown first), ``figures`` (inline SVG pictures, :mod:`metajudge.reports.card_figures`),
``lead`` (the picture shown beside the first ``lead_tables`` tables).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.results import finite

HTML_FILE = "report.html"
_HERE = Path(__file__).parent
_PLOT_ORDER = (
    "correlation_pearson.png",
    "correlation_spearman.png",
    "scatter.png",
    "human_correlation.png",
    "agreement_heatmap.png",
    "reliability.png",
    "frontier.png",
)


def safe_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (no ``</script>``, no ``<!--``);
    a NaN or infinite number (a score row's ``details`` may hold one) is ``null``, as in every
    JSON file a run writes (:func:`~metajudge.results.finite`).

    >>> out = safe_json({"t": "</script><b>&", "x": float("nan")})
    >>> "<" in out or ">" in out or "&" in out, json.loads(out)
    (False, {'t': '</script><b>&', 'x': None})
    """
    s = json.dumps(finite(data), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        s = s.replace(ch, esc)
    return s


def _png_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def plots_of(out_dir: Path) -> list[dict[str, str]]:
    """The run folder's PNG plots (known ones first), as ``{"name", "src"}`` with data URIs."""
    found = {p.name: p for p in sorted(out_dir.glob("*.png")) if not p.name.startswith("shot_")}
    names = [n for n in _PLOT_ORDER if n in found] + [n for n in found if n not in _PLOT_ORDER]
    return [{"name": n, "src": _png_uri(found[n])} for n in names]


def render_page(payload: Mapping[str, Any], plots: Sequence[Mapping[str, str]]) -> str:
    """The page as one HTML string (template, CSS, JS, plots and data inlined)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
        autoescape=True,
        keep_trailing_newline=True,
    )
    tpl = env.get_template("report.html.j2")
    return tpl.render(
        p=payload,
        plots=plots,
        css=(_HERE / "static" / "report.css").read_text(encoding="utf-8"),
        js=(_HERE / "static" / "report.js").read_text(encoding="utf-8"),
        # the pictures are SVG text in the page itself: not repeated in the script's data
        data_json=safe_json({k: v for k, v in payload.items() if k not in ("figures", "lead")}),
    )


def write_page(out_dir: str | Path, payload: Mapping[str, Any]) -> Path:
    """Render ``payload`` with the folder's plots into ``<out_dir>/report.html`` (atomically)."""
    out = Path(out_dir)
    text = render_page(payload, plots_of(out))
    from metajudge.run_folder import write_file

    return write_file(out, HTML_FILE, text)


def est(e: Mapping[str, Any] | None, k: float = 1.0) -> Any:
    """A table cell from an estimate ``{"value", "ci": [lo, hi], "ci_method"}`` (None when
    absent), times ``k`` (100 under ``--percent``); ``m``: the CI's method where it is not the
    percentile bootstrap."""
    from metajudge.reports.tables import ci_method_tag

    if not e or e.get("value") is None:
        return None
    lo, hi = (list(e.get("ci") or []) + [None, None])[:2]
    out = {"v": _r(e["value"] * k), "lo": _r(_times(lo, k)), "hi": _r(_times(hi, k))}
    tag = ci_method_tag(e.get("ci_method"))
    if tag:
        out["m"] = tag
    return out


def _r(v: Any, nd: int = 4) -> Any:
    return None if v is None else round(float(v), nd)


def _times(v: Any, k: float) -> Any:
    return None if v is None else float(v) * k


def _overview_table(data: Mapping[str, Any]) -> dict[str, Any]:
    """The main table of a meta-eval: the statistics the protocol fills
    (:func:`~metajudge.reports.sections.shown_statistics`), each followed by its published
    value where one exists, on the run's scale (:mod:`metajudge.reports.scale`); ``n pairs``
    only under the pairwise-difference protocol (``n rows`` under pointwise), the sources
    column only when something is published."""
    from metajudge.reports.scale import digits, factor, is_percent, published_value
    from metajudge.reports.sections import is_pointwise, shown_statistics

    pct = is_percent(data)
    k = factor(pct)
    stats = shown_statistics(data, list(data.get("statistics") or ["pearson", "spearman"]))
    pub: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for p in data.get("published") or []:
        pub.setdefault((str(p.get("metric")), str(p.get("dimension")), str(p.get("statistic"))), p)
    with_pub = [s for s in stats if any(key[2] == s for key in pub)]
    n_key, n_name = ("n_rows", "n rows") if is_pointwise(data) else ("n_pairs", "n pairs")

    def row(name: str, metric: str, c: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = [name, c.get("dimension")]
        for s in stats:
            out.append(est(c["stats"].get(s), k))
            if s in with_pub:
                e = pub.get((metric, str(c.get("dimension")), s))
                out.append(None if e is None else _r(published_value(e) * k))
        sources = {
            str(e.get("table")) for key, e in pub.items() if key[:2] == (metric, c.get("dimension"))
        }
        return [*out, c.get(n_key), *(["; ".join(sorted(sources))] if pub else [])]

    cols = ["metric", "dimension"]
    for s in stats:
        cols += [s, f"{s} (published)"] if s in with_pub else [s]
    return {
        "title": "Correlation with humans (95% CI)"
        + (" ×100" if pct else "")
        + "; inter-human ceiling as reference",
        "columns": [*cols, n_name, *(["published source"] if pub else [])],
        "rows": [row(c["metric"], c["metric"], c) for c in data["cells"]],
        "refs": [row(ceiling_name(c.get("method")), "human", c) for c in data.get("ceiling") or []],
        "nd": digits(pct),
        "note": "; ".join(
            dict.fromkeys(
                f"{ceiling_name(c.get('method'))}: {c['method']}"
                for c in data.get("ceiling") or []
                if c.get("method")
            )
        ),
    }


def ceiling_name(method: str | None) -> str:
    """The inter-human reference row named in a few words (its definition goes in the table's
    note).

    >>> ceiling_name("annotator 1 vs annotator 2 and 2 vs 1, averaged (each annotator ...)")
    'inter-human ceiling (annotator vs annotator)'
    """
    m = method or ""
    if m.startswith("annotator 1 vs annotator 2"):
        return "inter-human ceiling (annotator vs annotator)"
    if "leave-one-annotator-out" in m:
        return "inter-human ceiling (each annotator vs the others)"
    return "inter-human ceiling"


def meta_overview(data: Mapping[str, Any]) -> dict[str, Any]:
    """Question, protocol, signatures, the main table and warnings of a meta-eval ``result.json``."""
    ds = data["dataset"]
    name = ds["name"] + (f"/{ds['subset']}" if ds.get("subset") else "")
    metrics = ", ".join(m["name"] for m in data["metrics"])
    sigs = [
        [f"{m['name']} ({col})", "; ".join(s)]
        for m in data["metrics"]
        for col, s in (m.get("signatures") or {}).items()
    ]
    from metajudge.reports.sections import protocol_bits

    return {
        "kind": "metaeval",
        "title": f"Meta-evaluation: {metrics} on {name}",
        "question": f"How well do {metrics} agree with the human labels of {name} "
        f"({', '.join(ds['dimensions'])}; {ds['kind']}, {ds.get('annotators')} annotators)?",
        "protocol": " | ".join(protocol_bits(data)[1:]),  # the dataset is in the title
        "signatures": sigs,
        "warnings": _meta_warnings(data),
        "tables": [_overview_table(data), *comparison_tables(data)],
    }


def comparison_tables(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The metric-against-metric section: every comparison (difference, CI, Holm-adjusted
    p-values), then per dimension the significance matrix of Pearson as a picture in symbols
    (▲: the row metric's correlation is significantly higher than the column's, ▼: lower,
    ·: not significant; paired bootstrap, Holm-adjusted p < 0.05). Empty without comparisons."""
    comps = [c for c in data.get("comparisons") or [] if c.get("diff") is not None]
    if not comps:
        return []
    cols = ["dimension", "statistic", "A", "B", "A − B", "95% CI", "p boot (Holm)"]
    cols += ["p perm (Holm)", "p Williams (Holm)", "note"]
    rows = [
        [
            c["dimension"],
            c["statistic"],
            c["metric_a"],
            c["metric_b"],
            _r(c["diff"]),
            None if not c.get("ci") else f"[{c['ci'][0]:.4f}, {c['ci'][1]:.4f}]",
            c.get("p_bootstrap_holm"),
            c.get("p_permutation_holm"),
            c.get("p_williams_holm"),
            c.get("note") or "",
        ]
        for c in comps
    ]
    out = [
        {"title": "Metric vs metric (differences, Holm-adjusted p)", "columns": cols, "rows": rows}
    ]
    for d in dict.fromkeys(c["dimension"] for c in comps):
        out.append(_significance_matrix(comps, d))
    return out


def _significance_matrix(comps: list[Mapping[str, Any]], dim: str) -> dict[str, Any]:
    """One dimension's Pearson comparisons as a metric × metric matrix of symbols."""
    here = [c for c in comps if c["dimension"] == dim and c["statistic"] == "pearson"]
    ms = list(dict.fromkeys(m for c in here for m in (c["metric_a"], c["metric_b"])))
    sign: dict[tuple[str, str], str] = {}
    for c in here:
        p = c.get("p_bootstrap_holm")
        sig = p is not None and p < 0.05
        a, b = c["metric_a"], c["metric_b"]
        sign[(a, b)] = ("▲" if c["diff"] > 0 else "▼") if sig else "·"
        sign[(b, a)] = ("▼" if c["diff"] > 0 else "▲") if sig else "·"
    rows = [[m, *(sign.get((m, o), "" if m == o else "–") for o in ms)] for m in ms]
    return {
        "title": f"Significance matrix, {dim}, Pearson (▲ row higher, ▼ lower, · not "
        "significant; paired bootstrap, Holm p < 0.05)",
        "columns": ["metric", *ms],
        "rows": rows,
    }


def _meta_warnings(data: Mapping[str, Any]) -> list[str]:
    out = []
    for m in data["metrics"]:
        for col, miss in (m.get("missing") or {}).items():
            n_err = sum((miss.get("errors") or {}).values()) if miss.get("errors") else 0
            if miss.get("responses_unscored") or miss.get("responses_absent") or n_err:
                unit = miss.get("unit", "pairs")
                out.append(
                    f"{m['name']} ({col}): {miss.get('responses_unscored', 0)} responses unscored, "
                    f"{miss.get('responses_absent', 0)} absent of {miss.get('responses_total')}; "
                    f"{miss.get('pairs_imputed_median', 0)} {unit} imputed (median), "
                    f"{miss.get('pairs_dropped', 0)} {unit} dropped (--missing "
                    f"{miss.get('rule')})"
                )
    from metajudge.reports.published import unmatched_line
    from metajudge.reports.sections import (
        comparison_lines,
        dropped_lines,
        small_n_caution,
        undefined_lines,
    )

    caution = small_n_caution(data)
    out = (
        ([caution] if caution else []) + dropped_lines(data) + out + undefined_lines(data["cells"])
    ) + comparison_lines(data)
    left = unmatched_line(dict(data))
    out += [left] if left else []
    out += weak_judge_warnings(
        s for m in data["metrics"] for ss in (m.get("signatures") or {}).values() for s in ss
    )
    return out


def weak_judge_warnings(signatures: Any) -> list[str]:
    """A warning per embedded tiny judge model named in a signature (its numbers are a smoke test)."""
    weak = ("smollm2-135m", "smollm2_135m", "gemma3-270m", "gemma-3-270m")
    seen = sorted({w for s in signatures for w in weak if w in str(s).lower()})
    return [
        f"embedded judge {w}: a very small model; its agreement numbers test the pipeline, "
        "not a judge worth trusting"
        for w in seen
    ]


def swap_overview(res: Mapping[str, Any]) -> dict[str, Any]:
    """Overview of a backbone-swap ``swap.json``."""
    bbs = list(res["backbones"])
    hp = res["protocol"].get("human_protocol", "grouped")
    per = [
        [b, est(e.get("human")), e.get("n_responses"), e.get("unscored")]
        for b, e in res["per_backbone"].items()
    ]
    ceil = res.get("ceiling") or {}
    refs = (
        [["inter-human ceiling", est(ceil), None, None]]
        if ceil.get("available") and ceil.get("value") is not None
        else []
    )
    pairs = [
        [p["x"], p["y"], est(p["pearson"]), est(p["spearman"]), _r(p.get("kappa"))]
        + [_r(p.get("kappa_quadratic")), _r((p.get("flip_rate") or {}).get("value"))]
        + [_r((p.get("disagreement") or {}).get("value")), p.get("verdict")]
        for p in res["pairs"]
    ]
    warnings = [f"{b}: {e['unscored']} responses unscored" for b, e in res["per_backbone"].items()]
    warnings = [w for w, e in zip(warnings, res["per_backbone"].values()) if e.get("unscored")]
    if not ceil.get("available"):
        warnings.append(f"no inter-human ceiling: {ceil.get('reason')}")
    warnings += weak_judge_warnings(res.get("signatures", {}).values())
    return {
        "kind": "swap",
        "title": f"Backbone swap: {res['metric']} on {res['dataset']} ({res['dimension']})",
        "question": f"Does {res['metric']} give the same verdicts on {res['dataset']} when its "
        f"backbone changes ({', '.join(bbs)}), and which backbone agrees best with the humans?",
        "protocol": res["protocol"]["name"],
        "signatures": [[b, res["signatures"].get(b, "external scores")] for b in bbs],
        "warnings": warnings,
        "tables": [
            {
                "title": f"Correlation with humans per backbone ({hp}; 95% CI)",
                "columns": ["backbone", "human correlation", "responses", "unscored"],
                "rows": per,
                "refs": refs,
            },
            {
                "title": "Agreement between backbones (MT-RAIG Table 8 layout)",
                "columns": ["X", "Y", "Pearson", "Spearman", "κ", "κ quadratic"]
                + ["flip rate", "disagreement", "verdict"],
                "rows": pairs,
                "refs": [],
            },
        ],
    }


def diagnostics_overview(diag: Mapping[str, Any]) -> dict[str, Any]:
    """Overview of a judge-diagnostics ``diagnostics.json``."""
    rows, warnings = [], []
    for bb, d in diag["backbones"].items():
        pos, ln = d.get("position") or {}, d.get("length") or {}
        rows.append(
            [bb, _r((d.get("accuracy") or {}).get("value"))]
            + [_r((d.get("accuracy_both_orders") or {}).get("value"))]
            + [_r(pos.get("consistency")), _r(pos.get("p_first_wins"))]
            + [_r(ln.get("judge_p_longer")), _r(ln.get("human_p_longer"))]
            + [_r(d.get("parse_failure_rate")), d.get("calls")]
            + [(d.get("ledger") or {}).get("wall_s"), (d.get("ledger") or {}).get("cost_usd")]
        )
        if d.get("parse_failure_rate"):
            warnings.append(
                f"{bb}: parse failures {d.get('parse_failures')} "
                f"(rate {d['parse_failure_rate']:.3f}); unparsed verdicts count as no decision"
            )
    warnings += weak_judge_warnings(list(diag["backbones"]))
    return {
        "kind": "diagnostics",
        "title": f"Judge diagnostics on {diag['dataset']} ({diag['dimension']})",
        "question": f"Is the pairwise judge on {diag['dataset']} consistent when the two responses "
        "swap places, biased to length, and how often does it agree with the humans?",
        "protocol": diag["protocol"],
        "signatures": [[bb, d.get("signature", "")] for bb, d in diag["backbones"].items()],
        "warnings": warnings,
        "tables": [
            {
                "title": f"Per backbone ({diag['n_pairs']} pairs)",
                "columns": ["backbone", "accuracy (A/B)", "accuracy (both orders)"]
                + ["consistency", "P(first wins)", "P(prefers longer)", "humans P(longer)"]
                + ["parse-failure rate", "calls", "wall s", "cost USD"],
                "rows": rows,
                "refs": [],
            }
        ],
    }
