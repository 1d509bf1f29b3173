"""``calibrate estimate --out DIR``: a run folder whose report.html draws the forest plot (each
system's calibrated estimate with its CI beside the raw judge mean with its naive CI), the
gates, the differences and the audits; checked in headless Chromium (the page's self-test), on
CJE's arena sample."""

from __future__ import annotations

import json
import os
from pathlib import Path

from metajudge.cli import main
from metajudge.reports.html_check import find_chromium, selftest


def test_estimate_run_folder_has_the_forest_plot(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    d = data_dir / "cje_arena_sample"
    assert d.is_dir(), f"{d}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    out = tmp_path / "est"
    argv = ["calibrate", "estimate", "--input", str(d / "fresh_draws")]
    assert main([*argv, "--probes", str(d / "probe_slice"), "--out", str(out)]) == 0
    assert "forest plot" in capsys.readouterr().err
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert res["kind"] == "calibrate-estimate"
    assert (out / "estimate.md").read_text(encoding="utf-8").startswith("# Calibrated estimates")
    page = out / "report.html"
    text = page.read_text(encoding="utf-8")
    assert '"forest":' in text and "Transport audits" in text
    page.unlink()
    assert main(["report", "render", str(out), "--format", "html"]) == 0  # re-rendered
    if find_chromium() is None and os.geteuid() != 0:
        return  # the Chromium check runs where make setup installed it (CI runs as root)
    r = selftest(page)
    assert r["errors"] == [] and r["sort_changed"], r
    f = r["forest"]
    by = {s["system"]: s for s in res["systems"]}
    assert (f["rows"], f["cal"], f["raw"]) == (4, 4, 4) and f["width"] > 600
    assert f["names"] == [
        "base",
        "clone (borrowed)",
        "parallel_universe_prompt (borrowed)",
        "unhelpful (borrowed)",
    ]
    b = by["base"]
    assert f["titles"][0] == f"base calibrated: {b['value']:.4f} [{b['lo']:.4f}, {b['hi']:.4f}]"
    raw = b["judge_mean"]
    assert f["titles"][1] == (
        f"base raw judge mean: {raw['value']:.4f} [{raw['lo']:.4f}, {raw['hi']:.4f}]"
    )
    # drawn where the numbers are: x grows with the value (calibrated and raw marks alike)
    values = [v for s in res["systems"] for v in (s["value"], s["judge_mean"]["value"])]
    order = sorted(range(8), key=lambda j: values[j])
    assert [f["x"][j] for j in order] == sorted(f["x"])
    assert f["x"][0] < f["x"][1]  # base: the calibrated estimate left of the raw judge mean
