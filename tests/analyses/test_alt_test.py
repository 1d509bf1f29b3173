"""`metajudge decide alt-test`: the Alternative Annotator Test (Calderon et al., ACL 2025) on the
paper's six datasets (its 36 published numbers), on a folder the project has never seen (values
computed by hand), and bad input (exit 2 naming file and field, nothing written)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from metajudge.cli import main

SUBSETS = ("cebab_aspects", "cebab_stars", "framing", "lgbteen", "mtbench", "summeval")


def _published(data_dir: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """published_alt_test.txt: ``dataset llm winning_rate advantage_probability`` per line."""
    out = {}
    text = (data_dir / "alt_test_calderon2025" / "published_alt_test.txt").read_text("utf-8")
    for line in text.splitlines():
        if line.strip():
            ds, llm, w, a = line.split()
            out[ds, llm] = (float(w), float(a))
    return out


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["decide", "alt-test", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_reproduces_the_36_published_numbers(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each dataset with the paper's settings: every winning rate and advantage probability
    equals the published one to two decimals (36 pairs)."""
    published = _published(data_dir)
    assert len(published) == 36
    seen = set()
    for subset in SUBSETS:
        j = _run_json(["--dataset", "alt_test_calderon2025", "--subset", subset], capsys)
        for r in j["llms"]:
            want = published[subset, r["llm"]]
            got = (round(r["winning_rate"], 2), round(r["advantage_probability"], 2))
            assert got == want, (subset, r["llm"])
            seen.add((subset, r["llm"]))
    assert seen == set(published)


def _write(d: Path, humans: object, llms: object) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "human_annotations.json").write_text(json.dumps(humans), encoding="utf-8")
    (d / "llm_annotations.json").write_text(json.dumps(llms), encoding="utf-8")
    return d


def _toy(tmp_path: Path) -> Path:
    """Annotators A, B, C label items 1-6 'x' (A says 'y' on item 3); the LLM m says 'y' on
    items 1, 2.

    Leaving A out (B, C remain, all 'x'): items 1, 2 A wins, item 3 m wins, 4-6 ties:
    d = [1, 1, -1, 0, 0, 0]; m wins 4/6, A 5/6. Leaving B (or C) out: items 1, 2 B wins, item 3
    scores 0.5 each (a tie), 4-6 ties: d = [1, 1, 0, 0, 0, 0]; m wins 4/6, B 6/6.
    Advantage probability = mean(4/6, 4/6, 4/6) = 2/3.
    """
    x = {str(i): "x" for i in range(1, 7)}
    humans = {"A": {**x, "3": "y"}, "B": dict(x), "C": dict(x)}
    return _write(tmp_path / "toy", humans, {"m": {**x, "1": "y", "2": "y"}})


def _t_p(d: list[float], mu: float) -> tuple[float, float]:
    """Student's one-sided t by hand: t = (mean - mu) / (sd / sqrt(n)), p = P(T_{n-1} <= t)."""
    from scipy.stats import t as student

    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in d) / (n - 1))
    t = (mean - mu) / (sd / math.sqrt(n))
    return t, float(student.cdf(t, n - 1))


def test_a_folder_never_seen_gives_the_hand_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _toy(tmp_path)
    base = ["--input", str(d), "--min-items", "6"]
    j = _run_json([*base, "--alt-epsilon", "1.0"], capsys)
    assert j["scoring"] == "accuracy" and j["label_type"] == "categorical" and j["n_items"] == 6
    (m,) = j["llms"]
    rows = {a["annotator"]: a for a in m["annotators"]}
    assert rows["A"]["llm_win_rate"] == pytest.approx(4 / 6)
    assert rows["A"]["human_win_rate"] == pytest.approx(5 / 6)
    assert rows["B"]["human_win_rate"] == pytest.approx(1.0)
    t_a, p_a = _t_p([1, 1, -1, 0, 0, 0], 1.0)  # t = -2.712, p = 0.0211
    t_b, p_b = _t_p([1, 1, 0, 0, 0, 0], 1.0)  # t = -3.162, p = 0.0125
    assert rows["A"]["t"] == pytest.approx(t_a) and rows["A"]["p"] == pytest.approx(p_a)
    assert rows["C"]["t"] == pytest.approx(t_b) and rows["C"]["p"] == pytest.approx(p_b)
    # BY, m = 3, H_3 = 11/6: thresholds k * 0.05 / (3 * 11/6) = 0.0091, 0.0182, 0.0273; the
    # largest p (0.0211) is under the third: all three rejected
    assert p_a <= 3 * 0.05 / (3 * 11 / 6) and p_b > 0.05 / (3 * 11 / 6)
    assert m["winning_rate"] == 1.0 and m["passed"] is True
    assert m["advantage_probability"] == pytest.approx(2 / 3)
    # the default ε = 0.2: mean d = 1/6 and 1/3 are above it, no annotator beaten
    j = _run_json(base, capsys)
    assert j["epsilon"] == 0.2 and j["llms"][0]["winning_rate"] == 0.0
    # the default 30 items per annotator drops all three annotators: refused, naming the LLM
    assert main(["decide", "alt-test", "--input", str(d)]) == 2
    assert "field m" in capsys.readouterr().err


def test_ratings_use_negative_rmse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Numbers: neg RMSE. Items 1-4, A = B = C = 3 except A = 5 on item 1; m = 4 on item 1 and
    3 elsewhere. Leaving A out: item 1 m (-1) beats A (-2), the rest ties: m wins 4/4, A 3/4.
    Leaving B out (A, C remain, 5 and 3 on item 1): B scores -sqrt(2), m -sqrt(1): m wins;
    m wins 4/4 of B's and C's items too. Advantage probability 1."""
    three = {str(i): 3 for i in range(1, 5)}
    humans = {"A": {**three, "1": 5}, "B": dict(three), "C": dict(three)}
    d = _write(tmp_path / "ratings", humans, {"m": {**three, "1": 4}})
    j = _run_json(["--input", str(d), "--min-items", "4"], capsys)
    assert j["scoring"] == "neg_rmse" and j["label_type"] == "numeric"
    rows = {a["annotator"]: a for a in j["llms"][0]["annotators"]}
    assert rows["A"]["human_win_rate"] == pytest.approx(3 / 4)
    assert rows["B"]["human_win_rate"] == pytest.approx(3 / 4)
    assert j["llms"][0]["advantage_probability"] == 1.0


def _bad_cases(tmp_path: Path) -> list[tuple[Path, str, str]]:
    """(folder, file named, field named) of each kind of bad input."""
    x = {str(i): "x" for i in range(40)}
    out = []
    d = _write(tmp_path / "ids", {"A": x, "B": x}, {"m": {"q1": "x"}})
    out.append((d, "llm_annotations.json", "field m"))
    d = _write(tmp_path / "one", {"A": x}, {"m": x})
    out.append((d, "human_annotations.json", "field <root>"))
    d = _write(tmp_path / "empty", {"A": x, "B": x}, {"m": x})
    (d / "human_annotations.json").write_text("", encoding="utf-8")
    out.append((d, "human_annotations.json", "empty file"))
    d = _write(tmp_path / "emptyobj", {"A": x, "B": x}, {})
    out.append((d, "llm_annotations.json", "field <root>"))
    d = _write(tmp_path / "mixed", {"A": x, "B": {**x, "7": 3}}, {"m": x})
    out.append((d, "human_annotations.json", "field B.7"))
    d = _write(tmp_path / "mixed_llm", {"A": x, "B": x}, {"m": {**x, "2": 2.5}})
    out.append((d, "llm_annotations.json", "field m.2"))
    return out


def test_bad_input_exit_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder, file, field in _bad_cases(tmp_path):
        out = tmp_path / f"out_{folder.name}"
        assert main(["decide", "alt-test", "--input", str(folder), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert file in err and field in err and "Traceback" not in err, (folder.name, err)
        assert not (out / "alt_test.json").exists() and not (out / "alt_test.md").exists()


def test_writes_the_report_and_states_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _toy(tmp_path)
    out = tmp_path / "out"
    argv = ["decide", "alt-test", "--input", str(d), "--min-items", "6", "--alt-epsilon", "1"]
    assert main([*argv, "--out", str(out)]) == 0
    md = capsys.readouterr().out
    assert "1 of 1 LLMs pass the Alt-Test" in md and "| A | 6 | 0.667 | 0.833 |" in md
    assert json.loads((out / "alt_test.json").read_text("utf-8"))["llms"][0]["winning_rate"] == 1
    assert (out / "alt_test.md").read_text("utf-8") == md.split("wrote ")[0].rstrip("\n") + "\n"


def test_the_guide_alt_test_line_on_the_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    """The user guide's "Your own data" page: the Alt-Test line on tests/fixtures/byod/alt_test
    gives the values the page states (winning rate 1.00, advantage probability 0.67)."""
    import re
    import shlex

    page = (Path(__file__).resolve().parents[2] / "docs" / "own-data.md").read_text("utf-8")
    section = page.split("## The Alt-Test folder\n", 1)[1].split("\n## ", 1)[0]
    lines = [
        ln
        for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
        for ln in block.splitlines()
        if "decide alt-test" in ln
    ]
    assert len(lines) == 1
    argv = shlex.split(lines[0])[1:]
    assert main(argv) == 0
    md = capsys.readouterr().out
    assert "1 of 1 LLMs pass the Alt-Test" in md
    assert "winning rate 1.00, advantage probability 0.67" in md
    assert "| m | 1.00 | 0.67 | yes | 6 |" in md
    assert (
        "LLM `m` beats all three annotators (winning rate 1.00) with advantage probability 0.67"
        in " ".join(section.split())
    )


def test_items_one_side_has_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Human items without an LLM label and LLM labels of items no human labelled are left out
    and counted (nothing silent)."""
    x = {str(i): "x" for i in range(6)}
    d = _write(tmp_path / "partial", {"A": x, "B": x}, {"m": {**x, "extra": "x", "more": "y"}})
    j = _run_json(["--input", str(d), "--min-items", "6"], capsys)
    assert j["dropped"]["by_llm"]["m"]["llm_items_without_human_label"] == 2
    x2 = {**x, "6": "x"}
    d = _write(tmp_path / "partial2", {"A": x2, "B": x2}, {"m": x})
    j = _run_json(["--input", str(d), "--min-items", "6"], capsys)
    assert j["dropped"]["by_llm"]["m"]["items_without_llm_label"] == 1 and j["n_items"] == 6


def test_the_verdict_and_tables_in_the_report_and_the_html(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``decide alt-test --out`` on framing: the one-sentence verdict and the per-annotator table
    are in the decision report (alt_test.md) and in report.html."""
    import html

    out = tmp_path / "framing"
    argv = ["decide", "alt-test", "--dataset", "alt_test_calderon2025", "--subset", "framing"]
    assert main([*argv, "--data-dir", str(data_dir), "--out", str(out)]) == 0
    capsys.readouterr()
    sentence = (
        "5 of 6 LLMs pass the Alt-Test on alt_test_calderon2025/framing (winning rate >= 0.5; "
        "ε = 0.15, accuracy, BY q = 0.05): gemini_flash, gemini_pro, gpt-4o, llama-31, "
        "gpt-4o-mini; the strongest is gpt-4o (winning rate 1.00, advantage probability 0.92)."
    )
    md = (out / "alt_test.md").read_text("utf-8")
    page = (out / "report.html").read_text("utf-8")
    assert sentence.replace(">", "&gt;") in md  # Markdown text: no raw HTML (issue 44 item 18)
    assert f"Verdict: {html.escape(sentence, quote=False)}</li>" in page
    assert "| worker_3 | 2266 | 0.806 | 0.959 | 0.32 | 0.6273 | no |" in md  # llama-31
    assert '"llama-31: per annotator' in page
    assert '["worker_3",2266,0.8063,0.9594,0.3247,0.6273,"no"]' in page
