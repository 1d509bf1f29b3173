"""The Alt-Test release (alt_test_calderon2025) and Judging the Judges (judging_the_judges_thakur2024)
as built-in datasets: their records rebuild the upstream files, their released LLM / judge labels
are judge columns (``--scores shipped``) that ``meta-eval`` reads, and ``data agreement`` gives the
inter-human reference. Expected values are read from the raw files independently."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.convert_alt_test import split_id
from tests.conftest import Load

ALT = "alt_test_calderon2025"
TQA = "judging_the_judges_thakur2024"
JUDGES = (
    "JudgeLM",
    "Gemma-2B",
    "Llama3-70B",
    "Llama-70B",
    "GPT-4",
    "Llama-7B",
    "Llama3-8B",
    "Llama-13B",
    "Mistral-7B",
)
#: PROVENANCE.txt: percent agreement over the 3,200 rows with a human verdict
PUBLISHED_AGREEMENT = {
    "GPT-4": 95.00,
    "Llama3-70B": 94.41,
    "Llama-13B": 87.75,
    "Llama-70B": 86.41,
    "Mistral-7B": 85.22,
    "Llama3-8B": 83.50,
    "Llama-7B": 78.50,
    "Gemma-2B": 62.69,
    "JudgeLM": 52.06,
}


@pytest.mark.parametrize("subset", ["framing", "summeval", "lgbteen"])
def test_alt_test_records_rebuild_the_human_file(load: Load, data_dir: Path, subset: str) -> None:
    """Every (annotator, instance, label) of human_annotations.json is one slot of one record."""
    ds = load(ALT, subset=subset)
    humans = json.loads((data_dir / ALT / subset / "human_annotations.json").read_text("utf-8"))
    assert ds.card.annotators == len(humans)
    assert ds.card.kind == ("likert" if subset == "summeval" else "categorical")
    by_key = {(r.id, r.system): r for r in ds.records}
    n = 0
    for k, (_, row) in enumerate(humans.items()):
        for iid, v in row.items():
            item, system, dim = split_id(subset, iid)
            got = by_key[item, system].scores[dim][k]
            assert got == (float(v) if subset == "summeval" else v)
            n += 1
    filled = sum(v is not None for r in ds.records for vs in r.scores.values() for v in vs)
    assert filled == n


def test_alt_test_llm_labels_are_judge_columns(load: Load, data_dir: Path) -> None:
    from metajudge.scores.shipped import shipped_scores

    ds = load(ALT, subset="mtbench")
    llms = json.loads((data_dir / ALT / "mtbench" / "llm_annotations.json").read_text("utf-8"))
    rows = shipped_scores(ds, data_dir)
    assert {r["metric"] for r in rows} == set(llms)
    assert len(rows) == sum(len(v) for v in llms.values()) == 720
    got = {(r["metric"], r["item"]): r["label"] for r in rows}
    assert all(got[llm, iid] == v for llm, row in llms.items() for iid, v in row.items())


def _meta_eval(argv: list[str], out: Path) -> dict:
    assert main(["meta-eval", *argv, "--scores", "shipped", "--out", str(out), "--n-boot", "20",
                 "--paths-only"]) == 0  # fmt: off
    return json.loads((out / "result.json").read_text("utf-8"))


def _kappa(pairs: list[tuple[str, str]]) -> float:
    """Cohen's κ of two binary raters by hand: (p_o - p_e) / (1 - p_e)."""
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    pe = sum(
        (sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n)
        for c in ("True", "False")
    )
    return (po - pe) / (1 - pe)


def test_triviaqa_nine_judges_agreement_and_kappa(data_dir: Path, tmp_path: Path) -> None:
    """meta-eval with the nine released judges: percent agreement as PROVENANCE states it, and
    Cohen's κ as computed by hand from the raw CSV."""
    csv.field_size_limit(1 << 30)
    with open(data_dir / TQA / "TriviaQA_Judges_w_HumanJudgement_V2.csv", encoding="utf-8") as f:
        raw = [r for r in csv.DictReader(f) if r["Human-Eval"].strip()]
    assert len(raw) == 3200
    j = _meta_eval(["--dataset", TQA], tmp_path / "tqa")
    rows = {r["metric"]: r for r in j["rows"]}
    assert set(rows) == set(JUDGES)
    for judge in JUDGES:
        assert rows[judge]["n"] == 3200 and rows[judge]["invalid"] == 0
        assert round(100 * rows[judge]["accuracy"], 2) == PUBLISHED_AGREEMENT[judge]
        want = _kappa([(r["Human-Eval"], r[judge]) for r in raw])
        assert rows[judge]["cohen_kappa"] == pytest.approx(want, abs=1e-12)
    assert round(rows["GPT-4"]["cohen_kappa"], 3) == 0.892
    assert round(rows["Gemma-2B"]["cohen_kappa"], 3) == 0.050


def test_alt_test_subset_meta_eval_beside_the_inter_human_reference(tmp_path: Path) -> None:
    """MT-Bench (3 annotators): the six LLMs' accuracy against the majority, and the annotators'
    own leave-one-out accuracy against the same target; α as `data agreement` gives it."""
    j = _meta_eval(["--dataset", ALT, "--subset", "mtbench"], tmp_path / "mt")
    rows = {r["metric"]: r for r in j["rows"]}
    assert len(rows) == 6
    assert round(rows["gpt-4o"]["accuracy"], 3) == 0.671
    assert round(rows["mistral-v03"]["accuracy"], 3) == 0.518
    ref = rows["gpt-4o"]["reference"]
    assert ref["annotators"] == 3 and round(ref["alpha"], 4) == 0.5190
    assert round(ref["annotator_accuracy"], 3) == 0.696
    assert round(ref["judge_accuracy"], 3) == 0.601


def test_agreement_and_data_commands_take_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "agreement.json"
    assert main(["data", "agreement", "--dataset", ALT, "--subset", "framing", "-o", str(out)]) == 0
    (row,) = json.loads(out.read_text("utf-8"))["dimensions"]
    assert round(row["alpha"], 3) == 0.567
    assert row["annotators"] == 4 and row["units"] == 2552
    assert main(["data", "show", "--dataset", TQA]) == 0
    assert '"records": 3200' in capsys.readouterr().out
    assert main(["data", "show", "--dataset", ALT]) == 0
    shown = capsys.readouterr().out
    for subset in ("cebab_aspects", "cebab_stars", "framing", "lgbteen", "mtbench", "summeval"):
        assert f'"{subset}"' in shown
