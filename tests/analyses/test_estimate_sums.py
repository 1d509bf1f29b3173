"""``calibrate estimate`` from sums (a Parquet judge-score table summed in a streaming scan)
against the in-memory path on the same rows: every estimate, interval and gate to 1e-12."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from metajudge.analyses.calibration.crossfit import crossfit_rows, fit_crossfit
from metajudge.analyses.calibration.estimate import Settings, calibrated_estimates
from metajudge.analyses.calibration.sums import ScoreSums, breaks_of, sums_estimates
from metajudge.data import judge_table
from metajudge.data.source import DataSource
from metajudge.errors import InputError
from metajudge.runs import calibrate_estimate as runs

#: labels per system: one borrowed (0), one fully labelled (all its 60 rows)
LABELS = {"s0": 40, "s1": 0, "s2": 70, "s3": 25, "s4": 60, "s5": 45}


def write_table(folder: Path, prompts: int = 1500, seed: int = 3) -> Path:
    """Partitions of a judge-score table: every system answers the same prompts (clustered
    across systems), judge scores on a 0.01 grid (ties at the maps' thresholds), some outside
    the labelled range; ``s4`` has 60 rows, all labelled."""
    rng = np.random.default_rng(seed)
    folder.mkdir()
    for k, (system, n_lab) in enumerate(LABELS.items()):
        n = 60 if system == "s4" else prompts
        quality = rng.normal(0.45 + 0.05 * k, 0.2, n)
        judge = np.round(quality + rng.normal(0, 0.15, n), 2)
        label = np.full(n, np.nan)
        pick = rng.choice(n, n_lab, replace=False)
        label[pick] = np.clip(quality[pick] + rng.normal(0, 0.1, n_lab), 0, 1)
        table = pa.table(
            {
                "system": pa.array([system] * n).dictionary_encode(),
                "prompt_id": np.arange(n),
                "judge_score": judge,
                "oracle_label": pa.array(label, from_pandas=True),
            }
        )
        sub = folder / f"part={k // 3}"
        sub.mkdir(exist_ok=True)
        pq.write_table(table, sub / f"{system}.parquet", row_group_size=400)
    return folder


def same(a: Any, b: Any, where: str = "") -> None:
    """``a`` and ``b`` equal, their floats to 1e-12 (relative)."""
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(
            a, b, rel_tol=1e-12, abs_tol=1e-300
        ), (where, a, b)
    else:
        assert a == b, (where, a, b)


def streamed(folder: Path, st: Settings) -> Any:
    raw, scale = judge_table.labelled_rows(folder)
    cal = crossfit_rows(raw, scale=scale, source="t")
    cf = fit_crossfit(cal, seed=st.seed, folds=st.folds)
    return sums_estimates(cal, cf, judge_table.scan(folder, ScoreSums(breaks_of(cf))), st)


@pytest.mark.parametrize("folds", [40, 5])
def test_sums_equal_the_in_memory_path(tmp_path: Path, folds: int) -> None:
    folder = write_table(tmp_path / "t")
    st = Settings(folds=folds)
    rows, scale = judge_table.judge_table_rows(folder)
    mem = calibrated_estimates(crossfit_rows(rows, scale=scale, source="t"), st=st)
    got = streamed(folder, st)
    assert {s["route"] for s in mem.systems} == {"augmented", "borrowed", "labels"}
    assert any(s["support"]["outside_share"] > 0 for s in mem.systems)
    same(mem.systems, got.systems, "systems")
    same(mem.selection_gate, got.selection_gate, "selection_gate")
    same(mem.calibration, got.calibration, "calibration")
    assert mem.differences and got.differences == []
    assert "paired differences" in got.notes[-1]


def test_segments_reproduce_every_map(tmp_path: Path) -> None:
    """Each map read as a + b·t on its segment is the map (np.interp) at every score."""
    folder = write_table(tmp_path / "t")
    raw, scale = judge_table.labelled_rows(folder)
    cf = fit_crossfit(crossfit_rows(raw, scale=scale, source="t"))
    sums = ScoreSums(breaks_of(cf))
    x = np.concatenate([sums.breaks, np.linspace(-0.5, 1.5, 2001)])
    seg = np.searchsorted(sums.breaks, x, side="right")
    for params in [cf.full, *cf.folds]:
        a, b = sums.curve(params)
        want = np.interp(x, params["x"], params["y"])
        np.testing.assert_allclose(a[seg] + b[seg] * (x - sums.origins[seg]), want, atol=1e-15)


def test_the_command_streams_above_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_table(tmp_path / "t")
    src = DataSource(path=str(folder))
    whole = runs.run_estimate(src)
    monkeypatch.setattr(judge_table, "STREAM_ROWS", 1000)
    assert runs.streams(src)
    part = runs.run_estimate(src, out=str(tmp_path / "run"))
    same(whole.result.systems, part.result.systems, "systems")
    assert whole.result.differences and not part.result.differences
    assert "streamed" in part.markdown
    assert (tmp_path / "run" / "report.html").is_file()
    with pytest.raises(InputError, match="--plan needs the rows in memory"):
        runs.run_estimate(src, plan=str(tmp_path / "plan.csv"))


def test_refusals(tmp_path: Path) -> None:
    folder = write_table(tmp_path / "t")
    with pytest.raises(InputError, match="clustered by prompt_id"):
        judge_table.labelled_rows(folder, "meta.q")
    t = pa.table({"system": ["a", "a"], "prompt_id": [1, 1], "judge_score": [0.1, 0.2]})
    pq.write_table(t, tmp_path / "nolabel.parquet")
    with pytest.raises(InputError, match="oracle_label"):
        judge_table.judge_table_rows(tmp_path / "nolabel.parquet")
    t = t.append_column("oracle_label", pa.array([0.5, None]))
    pq.write_table(t, tmp_path / "d.parquet")
    with pytest.raises(InputError, match="seen twice"):
        judge_table.judge_table_rows(tmp_path / "d.parquet")
    pq.write_table(t.append_column("draw_idx", pa.array([0, 1])), tmp_path / "x.parquet")
    with pytest.raises(InputError, match="draw_idx"):
        judge_table.labelled_rows(tmp_path / "x.parquet")
    assert not judge_table.is_judge_table(tmp_path / "nope.parquet")
    assert not judge_table.is_judge_table("tests")


def test_hive_partitions_give_the_system(tmp_path: Path) -> None:
    """``system=NAME/`` folders without a system column: the same estimates as with it."""
    flat = write_table(tmp_path / "flat")
    hive = tmp_path / "hive"
    for f in sorted(flat.rglob("*.parquet")):
        t = pq.read_table(f)
        (hive / f"system={f.stem}").mkdir(parents=True)
        pq.write_table(t.drop_columns(["system"]), hive / f"system={f.stem}" / "0.parquet")
    assert judge_table.is_judge_table(hive)
    st = Settings(folds=5)
    same(streamed(flat, st).systems, streamed(hive, st).systems, "systems")


def test_a_binary_judge_streams_without_rogan_gladen(tmp_path: Path) -> None:
    """0/1 judge scores and labels: the estimates as in memory; the Rogan–Gladen rate (a
    bootstrap of the rows) only in memory, and a note says so."""
    rng = np.random.default_rng(5)
    folder = tmp_path / "b"
    folder.mkdir()
    for k in range(4):
        good = rng.random(800) < 0.4 + 0.1 * k
        judge = np.where(rng.random(800) < 0.85, good, ~good).astype(float)
        label = np.full(800, np.nan)
        pick = rng.choice(800, 40, replace=False)
        label[pick] = good[pick]
        pq.write_table(
            pa.table(
                {
                    "system": [f"s{k}"] * 800,
                    "prompt_id": [f"p{i}" for i in range(800)],
                    "judge_score": judge,
                    "oracle_label": pa.array(label, from_pandas=True),
                }
            ),
            folder / f"{k}.parquet",
        )
    st = Settings(folds=5, n_boot=200)
    rows, scale = judge_table.judge_table_rows(folder)
    mem = calibrated_estimates(crossfit_rows(rows, scale=scale, source="t"), st=st)
    assert all("rogan_gladen" in s for s in mem.systems)
    got = streamed(folder, st)
    same([{k: v for k, v in s.items() if k != "rogan_gladen"} for s in mem.systems], got.systems)
    assert "Rogan–Gladen" in got.notes[-1]
