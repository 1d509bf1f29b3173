"""``judge:PATH`` (issue 38): a judge defined in a YAML file, through the registry, the judge
client and the response cache, with a scripted backend standing in for the model (the real
llama.cpp backbone runs in test_defined_llm.py).

Bad definitions exit 2 through ``metajudge metrics run`` naming the file and the key, with no
backend ever built (:func:`no_model`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import Choice, Request, TokenLogprob
from metajudge.cli import main
from metajudge.metrics.base import iter_responses
from metajudge.metrics.registry import get_metric
from tests.metrics.judges.test_metrics import ScriptedBackend

FIX = Path(__file__).parents[2] / "fixtures"
RUBRIC = FIX / "judges" / "faithfulness_rubric.yaml"
PAIRWISE = FIX / "judges" / "pairwise_preference.yaml"
GRADED = FIX / "byod" / "graded.jsonl"  # 12 responses with their source articles
PAIRS = FIX / "byod" / "pairwise.jsonl"


def _lp(pairs: dict[str, float]) -> Choice:
    """A one-token reply whose top log-probabilities are ``pairs`` (the first is the token)."""
    top = tuple((t, math.log(p)) for t, p in pairs.items())
    return Choice(top[0][0], top[0][0], logprobs=(TokenLogprob(top[0][0], top[0][1], top),))


def _records(path: Path) -> list[Any]:
    from metajudge.data.loading import open_dataset

    return list(open_dataset(None, str(path)).records)


def _items(path: Path) -> list[Any]:
    return [r.score_item() for r in iter_responses(_records(path))]


def test_rating_by_logprobs_is_geval_expected_score() -> None:
    be = ScriptedBackend(lambda r: _lp({"4": 0.6, "5": 0.3, "3": 0.1}))
    m = get_metric(f"judge:{RUBRIC}", backend=be)
    res = m.score_batch(_items(GRADED))
    assert len(be.seen) == 12 and all(r.score == pytest.approx(4.2) for r in res)
    assert res[0].details["probs"] == {"1": 0.0, "2": 0.0, "3": 0.1, "4": 0.6, "5": 0.3}
    req = be.seen[0]
    assert req.logprobs and req.top_logprobs == 10 and req.max_tokens == 1
    assert req.grammar == "root ::= [1-5]"  # constrained: the scale's digits
    assert req.messages[0] == {"role": "system", "content": "You are a careful fact checker."}
    assert "bike lane network" in req.messages[1]["content"]  # the record's context
    assert m.summary["parse_failures"] == 0 and m.summary["items_scored"] == 12


def test_unparsed_replies_are_counted_never_scored() -> None:
    be = ScriptedBackend(lambda r: _lp({"Well": 0.9}))
    m = get_metric(f"judge:{RUBRIC}", backend=be)
    res = m.score_batch(_items(GRADED))
    assert all(r.score is None and r.error == "unparseable judge output" for r in res)
    assert m.summary["parse_failures"] == 12 and m.summary["parse_failure_rate"] == 1.0


def test_pairwise_label_probabilities_per_side_and_both_orders() -> None:
    be = ScriptedBackend(lambda r: _lp({"A": 0.6, "B": 0.3, "tie": 0.1}))
    m = get_metric(f"judge:{PAIRWISE}", backend=be)
    recs = _records(PAIRS)
    res = m.score_batch(_items(PAIRS))
    assert res[0].key.endswith("::a") and res[0].score == pytest.approx(2 / 3)
    assert res[1].key.endswith("::b") and res[1].score == pytest.approx(1 / 3)
    req = be.seen[0]
    assert recs[0].a.response in req.messages[0]["content"]
    assert req.grammar == 'root ::= ("A" | "B" | "tie")'
    ba = m.judge(recs, order="ba")  # b shown first: "A" means b better
    assert ba[0].preferred is not None and int(ba[0].preferred) == 1
    assert ba[0].details["probs"]["b"] == pytest.approx(0.6)


def _write(tmp_path: Path, text: str, name: str = "judge.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_signature_is_the_definition_and_one_character_misses_the_cache(tmp_path: Path) -> None:
    from metajudge.backends.cache import ResponseCache
    from metajudge.backends.cached import CachedBackend

    text = RUBRIC.read_text()
    one = _write(tmp_path, text, "one.yaml")
    two = _write(
        tmp_path, text.replace("careful fact checker.", "careful fact checker!"), "two.yaml"
    )
    store = ResponseCache(tmp_path / "cache.sqlite")
    inner = ScriptedBackend(lambda r: _lp({"4": 0.6, "5": 0.3, "3": 0.1}))

    def run(path: Path) -> tuple[str, dict[str, Any]]:
        m = get_metric(f"judge:{path}", backend=CachedBackend(inner, store))
        m.score_batch(_items(GRADED))
        return m.signature, m.summary["cost"]

    sig1, first = run(one)
    sig1b, again = run(one)
    sig2, changed = run(two)
    assert first["calls"] == 12 and again["calls"] == 0 and again["cached"] == 12
    assert sig1 == sig1b and sig1 != sig2  # def:<digest> differs
    assert changed["calls"] == 12 and changed["cached"] == 0  # one character: a different judge
    assert "backbone:" in sig1 and "def:" in sig1


def test_parse_methods(tmp_path: Path) -> None:
    base = "name: t\nprompt: {user: '{{ response }}'}\n"
    cases = [
        ("kind: rating\nscale: {min: 1, max: 5}\nparse: {method: regex, pattern: 'Score: (?P<score>\\d)'}", "x Score: 3", 3.0),
        ("kind: rating\nscale: {min: 1, max: 5}\nparse: {method: json, field: s}", 'ok {"s": 2}', 2.0),
        ("kind: rating\nscale: {min: 1, max: 5}\nparse: {method: first_label}", "I give 7, no, 4", 4.0),
        ("kind: binary\nparse: {method: first_label}", "Verdict: FAIL", 0.0),
        ("kind: binary\nparse: {method: json, field: ok}", '{"ok": true}', 1.0),
        ("kind: label\nlabels: [bad, fair, good]\nparse: {method: first_label}", "fair.", 1.0),
        ("kind: label\nlabels: [bad, fair, good]\nparse: {method: regex, pattern: '=(?P<verdict>\\w+)'}", "=good", 2.0),
    ]  # fmt: skip
    for i, (spec, reply, want) in enumerate(cases):
        p = _write(tmp_path, base + spec, f"d{i}.yaml")
        m = get_metric(f"judge:{p}", backend=ScriptedBackend(lambda r, t=reply: t))
        got = m.score_batch(_items(GRADED)[:1])[0]
        assert got.score == want, (spec, got)


def test_label_logprobs_give_class_probabilities(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        "name: t\nkind: binary\nprompt: {user: '{{ response }}'}\nparse: {method: logprobs}\n",
    )
    be = ScriptedBackend(lambda r: _lp({"pass": 0.7, "fail": 0.2, "x": 0.1}))
    got = get_metric(f"judge:{p}", backend=be).score_batch(_items(GRADED)[:1])[0]
    assert got.score == pytest.approx(0.7 / 0.9)  # p(pass), renormalised over the labels


# ---------------------------------------------------------------------------------------------
# Bad definitions: exit 2, the file and the key named, no model called


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> list[Request]:
    """Fails the test if anything builds a backend (a model would be called)."""
    import metajudge.backends.registry as reg

    def refuse(*a: Any, **k: Any) -> Any:
        raise AssertionError("a backend was built for a bad definition")

    monkeypatch.setattr(reg, "get_backend", refuse)
    return []


GOOD = RUBRIC.read_text()
BAD = {
    "unknown_kind": (GOOD.replace("kind: rating", "kind: ranking"), "field kind"),
    "unknown_variable": (GOOD.replace("{{ context }}", "{{ article }}"), "field prompt.user"),
    "regex_without_group": (
        GOOD.replace("method: logprobs", "method: regex\n  pattern: 'Score: (\\d)'"),
        "field parse.pattern",
    ),
    "non_numeric_scale": (GOOD.replace("min: 1", "min: one"), "field scale.min"),
    "empty_labels": (
        "name: t\nkind: label\nlabels: []\nprompt: {user: '{{ response }}'}\nparse: {method: first_label}\n",
        "field labels",
    ),
    "jinja_syntax": (GOOD.replace("{{ response }}", "{{ response }"), "field prompt.user"),
    "deep_nesting": ("name: " + "[" * 200 + "]" * 200 + "\n", "nested more than"),
    "alias_bomb": (
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nname: *c\n"
        ),
        "anchors",
    ),
    "big_template": (
        GOOD.replace("Answer with one digit.", "Answer with one digit. " + "x" * 300_000),
        "field prompt.user",
    ),
    "ten_mb_file": (GOOD.replace("Answer with", "Answer " + "x" * 10_000_000 + " with"), "bytes"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_definition_exits_2_naming_file_and_key(
    case: str, tmp_path: Path, no_model: list[Request], capsys: pytest.CaptureFixture[str]
) -> None:
    text, key = BAD[case]
    p = _write(tmp_path, text, f"{case}.yaml")
    argv = ["metrics", "run", "--input", str(GRADED), "--metrics", f"judge:{p}"]
    assert main([*argv, "-o", str(tmp_path / "s.jsonl"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and key in err, err
    assert "Traceback" not in err


def _with_meta(src: Path, dst: Path, lacking: int, meta: dict[str, Any]) -> Path:
    """``src`` with ``meta`` added to every record but the one on line ``lacking``."""
    lines = src.read_text(encoding="utf-8").splitlines()
    out = [lines[0]]
    for n, line in enumerate(lines[1:], start=2):
        rec = json.loads(line)
        if n != lacking:
            rec["meta"] = {**rec.get("meta", {}), **meta}
        out.append(json.dumps(rec))
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


@pytest.mark.parametrize(
    ("definition", "data", "variable"),
    [(RUBRIC, GRADED, "{{ context }}"), (PAIRWISE, PAIRS, "{{ question }}")],
    ids=["rating", "pairwise"],
)
def test_a_variable_a_record_lacks_names_file_line_and_field(
    definition: Path,
    data: Path,
    variable: str,
    tmp_path: Path,
    no_model: list[Request],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The input file, the record's line and the dotted field, the definition file and the
    record; exit 2, no traceback, no model built."""
    text = definition.read_text(encoding="utf-8")
    assert variable in text
    p = _write(tmp_path, text.replace(variable, "{{ meta.source }}"))
    data = _with_meta(data, tmp_path / "in.jsonl", 4, {"source": "the article"})
    rec = json.loads(data.read_text(encoding="utf-8").splitlines()[3])
    argv = ["metrics", "run", "--input", str(data), "--metrics", f"judge:{p}"]
    assert main([*argv, "-o", str(tmp_path / "s.jsonl"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:4: field meta.source: " in err, err
    assert str(p) in err and f"record {rec['id']!r}" in err, err
    if "system" in rec:
        assert f"(system {rec['system']!r})" in err, err
    assert "Traceback" not in err


def test_a_variable_the_last_batch_lacks_stops_the_run_before_any_call(
    tmp_path: Path,
    no_model: list[Request],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Scored in batches of 2, the record on the last line lacks the variable: refused before
    the first batch builds a model."""
    from metajudge.scores import scoring

    monkeypatch.setattr(scoring, "CHUNK", 2)
    p = _write(
        tmp_path, RUBRIC.read_text(encoding="utf-8").replace("{{ context }}", "{{ meta.source }}")
    )
    n = len(GRADED.read_text(encoding="utf-8").splitlines())
    data = _with_meta(GRADED, tmp_path / "in.jsonl", n, {"source": "the article"})
    argv = ["metrics", "run", "--input", str(data), "--metrics", f"judge:{p}"]
    assert main([*argv, "-o", str(tmp_path / "s.jsonl"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:{n}: field meta.source: " in err, err


def test_requirements_and_metric_name() -> None:
    from metajudge.metrics.registry import is_metric, requirements

    assert is_metric(f"judge:{PAIRWISE}") and not is_metric("judge:")
    assert requirements(f"judge:{PAIRWISE}") == ("response", "question", "pairs")
    assert requirements(f"judge:{RUBRIC}") == ("response",)
    assert json.loads(json.dumps(get_metric(f"judge:{RUBRIC}").range)) == [1.0, 5.0]


def test_few_shot_examples_are_excluded_counted_and_named(tmp_path: Path) -> None:
    spec = (
        "name: t\nkind: rating\nscale: {min: 1, max: 5}\n"
        f"examples: {{file: {GRADED}, n: 2, seed: 0}}\n"
        "prompt:\n  user: |\n    {% for e in examples %}{{ e.response }} -> {{ e.label }}\n"
        "    {% endfor %}{{ response }} ->\nparse: {method: first_label}\n"
    )
    p = _write(tmp_path, spec)
    be = ScriptedBackend(lambda r: "4")
    m = get_metric(f"judge:{p}", backend=be)
    res = m.score_batch(_items(GRADED))
    ids = m.definition.example_ids
    assert len(ids) == 2
    left = [r for r in res if r.error == "used as a few-shot example"]
    assert left and all(r.key.split("::")[0] in ids for r in left)
    assert len(be.seen) == 12 - len(left)
    assert m.summary["examples_excluded"] == sorted(ids)
    shown = be.seen[0].messages[0]["content"]
    n_examples = len(m.definition.examples)  # the two inputs' responses, with human labels
    assert n_examples >= 2 and shown.count(" ->") == n_examples + 1
