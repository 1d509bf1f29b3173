"""``metajudge calibrate estimate`` on CJE's arena sample (``cje_arena_sample``: 1,000 Arena
prompts x 4 systems, 480 labels for base, 50 labelled probes for each other system), read as CJE
writes it, against cje-eval 0.9.3's numbers in its PROVENANCE.txt; and the inputs it refuses.

The numbers pinned here are the user guide's (docs/calibrating.md, "Few labels")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

#: cje-eval 0.9.3, analyze_dataset(fresh_draws_dir=...): estimate, CI (PROVENANCE.txt)
CJE = {
    "base": (0.7544, 0.7339, 0.7748),
    "clone": (0.7641, 0.7456, 0.7827),
    "parallel_universe_prompt": (0.7646, 0.7492, 0.7799),
}
#: cje-eval 0.9.3's CI widths over its fold seeds 0..19 (calibrate_dataset's random_seed; the
#: default is 42): median per system. Its 5-fold jackknife makes the width itself noisy
#: (parallel_universe_prompt: from 0.022 to 0.080), so the default seed's 0.0307 is one draw.
#: Measured by benchmarks/bench_estimate_arena.py.
CJE_MEDIAN_WIDTH = {"base": 0.0396, "clone": 0.0438, "parallel_universe_prompt": 0.0469}
#: ours (seed 0, 40 folds): estimate, CI
OURS = {
    "base": (0.7565, 0.7367, 0.7763),
    "clone": (0.7635, 0.7434, 0.7835),
    "parallel_universe_prompt": (0.7640, 0.7422, 0.7859),
    "unhelpful": (0.4145, 0.2053, 0.6237),
}


def _arena(data_dir: Path) -> Path:
    d = data_dir / "cje_arena_sample"
    assert d.is_dir(), f"{d}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    return d


def _estimate(capsys, *argv: str) -> dict:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main(["calibrate", "estimate", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _error(capsys, *argv: str) -> str:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main(["calibrate", "estimate", *argv]) == 2
    return capsys.readouterr().err


@pytest.fixture(scope="module")
def arena_json(data_dir: Path) -> dict:
    import contextlib
    import io

    d = _arena(data_dir)
    out = io.StringIO()
    argv = ["calibrate", "estimate", "--input", str(d / "fresh_draws"), "--format", "json"]
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--probes", str(d / "probe_slice")]) == 0
    return json.loads(out.getvalue())


def test_arena_estimates_match_cje(arena_json: dict) -> None:
    by = {s["system"]: s for s in arena_json["systems"]}
    for name, (value, lo, hi) in CJE.items():
        s = by[name]
        assert abs(s["value"] - value) < 0.005, name
        # no wider than cje-eval's by 20%: base and clone against its default seed,
        # parallel_universe_prompt against the median over its fold seeds (see CJE_MEDIAN_WIDTH)
        ref = CJE_MEDIAN_WIDTH[name] if name == "parallel_universe_prompt" else hi - lo
        assert s["hi"] - s["lo"] <= 1.2 * ref, name
        assert round(s["hi"] - s["lo"], 3) <= round(CJE_MEDIAN_WIDTH[name], 3), name
    for name, (value, lo, hi) in OURS.items():
        got = tuple(round(by[name][k], 4) for k in ("value", "lo", "hi"))
        assert got == (value, lo, hi), name
    assert [by[n]["route"] for n in sorted(by)] == ["augmented", "borrowed", "borrowed", "borrowed"]
    assert by["base"]["labelled"] == 480 and by["clone"]["labelled"] == 0
    assert any("borrowed calibration" in n for n in arena_json["notes"])


def test_arena_gates(arena_json: dict) -> None:
    verdicts = {a["system"]: a["verdict"] for a in arena_json["transport"]}
    assert verdicts == {
        "clone": "INCONCLUSIVE",
        "parallel_universe_prompt": "INCONCLUSIVE",
        "unhelpful": "FAIL",
    }
    by = {s["system"]: s for s in arena_json["systems"]}
    assert by["unhelpful"]["level_claim"].startswith("refused")
    assert "transport audit FAIL" in by["unhelpful"]["level_claim"]
    # borrowed systems without a transport PASS claim no level (issue 63: they did not cover)
    assert by["base"]["level_claim"] == "ok"
    for n in ("clone", "parallel_universe_prompt"):
        assert by[n]["level_claim"] == "refused: no labels of its own: label ≥ 5 of its items"
    # the selection gate: base's 480 labels were drawn at random among all rows
    gate = arena_json["selection_gate"]
    assert not gate["flagged"] and gate["p"] > 0.01 and gate["warning"] is None
    # cje-eval: unhelpful -0.331 [-0.403, -0.259] (another calibration mode); ours the same side
    audit = {a["system"]: a for a in arena_json["transport"]}["unhelpful"]
    assert audit["hi"] < -0.05 and audit["clusters"] == 50
    assert tuple(round(audit[k], 3) for k in ("delta", "lo", "hi")) == (-0.275, -0.321, -0.230)
    judge = {n: round(s["judge_mean"]["value"], 4) for n, s in by.items()}
    assert judge == {
        "base": 0.8413,
        "clone": 0.8491,
        "parallel_universe_prompt": 0.8485,
        "unhelpful": 0.2454,
    }
    assert round(by["unhelpful"]["support"]["outside_share"], 3) == 0.013
    assert 0 < by["unhelpful"]["support"]["outside_share"] < 0.05  # support alone does not flag it


def test_arena_differences_are_paired_and_holm_adjusted(arena_json: dict) -> None:
    diffs = {(d["a"], d["b"]): d for d in arena_json["differences"]}
    assert len(diffs) == 6
    d = diffs[("clone", "parallel_universe_prompt")]
    assert d["shared_clusters"] == 1000 and d["conditional_on_transport"]
    # paired: the difference of two borrowed systems is far narrower than either CI
    assert d["hi"] - d["lo"] < 0.4 * (0.7835 - 0.7434)
    assert all(d["p_holm"] >= d["p"] for d in diffs.values())


def test_markdown_says_borrowed(data_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    d = _arena(data_dir)
    assert main(["calibrate", "estimate", "--input", str(d / "fresh_draws")]) == 0
    out = capsys.readouterr().out
    assert "| clone (borrowed) | 0 / 1000 |" in out and "Note: borrowed calibration" in out


def _copy(src: Path, dst: Path, edit=None) -> Path:  # type: ignore[no-untyped-def]
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.glob("*.jsonl")):
        rows = [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        if edit is not None:
            rows = [edit(f.name, i, r) for i, r in enumerate(rows)]
        text = "".join(json.dumps(r) + "\n" for r in rows if r is not None)
        (dst / f.name).write_text(text, encoding="utf-8")
    return dst


def test_label_outside_the_scale(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    def bad(name: str, i: int, r: dict) -> dict:
        if name.startswith("base") and i == 2:
            r["oracle_label"] = 1.5
        return r

    d = _copy(_arena(data_dir) / "fresh_draws", tmp_path / "fd", bad)
    err = _error(capsys, "--input", str(d))
    assert "base_responses.jsonl:3: field oracle_label: label 1.5 outside the scale [0, 1]" in err


def test_no_labels_nothing_to_borrow(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    def strip(name: str, i: int, r: dict) -> dict:
        r.pop("oracle_label", None)
        return r

    d = _copy(_arena(data_dir) / "fresh_draws", tmp_path / "fd", strip)
    err = _error(capsys, "--input", str(d))
    assert "no system has them to borrow from" in err and "Traceback" not in err


def test_all_equal_judge_scores(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    def flat(name: str, i: int, r: dict) -> dict:
        r["judge_score"] = 0.5
        return r

    d = _copy(_arena(data_dir) / "fresh_draws", tmp_path / "fd", flat)
    assert "every judge score is 0.5" in _error(capsys, "--input", str(d))


def test_probe_rows_shared_with_calibration(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    arena = _arena(data_dir)
    base = [json.loads(x) for x in (arena / "fresh_draws" / "base_responses.jsonl").open()]
    probes = tmp_path / "probes"
    probes.mkdir()
    labelled = [r for r in base if r.get("oracle_label") is not None][:25]
    (probes / "base_probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labelled))
    err = _error(capsys, "--input", str(arena / "fresh_draws"), "--probes", str(probes))
    assert "25 probe row(s) are also labelled rows of the calibration data" in err


def test_probe_under_20_clusters_is_inconclusive(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    arena = _arena(data_dir)
    probes = _copy(
        arena / "probe_slice",
        tmp_path / "probes",
        lambda name, i, r: r if i < 15 else None,
    )
    res = _estimate(capsys, "--input", str(arena / "fresh_draws"), "--probes", str(probes))
    audits = {a["system"]: a for a in res["transport"]}
    assert {a["verdict"] for a in audits.values()} == {"INCONCLUSIVE"}
    assert (
        audits["unhelpful"]["clusters"] == 15
        and "15 clusters < 20" in audits["unhelpful"]["reason"]
    )


@pytest.mark.slow
def test_cross_check_with_cje_eval(data_dir: Path, arena_json: dict) -> None:
    """cje-eval 0.9.3 itself (a test-time cross-check; metajudge never imports it): its
    estimates as PROVENANCE.txt gives them, ours within 0.005 of them, and its transport
    verdicts with base's calibrator equal ours."""
    import logging

    cje = pytest.importorskip("cje")
    from cje.diagnostics import audit_transportability

    logging.disable(logging.WARNING)
    try:
        d = _arena(data_dir)
        r = cje.analyze_dataset(fresh_draws_dir=str(d / "fresh_draws"))
        theirs = dict(zip(r.metadata["target_policies"], r.estimates, strict=True))
        ours = {s["system"]: s["value"] for s in arena_json["systems"]}
        for name, (value, _, _) in CJE.items():
            assert round(float(theirs[name]), 4) == value
            assert abs(ours[name] - theirs[name]) < 0.005, name
        verdicts = {}
        for name in ("clone", "parallel_universe_prompt", "unhelpful"):
            f = d / "probe_slice" / f"{name}_probe.jsonl"
            probe = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
            verdicts[name] = audit_transportability(r.calibrator, probe, delta_max=0.05).status
    finally:
        logging.disable(logging.NOTSET)
    assert verdicts == {a["system"]: a["verdict"] for a in arena_json["transport"]}


def test_binary_judge_gets_rogan_gladen(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    def binarise(name: str, i: int, r: dict) -> dict:
        r["judge_score"] = float(r["judge_score"] >= 0.8)
        if r.get("oracle_label") is not None:
            r["oracle_label"] = float(r["oracle_label"] >= 0.8)
        return r

    d = _copy(_arena(data_dir) / "fresh_draws", tmp_path / "fd", binarise)
    res = _estimate(capsys, "--input", str(d))
    by = {s["system"]: s for s in res["systems"]}
    rows = [json.loads(x) for x in (d / "base_responses.jsonl").open()]
    lab = [r for r in rows if r.get("oracle_label") is not None]
    tpr = sum(r["judge_score"] for r in lab if r["oracle_label"] == 1) / sum(
        r["oracle_label"] == 1 for r in lab
    )
    tnr = sum(1 - r["judge_score"] for r in lab if r["oracle_label"] == 0) / sum(
        r["oracle_label"] == 0 for r in lab
    )
    for name in ("base", "clone"):
        sysrows = [json.loads(x) for x in (d / f"{name}_responses.jsonl").open()]
        p = sum(r["judge_score"] for r in sysrows) / len(sysrows)
        want = min(1.0, max(0.0, (p + tnr - 1) / (tpr + tnr - 1)))
        rg = by[name]["rogan_gladen"]
        assert rg["value"] == pytest.approx(want) and rg["lo"] <= want <= rg["hi"]
    capsys.readouterr()
    assert main(["calibrate", "estimate", "--input", str(d)]) == 0
    assert "Rogan–Gladen pass rate" in capsys.readouterr().out


def test_calibration_se_matches_a_bootstrap_of_the_labels(data_dir: Path, arena_json: dict) -> None:
    """Why parallel_universe_prompt's CI is wider than cje-eval's default-seed one: its
    calibration SE (0.0104) is what refitting the map on resampled labels gives (bootstrap SD
    about 0.0096), and cje-eval's default-seed oracle variance (3.19e-5, SE 0.0056) is well
    below it (benchmarks/bench_estimate_arena.py prints all three)."""
    import importlib.util

    from metajudge.data.source import DataSource
    from metajudge.runs.calibrate_estimate import estimate_rows

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_estimate_arena.py"
    spec = importlib.util.spec_from_file_location("bench_estimate_arena", path)
    assert spec is not None and spec.loader is not None
    b = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(b)
    rows, _ = estimate_rows(DataSource(path=str(_arena(data_dir) / "fresh_draws")))
    boot = b.calibration_bootstrap(rows, 200)
    by = {s["system"]: s for s in arena_json["systems"]}
    for name in ("clone", "parallel_universe_prompt"):
        ours = by[name]["se_calibration"]
        assert 0.8 * boot[name] <= ours <= 1.25 * boot[name], (name, ours, boot[name])
        assert 3.19e-5**0.5 < 0.7 * boot[name]  # cje-eval's default-seed SE: a low draw
