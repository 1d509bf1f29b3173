"""issue 42: at level system-grouped with few systems (4 of HANNA's), every value still gets a
CI by resampling items (inputs) within the systems, the unit the comparisons resample too, and
the table names that unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

SYSTEMS = ("GPT-2", "Fusion", "HINT", "TD-VAE")
METRICS = ("hanna.bertscore_f1", "hanna.chrf")


def _four_systems(tmp_path: Path) -> tuple[Path, Path]:
    """HANNA's coherence labels of four systems as a JSONL dataset, and their metric scores."""
    import metajudge as mj
    from metajudge.data.formats import response_key
    from metajudge.data.loading import open_dataset

    ds = open_dataset("hanna")
    card = {"name": "hanna4", "kind": "likert", "dimensions": ["coherence"], "annotators": 3,
            "scale": {"min": 1, "max": 5, "values": [1, 2, 3, 4, 5]}}  # fmt: skip
    lines = [json.dumps({"card": card})]
    keep = set()
    for r in ds.records:
        if r.system in SYSTEMS:
            d = r.to_dict()
            d["scores"] = {"coherence": d["scores"]["coherence"]}
            lines.append(json.dumps(d))
            keep.add(response_key(r.id, r.system))
    data = tmp_path / "hanna4.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [
        {"key": r["key"], "metric": r["metric"], "score": r["score"]}
        for r in mj.shipped_scores(ds)
        if r["metric"] in METRICS and r["key"] in keep
    ]
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data, scores


@pytest.mark.slow
def test_system_grouped_cis_resample_items_within_systems(tmp_path: Path) -> None:
    data, scores = _four_systems(tmp_path)
    out = tmp_path / "run"
    argv = ["meta-eval", "--input", str(data), "--scores", str(scores), "--protocol", "pointwise",
            "--level", "system-grouped", "--aggregation", "mean", "--no-baselines",
            "--n-boot", "200", "--no-plots", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert res["dataset"]["n_responses"] == 4 * 96
    for c in res["cells"]:
        for s in ("pearson", "spearman"):
            e = c["stats"][s]
            assert e["ci"] is not None and e["ci_n"] == 96  # inputs, not the 4 systems
            assert "percentile" in e["ci_method"]
    assert "within every system" in res["protocol"]["bootstrap_unit"]
    comps = [c for c in res["comparisons"] if c.get("diff") is not None]
    assert comps and all(c["ci"] is not None and c["p_bootstrap"] is not None for c in comps)
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "resamples of items within every system (values and comparisons)" in md
    assert "no CI" not in md
