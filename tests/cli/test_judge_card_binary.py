"""``judge card`` of binary (pass/fail) graders (issue 62): two inspect_ai graders on 400
labelled answers (``tests/fixtures/frameworks/inspect/graders.eval``, written by inspect_ai):
each card states accuracy and Cohen's κ with CIs, the TPR and TNR with Wilson CIs, and the pass
rate corrected for the grader's errors (Rogan–Gladen; PPI++ where labels are partial), overall
and per system, beside the grader's own rate; its absent parts say why in a user's words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOG = FIXTURES / "frameworks" / "inspect" / "graders.eval"
ANSWERS = FIXTURES / "byod" / "answers.jsonl"


def _card(tmp: Path, capsys, *argv: str, data: Path = ANSWERS) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    out = tmp / "card"
    args = ["judge", "card", "--input", str(data), "--scores", str(LOG), *argv]
    assert main([*args, "--n-boot", "200", "--out", str(out), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _truth(grader: str) -> dict[str, Any]:
    """The grader's verdicts read with inspect_ai itself, beside the labels of the file."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(LOG))
    verdict = {str(s.id): s.scores[grader].value == "C" for s in log.samples or ()}
    rows = [json.loads(x) for x in ANSWERS.read_text(encoding="utf-8").splitlines()[1:]]
    right = {f"{r['id']}::{r['system']}": r["scores"]["correct"][0] == "pass" for r in rows}
    return {"verdict": verdict, "right": right}


@pytest.mark.parametrize("grader", ["strict_grader", "lenient_grader"])
def test_a_binary_graders_card(grader: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    card = _card(tmp_path, capsys, "--judge", grader)
    t = _truth(grader)
    wrong = [k for k, ok in t["right"].items() if not ok]
    right = [k for k, ok in t["right"].items() if ok]
    accepted_wrong = sum(t["verdict"][k] for k in wrong)
    passed_right = sum(t["verdict"][k] for k in right)
    r = card["parts"]["verdicts"]["result"]
    assert (r["accepts_wrong"]["k"], r["accepts_wrong"]["n"]) == (accepted_wrong, len(wrong))
    assert (r["tpr"]["k"], r["tpr"]["n"]) == (passed_right, len(right))
    for rate in (r["tpr"], r["tnr"]):
        assert rate["lo"] < rate["value"] < rate["hi"]  # a Wilson interval, not zero width
    # Rogan–Gladen on every response: the judge's rate corrected by its TPR and TNR
    from metajudge.stats.ppi import rogan_gladen

    everything = r["pass_rates"][0]
    p_obs = sum(t["verdict"].values()) / len(t["verdict"])
    assert everything["judge"]["value"] == pytest.approx(p_obs)
    assert everything["rogan_gladen"]["value"] == pytest.approx(
        rogan_gladen(p_obs, r["tpr"]["value"], r["tnr"]["value"])
    )
    assert [p["scope"] for p in r["pass_rates"]] == ["all responses", "sys_a", "sys_b"]
    assert all(p["ppi"] is None for p in r["pass_rates"])  # every answer labelled
    v = {x["question"]: x["answer"] for x in card["verdict"]}
    assert v["Agreement with humans"].startswith("accuracy 0.")
    assert "Cohen κ" in v["Agreement with humans"] and "nan" not in v["Agreement with humans"]
    assert f"({accepted_wrong} of {len(wrong)}) of the fail answers" in v["What does it pass?"]
    assert "corrected (Rogan–Gladen)" in v["What does it pass?"]
    # the disagreement browser: every item where grader and humans differ, its explanation
    d = card["parts"]["disagreements"]["result"]
    wrongly = [k for k in t["right"] if t["verdict"][k] != t["right"][k]]
    assert d["disagree"] == d["explained"] == len(wrongly) and d["judged"] == 400
    from inspect_ai.log import read_eval_log

    said = {str(s.id): s.scores[grader].explanation for s in read_eval_log(str(LOG)).samples}
    for x in d["items"]:
        assert x["explanation"] == said[f"{x['id']}::{x['system']}"] and x["human"] != x["judge"]
    page = (tmp_path / "card" / "card.html").read_text(encoding="utf-8")
    assert "Disagreements with the humans" in page
    # no exception's text as a reason
    sel = card["parts"]["selective"]
    assert sel["status"] == "absent" and "details.probs" in sel["reason"]
    assert "field " not in sel["reason"] and "item 'q" not in sel["reason"]


def test_the_lenient_grader_passes_too_much(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    card = _card(tmp_path, capsys, "--judge", "lenient_grader")
    r = card["parts"]["verdicts"]["result"]
    assert r["accepts_wrong"]["value"] > 0.4
    assert all(p["excess"] > 0.05 for p in r["pass_rates"])
    assert "too high" in {x["part"]: x["answer"] for x in card["verdict"]}["verdicts"]


def test_partial_labels_give_ppi(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Half of the questions unlabelled: PPI++ beside Rogan–Gladen, per system too."""
    lines = ANSWERS.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for x in lines[1:]:
        r = json.loads(x)
        if int(r["id"][1:]) % 2:
            r.pop("scores")
        out.append(json.dumps(r))
    data = tmp_path / "partial.jsonl"
    data.write_text("\n".join(out) + "\n", encoding="utf-8")
    card = _card(tmp_path, capsys, "--judge", "strict_grader", data=data)
    assert card["labels"] == {"records": 400, "labelled": 200, "partial": True}
    rates = card["parts"]["verdicts"]["result"]["pass_rates"]
    for p in rates:
        assert p["ppi"]["lo"] < p["ppi"]["value"] < p["ppi"]["hi"], p["scope"]
    assert "PPI++" in {x["part"]: x["answer"] for x in card["verdict"]}["verdicts"]


def test_two_graders_compared_by_mcnemar(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """`--judge` twice: one comparison page with McNemar (Holm) naming the better grader."""
    from metajudge.analyses.verdict_accuracy import mcnemar

    capsys.readouterr()
    out = tmp_path / "cards"
    argv = ["judge", "card", "--input", str(ANSWERS), "--scores", str(LOG)]
    argv += ["--judge", "strict_grader", "--judge", "lenient_grader", "--n-boot", "100"]
    assert main([*argv, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads((out / "cards.json").read_text(encoding="utf-8"))
    (c,) = doc["tests"]["result"]["comparisons"]
    strict, lenient = _truth("strict_grader"), _truth("lenient_grader")
    keys = sorted(strict["right"])
    ra = [strict["verdict"][k] == strict["right"][k] for k in keys]
    rb = [lenient["verdict"][k] == lenient["right"][k] for k in keys]
    b, cc, p, _ = mcnemar(ra, rb)
    assert (c["only_a_right"], c["only_b_right"], c["n"]) == (b, cc, 400)
    assert c["p"] == pytest.approx(p) and c["p_holm"] == pytest.approx(p)
    assert c["test"].startswith("McNemar")
    said = doc["tests"]["result"]["answer"]
    assert (
        said.startswith("use strict_grader: accuracy higher by") and "significant at 0.05" in said
    )
    assert "not significant" not in said
    assert f"**Which judge?** {said}" in text
    assert said in (out / "cards.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("require", "code"),
    [
        (["agreement>=0.9", "tpr.lower>=0.9", "kappa.lower>=0.6"], 0),
        (["agreement>=0.9", "tnr>=0.99"], 3),
        (["alt-test=pass"], 2),  # one annotator: no Alt-Test on this data
        (["bogus>=1"], 2),  # unknown: refused before anything runs
    ],
)
def test_require_gates_the_card(require: list[str], code: int, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["judge", "card", "--input", str(ANSWERS), "--scores", str(LOG)]
    argv += ["--judge", "strict_grader", "--n-boot", "100", "--out", str(tmp_path / "c")]
    argv += [a for r in require for a in ("--require", r)]
    assert main(argv) == code
    if require[0] == "bogus>=1":
        assert not (tmp_path / "c").exists()
        return
    card = json.loads((tmp_path / "c" / "card.json").read_text(encoding="utf-8"))
    states = [r["status"] for r in card["requirements"]]
    assert states == {0: ["pass"] * 3, 3: ["pass", "fail"], 2: ["unmeasurable"]}[code]
    assert card["decision"]["sentence"] and card["decision"]["rules"][-1]["holds"]
    assert any(r["holds"] for r in card["decision"]["rules"])
