"""Every converter on the real upstream files (skipped with a reason when the data folder is absent).

Expected values are read from the raw files independently of the converters where practical.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.formats import LikertRecord, PairwiseRecord
from metajudge.data.loading import load
from metajudge.data.registry import describe_counts, list_datasets, load_card
from metajudge.data.validation import read_jsonl
from tests.conftest import Load

LABELLED = [
    "ragchecker_meta_eval",
    "lftqa_mitigation_pradhumant",
    "lftqa_eval",
    "summeval_ppairs",
    "summeval_summac_consistency",
    "hanna",
    "pandalm_testset",
    "autoj_pairwise_test",
    "llmbar",
    "judgebench",
    "unieval_topicalchat_sfres_sfhot",
    "trust_or_escalate_jung2025",
    "conformal_judge_sheng2025",
    "judging_the_judges_thakur2024",
]
BENCHMARKS = ["mudabench", "mtraig_precursor_kwondu"]
# one subset per file (per annotation set), each with its own card
COLLECTIONS = ["dmg_judge_bench", "alt_test_calderon2025"]


def test_every_folder_has_a_card() -> None:
    assert sorted(LABELLED + BENCHMARKS + COLLECTIONS) == list_datasets()


def test_cards_pin_every_upstream_file(data_dir: Path) -> None:
    """Each card lists every file of its folder (except PROVENANCE.txt and local derivations)."""
    from metajudge.data.fetch import local_relpath

    for name in list_datasets():
        card = load_card(name)
        listed = {local_relpath(sf) for sf in card.files}
        on_disk = {
            p.relative_to(data_dir / name).as_posix()
            for p in (data_dir / name).rglob("*")
            if p.is_file()
        }
        # LICENSE.upstream of dmg_judge_bench is an empty placeholder (the repo has no LICENSE)
        # published_alt_test.txt: the Alt-Test paper's numbers, read from its notebook's outputs
        on_disk -= {
            "PROVENANCE.txt",
            "DERIVED_ppairs_to_system_alignment.json",
            "LICENSE.upstream",
            "published_alt_test.txt",
        }
        assert listed == on_disk, name
        assert all(len(sf.sha256) == 64 and sf.bytes for sf in card.files)
        assert card.repository and len(card.commit) == 40 and card.license and card.direction


@pytest.mark.parametrize("name", LABELLED)
def test_ids_unique_and_labels_in_scale(load: Load, name: str) -> None:
    ds = load(name)
    assert ds.records
    keys = [r.id if isinstance(r, PairwiseRecord) else (r.id, r.system) for r in ds.records]
    assert len(keys) == len(set(keys))
    dims = set(ds.card.dimensions)
    for r in ds.records:
        lab = r.labels if isinstance(r, PairwiseRecord) else r.scores
        assert set(lab) <= dims
        assert all(v is None or ds.card.scale.contains(v) for vs in lab.values() for v in vs)


@pytest.mark.parametrize("name", LABELLED)
def test_round_trip_export_validate_load(
    load: Load, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """export → validate → load gives identical records (and the card) for every dataset."""
    out = tmp_path / f"{name}.jsonl"
    assert main(["data", "export", "--dataset", name, "-o", str(out)]) == 0
    assert main(["data", "validate", str(out)]) == 0
    assert capsys.readouterr().out.count("OK ") == 1
    card, records = read_jsonl(out)
    ds = load(name)
    assert card == ds.card
    assert records == ds.records


def test_ragchecker(data_dir: Path, load: Load) -> None:
    ds = load("ragchecker_meta_eval")
    raw = json.loads((data_dir / "ragchecker_meta_eval" / "human_labeled_data.json").read_text())
    c = describe_counts(ds)
    assert (c["pairs"], c["annotators"], len(c["dimensions"])) == (280, 2, 3)
    r = ds.records[7]
    assert (
        r.id == "7"
        and r.a.system == raw[14]["model1"]["model_name"]
        and r.b.system == raw[14]["model2"]["model_name"]
    )
    for dim in ("correctness", "completeness", "overall"):
        assert r.labels[dim] == (raw[14][f"{dim}_label"], raw[15][f"{dim}_label"])
    assert r.input.reference == raw[14]["gt_answer"] and r.meta["query_id"] == str(
        raw[14]["query_id"]
    )
    overall = Counter(v for rec in ds.records for v in rec.labels["overall"])
    assert overall == Counter({0: 170, -1: 153, 1: 139, -2: 52, 2: 46})


def test_lftqa_mitigation(data_dir: Path, load: Load) -> None:
    ds = load("lftqa_mitigation_pradhumant")
    c = describe_counts(ds)
    assert (c["records"], c["items"], c["annotators"]) == (200, 100, 2)
    assert ds.subsets == ("fetaqa", "qtsumm")
    base = data_dir / "lftqa_mitigation_pradhumant" / "human_mitigation_eval" / "annotated"
    with (
        open(base / "annotator1" / "gpt-4o_qtsumm.csv", encoding="utf-8") as f1,
        open(base / "annotator2" / "gpt-4o_qtsumm.csv", encoding="utf-8") as f2,
    ):
        rows1, rows2 = list(csv.DictReader(f1)), list(csv.DictReader(f2))
    m = {
        "Improved": 1.0,
        "Unchanged": 0.0,
        "Deteriorated": -1.0,
        "Fully Factual": None,
        "Fully Complete": None,
        "": None,
    }
    by_id = {r.id: r for r in ds.records}
    for r1, r2 in zip(rows1, rows2):
        g = by_id[f"{r1['example_id']}/{r1['original_model']}/geval"]
        assert g.labels["faithfulness"] == (
            m[r1["geval_faithfulness_label"]],
            m[r2["geval_faithfulness_label"]],
        )
        assert g.labels["completeness"] == (
            m[r1["geval_completeness_label"]],
            m[r2["geval_completeness_label"]],
        )
        t = by_id[f"{r1['example_id']}/{r1['original_model']}/mtraig_eval"]
        assert t.labels == {
            "faithfulness": (
                m[r1["mtraig_eval_faithfulness_label"]],
                m[r2["mtraig_eval_faithfulness_label"]],
            )
        }
        assert g.a.response == r1["original_answer"] and g.input.reference == r1["ideal_answer"]
    # tables parsed from the serialized text, header and rows aligned
    r = by_id["fetaqa_4/Yi-1.5-34B/geval"]
    assert r.input.tables and r.input.tables[0].header == ("Race", "Time", "Date", "Record", "Pool")
    assert all(len(row) == 5 for row in r.input.tables[0].rows)
    # the 'Fully ...' reading is an option
    tie = load("lftqa_mitigation_pradhumant", fully="tie").records[0]
    assert tie.meta["raw_labels"]["faithfulness"] == ["Fully Factual", "Fully Factual"]
    assert tie.labels["faithfulness"] == (0.0, 0.0)


def test_lftqa_eval(data_dir: Path, load: Load) -> None:
    ds = load("lftqa_eval")
    assert len(ds.records) == 1495 + 1493
    assert all(isinstance(r, LikertRecord) and r.response is None for r in ds.records)
    raw = json.loads(
        (
            data_dir / "lftqa_eval/scores/qtsumm/human_scores/human_comprehensiveness_scores.json"
        ).read_text()
    )
    by = {(r.id, r.system): r for r in ds.records}
    for row in raw[:50]:
        assert by[(row["example_id"], row["model"])].scores["comprehensiveness"] == (row["score"],)
    assert Counter(r.meta["subset"] for r in ds.records) == {"fetaqa": 1495, "qtsumm": 1493}
    assert len({r.id for r in ds.records}) == 300


def test_summeval_ppairs_expansion(load: Load) -> None:
    ds = load("summeval_ppairs")
    c = describe_counts(ds)
    assert (c["records"], c["items"], c["systems"]) == (1600, 100, 16)
    assert c["pairs"] == 100 * (16 * 15 // 2) == 12000
    p = ds.pairs()[0]
    a = next(r for r in ds.records if r.id == p.meta["item_id"] and r.system == p.a.system)
    b = next(r for r in ds.records if r.id == p.meta["item_id"] and r.system == p.b.system)
    assert p.labels["coherence"] == (b.scores["coherence"][0] - a.scores["coherence"][0],)


def test_summac(data_dir: Path, load: Load) -> None:
    ds = load("summeval_summac_consistency")
    raw = json.loads((data_dir / "summeval_summac_consistency" / "summeval.json").read_text())
    assert len(ds.records) == 100 and ds.pairs() == []  # one summary per document: pointwise only
    r = ds.records[0]
    assert r.scores["consistency"] == tuple(float(x) for x in raw[r.id]["annotations"])
    assert r.meta["label"] == raw[r.id]["label"]


def test_hanna(data_dir: Path, load: Load) -> None:
    ds = load("hanna")
    c = describe_counts(ds)
    assert (c["records"], c["items"], c["systems"], c["annotators"], c["pairs"]) == (
        1056,
        96,
        11,
        3,
        96 * 55,
    )
    # per-annotator scores average to the CSV's mean columns
    with open(
        data_dir / "hanna" / "hanna_metric_scores_llm.csv", encoding="utf-8", newline=""
    ) as fh:
        rows = {row["Model"]: row for row in csv.DictReader(fh)}
    rel = json.loads(rows["GPT-2"]["Relevance"])
    for r in ds.records:
        if r.system == "GPT-2":
            assert abs(sum(r.scores["relevance"]) / 3 - rel[int(r.id)]) < 1e-9
    # texts: all but the 2 stories whose mean scores tie, and the Human story is the reference
    assert sum(r.response is None for r in ds.records) == 2
    human = [r for r in ds.records if r.system == "Human"]
    assert all(r.response == r.input.reference and r.input.question for r in human)


def test_pandalm(data_dir: Path, load: Load) -> None:
    ds = load("pandalm_testset")
    raw = json.loads((data_dir / "pandalm_testset" / "testset-v1.json").read_text())
    c = describe_counts(ds)
    assert (c["pairs"], c["annotators"]) == (999, 3)
    m = {1: -1.0, 2: 1.0, 0: 0.0}
    for rec, row in zip(ds.records, raw):
        assert rec.labels["preference"] == tuple(m[row[f"annotator{k}"]] for k in (1, 2, 3))
    ties = sum(1 for r in ds.records if 0.0 in r.labels["preference"])
    assert ties > 0
    assert Counter(r.labels["preference"][0] for r in ds.records) == {1.0: 475, -1.0: 427, 0.0: 97}
    assert ds.records[157].a.response == "True"


def test_autoj(load: Load) -> None:
    ds = load("autoj_pairwise_test")
    assert len(ds.records) == 1392
    assert Counter(r.labels["preference"][0] for r in ds.records) == {-1.0: 520, 1.0: 499, 0.0: 373}


def test_llmbar(data_dir: Path, load: Load) -> None:
    ds = load("llmbar")
    counts = Counter(r.meta["subset"] for r in ds.records)
    assert counts == {
        "Natural": 100,
        "Adversarial/GPTInst": 92,
        "Adversarial/GPTOut": 47,
        "Adversarial/Manual": 46,
        "Adversarial/Neighbor": 134,
        "Processed/FairEval": 66,
        "Processed/LLMEval^2": 200,
        "Processed/MT-Bench": 200,
    }
    nat = ds.subset("Natural")
    raw = json.loads((data_dir / "llmbar/LLMBar/Natural/dataset.json").read_text())
    assert [r.labels["preference"][0] for r in nat.records] == [
        -1.0 if x["label"] == 1 else 1.0 for x in raw
    ]


def test_judgebench(load: Load) -> None:
    ds = load("judgebench")
    assert len(ds.records) == 620
    gpt = ds.subset("gpt-4o-2024-05-13").records
    assert Counter(r.labels["correctness"][0] for r in gpt) == {-1.0: 193, 1.0: 157}


def test_unieval(load: Load) -> None:
    ds = load("unieval_topicalchat_sfres_sfhot")
    counts = Counter(r.meta["subset"] for r in ds.records)
    assert counts == {"topical_chat": 360, "sfres": 1181, "sfhot": 875}
    tc = ds.subset("topical_chat")
    assert len({r.id for r in tc.records}) == 60 and len(tc.pairs()) == 60 * 15
    sf = ds.subset("sfres").records
    assert all(r.input.reference for r in sf)


def test_mudabench(load: Load) -> None:
    from metajudge.data.benchmarks import load_mudabench

    s, c = load_mudabench("simple"), load_mudabench("complex")
    assert len(s) == len(c) == 166
    assert all(q.gold_facts and q.final_answer and q.question_id.startswith("q_") for q in s + c)
    assert len({q.index for q in s}) == 166
    ds = load("mudabench")
    assert describe_counts(ds)["items"] == 332 and ds.records == []


def test_mtraig(load: Load) -> None:
    from metajudge.data.benchmarks import load_mtraig_items

    items = load_mtraig_items()
    assert len(items) == 1401
    assert all(2 <= len(it.tables) <= 5 for it in items)
    t = items[0].tables[0]
    assert " | " in t.title and t.header and all(len(r) == len(t.header) for r in t.rows)
    assert describe_counts(load("mtraig_precursor_kwondu"))["items"] == 1401


def test_external_verdicts(data_dir: Path) -> None:
    from metajudge.scores.dataset_verdicts import load_external_verdicts

    v = load_external_verdicts("pandalm_testset")
    assert (
        len(v["gpt-3.5-turbo"]) == 999 and sum(x is None for x in v["gpt-3.5-turbo"].values()) == 25
    )


def test_cli_list(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines()[1:]}
    assert set(lines) == set(LABELLED + BENCHMARKS + COLLECTIONS)
    assert lines["ragchecker_meta_eval"][1:6] == ["pairwise", "280", "280", "280", "2"]
    assert lines["pandalm_testset"][1:6] == ["pairwise", "999", "999", "999", "3"]
    assert lines["summeval_ppairs"][1:5] == ["likert", "1,600", "100", "12,000"]


def test_cli_show(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "show", "--dataset", "pandalm_testset", "-n", "2"]) == 0
    out = capsys.readouterr().out
    assert '"name": "pandalm_testset"' in out and out.count('"labels"') == 2
    assert main(["data", "show", "--dataset", "mudabench", "-n", "1"]) == 0
    assert "question_id" in capsys.readouterr().out
    assert main(["data", "show", "--dataset", "nope"]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err


def test_cli_export_pairs_and_refusals(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hanna_pairs.jsonl"
    assert main(["data", "export", "--dataset", "hanna", "--pairs", "-o", str(out)]) == 0
    card, recs = read_jsonl(out)
    assert card is not None and card.kind == "pairwise" and len(recs) == 5280
    for name, extra in (("mudabench", []), ("summeval_summac_consistency", ["--pairs"])):
        bad = tmp_path / f"{name}.jsonl"
        assert main(["data", "export", "--dataset", name, "-o", str(bad), *extra]) == 2
        assert not bad.exists()
        assert "metajudge: error:" in capsys.readouterr().err


def _patched_card_dir(
    tmp_path: Path, data_dir: Path, name: str, rel: str, new_bytes: bytes
) -> Path:
    """A data folder + cards folder where file ``rel`` of ``name`` is replaced (and re-pinned)."""
    import hashlib
    import shutil

    dd = tmp_path / "dd"
    shutil.copytree(data_dir / name, dd / name)
    (dd / name / rel).chmod(0o644)
    (dd / name / rel).write_bytes(new_bytes)
    cards = tmp_path / "cards"
    cards.mkdir()
    card = json.loads(
        (Path(__file__).resolve().parents[2] / "human_labels" / f"{name}.json").read_text()
    )
    for f in card["files"]:
        if f["local"] == rel:
            f["sha256"] = hashlib.sha256(new_bytes).hexdigest()
            f["bytes"] = len(new_bytes)
    (cards / f"{name}.json").write_text(json.dumps(card))
    return dd


def test_upstream_label_outside_mapping_names_line(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metajudge.errors import InputError

    lines = (
        (data_dir / "autoj_pairwise_test" / "testdata_pairwise.jsonl")
        .read_text(encoding="utf-8")
        .splitlines(True)
    )
    row = json.loads(lines[2])
    row["label"] = 5
    lines[2] = json.dumps(row) + "\n"
    dd = _patched_card_dir(
        tmp_path,
        data_dir,
        "autoj_pairwise_test",
        "testdata_pairwise.jsonl",
        "".join(lines).encode(),
    )
    monkeypatch.setenv("METAJUDGE_CARDS_DIR", str(tmp_path / "cards"))
    with pytest.raises(InputError) as ei:
        load("autoj_pairwise_test", data_dir=dd)
    assert (ei.value.line, ei.value.field) == (3, "label") and "unexpected label 5" in str(ei.value)
    assert ei.value.path and ei.value.path.endswith("testdata_pairwise.jsonl")


def test_upstream_value_outside_scale_names_item(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metajudge.errors import InputError

    rows = json.loads((data_dir / "ragchecker_meta_eval" / "human_labeled_data.json").read_text())
    rows[5]["overall_label"] = 3
    dd = _patched_card_dir(
        tmp_path,
        data_dir,
        "ragchecker_meta_eval",
        "human_labeled_data.json",
        json.dumps(rows).encode(),
    )
    monkeypatch.setenv("METAJUDGE_CARDS_DIR", str(tmp_path / "cards"))
    with pytest.raises(InputError) as ei:
        load("ragchecker_meta_eval", data_dir=dd)
    assert ei.value.field == "rows [4],[5] -> 2: labels.overall[1]"
    assert "outside the declared scale" in str(ei.value)


def test_trust_or_escalate_pairs_labels_and_judge_columns(load: Load, data_dir: Path) -> None:
    """Labels and probabilities read from the raw JSONL lines independently of the converter."""
    from metajudge.scores.shipped import shipped_scores

    raw = [
        json.loads(line)
        for line in (data_dir / "trust_or_escalate_jung2025" / "gpt-4-turbo.calibration.jsonl")
        .read_text()
        .splitlines()
    ]
    ds = load("trust_or_escalate_jung2025")
    assert len(ds.records) == len(raw) == 500
    want = Counter(-1.0 if r["preferences"]["human"] == 1 else 1.0 for r in raw)
    assert Counter(r.labels["preference"][0] for r in ds.records) == want == {1.0: 259, -1.0: 241}
    r0 = ds.records[0]
    assert (r0.a.response, r0.b.response) == tuple(raw[0]["outputs"])
    rows = shipped_scores(ds)
    assert sorted({r["metric"] for r in rows}) == [
        "gpt-3.5-turbo",
        "gpt-4-turbo",
        "mistral-7b-instruct",
    ]
    renorm = Counter(r["metric"] for r in rows if r["side"] == "a" and r["details"]["renormalised"])
    assert renorm == {"gpt-3.5-turbo": 396, "mistral-7b-instruct": 347, "gpt-4-turbo": 1}
    g4 = {(r["item"], r["side"]): r["score"] for r in rows if r["metric"] == "gpt-4-turbo"}
    assert g4[("0", "a")] == raw[0]["probs"][0] and g4[("0", "b")] == raw[0]["probs"][1]
