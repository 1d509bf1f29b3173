"""report.html: self-contained, escaped, and working in headless Chromium on real runs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.formats import Input, PairwiseRecord, Response
from metajudge.reports import html_page as html
from metajudge.reports.html_check import find_chromium, screenshot, selftest
from metajudge.reports.html_items import Items, pair_view

EVIL = '<script>window.PWNED=1</script><b>bold</b><img src=x onerror="window.PWNED=2">'


def _chromium() -> str:
    exe = find_chromium()
    if exe is None:
        if os.geteuid() != 0:
            why = "chromium absent and not root: install Debian's chromium (make setup)"
            pytest.skip(reason=why)
        pytest.fail("chromium absent although running as root: run `make setup` (system-deps)")
    return exe


def _browse(page: Path, *, texts: bool = True) -> dict:
    exe = _chromium()
    res = selftest(page, chromium=exe)
    assert res["errors"] == [], res["errors"]
    assert res["sort_changed"], res
    assert res["browser_rows"] > 0 and res["detail_text_chars"] > 0, res
    if texts:
        assert res["detail_has_response"], res
    screenshot(page, page.parent / "shot_overview.png", chromium=exe)
    screenshot(page, page.parent / "shot_browser.png", query="tab=browser&open=0", chromium=exe)
    assert (page.parent / "shot_browser.png").stat().st_size > 10_000
    return res


def _self_contained(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r'(src|href)="(https?:)?//', text), "page references the network"
    assert "<link" not in text
    return text


def _evil_page(tmp_path: Path) -> Path:
    rec = PairwiseRecord(
        id="x1",
        input=Input(question="Q </script><!-- " + EVIL, reference="ref " + EVIL),
        a=Response("sys_a", "answer a " + EVIL),
        b=Response("sys_b", "answer b"),
        labels={"overall": (1.0, -1.0)},
    )
    items = Items()
    view = pair_view("m", [rec], "overall", {"x1::a": 0.1, "x1::b": 0.9}, items=items, half_width=2)
    payload = {
        "kind": "metaeval",
        "title": "t " + EVIL,
        "question": EVIL,
        "protocol": EVIL,
        "signatures": [["m", EVIL]],
        "warnings": [EVIL],
        "tables": [
            {"title": EVIL, "columns": ["a", "b"], "rows": [[EVIL, 1], ["z", 2]], "refs": []}
        ],
        "items": items.items,
        "resp": items.resp,
        "views": [view],
        "compare": [],
    }
    return html.write_page(tmp_path, payload)


def test_dataset_text_is_escaped(tmp_path: Path) -> None:
    page = _evil_page(tmp_path)
    text = _self_contained(page)
    assert text.count("<script") == 2  # the JSON data block and the page script, nothing else
    assert "window.PWNED" in text  # present, but only escaped
    assert "<b>bold</b>" not in text and "<img src=x" not in text
    assert "\\u003c/script\\u003e" in text


@pytest.mark.slow
def test_escaped_text_renders_as_text_in_chromium(tmp_path: Path) -> None:
    res = _browse(_evil_page(tmp_path))
    assert res["script_elements"] == 2
    assert "<script>window.PWNED=1</script><b>bold</b>" in res["detail_text"]


def test_meta_eval_writes_report_html(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "rag"
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--metrics", "bleu,rouge_l"]
    assert main([*argv, "--n-boot", "50", "--out", str(out), "--paths-only"]) == 0
    page = out / "report.html"
    text = _self_contained(page)
    assert "data:image/png;base64," in text and "ragchecker_meta_eval" in text
    page.unlink()
    assert main(["report", "render", str(out), "--format", "html"]) == 0
    assert page.is_file()
    if find_chromium() is not None or os.geteuid() == 0:
        _browse(page)


def test_backbone_swap_report_html(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "swap"
    ext = "shipped:gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo"
    argv = ["judge", "swap", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness"]
    assert main([*argv, "--scores", ext, "--n-boot", "50", "--out", str(out)]) == 0
    page = out / "report.html"
    text = _self_contained(page)
    assert '"compare":[{"x":"gpt-4o","y":"gpt-4o-mini"' in text
    if find_chromium() is not None or os.geteuid() == 0:
        res = _browse(page, texts=False)  # LFTQA-Eval ships scores only, no texts
        assert res["compare_detail"]


@pytest.mark.slow
@pytest.mark.llm
def test_judge_diagnostics_report_html(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "diag"
    argv = ["judge", "diagnostics", "--dataset", "pandalm_testset", "--backbones", "smollm2-135m"]
    assert main([*argv, "--limit", "10", "--out", str(out)]) == 0
    res = _browse(out / "report.html")
    assert res["browser_rows"] == 10


def test_flips_apply_the_swap_tie_band() -> None:
    from types import SimpleNamespace

    from metajudge.reports.html_views import _flips

    recs = [
        PairwiseRecord(
            id=f"p{i}",
            input=Input(question="q"),
            a=Response("s", "a"),
            b=Response("t", "b"),
            labels={},
        )
        for i in range(3)
    ]
    ds = SimpleNamespace(card=SimpleNamespace(kind="pairwise"), records=recs)
    sx = {"p0::a": 0.0, "p0::b": 0.05, "p1::a": 0.0, "p1::b": 1.0, "p2::a": 1.0, "p2::b": 0.0}
    sy = {"p0::a": 0.0, "p0::b": -0.05, "p1::a": 0.0, "p1::b": 0.5, "p2::a": 0.0, "p2::b": 1.0}
    raw = _flips(ds, ("x", "y"), (sx, sy), Items())
    band = _flips(ds, ("x", "y"), (sx, sy), Items(), eps=0.1)
    assert raw["n"] == band["n"] == 3 and band["eps"] == 0.1
    assert len(raw["rows"]) == 2 and len(band["rows"]) == 1  # p0: both within the band -> ties
    assert band["rows"][0][2:] == [-1, 1, 1]


def test_live_swap_scores_saved_and_read_for_flips(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live backbones (``--backbones``) leave scores_<bb>.jsonl; the page's flips read them."""

    import numpy as np

    from metajudge.analyses.backbone_swap import backbone_swap
    from metajudge.reports.html_run import write_html_report
    from metajudge.runs.backbone_swap import load_swap_data
    from metajudge.scores import swap_sources
    from metajudge.scores.backbone_files import score_file, write_backbone_scores
    from metajudge.scores.files import read_scores

    bbs = ["gpt-4o", "gpt-4o-mini"]
    data, _, recs = load_swap_data(
        "lftqa_eval", "geval_faithfulness", external=bbs, limit=40, data_dir=data_dir
    )
    out = tmp_path / "swap"
    paths = write_backbone_scores(out, data, recs, bbs)
    assert paths == [score_file(out, b) for b in bbs]
    rows = read_scores(paths[0])
    assert len(rows) == data.view.keys.__len__() and rows[0]["metric"] == "geval_faithfulness"
    res = backbone_swap(data, rng=np.random.default_rng(0), n_boot=20, eps=0.5)
    (out / "swap.json").write_text(res.to_json())

    def _no_external(*a: object, **k: object) -> None:
        raise AssertionError("the saved score files must be read, not the external columns")

    monkeypatch.setattr(swap_sources, "external_scores", _no_external)
    text = write_html_report(out, data_dir=data_dir).read_text(encoding="utf-8")
    assert '"compare":[{"x":"gpt-4o","y":"gpt-4o-mini","eps":0.5' in text


def test_decision_run_report_html(tmp_path: Path, data_dir: Path) -> None:
    from metajudge.reports.html_run import write_decision_html

    out = tmp_path / "decide"
    argv = ["judge", "swap", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness"]
    argv += ["--scores", "shipped:gpt-4o,gpt-4o-mini", "--x", "gpt-4o", "--y", "gpt-4o-mini"]
    assert main([*argv, "--n-boot", "50", "--out", str(out)]) == 0
    page = write_decision_html(out, metric="geval_faithfulness")
    text = _self_contained(page)
    assert "Backbone decision: can gpt-4o-mini replace gpt-4o?" in text
    assert "Non-inferiority of Y against X" in text and "data:image/png;base64," in text
    assert '"compare":[{"x":"gpt-4o","y":"gpt-4o-mini","eps":0.0' in text
    page.unlink()
    assert (
        main(["report", "render", str(out), "--format", "html"]) == 0
    )  # recognised by its decision.json
    if find_chromium() is not None or os.geteuid() == 0:
        res = _browse(page, texts=False)  # LFTQA-Eval ships scores only, no texts
        assert res["compare_detail"]


def _payload(page: Path) -> dict:
    import json

    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def _ranked_ids(p: dict, view: dict) -> list[tuple]:
    """A view's rows keyed by pair id (the item/response indices depend on what is shown), each
    with the response texts and metric scores the page stores for it."""
    return [
        (p["items"][r["i"]]["id"], r["m"], r["n"], r["h"], r["g"], r["l"], r["w"], r["s"])
        + tuple((p["resp"][k]["text"], p["resp"][k].get("sc")) for k in r["r"])
        for r in view["rows"]
    ]


def test_browser_cap_shows_the_largest_gaps_and_says_so(tmp_path: Path, data_dir: Path) -> None:
    """RAGChecker's 280 pairs with ``meta-eval --browser-cap 100``: each view holds exactly the
    100 pairs the uncapped page (``report --browser-cap 0``) ranks first, the count and the rule
    beside the view and in the warnings, only their items stored; nothing else differs."""
    from metajudge.reports.html_items import BROWSER_CAP

    out = tmp_path / "rag"
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--metrics", "bleu,rouge_l"]
    argv += ["--n-boot", "50", "--no-plots", "--out", str(out), "--quiet"]
    assert main([*argv, "--browser-cap", "100"]) == 0
    cut = _payload(out / "report.html")
    assert main(["report", "render", str(out), "--format", "html", "--browser-cap", "0"]) == 0
    full = _payload(out / "report.html")
    assert len(full["views"]) == len(cut["views"]) == 6  # 2 metrics x 3 dimensions
    for v, w in zip(cut["views"], full["views"], strict=True):
        assert len(v["rows"]) == 100 and len(w["rows"]) == 280 and "cut" not in w
        assert _ranked_ids(cut, v) == _ranked_ids(full, w)[:100]
        assert (v["total"], v["cap"]) == (280, 100)
        assert v["cut"].startswith("showing 100 of 280 pairs: the 100 with the largest gap")
        assert {k: v[k] for k in w} == {**w, "rows": v["rows"]}  # name, dim, kind, how
    shown = {cut["items"][r["i"]]["id"] for v in cut["views"] for r in v["rows"]}
    assert sorted(it["id"] for it in cut["items"]) == sorted(shown) and len(shown) < 280
    assert len(cut["resp"]) == 2 * len(shown)
    line = (
        "the disagreement browser shows at most 100 pairs per view, the largest gaps first: "
        "6 of 6 views cut (of 280 pairs); every value in the tables uses all of them "
        "(--browser-cap 0 shows all in the browser)"
    )
    assert [w for w in cut["warnings"] if w not in full["warnings"]] == [line]
    assert [w for w in full["warnings"] if w not in cut["warnings"]] == []
    same = {"items", "resp", "views", "warnings"}
    assert {k: x for k, x in cut.items() if k not in same} == {
        k: x for k, x in full.items() if k not in same
    }
    assert main(["report", "render", str(out), "--format", "html"]) == 0  # the default cap: 280 fit
    assert _payload(out / "report.html") == full and BROWSER_CAP >= 2988  # lftqa_eval fits
