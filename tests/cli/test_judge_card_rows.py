"""``judge card`` rows valid at the data they have (issue 62): each part states the least data
its claim needs and, below it, what is missing and how to get it; a whole-scale interval, a
zero-width CI or a NaN never stands as an answer; every warning of card.json is beside its
row in card.html; an absent part's reason is a sentence, not an exception's text."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.cli import main


def small_rated(out: Path, labelled: int = 12, items: int = 20) -> tuple[Path, Path]:
    """Three systems' ratings (1-5) of ``items`` documents, ``labelled`` of them with a human
    label (the rest unlabelled: partial labels), and a judge column near the human score."""
    rng = np.random.default_rng(0)
    card = {
        "card": {
            "name": "small_rated",
            "kind": "likert",
            "dimensions": ["coherence"],
            "scale": {"min": 1, "max": 5},
            "annotators": 1,
        }
    }
    lines, judge = [json.dumps(card)], [("item", "system", "judge")]
    k = 0
    for i in range(items):
        for s in ("M11", "M12", "M13"):
            h = float(rng.integers(1, 6))
            rec: dict[str, Any] = {
                "id": f"d{i}",
                "input": {"question": f"document {i}"},
                "system": s,
                "response": f"summary {i} of {s}",
            }
            if k < labelled and i % 2 == 0:
                rec["scores"] = {"coherence": [h]}
                k += 1
            lines.append(json.dumps(rec))
            judge.append((f"d{i}", s, round(min(5.0, max(1.0, h + rng.normal(0, 0.7))), 3)))
    data, scores = out / "small.jsonl", out / "judge.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with scores.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(judge)
    return data, scores


#: "5.000 [5.000, 5.000]": a value with a zero-width CI
ZERO_WIDTH = re.compile(r"(-?\d+\.\d+) \[\1, \1\]")


def _card(tmp: Path, capsys, *argv: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main(["judge", "card", *argv, "--out", str(tmp / "card"), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_card_on_12_labels_says_what_is_missing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    data, scores = small_rated(tmp_path)
    argv = ["--input", str(data), "--scores", str(scores), "--judge", "judge", "--repeats", "5"]
    card = _card(tmp_path, capsys, *argv, "--n-boot", "200")
    assert card["labels"] == {"records": 60, "labelled": 12, "partial": True}
    answers = {v["question"]: v["answer"] for v in card["verdict"]}
    for q, a in answers.items():
        assert "nan" not in a.lower(), (q, a)
        assert not ZERO_WIDTH.search(a), (q, a)
        assert "width 4.00" not in a and "coverage 1.000" not in a, (q, a)
    # conformal: the least data it needs, what is missing and how to get it
    assert answers["How wide are its errors?"] == (
        "absent: 12 labels, 18 needed for a conformal interval narrower than the scale: label "
        f"6 more responses (`metajudge calibrate plan --input {data} --scores {scores}:judge "
        "--budget 6` picks which)"
    )
    assert card["parts"]["calibration"]["needs"]["missing"].startswith("12 labels, 60 needed")
    # 4 labels per system: no system's level stands as an answer
    assert card["parts"]["estimate"]["status"] == "ok"
    assert set(card["parts"]["estimate"]["withheld_systems"]) == {"M11", "M12", "M13"}
    assert "M13: no answer (4 labels, 5 needed" in answers["What are the systems worth?"]
    # every part states its need; the agreement's is met
    assert card["parts"]["agreement"]["status"] == "ok"
    page = html.unescape((tmp_path / "card" / "card.html").read_text(encoding="utf-8"))
    for v in card["verdict"]:
        assert v["answer"] in page


def test_every_warning_of_the_card_is_on_its_page(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """20 labels: conformal runs (its isotonic methods give whole-scale intervals, a warning);
    the warnings of card.json are beside their rows on the page."""
    data, scores = small_rated(tmp_path, labelled=20, items=40)
    argv = ["--input", str(data), "--scores", str(scores), "--judge", "judge", "--repeats", "3"]
    card = _card(tmp_path, capsys, *argv, "--n-boot", "100")
    assert card["parts"]["conformal"]["needs"]["met"] is True
    warnings = [
        w for p in card["parts"].values() for w in (p.get("result") or {}).get("warnings") or ()
    ]
    assert warnings, "conformal warns of its whole-scale isotonic intervals"
    page = html.unescape((tmp_path / "card" / "card.html").read_text(encoding="utf-8"))
    for w in warnings:
        assert w in page, w
    for v in card["verdict"]:
        part = card["parts"][v["part"]]
        assert v["warnings"] == list((part.get("result") or {}).get("warnings") or ())


def test_a_cje_folder_card_runs_the_estimate_with_its_transport_audit(
    data_dir: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """`judge card --input DIR --probes DIR`: calibrate estimate's numbers, transport audited."""
    import shlex

    arena = data_dir / "cje_arena_sample"
    assert arena.is_dir(), f"{arena}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    argv = ["--input", str(arena / "fresh_draws"), "--probes", str(arena / "probe_slice")]
    card = _card(tmp_path, capsys, *argv)
    est = card["parts"]["estimate"]
    assert est["status"] == "ok" and "--probes" in est["command"]
    capsys.readouterr()
    assert main([*shlex.split(est["command"])[1:]]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == est["result"]
    by = {s["system"]: s for s in est["result"]["systems"]}
    assert by["unhelpful"]["transport"] == "FAIL"
    assert "unhelpful (transport audit FAIL)" in card["decision"]["sentence"]
    assert card["labels"] == {"records": 4000, "labelled": 480, "partial": True}
    assert (tmp_path / "card" / "card.html").is_file()


BYOD = Path(__file__).resolve().parents[1] / "fixtures" / "byod"


def test_the_matrix_categorical_several_annotators(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A categorical judge, three annotators, 8 items (docs/card.md's matrix): accuracy and κ,
    no pass rates (absent, why), the disagreeing items, selective below its least data."""
    argv = ["--input", str(BYOD / "categorical.jsonl")]
    argv += ["--scores", str(BYOD / "categorical_judge.csv"), "--judge", "judge"]
    card = _card(tmp_path, capsys, *argv, "--n-boot", "100", "--repeats", "3")
    status = {n: p["status"] for n, p in card["parts"].items()}
    assert status["agreement"] == status["disagreements"] == "ok"
    assert status["verdicts"] == "absent" and "pass/fail" in card["parts"]["verdicts"]["reason"]
    assert card["parts"]["selective"]["reason"].startswith("8 labels, 60 needed")
    d = card["parts"]["disagreements"]["result"]
    assert d["judged"] == 8 and d["disagree"] == len(d["items"]) > 0
    for v in card["verdict"]:
        assert "nan" not in v["answer"].lower() and not ZERO_WIDTH.search(v["answer"])
    for p in card["parts"].values():
        assert "field " not in p.get("reason", ""), p["reason"]


def test_the_matrix_graded_one_annotator(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A graded judge, one annotator, partial labels (60 of 120): correlations with the
    inter-human ceiling undefined in words; conformal, calibration and estimates run; no
    selective (ratings), no pass rates, no item list of its own (the meta-eval browser)."""
    data, scores = small_rated(tmp_path, labelled=60, items=40)
    argv = ["--input", str(data), "--scores", str(scores), "--judge", "judge"]
    card = _card(tmp_path, capsys, *argv, "--n-boot", "100", "--repeats", "3")
    status = {n: p["status"] for n, p in card["parts"].items()}
    assert [n for n, s in status.items() if s == "ok"] == [
        "agreement",
        "conformal",
        "calibration",
        "estimate",
    ]
    v = {x["part"]: x["answer"] for x in card["verdict"]}
    assert (
        v["agreement"].startswith("Pearson 0.")
        and "inter-human ceiling: undefined" in v["agreement"]
    )
    assert "ratings" in card["parts"]["selective"]["reason"]
    assert card["parts"]["calibration"]["needs"] == {
        "claim": "held-out calibration errors (30 held-out rows per split)",
        "have": 60,
        "need": 60,
        "met": True,
        "missing": None,
    }
