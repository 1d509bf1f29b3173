"""``metajudge data agreement --scores``: released judge columns beside the human annotators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.loading import load
from metajudge.scores.spec import gather_scores


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _hand_kappa(a: list[str], b: list[str]) -> float:
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in set(a) | set(b))
    return (po - pe) / (1 - pe)


def test_thakur_judges_kappa_with_the_one_human(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nine released judges vs the one human verdict: GPT-4's Cohen κ is the hand value from
    the released CSV (0.892, as meta-eval gives); no inter-human figure (one human)."""
    res = _json(
        capsys,
        [
            "data",
            "agreement",
            "--dataset",
            "judging_the_judges_thakur2024",
            "--data-dir",
            str(data_dir),
            "--scores",
            "shipped:GPT-4,JudgeLM",
            "--format",
            "json",
        ],
    )
    by = {j["judge"]: j for j in res["judges"]}
    assert sorted(by) == ["GPT-4", "JudgeLM"]
    ds = load("judging_the_judges_thakur2024", str(data_dir))
    human = {f"{r.id}::{r.system}": r.scores["correct"][0] for r in ds.records}
    rows = [r for r in gather_scores(ds, ["shipped:GPT-4"]) if r.get("label")]
    hand = _hand_kappa([human[r["key"]] for r in rows], [r["label"] for r in rows])
    g = by["GPT-4"]
    assert g["judge_kappa"][0] == pytest.approx(hand, abs=1e-12)
    assert g["units"] == 3200 and g["missing"] == 0 and g["shared"] == [3200]
    assert round(g["judge_kappa"][0], 3) == 0.892
    assert round(by["JudgeLM"]["judge_kappa"][0], 3) == 0.174
    assert g["human_kappa"] == [None] or g["human_kappa"][0] != g["human_kappa"][0]


def test_framing_gpt4o_below_the_annotators(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Alt-Test framing (4 annotator positions, 3 per item): GPT-4o's mean α with each
    annotator (0.528) is below the annotators' with each other (0.565); adding it as a coder
    lowers the pool α from 0.567 to 0.547."""
    argv = [
        "data",
        "agreement",
        "--dataset",
        "alt_test_calderon2025",
        "--subset",
        "framing",
        "--data-dir",
        str(data_dir),
        "--scores",
        "shipped:gpt-4o,mistral-v03",
    ]
    res = _json(capsys, [*argv, "--format", "json"])
    by = {j["judge"]: j for j in res["judges"]}
    g = by["gpt-4o"]
    assert len(g["judge_alpha"]) == 4 and g["shared"] == [2200, 2552, 2266, 638]
    assert round(g["alpha_humans"], 3) == 0.567 == round(res["dimensions"][0]["alpha"], 3)
    assert round(g["alpha_with_judge"], 3) == 0.547
    assert round(g["judge_alpha_mean"], 3) == 0.528
    assert round(g["human_alpha_mean"], 3) == 0.565
    assert by["mistral-v03"]["judge_alpha_mean"] < g["judge_alpha_mean"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Judges beside the annotators" in text and "Per annotator" in text
    lines = [ln.split() for ln in text.splitlines()]
    assert ["label", "gpt-4o", "1", "2200", "0.557", "0.550", "0.557", "0.551"] in lines


def test_pairwise_judge_verdict_is_the_sign_of_b_minus_a(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trust-or-Escalate: a judge's verdict is sign(p(b) − p(a)) on the −1/+1 scale."""
    res = _json(
        capsys,
        [
            "data",
            "agreement",
            "--dataset",
            "trust_or_escalate_jung2025",
            "--data-dir",
            str(data_dir),
            "--scores",
            "shipped:gpt-4-turbo",
            "--format",
            "json",
        ],
    )
    (j,) = res["judges"]
    assert j["units"] == 500 and j["ties"] == 0
    assert round(j["judge_kappa"][0], 3) == 0.568


def test_own_score_file_columns_by_dimension(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A score file on a several-dimension set (SummEval, 4 dimensions): ``mine_coherence`` is
    a judge of coherence (a copy of annotator 1 gives α 1 with that annotator); ``mine`` names
    no dimension and is stated as not used; a file with only such columns is exit 2."""
    ds = load("alt_test_calderon2025", str(data_dir), subset="summeval")
    rows = []
    for r in ds.records:
        for metric, v in (("mine_coherence", r.scores["coherence"][0]), ("mine", 3.0)):
            rows.append(
                {"key": f"{r.id}::{r.system}", "item": r.id, "system": r.system, "side": None}
                | {"metric": metric, "score": v, "signature": "test", "details": {}, "error": None}
            )
    f = tmp_path / "scores.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in rows), encoding="utf-8")
    argv = ["data", "agreement", "--dataset", "alt_test_calderon2025", "--subset", "summeval"]
    argv += ["--data-dir", str(data_dir), "--scores", str(f), "--format", "json"]
    res = _json(capsys, argv)
    (j,) = res["judges"]
    assert (j["judge"], j["dimension"], j["units"]) == ("mine", "coherence", 1600)
    assert j["judge_alpha"][0] == pytest.approx(1.0)
    assert any("columns not used" in n and n.endswith(": mine") for n in res["notes"])
    only = tmp_path / "only.jsonl"
    only.write_text("".join(json.dumps(x) + "\n" for x in rows if x["metric"] == "mine"))
    assert main([*argv[:-4], "--scores", str(only)]) == 2
    assert "no judge column matches a dimension" in capsys.readouterr().err
