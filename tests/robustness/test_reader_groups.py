"""Issue 66, groups 7, 8, 11, 12, 13, 14, 16, 17 and 20: hostile files through the readers, by
the commands a user runs. Each is exit 2 naming the file (line, field, member) or a correct
result with what was read said; never a traceback.

- 7: an inspect_ai ``.eval`` member that inflates past the bound (``metajudge.limits``);
- 8: a 4,000-digit integer (under Python's 4,300-digit guard, past a float's range) in score
  rows, labels, a card, an Alt-Test file, a CJE folder, a deepeval file, a definition's scale;
- 11: a CSV cell over 131,072 characters;
- 12: wrong types in framework files;
- 13: a ragas CSV cut inside a quoted cell or mid-row;
- 14: ``calibrate plan --half-width 1e-300`` and a plan probability of 1e-300;
- 16: a promptfoo score of 1.7e308;
- 17: NaN oracle labels and an empty system file in a CJE folder;
- 20: ``calibrate estimate --method ppi`` and ``decide drift`` on a binary built-in dataset.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import warnings
import zipfile
from pathlib import Path

import pytest

from metajudge.cli import main

FIX = Path(__file__).parents[1] / "fixtures"
GRADED = FIX / "byod" / "graded.jsonl"
FW = FIX / "frameworks"
HEADER, RECORD = GRADED.read_text(encoding="utf-8").splitlines()[:2]
BIG = "7" * 4000  # under Python's 4,300-digit guard: int() reads it, float() overflows


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    capsys.readouterr()
    try:
        rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    got = capsys.readouterr()
    return rc, got.out, got.err


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *where: str) -> str:
    rc, _, err = _run(argv, capsys)
    assert rc == 2, (rc, err[-800:])
    assert "Traceback" not in err
    for w in where:
        assert w in err, (w, err[-800:])
    return err


def _responses() -> list[tuple[str, str]]:
    lines = GRADED.read_text(encoding="utf-8").splitlines()[1:]
    return [(r["id"], r["system"]) for r in map(json.loads, lines)]


def _arena(data_dir: Path) -> list[str]:
    src = data_dir / "cje_arena_sample" / "fresh_draws" / "base_responses.jsonl"
    assert src.is_file(), f"{src}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    return src.read_text(encoding="utf-8").splitlines()


# -- group 7: a .eval member that inflates past the bound -------------------------------------------
def test_eval_member_past_the_bound_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a 1.9 MB log whose header.json inflated to 2 GB took 4 GB (52 s). After: the
    declared size is checked first; exit 2 naming the file and the member. (The bound is
    lowered here to 1 MiB so that the test writes a 2 MiB member, not a 300 MiB one.)"""
    from metajudge import limits

    monkeypatch.setattr(limits, "MAX_ARCHIVE_MEMBER_BYTES", 2**20)
    p = tmp_path / "bomb.eval"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", '{"version": 2, "pad": "' + " " * 2 * 2**20 + '"}')
    before = p.read_bytes()
    for argv in (["data", "doctor", str(p)], ["meta-eval", "--input", str(GRADED), "--scores"]):
        if argv[0] == "meta-eval":
            argv = [*argv, str(p), "--no-plots", "--quiet", "--out", str(tmp_path / "o")]
        err = _refused(argv, capsys, str(p), "header.json", "above the limit of 1.0 MiB")
        assert "inflates to 2.0 MiB" in err
    assert p.read_bytes() == before


# -- group 8: 4,000-digit integers ------------------------------------------------------------------
def _labels_big(tmp_path: Path) -> Path:
    r = json.loads(RECORD)
    r["scores"]["coherence"] = ["@", *r["scores"]["coherence"][1:]]
    p = tmp_path / "labels.jsonl"
    p.write_text(HEADER + "\n" + json.dumps(r).replace('"@"', BIG) + "\n", encoding="utf-8")
    return p


def test_a_4000_digit_integer_in_score_rows_labels_and_cards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``OverflowError: int too large to convert to float`` tracebacks from meta-eval,
    data validate and data agreement. After: exit 2 naming file, line and field."""
    (a, sa), (b, sb) = _responses()[:2]
    rows = [
        {"item": a, "system": sa, "metric": "bleu", "score": 0.5},
        {"item": b, "system": sb, "metric": "bleu", "score": "@"},
    ]
    s = tmp_path / "scores.jsonl"
    s.write_text("\n".join(json.dumps(r) for r in rows).replace('"@"', BIG) + "\n")
    out = str(tmp_path / "out")
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(s), "--out", out, "--quiet"]
    _refused(argv, capsys, "scores.jsonl:2: field score", "outside the range of a float")
    lab = _labels_big(tmp_path)
    where = "labels.jsonl:2: field scores.coherence[]"
    _refused(["data", "validate", str(lab)], capsys, where, "4000 digits")
    _refused(["data", "agreement", "--input", str(lab)], capsys, where)
    card = tmp_path / "card.jsonl"
    card.write_text(HEADER.replace('"max": 5', f'"max": {BIG}') + "\n" + RECORD + "\n")
    _refused(["data", "validate", str(card)], capsys, "card.jsonl:1: field card.scale.max")


def test_a_4000_digit_integer_in_alt_test_cje_deepeval_and_a_definition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    """Before: ``OverflowError`` from decide alt-test, calibrate estimate and plan, and a
    ``ValueError`` from the YAML constructor for a 5,000-digit ``scale.max``. After: exit 2
    naming file, line and field."""
    alt = tmp_path / "alt"
    shutil.copytree(FIX / "byod" / "alt_test", alt)
    h = alt / "human_annotations.json"
    h.write_text(h.read_text(encoding="utf-8").replace('"item3": "y"', f'"item3": {BIG}'))
    _refused(["decide", "alt-test", "--input", str(alt)], capsys, "human_annotations.json:5")
    fd = tmp_path / "fd"
    fd.mkdir()
    first, *rest = _arena(data_dir)
    r = json.loads(first)
    r["judge_score"] = "@"
    (fd / "base_responses.jsonl").write_text("\n".join([json.dumps(r), *rest]).replace('"@"', BIG))
    where = "base_responses.jsonl:1: field judge_score"
    _refused(["calibrate", "estimate", "--input", str(fd)], capsys, where)
    _refused(["calibrate", "plan", "--input", str(fd), "--half-width", "0.05"], capsys, where)
    de = json.loads((FW / "deepeval" / "test_run.json").read_text(encoding="utf-8"))
    de["testCases"][0]["metricsData"][0]["score"] = "@"
    dp = tmp_path / "de.json"
    dp.write_text(json.dumps(de).replace('"@"', BIG), encoding="utf-8")
    _refused(["data", "doctor", str(dp)], capsys, "de.json:1: field testCases[].metricsData[]")
    yml = (FIX / "judges" / "faithfulness_rubric.yaml").read_text(encoding="utf-8")
    for digits in (4000, 5000):
        d = tmp_path / f"judge{digits}.yaml"
        d.write_text(yml.replace("  max: 5", "  max: " + "7" * digits), encoding="utf-8")
        argv = ["metrics", "run", "--input", str(GRADED), "--metrics", f"judge:{d}"]
        argv += ["-o", str(tmp_path / "s.jsonl"), "--quiet"]
        _refused(argv, capsys, f"judge{digits}.yaml:9: field max", f"{digits} digits")


# -- group 11: CSV cells over 131,072 characters ----------------------------------------------------
def _ragas_rows() -> list[list[str]]:
    text = (FW / "ragas" / "results.csv").read_text(encoding="utf-8")
    return list(csv.reader(io.StringIO(text)))


def _write_csv(p: Path, rows: list[list[str]]) -> Path:
    with p.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return p


def test_a_csv_cell_over_131072_characters_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``_csv.Error: field larger than field limit (131072)`` tracebacks from data
    doctor, meta-eval --scores and calibrate conformal --input. After: the ragas file reads
    (a 200,000-character ``retrieved_contexts`` cell); a rating CSV with such a cell is exit 2
    naming the cell, not the csv module's limit."""
    rows = _ragas_rows()
    col = rows[0].index("retrieved_contexts")
    rows[1][col] = "x" * 200_000
    p = _write_csv(tmp_path / "ragas.csv", rows)
    rc, out, err = _run(["data", "doctor", str(p)], capsys)
    assert rc == 0 and "ragas" in out, err[-800:]
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(p), "--no-plots", "--quiet"]
    rc, _, err = _run([*argv, "--out", str(tmp_path / "o")], capsys)
    assert rc == 0, err[-800:]
    wide = tmp_path / "wide.csv"
    lines = ["item,system,bleu,note"]
    lines += [
        f'{i},{s},0.{k},"{"x" * 200_000 if k == 0 else "ok"}"'
        for k, (i, s) in enumerate(_responses())
    ]
    wide.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["calibrate", "conformal", "--input", str(GRADED), "--scores", f"{wide}:bleu"]
    # (a wide table's other columns are scores too: a text cell there is refused, by name)
    argv += ["--dimension", "coherence"]
    err = _refused(argv, capsys, "wide.csv:2: field note", "non-numeric score")
    assert "field limit" not in err and "characters left out" in err and len(err) < 2500
    rating = tmp_path / "rating.csv"
    rating.write_text("1,2,3,human\n-0.1,-2.3," + "9" * 200_000 + ",2\n", encoding="utf-8")
    err = _refused(["calibrate", "conformal", "--ratings", str(rating)], capsys, "rating.csv:2")
    assert "field limit" not in err and "characters left out" in err and len(err) < 2500


# -- group 12: wrong types in framework files -------------------------------------------------------
def test_wrong_types_in_framework_files_are_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``AttributeError: 'str' object has no attribute 'get'`` (deepeval
    ``metricsData: {"x": 1}``) and ``'list' object has no attribute 'get'`` (promptfoo
    ``vars: ["x"]``). After: exit 2 naming file and field."""
    de = json.loads((FW / "deepeval" / "test_run.json").read_text(encoding="utf-8"))
    de["testCases"][0]["metricsData"] = {"x": 1}
    dp = tmp_path / "de.json"
    dp.write_text(json.dumps(de), encoding="utf-8")
    _refused(["data", "doctor", str(dp)], capsys, "de.json: field testCases[0].metricsData")
    pf = json.loads((FW / "promptfoo" / "results.json").read_text(encoding="utf-8"))
    pf["results"]["results"][0]["vars"] = ["x"]
    pp = tmp_path / "pf.json"
    pp.write_text(json.dumps(pf), encoding="utf-8")
    where = "pf.json: field results.results[0].vars"
    _refused(["data", "doctor", str(pp)], capsys, where, "expected an object, got a list")
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(pp), "--quiet"]
    _refused([*argv, "--out", str(tmp_path / "o")], capsys, where)


# -- group 13: a truncated ragas CSV ----------------------------------------------------------------
def test_a_truncated_ragas_csv_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: cut inside a quoted cell, exit 0 with "12 of 12 responses dropped"; cut mid-row,
    the last row read with two missing values. After: exit 2 naming file and line."""
    text = (FW / "ragas" / "results.csv").read_text(encoding="utf-8")
    quoted = tmp_path / "cut_quoted.csv"
    quoted.write_text(text[: text.index('"', len(text) // 2) + 5], encoding="utf-8")
    row = tmp_path / "cut_row.csv"
    row.write_text(text.rstrip("\n").rsplit(",", 2)[0] + "\n", encoding="utf-8")
    for p, what in ((quoted, "ends inside a quoted cell"), (row, "a row of 5 cells")):
        _refused(["data", "doctor", str(p)], capsys, f"{p}:", what)
        argv = ["meta-eval", "--input", str(GRADED), "--scores", str(p), "--quiet"]
        _refused([*argv, "--out", str(tmp_path / "o")], capsys, f"{p}:", what)


# -- group 14: tiny numbers -------------------------------------------------------------------------
def test_tiny_half_width_and_plan_probability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    """Before: ``ZeroDivisionError`` (--half-width 1e-300) and an estimate of 1.3e296 with no
    CI (a plan probability of 1e-300). After: exit 2 naming the option or file, line and
    field; an ordinary half-width still plans."""
    fd = str(data_dir / "cje_arena_sample" / "fresh_draws")
    for h in ("1e-300", "1e-100"):
        _refused(["calibrate", "plan", "--input", fd, "--half-width", h], capsys, "--half-width")
    rc, _, err = _run(["calibrate", "plan", "--input", fd, "--half-width", "0.05"], capsys)
    assert rc == 0, err[-800:]
    rows = [json.loads(x) for x in _arena(data_dir)]
    lab = [r for r in rows if r.get("oracle_label") is not None]
    d = tmp_path / "labelled"
    d.mkdir()
    pilot = [dict(r, oracle_label=None) if k % 2 else r for k, r in enumerate(lab)]
    (d / "base_responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pilot))
    plan = tmp_path / "plan.csv"
    cand = [r for k, r in enumerate(lab) if k % 2][:3]
    lines = ["system,item,cluster,judge_score,probability,selected"]
    lines += [f"base,{r['prompt_id']}#0,{r['prompt_id']},0.5,1e-300,1" for r in cand]
    plan.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["calibrate", "estimate", "--input", str(d), "--plan", str(plan)]
    _refused(argv, capsys, "plan.csv:2: field probability", "below 1e-09")


# -- group 16: a promptfoo score of 1.7e308 ---------------------------------------------------------
def test_a_score_of_1_7e308_gives_a_reason_not_overflow_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: Pearson "—" with numpy overflow warnings and no reason, and (plots on) a
    ``ValueError`` from matplotlib's ticks. After: exit 0, no warning, the reason in the table
    and result.json; Spearman still computed."""
    pf = json.loads((FW / "promptfoo" / "results.json").read_text(encoding="utf-8"))
    pf["results"]["results"][0]["gradingResult"]["componentResults"][0]["score"] = 1.7e308
    p = tmp_path / "pf.json"
    p.write_text(json.dumps(pf), encoding="utf-8")
    out = tmp_path / "o"
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(p), "--out", str(out)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the run
        rc, _, err = _run([*argv, "--n-boot", "200"], capsys)
    assert rc == 0 and "Warning" not in err, (rc, err[-800:])
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    text = json.dumps(res)
    assert "Pearson's sums of squares overflow a float" in text
    assert "overflow a float" in (out / "table.md").read_text(encoding="utf-8")
    assert (out / "scatter.png").is_file()


# -- group 17: silent losses in a CJE folder --------------------------------------------------------
def test_nan_labels_and_an_empty_system_file_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    """Before: a NaN oracle_label read as unlabelled without a word, an empty
    clone_responses.jsonl made the system vanish. After: both in the estimate's notes (and
    on stderr for plan)."""
    rows = [json.loads(x) for x in _arena(data_dir)]
    k = next(i for i, r in enumerate(rows) if r.get("oracle_label") is not None)
    rows[k]["oracle_label"] = float("nan")
    fd = tmp_path / "fd"
    fd.mkdir()
    (fd / "base_responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (fd / "clone_responses.jsonl").write_text("")
    rc, out, err = _run(["calibrate", "estimate", "--input", str(fd), "--format", "json"], capsys)
    assert rc == 0, err[-800:]
    notes = json.loads(out)["notes"]
    assert (
        f"base_responses.jsonl: 1 oracle_label(s) given as NaN, read as unlabelled (line {k + 1})"
        in notes
    )
    assert "clone_responses.jsonl: no responses, so system 'clone' is not estimated" in notes
    rc, _, err = _run(["calibrate", "plan", "--input", str(fd), "--half-width", "0.05"], capsys)
    assert rc == 0 and "note: clone_responses.jsonl: no responses" in err, err[-800:]


# -- group 20: a binary built-in dataset ------------------------------------------------------------
def test_ppi_and_drift_on_binary_labels(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    """Before: ``ValueError: could not convert string to float: 'True'`` tracebacks (labels
    'True'/'False'). After: the labels and the judges' verdicts read as 0/1: PPI++ runs and
    covers the full-data human mean; the drift gate compares two judges."""
    ds = ["--dataset", "judging_the_judges_thakur2024"]
    argv = ["calibrate", "estimate", "--method", "ppi", *ds, "--scores", "shipped:Llama-7B"]
    rc, out, err = _run([*argv, "--n-labelled", "50", "--format", "json"], capsys)
    assert rc == 0, err[-800:]
    got = json.loads(out)
    # the share of 'True' among the 3,200 human verdicts; the judge's own share is higher
    assert got["n_units"] == 3200 and got["full_human_mean"] == pytest.approx(0.6371875)
    assert got["covers_full"]["PPI++"] and got["judge_only"]["value"] > got["full_human_mean"]
    argv = ["decide", "drift", *ds, "--metric", "Llama-7B", "--n-boot", "200"]
    argv += ["--scores", "before=shipped:Llama-7B", "--scores", "after=shipped:Mistral-7B"]
    rc, out, err = _run(argv, capsys)
    assert rc in (0, 1) and "Traceback" not in err, (rc, err[-800:])
    assert re.search(r"flip rate", out), out[-800:]
    assert "decide ppi" not in out + err
