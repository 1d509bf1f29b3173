"""``metajudge data agreement``: α against the krippendorff package, Fleiss κ against Fleiss (1971)."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from metajudge.analyses.annotator_agreement import AgreementOptions, agreement, fleiss_kappa
from metajudge.cli import main
from metajudge.data.loading import load as load_file
from metajudge.stats.agreement import level_for, rating_matrix
from tests.conftest import Load

BYOD = Path(__file__).parents[1] / "fixtures" / "byod"

# Fleiss (1971) worked example as tabulated in the Wikipedia article "Fleiss' kappa":
# 10 subjects, 14 raters, 5 categories; kappa = 0.210 (P = 0.378, P_e = 0.213).
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_textbook_example() -> None:
    units = [[float(c) for c, n in enumerate(row) for _ in range(n)] for row in FLEISS_COUNTS]
    assert round(fleiss_kappa(np.array(units)), 3) == 0.210


def test_fleiss_kappa_uneven_raters_ignores_missing() -> None:
    x = np.array([[1, 1, np.nan], [2, 2, 2], [1, 2, 1.0]])
    # unit 1 has two ratings: P_1 = (4 - 2) / 2 = 1
    p_bar = (1 + 1 + 1 / 3) / 3
    p = np.array([4, 4]) / 8
    assert fleiss_kappa(x) == pytest.approx((p_bar - (p**2).sum()) / (1 - (p**2).sum()))


@pytest.mark.parametrize(
    ("name", "level"), [("hanna", "ordinal"), ("ragchecker_meta_eval", "ordinal")]
)
def test_alpha_matches_krippendorff_package(load: Load, name: str, level: str) -> None:
    ds = load(name)
    res = agreement(ds)
    for row in res.rows:
        assert row.level == level
        x = rating_matrix(ds, row.dimension)
        want = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
        assert row.alpha == pytest.approx(want, abs=1e-9)


def test_published_numbers_hanna_ragchecker(load: Load) -> None:
    """The values quoted in the closing note of issue 12 (seed 0, 100 splits)."""
    got = {
        n: {
            r.dimension: (round(r.alpha, 3), round(r.fleiss_kappa, 3))
            for r in agreement(load(n)).rows
        }
        for n in ("hanna", "ragchecker_meta_eval")
    }
    assert got["ragchecker_meta_eval"] == {
        "correctness": (0.587, 0.309),
        "completeness": (0.683, 0.461),
        "overall": (0.684, 0.41),
    }
    assert got["hanna"]["relevance"] == (0.165, 0.059)
    assert got["hanna"]["complexity"] == (0.266, 0.099)
    rc = agreement(load("ragchecker_meta_eval")).rows[2]
    assert rc.cohen_pairs == 1 and rc.annotators == 2  # exactly two raters: Cohen's kappa itself


def test_categorical_fixture_nominal_alpha() -> None:
    ds = load_file(BYOD / "categorical.jsonl")
    res = agreement(ds)
    (row,) = res.rows
    assert row.level == "nominal" and res.label_kind == "categorical"
    x = rating_matrix(ds, "safe")
    want = krippendorff.alpha(reliability_data=x.T, level_of_measurement="nominal")
    assert row.alpha == pytest.approx(want, abs=1e-12)
    assert (row.ratings_min, row.ratings_max) == (2, 3)  # one rater skipped one reply
    assert np.isnan(row.split_half)  # not defined for nominal labels


def test_level_override_and_levels() -> None:
    ds = load_file(BYOD / "graded.jsonl")
    r = agreement(ds, AgreementOptions(level="interval")).rows[0]
    x = rating_matrix(ds, "coherence")
    assert r.level == "interval"
    assert r.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=x.T, level_of_measurement="interval")
    )
    assert level_for("binary", has_values=False, ordered=False) == "nominal"
    assert level_for("categorical", has_values=False, ordered=True) == "ordinal"
    assert level_for("numeric", has_values=False, ordered=False) == "interval"


def test_split_half_is_seeded() -> None:
    ds = load_file(BYOD / "graded.jsonl")
    a = agreement(ds, AgreementOptions(seed=1)).rows[0].split_half
    b = agreement(ds, AgreementOptions(seed=1)).rows[0].split_half
    assert a == b


def test_cli_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = str(BYOD / "pairwise.jsonl")
    assert main(["data", "agreement", "--input", f]) == 0
    out = capsys.readouterr().out
    assert "Krippendorff α" in out and "overall" in out and "split-half" in out
    o = tmp_path / "agree.json"
    assert main(["data", "agreement", "--input", f, "-o", str(o)]) == 0
    js = json.loads(o.read_text())
    assert js["label_kind"] == "pairwise" and js["dimensions"][0]["dimension"] == "overall"
    assert main(["data", "agreement", "--input", f, "--format", "csv"]) == 0
    assert "dimension,level,units" in capsys.readouterr().out
    assert (
        main(["data", "agreement", "--input", f, "--format", "md", "-o", str(tmp_path / "a.md")])
        == 0
    )
    assert "\n|---|---|" in (tmp_path / "a.md").read_text()
    assert main(["data", "agreement", "--dataset", "mudabench"]) == 2


def test_continuous_labels_get_alpha_and_split_half_not_kappa(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: κ on continuous labels counted every distinct value as a category, silently.
    A 0-100 slider rated by three people: κ is not given and the output says why; α (interval)
    and split-half are."""
    rng = np.random.default_rng(0)
    card = {"name": "slider", "kind": "likert", "dimensions": ["quality"]}
    card["scale"] = {"min": 0, "max": 100}
    lines = [json.dumps({"card": card})]
    for i in range(30):
        base = rng.uniform(10, 90)
        scores = [round(float(np.clip(base + rng.normal(0, 8), 0, 100)), 1) for _ in range(3)]
        rec = {"id": f"r{i}", "input": {"question": "q"}, "system": "s", "response": "x"}
        lines.append(json.dumps({**rec, "scores": {"quality": scores}}))
    src = tmp_path / "slider.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["data", "agreement", "--input", str(src), "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    (row,) = res["dimensions"]
    assert row["distinct_values"] > 10 and row["kappa_skipped"].startswith(
        f"{row['distinct_values']} distinct values"
    )
    assert row["fleiss_kappa"] is None and row["cohen_pairs"] == 0  # NaN is null in JSON
    assert row["alpha"] > 0.5 and row["split_half"] > 0.5
    assert any(n.startswith("quality: no κ:") for n in res["notes"])
    assert main(["data", "agreement", "--input", str(src)]) == 0
    text = capsys.readouterr().out
    assert "quality: no κ:" in text and "Krippendorff α at level" in text
