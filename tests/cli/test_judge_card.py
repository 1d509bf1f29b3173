"""``metajudge judge card`` (issue 45): cards of three released judges reproduce, number for
number, what the separate commands print on the same data and seeds (each card part names its
command; the test runs that command through the CLI and compares); a card on a partial-label
file carries the calibrated system estimates and their gates, and says which parts are absent
and why; card.json follows its schema."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from tests.cli.test_defined_judge_commands import GRADED, RUBRIC, scripted  # noqa: F401
from tests.data.test_partial_labels import _arena_canonical

SCHEMA = Path(__file__).resolve().parents[2] / "metajudge/data/schemas/judge_card.schema.json"
#: keys that are not results: wall time, run bookkeeping, the calibrator's rows
VOLATILE = {"timing_s", "seconds", "run", "judge_scores"}


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _card(capsys, tmp: Path, data_dir: Path, *argv: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    out = tmp / "card"
    card = _json(
        capsys,
        [
            "judge",
            "card",
            *argv,
            "--data-dir",
            str(data_dir),
            "--out",
            str(out),
            "--format",
            "json",
        ],
    )
    assert json.loads((out / "card.json").read_text(encoding="utf-8")) == card
    assert (out / "card.html").is_file() and (out / "meta_eval" / "report.html").is_file()
    _valid(card)
    return card


def _valid(card: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(card, json.loads(SCHEMA.read_text(encoding="utf-8")))


def _same_as_commands(capsys, tmp: Path, data_dir: Path, card: dict[str, Any]) -> list[str]:  # type: ignore[no-untyped-def]
    """Run each part's command through the CLI; its JSON equals the card's part (meta-eval:
    the result.json of its run folder, as it prints a table)."""
    ran = []
    for name, part in card["parts"].items():
        if part["status"] != "ok":
            assert part["reason"], name
            continue
        if "command" not in part:  # computed by the card itself
            assert part["by"].startswith("metajudge."), name
            continue
        argv = shlex.split(part["command"])[1:]
        argv = [str(tmp / f"sep_{name}") if a == "DIR" else a for a in argv]
        got = _json(capsys, [*argv, "--data-dir", str(data_dir)])
        if name == "agreement":
            got = json.loads((tmp / f"sep_{name}" / "result.json").read_text(encoding="utf-8"))
        assert _strip(got) == _strip(part["result"]), name
        ran.append(name)
    return ran


def test_gpt4o_framing_card(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["--dataset", "alt_test_calderon2025", "--subset", "framing", "--judge", "gpt-4o"]
    card = _card(capsys, tmp_path, data_dir, *argv)
    assert _same_as_commands(capsys, tmp_path, data_dir, card) == ["agreement", "alt_test"]
    v = {x["question"]: x["answer"] for x in card["verdict"]}
    assert v["May it replace the annotators?"].startswith("yes: winning rate 1.00")
    assert (
        "advantage probability 0.92, ε = 0.15, 2552 items, 4 annotators"
        in v["May it replace the annotators?"]
    )
    assert "accuracy 0.796 [0.780, 0.812]" in v["Agreement with humans"]
    assert "an annotator's 0.722" in v["Agreement with humans"]
    assert card["parts"]["selective"]["status"] == "absent"


def test_gpt4_turbo_trust_or_escalate_card(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["--dataset", "trust_or_escalate_jung2025", "--judge", "gpt-4-turbo"]
    card = _card(capsys, tmp_path, data_dir, *argv)
    ran = _same_as_commands(capsys, tmp_path, data_dir, card)
    assert ran == ["agreement", "selective", "conformal"]
    v = {x["question"]: x["answer"] for x in card["verdict"]}
    assert v["Where may it be trusted?"] == (
        "keep verdicts with confidence >= 0.9409: median 61.4% of the items kept (IQR "
        "53.3%–71.1%, mean 51.3%) over 50 splits, 11 of 50 keep nothing; agreement there 0.882 "
        "(all items: 0.783); guaranteed >= 0.85 with probability >= 0.90; population violation "
        "rate 0.100 (promised <= 0.1)"
    )
    # the selective part runs over the card's 50 splits: `calibrate selective --repeats 50`
    assert "--repeats 50" in card["parts"]["selective"]["command"]
    assert card["parts"]["selective"]["result"]["repeats"] == 50
    # the decision: the first stated rule that holds
    assert card["decision"]["sentence"] == (
        "Use with escalation: keep verdicts with confidence >= 0.9409 — about 61% of the items, "
        "agreement there >= 0.85 with probability 0.90; send the rest to humans."
    )
    assert card["decision"]["rule"].startswith("selective-keeps")
    assert card["measures"]["selective.kept"] == pytest.approx(0.614, abs=5e-4)
    assert v["Agreement with humans"].startswith("Pearson 0.636 [0.572, 0.696]")
    assert "two or more annotators per item" in card["parts"]["alt_test"]["reason"]
    assert "both orders" in card["parts"]["biases"]["reason"]
    # README's opening shows this card's verdict, row for row
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ metajudge judge card --dataset trust_or_escalate_jung2025", 1)[1]
    rows = [ln for ln in block.split("```", 1)[0].splitlines() if ln.startswith("| ")][1:]
    assert f"**Decision:** {card['decision']['sentence']}" in block.split("```", 1)[0]
    assert [r.strip("| ").split(" | ", 1) for r in rows] == [
        [x["question"], x["answer"]] for x in card["verdict"]
    ]


def test_sheng_4omini_coherence_card(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["--dataset", "conformal_judge_sheng2025", "--judge", "sheng.4omini_coherence"]
    argv += ["--dimension", "coherence", "--repeats", "3", "--n-boot", "100"]
    card = _card(capsys, tmp_path, data_dir, *argv)
    ran = _same_as_commands(capsys, tmp_path, data_dir, card)
    assert ran == ["agreement", "conformal", "calibration", "estimate"]
    v = {x["question"]: x["answer"] for x in card["verdict"]}
    assert v["How wide are its errors?"].startswith("isotonic-split: mean interval width")
    assert "ratings" in card["parts"]["selective"]["reason"]
    assert card["signature"]["data_sha256"] and card["signature"]["metajudge_version"]


def test_partial_label_card(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    arena = data_dir / "cje_arena_sample"
    assert arena.is_dir(), f"{arena}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    data, scores = _arena_canonical(arena, tmp_path)
    argv = ["--input", str(data), "--scores", str(scores), "--judge", "judge"]
    card = _card(capsys, tmp_path, data_dir, *argv, "--repeats", "5", "--n-boot", "200")
    assert card["labels"] == {"records": 4000, "labelled": 480, "partial": True}
    est = card["parts"]["estimate"]["result"]
    by = {s["system"]: s for s in est["systems"]}
    assert set(by) == {"base", "clone", "parallel_universe_prompt", "unhelpful"}
    assert [by[n]["route"] for n in sorted(by)] == ["augmented", "borrowed", "borrowed", "borrowed"]
    assert all("level_claim" in s and "support" in s for s in by.values())
    v = {x["question"]: x["answer"] for x in card["verdict"]}
    assert v["What are the systems worth?"].startswith(
        "base 0.756 [0.737, 0.776] vs raw 0.841 (level claim ok; transport not audited); clone"
    )
    absent = {n: p["reason"] for n, p in card["parts"].items() if p["status"] == "absent"}
    assert set(absent) >= {"alt_test", "selective", "biases", "self_preference"}
    assert "ratings" in absent["selective"]
    got = _json(capsys, shlex.split(card["parts"]["estimate"]["command"])[1:])
    assert _strip(got) == _strip(est)
    md = capsys.readouterr()
    assert main(["judge", "card", *argv, "--out", str(tmp_path / "md"), "--repeats", "5"]) == 0
    text = capsys.readouterr().out
    assert "480 of 4000 records labelled (partial labels)" in text
    assert "| Position and length bias (judge diagnostics) | absent |" in text
    assert text.strip().splitlines()[-1].endswith("card.html")
    del md


@pytest.mark.slow
def test_card_page_passes_the_browser_self_test(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """card.html in headless Chromium: the report self-test (sorting, the disagreement browser,
    no console error); the verdict table is the page's first table."""
    from metajudge.reports.html_check import find_chromium, selftest

    if find_chromium() is None:
        pytest.fail("chromium not found (make setup installs Debian's chromium)")
    argv = ["--dataset", "trust_or_escalate_jung2025", "--judge", "gpt-4-turbo"]
    card = _card(capsys, tmp_path, data_dir, *argv, "--n-boot", "100", "--repeats", "5")
    page = tmp_path / "card" / "card.html"
    res = selftest(page)
    assert res["errors"] == [], res["errors"]
    assert res["sort_changed"] and res["n_table_rows"] == len(card["verdict"])
    assert res["browser_rows"] > 0 and res["detail_has_response"], res
    text = page.read_text(encoding="utf-8")
    assert "Verdict: gpt-4-turbo" in text and not re.search(r'(src|href)="(https?:)?//', text)


def test_several_judges_one_comparison_page(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Three Trust-or-Escalate judges: each its card, the page side by side, and the paired
    tests equal to meta-eval's on the same columns and seed."""
    out = tmp_path / "cmp"
    argv = ["judge", "card", "--dataset", "trust_or_escalate_jung2025", "--data-dir", str(data_dir)]
    for j in ("gpt-4-turbo", "gpt-3.5-turbo", "mistral-7b-instruct"):
        argv += ["--judge", j]
    argv += ["--n-boot", "300", "--repeats", "5", "--out", str(out)]
    capsys.readouterr()
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.strip().splitlines()[-1] == str(out / "cards.html")
    row = re.search(
        r"^\| gpt-4-turbo \| (.+?) \| trust_or_escalate_jung2025 \| Pearson \| 0\.636 \[",
        text,
        re.MULTILINE,
    )
    assert row and row.group(1).startswith(("Use", "Do not", "No decision")), (
        text
    )  # the card's decision
    doc = json.loads((out / "cards.json").read_text(encoding="utf-8"))
    assert doc["cards"] == [
        f"{j}/card.html" for j in ("gpt-4-turbo", "gpt-3.5-turbo", "mistral-7b-instruct")
    ]
    for link in doc["cards"]:
        card = json.loads((out / link).with_name("card.json").read_text(encoding="utf-8"))
        _valid(card)
    tests = doc["tests"]
    assert tests["status"] == "ok" and len(tests["result"]["comparisons"]) == 6
    sep = tmp_path / "sep"
    cmd = [str(sep) if a == "DIR" else a for a in shlex.split(tests["command"])[1:]]
    assert main([*cmd, "--data-dir", str(data_dir), "--quiet", "--no-plots"]) == 0
    got = json.loads((sep / "result.json").read_text(encoding="utf-8"))["comparisons"]
    assert got == tests["result"]["comparisons"]
    # the one-line answer: the best judge against its runner-up, Williams (Holm)
    said = tests["result"]["answer"]
    assert said.startswith("gpt-4-turbo leads: pearson higher by 0.036 on 500 items than gpt-3.5")
    assert "Williams p = 0.255 (Holm of 6 comparisons), not significant at 0.05" in said
    page = (out / "cards.html").read_text(encoding="utf-8")
    assert "Judges side by side" in page and "Paired tests between the judges" in page


def test_cards_of_different_datasets_on_one_page(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """What ``make demo`` prints last: the page of cards on different datasets (no paired
    test between them, said)."""
    from metajudge.runs.judge_cards import cards_page

    cards = tmp_path / "cards"
    for name, argv in {
        "gpt-4o": [
            "--dataset",
            "alt_test_calderon2025",
            "--subset",
            "framing",
            "--judge",
            "gpt-4o",
        ],
        "gpt-4-turbo": ["--dataset", "trust_or_escalate_jung2025", "--judge", "gpt-4-turbo"],
    }.items():
        full = ["judge", "card", *argv, "--data-dir", str(data_dir), "--n-boot", "100"]
        assert main([*full, "--repeats", "2", "--out", str(cards / name)]) == 0
    page = cards_page(cards)
    text = page.read_text(encoding="utf-8")
    assert page == cards / "cards.html"
    assert "gpt-4o/card.html" in text and "gpt-4-turbo/card.html" in text
    assert "cards of different datasets or settings: no paired test between them" in text


def test_card_of_a_defined_judge_scripted(tmp_path: Path, capsys, scripted, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """A judge:PATH definition (scripted backend): meta-eval scores it once, the other parts
    read its scores; the signature carries the definition's digest and the backbone. The file
    is read once, the Alt-Test of the judge metric (two annotators) included."""
    from metajudge.data import loading

    calls: list[str] = []
    load = loading.load
    monkeypatch.setattr(loading, "load", lambda *a, **k: calls.append(str(a[0])) or load(*a, **k))
    name = f"judge:{RUBRIC}"
    out = tmp_path / "card"
    argv = ["judge", "card", "--input", str(GRADED), "--metric", name, "--dimension", "coherence"]
    card = _json(
        capsys, [*argv, "--n-boot", "50", "--repeats", "2", "--out", str(out), "--format", "json"]
    )
    _valid(card)
    sig = card["signature"]
    assert sig["backbone"] == "smollm2-135m" and sig["definition_digest"]
    assert card["parts"]["agreement"]["status"] == "ok"
    # 6 items < the Alt-Test's 30 per annotator: absent, with decide alt-test's own message
    assert "--min-items" in card["parts"]["alt_test"]["reason"]
    assert calls == [str(GRADED)]  # the card's one read, handed to every part
    ran = [n for n, p in card["parts"].items() if p["status"] == "ok"]
    assert ran == ["agreement", "estimate"]
    # 12 labels: conformal and calibrate fit state the least data they need, and do not run
    need = card["parts"]["conformal"]["needs"]
    assert need == {
        "claim": "a conformal interval narrower than the scale",
        "have": 12,
        "need": 18,
        "met": False,
        "missing": card["parts"]["conformal"]["reason"],
    }
    assert card["parts"]["calibration"]["needs"]["need"] == 60
    assert len(scripted) >= 1 and len(scripted[0].seen) == 12  # judged once, then the cache
    cmd = shlex.split(card["parts"]["estimate"]["command"])[1:]
    assert str(out / "meta_eval" / "scores.jsonl") in cmd  # where the score file lies now
    assert _strip(_json(capsys, cmd)) == _strip(card["parts"]["estimate"]["result"])


@pytest.mark.slow
@pytest.mark.llm
def test_card_of_a_defined_judge_on_the_embedded_backbone(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """judge:PATH on the real llama.cpp embedded backbone (smollm2-135m), end to end on the
    12 responses of the graded fixture: the card is written, its page renders, the
    signature names the definition and the backbone, parse failures are counted."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llama)")
    name = f"judge:{RUBRIC}"
    out = tmp_path / "card"
    argv = ["judge", "card", "--input", str(GRADED), "--metric", name, "--dimension", "coherence"]
    argv += ["--backbone", "smollm2-135m", "--n-boot", "50", "--repeats", "2", "--out", str(out)]
    card = _json(capsys, [*argv, "--format", "json"])
    _valid(card)
    assert card["signature"]["backbone"] == "smollm2-135m"
    assert card["signature"]["definition_digest"]
    assert card["parts"]["agreement"]["status"] == "ok"
    miss = card["parts"]["agreement"]["result"]["metrics"][0]["missing"]
    assert sum(m["responses_total"] for m in miss.values()) == 12
    assert (out / "card.html").stat().st_size > 10_000


def test_card_reads_its_data_once_and_shows_the_statistic_asked(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The card loads its dataset once for every part (meta-eval, conformal, fit, estimate all
    read it) and builds the meta-eval page once (card.html reuses report.html's payload, the
    same page as one built afresh from the folder); its agreement line shows the statistic it
    is given, read from the judge's cell and the inter-human ceiling of the meta-eval result."""
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.data import loading
    from metajudge.data.source import DataSource
    from metajudge.reports import html_views
    from metajudge.reports.judge_card import card_html
    from metajudge.runs.judge_card import CardOptions, run_card

    calls: list[str] = []
    load = loading.load
    monkeypatch.setattr(loading, "load", lambda *a, **k: calls.append(str(a[0])) or load(*a, **k))
    built: list[Path] = []
    meta_payload = html_views.meta_payload
    monkeypatch.setattr(
        html_views, "meta_payload", lambda out, **k: built.append(out) or meta_payload(out, **k)
    )
    src = DataSource(
        dataset="conformal_judge_sheng2025",
        judge="sheng.4omini_coherence",
        dimension="coherence",
        data_dir=data_dir,
    )
    opts = CardOptions(repeats=3, n_boot=100, statistic="spearman")
    card = run_card(src, opts, tmp_path / "card").card
    assert calls == ["conformal_judge_sheng2025"]
    assert len(built) == 1
    page = (tmp_path / "card" / "card.html").read_text(encoding="utf-8")
    assert page == card_html(card, tmp_path / "card", src.load())
    ran = [n for n, p in card["parts"].items() if p["status"] == "ok"]
    assert ran == ["agreement", "conformal", "calibration", "estimate"]
    res = MetaEvalResult(card["parts"]["agreement"]["result"])
    lo, hi = res.ci("sheng.4omini_coherence", "coherence", "spearman")
    value = res.value("sheng.4omini_coherence", "coherence", "spearman")
    answer = {v["question"]: v["answer"] for v in card["verdict"]}["Agreement with humans"]
    assert answer.startswith(f"Spearman {value:.3f} [{lo:.3f}, {hi:.3f}] on coherence")
    assert value != res.value("sheng.4omini_coherence", "coherence", "pearson")


def test_arena_card_reads_the_score_file_and_the_classes_once(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The card reads its judge's score file once: meta-eval, selective and conformal take the
    same rows, with one count of the rows dropped (a battle the dataset lacks: counted in
    meta-eval's ``run.score_ids``), and the judge's class probabilities and the units' human
    classes are read once for selective and conformal; those two parts are what their commands
    print, which drop that row as well."""
    from metajudge.analyses import selective
    from metajudge.data.loading import load
    from metajudge.data.source import DataSource
    from metajudge.runs.judge_card import CardOptions, run_card
    from metajudge.scores import files
    from tests.data.test_columnar import _arena_files, _battles, _judge_table

    _, parquet = _arena_files(tmp_path, _battles(120))
    scores = _judge_table(tmp_path, [r.id for r in load(parquet).records] + ["no-such-battle"])
    src = DataSource(path=str(parquet), scores=(str(scores),), judge="judge_p")
    reads: list[Path] = []
    probs: list[str] = []
    humans: list[str] = []
    read, cls, units = files.read_scores, selective.class_probabilities, selective.unit_classes
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(files, "read_scores", lambda p, *a, **k: reads.append(p) or read(p, *a, **k))
        mp.setattr(
            selective, "class_probabilities", lambda r, j, **k: probs.append(j) or cls(r, j, **k)
        )
        mp.setattr(selective, "unit_classes", lambda d, dim: humans.append(dim) or units(d, dim))
        card = run_card(src, CardOptions(n_boot=100, repeats=3), tmp_path / "card").card
    assert reads == [scores]
    assert probs == ["judge_p"]
    assert humans == ["preference"]
    assert card["parts"]["agreement"]["result"]["run"]["score_ids"]["rows_dropped"] == 1
    for name in ("selective", "conformal"):
        part = card["parts"][name]
        assert part["status"] == "ok", part.get("reason")
        got = _json(capsys, shlex.split(part["command"])[1:])
        assert _strip(got) == _strip(part["result"]), name
