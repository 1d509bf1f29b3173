"""The judge card's pictures (issue 62): inline SVG, well-formed, drawn from card.json's numbers,
absent with a one-line reason where the card has no data; the first screen leads with the
decision, the verdict table and the picture that carries it; card.html and cards.html pass the
browser self-test and fit a 1,400 px window without a scrolling table."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from metajudge.reports import svg
from metajudge.reports.card_figures import card_figures, lead_figure, natural_key

NS = "{http://www.w3.org/2000/svg}"


def _svgs(html: str) -> dict[str, ET.Element]:
    """Every inline ``<svg>`` of a page, parsed as XML, by its id."""
    found = re.findall(r"<svg\b.*?</svg>", html, re.DOTALL)
    out = {}
    for text in found:
        root = ET.fromstring(text)  # raises on text that is not well-formed XML
        assert root.tag == f"{NS}svg" and root.find(f"{NS}title") is not None
        out[root.attrib["id"]] = root
    return out


def test_pictures_are_well_formed_and_escape_their_text() -> None:
    labels = ["<b>fail</b> & co", "pass"]
    pics = [
        svg.confusion_svg(labels, [[85, 93], [12, 210]], title="a < b & c"),
        svg.risk_coverage(
            [[0.1, 0.98], [0.5, 0.9], [1.0, 0.78]],
            0.85,
            (0.6, 0.89),
            chosen_label="conf ≥ 0.95",
            title="rc",
        ),
        svg.reliability_svg(
            [(1.2, 2.5), (3.0, 3.1)], [(2.4, 2.5)], (1.0, 5.0), ylabel="y", title="r"
        ),
        svg.forest(
            [svg.ForestRow("S<1>", (2.0, 1.8, 2.2), (1.5, 1.4, 1.6), refused=True)],
            (1.0, 5.0),
            title="f",
        ),
        svg.bars_by_bin(
            ["[1, 2)", "[2, 3]"],
            [1.5, None],
            [["n 3"], []],
            ymax=4.0,
            ylabel="w",
            ref=(4.0, "whole scale 4"),
            title="b",
        ),
    ]
    for text in pics:
        root = ET.fromstring(text)
        assert root.tag == f"{NS}svg"
    cm = ET.fromstring(pics[0])
    texts = [t.text for t in cm.iter(f"{NS}text")]
    assert "<b>fail</b> & co"[:11] in "".join(texts) and "93" in texts and "52% of row" in texts
    assert len([r for r in cm.iter(f"{NS}rect") if r.get("class") == "cell"]) == 4
    bars = ET.fromstring(pics[4])
    assert len([r for r in bars.iter(f"{NS}rect") if r.get("class") == "bar"]) == 1
    assert "no rows" in [t.text for t in bars.iter(f"{NS}text")]


def test_ticks_and_natural_order() -> None:
    assert svg.ticks(1, 5) == [1, 2, 3, 4, 5]
    assert svg.ticks(0.7, 1.0) == [0.7, 0.8, 0.9, 1.0]
    assert svg.ticks(0, 0.2) == [0, 0.05, 0.1, 0.15, 0.2]
    names = [f"S{k}" for k in (10, 2, 0, 15, 1)]
    assert sorted(names, key=natural_key) == ["S0", "S1", "S2", "S10", "S15"]


@pytest.fixture(scope="module")
def cards(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three released judges' card folders: a pairwise judge with probabilities (selective),
    a rating judge of 16 systems (conformal, calibration, estimate), a categorical one."""
    from metajudge.data.source import DataSource
    from metajudge.runs.judge_card import CardOptions, run_card

    root = tmp_path_factory.mktemp("cards")
    d = data_dir
    srcs = {
        "turbo": DataSource(dataset="trust_or_escalate_jung2025", judge="gpt-4-turbo", data_dir=d),
        "sheng": DataSource(
            dataset="conformal_judge_sheng2025",
            judge="sheng.4omini_coherence",
            dimension="coherence",
            data_dir=d,
        ),
        "g4o": DataSource(
            dataset="alt_test_calderon2025", subset="framing", judge="gpt-4o", data_dir=d
        ),
    }
    for name, src in srcs.items():
        run_card(src, CardOptions(repeats=3, n_boot=100), root / name)
    return {n: root / n for n in srcs}


def _card(folder: Path) -> dict[str, Any]:
    import json

    return json.loads((folder / "card.json").read_text(encoding="utf-8"))


def test_each_card_draws_the_pictures_its_data_holds(cards: dict[str, Path]) -> None:
    drawn = {}
    for name, folder in cards.items():
        page = (folder / "card.html").read_text(encoding="utf-8")
        drawn[name] = _svgs(page)
        figs = card_figures(_card(folder))
        for f in figs:  # absent: no picture, one line saying why, shown on the page
            if f["svg"] is None:
                assert f["reason"] and "\n" not in f["reason"]
                assert f"<b>{f['title']}</b>: no picture" in page
    assert set(drawn["turbo"]) == {"fig-risk-coverage"}
    assert set(drawn["sheng"]) == {"fig-forest", "fig-width-by-bin", "fig-reliability"}
    assert set(drawn["g4o"]) == {"fig-confusion"}


def test_risk_coverage_marks_the_guarantee_and_the_chosen_threshold(
    cards: dict[str, Path],
) -> None:
    card = _card(cards["turbo"])
    cfg = card["parts"]["selective"]["result"]["configs"][0]
    root = _svgs((cards["turbo"] / "card.html").read_text(encoding="utf-8"))["fig-risk-coverage"]
    by_class = {e.get("class"): e for e in root.iter() if e.get("class")}
    assert {"curve", "guarantee", "chosen"} <= set(by_class)
    texts = [t.text or "" for t in root.iter(f"{NS}text")]
    assert "guaranteed level 0.85" in texts
    assert f"confidence ≥ {cfg['threshold_mean'][0]:.3f}: {cfg['coverage_mean']:.0%} kept" in texts
    # the chosen point sits at the mean share kept: 52 px left margin + 300 px for the share 0–1
    assert float(by_class["chosen"].get("cx")) == pytest.approx(
        52 + 300 * cfg["coverage_mean"], abs=0.1
    )


def test_forest_lists_systems_in_natural_order_and_widths_stay_on_the_scale(
    cards: dict[str, Path],
) -> None:
    card = _card(cards["sheng"])
    page = _svgs((cards["sheng"] / "card.html").read_text(encoding="utf-8"))
    names = [t.text for t in page["fig-forest"].iter(f"{NS}text") if t.get("class") == "fname"]
    assert names == [f"S{k}" for k in range(16)]
    marks = [e for e in page["fig-forest"].iter() if (e.get("class") or "").startswith("fmark")]
    assert len(marks) == 32
    from metajudge.reports.judge_card import best_conformal

    best = best_conformal(card["parts"]["conformal"]["result"])
    widths = [b["width"] for b in best["by_human"]]
    assert all(0 < w <= 4.0 for w in widths)  # the 1–5 scale: at most 4 points wide
    bar_labels = [t.text for t in page["fig-width-by-bin"].iter(f"{NS}text")]
    assert all(f"{w:.2f}" in bar_labels for w in widths)
    # the verdict no longer runs 16 systems into one cell
    answer = {v["question"]: v["answer"] for v in card["verdict"]}["What are the systems worth?"]
    assert answer.startswith("16 systems: calibrated ") and "S10" not in answer


def test_the_first_screen_leads_with_the_decision_and_its_picture(cards: dict[str, Path]) -> None:
    from metajudge.reports.judge_card import add_figures

    card = _card(cards["turbo"])
    page = (cards["turbo"] / "card.html").read_text(encoding="utf-8")
    lead = page.index('<div class="lead">')
    assert (
        lead
        < page.index('id="lead-tables"')
        < page.index("fig-risk-coverage")
        < page.index('<div id="tables">')
    )
    assert '"figures"' not in page.split('id="data">', 1)[1]  # SVG not repeated in the data
    payload: dict[str, Any] = {}
    add_figures(
        payload,
        {**card, "decision": {"sentence": "Use with escalation.", "figure": "risk-coverage"}},
    )
    assert (
        payload["decision"] == "Use with escalation." and payload["lead"]["id"] == "risk-coverage"
    )
    assert payload["lead_tables"] == 1 and all(
        f["id"] != "risk-coverage" for f in payload["figures"]
    )
    figs = card_figures(card)
    assert lead_figure(figs, {**card, "decision": "x"})["id"] == "risk-coverage"


def test_board_has_units_per_column_and_a_decision_column(cards: dict[str, Path]) -> None:
    from metajudge.reports.judge_card import BOARD_COLUMNS, _board_row

    rows = {
        n: dict(zip(BOARD_COLUMNS, _board_row(_card(f)), strict=True)) for n, f in cards.items()
    }
    assert rows["turbo"]["conformal: interval width (label points)"] is None
    assert rows["turbo"]["conformal: set size (classes)"] == pytest.approx(1.26, abs=0.05)
    assert rows["sheng"]["conformal: set size (classes)"] is None
    assert rows["sheng"]["system estimates"] == "16 systems (S0 … S15); level refused for 0"
    assert rows["g4o"]["Alt-Test (passes beating ≥ 50% of the annotators)"] == (
        "passes: beats 100% of 4 annotators"
    )
    assert rows["g4o"]["use it? (decision)"] == _card(cards["g4o"])["decision"]["sentence"]
    without = {k: v for k, v in _card(cards["g4o"]).items() if k != "decision"}
    assert dict(zip(BOARD_COLUMNS, _board_row(without), strict=True))["use it? (decision)"] == "–"
    with_decision = {**_card(cards["g4o"]), "decision": "Use it."}
    assert (
        dict(zip(BOARD_COLUMNS, _board_row(with_decision), strict=True))["use it? (decision)"]
        == "Use it."
    )


def test_card_and_cards_pages_pass_the_browser_self_test_at_1400_px(
    cards: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    from metajudge.reports.html_check import selftest
    from metajudge.runs.judge_cards import cards_page
    from tests.reports.test_html import _chromium

    exe = _chromium()
    for name in ("turbo", "sheng"):
        shutil.copytree(cards[name], tmp_path / name)
    pages = [cards["sheng"] / "card.html", cards["g4o"] / "card.html", cards_page(tmp_path)]
    for page in pages:
        res = selftest(page, chromium=exe)
        assert res["errors"] == [], (page, res["errors"])
        assert res["sort_changed"], page
        assert res["page_width"] <= res["view_width"] == 1400, (page, res["page_width"])
        assert res["tables_scrolling"] == [], (page, res["tables_scrolling"])
    assert res["n_table_rows"] == 2  # cards.html: one row per judge
