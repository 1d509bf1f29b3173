"""Issue 66, groups 2, 3, 4, 9, 10 and 15: a judge defined in a file (``judge:PATH``) against a
scripted loopback server and hostile definitions, through ``metrics run``.

- group 2: a reply with no verdict under the definition's parser (log-probabilities of "Yes", a
  "9" on 1-5, a regex or JSON field that is not there) is counted and never cached: the rerun
  asks again;
- group 3: a reply of 100,000 nested ``[`` or holding a 5,000-digit number is an unparseable
  reply (the claim parser and ``parse: {method: json}``), never a traceback, never cached;
- group 4: a pattern with nested quantifiers is refused at load (exit 2 naming the field);
- group 9: a template that fails at render (a type error, a division by zero, an overflow, a
  recursive macro, an ``include``) is exit 2 naming the file and the field, before any call;
- group 10: a template's work and its rendered prompt are bounded (nested ``range`` loops, a
  huge string product); an over-long prompt is refused, counted and not sent;
- group 15: a non-finite sampling number is exit 2 naming the key.
"""

from __future__ import annotations

import json
import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from metajudge.metrics.judges.parsers.claims import parse_verdict, parse_verdict_list
from metajudge.metrics.judges.parsers.ratings import parse_list
from tests.backends.test_http import KEY, KEY_ENV, FakeOpenAI

FIX = Path(__file__).parents[1] / "fixtures" / "judges"
RUBRIC = (FIX / "faithfulness_rubric.yaml").read_text(encoding="utf-8")
MARK = "units"  # in every judge prompt of the dataset below
N_ITEMS = 6  # pairs: 12 responses, 12 calls
DEEP = '{"score": ' + "[" * 100_000 + "]" * 100_000 + "}"
HUGE_NUMBER = '{"score": ' + "9" * 5000 + "}"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METAJUDGE_BACKENDS_DIR", str(tmp_path / "backends"))


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail (not hang) when the block runs past ``seconds``."""

    def _alarm(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class Scripted(FakeOpenAI):
    """A loopback server whose faults are replies: ``yes`` (log-probabilities of Yes / No),
    ``nine`` (a "9" on 1-5), ``text:…`` (that reply text, no log-probabilities); healthy
    replies are ``Score: N`` with the digit's log-probabilities, or ``{"score": N}`` when
    :attr:`as_json`."""

    as_json = False

    def answer(self, body: dict[str, Any], *, chat: bool) -> dict[str, Any]:
        out = super().answer(body, chat=chat)
        if self.as_json:
            msg = out["choices"][0]["message"]
            msg["content"] = json.dumps({"score": int(msg["content"][-1])})
        return out

    def spoil(self, reply: dict[str, Any], action: str) -> dict[str, Any]:
        ch = reply["choices"][0]
        if action in ("yes", "nine"):
            tok = "Yes" if action == "yes" else "9"
            other = "No" if action == "yes" else "8"
            ch["message"]["content"] = tok
            alts = [{"token": tok, "logprob": -0.1}, {"token": other, "logprob": -2.5}]
            ch["logprobs"] = {"content": [{"token": tok, "logprob": -0.1, "top_logprobs": alts}]}
            return reply
        if action.startswith("text:"):
            ch["message"]["content"] = action[len("text:") :]
            ch.pop("logprobs", None)
            return reply
        return super().spoil(reply, action)


def _backbone(tmp_path: Path, base_url: str, **kw: Any) -> None:
    d = tmp_path / "backends"
    d.mkdir(exist_ok=True)
    fields = {
        "name": "fake",
        "kind": "openai",
        "model": "fake-model",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "n_ctx": 8192,
        "max_retries": 0,
        "backoff_base_s": 0.01,
        "timeout_s": 10.0,
        **kw,
    }
    (d / "fake.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))


def _dataset(tmp_path: Path) -> Path:
    f = tmp_path / "pairs.jsonl"
    rows = [
        {
            "id": f"p{i}",
            "input": {"question": "How many units were sold?", "context": "Week 1: 10 units."},
            "a": {"system": "s1", "response": f"{10 + i} units."},
            "b": {"system": "s2", "response": f"{40 + i} units."},
            "labels": {"overall": [(-1) ** i]},
            "meta": {"n": 10},
        }
        for i in range(N_ITEMS)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def _definition(tmp_path: Path, parse: str | None = None, **replace: str) -> Path:
    """The faithfulness rubric with ``parse`` (YAML lines) and text replacements."""
    text = RUBRIC
    if parse is not None:
        text = text.replace("parse:\n  method: logprobs\n  constrained: true\n", parse)
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    p = tmp_path / "judge.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], definition: Path
) -> tuple[object, list[dict[str, Any]], str]:
    """``metrics run`` of ``judge:definition`` on the fake backbone: (exit, rows, stderr)."""
    out = tmp_path / "scores.jsonl"
    out.unlink(missing_ok=True)
    argv = ["metrics", "run", "--input", str(_dataset(tmp_path)), "--metrics"]
    argv += [f"judge:{definition}", "--backbone", "fake", "-o", str(out), "--quiet"]
    capsys.readouterr()
    try:
        with _deadline(60):
            rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return rc, rows, capsys.readouterr().err


def _cached(tmp_path: Path) -> int:
    db = tmp_path / "cache" / "llm-cache.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM responses").fetchone()[0])


def _calls(server: FakeOpenAI) -> int:
    return sum(server.attempts.values())


REGEX = "parse:\n  method: regex\n  pattern: 'Score: (?P<score>[0-9]+)'\n"
JSON = "parse:\n  method: json\n  field: score\n"
CASES = {
    "logprobs-yes": (None, "yes"),
    "logprobs-nine": (None, "nine"),
    "regex-nine": (REGEX, "text:Score: 9"),
    "regex-none": (REGEX, "text:I cannot say."),
    "json-nine": (JSON, 'text:{"score": 9}'),
    "json-deep": (JSON, "text:" + DEEP),
    "json-huge-number": (JSON, "text:" + HUGE_NUMBER),
}


# -- groups 2 and 3: what is no verdict is counted, shown, never cached ---------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_a_reply_without_a_verdict_is_counted_and_never_cached(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: run 1 made 12 calls (errors=12), run 2 made 0 calls and served the 12 errors from
    the cache; a deep or huge-number JSON reply raised RecursionError / ValueError. After: run 2
    asks again; once the server is healthy every item is scored and stored."""
    parse, fault = CASES[case]
    with Scripted() as server:
        server.as_json = parse == JSON
        _backbone(tmp_path, server.base_url)
        judge = _definition(tmp_path, parse)
        for run in (1, 2):
            server.faults[MARK] = [fault] * (2 * N_ITEMS)
            rc, rows, err = _run(tmp_path, capsys, judge)
            assert rc == 1 and "Traceback" not in err, (rc, err[-800:])
            assert _calls(server) == 2 * N_ITEMS * run, (run, _calls(server))
            assert len(rows) == 2 * N_ITEMS and all(r["score"] is None for r in rows)
            assert all(r["error"] == "unparseable judge output" for r in rows)
            assert _cached(tmp_path) == 0
        rc, rows, err = _run(tmp_path, capsys, judge)  # healthy now
        assert rc == 0 and _calls(server) == 6 * N_ITEMS, (rc, err[-800:])
        assert all(r["error"] is None and 1 <= r["score"] <= 5 for r in rows)
        assert _cached(tmp_path) == 2 * N_ITEMS


@pytest.mark.parametrize("reply", [DEEP, HUGE_NUMBER], ids=["deep", "huge-number"])
def test_the_claim_parsers_read_a_hostile_reply_as_no_verdict(reply: str) -> None:
    """Before: RecursionError / ValueError out of the claim parsers."""
    assert parse_verdict(reply) is None
    assert parse_verdict_list(reply, 2) is None
    assert parse_list("[" + reply + "]") is None


def _refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], judge: Path
) -> tuple[str, Scripted]:
    """Run ``judge`` on a healthy server; assert exit 2 with no call, return stderr."""
    with Scripted() as server:
        _backbone(tmp_path, server.base_url)
        rc, rows, err = _run(tmp_path, capsys, judge)
    assert rc == 2 and "Traceback" not in err, (rc, err[-800:])
    assert _calls(server) == 0 and rows == []
    assert str(judge) in err, err[-800:]
    return err, server


# -- group 4: a pattern that can backtrack exponentially is refused -------------------------------
@pytest.mark.parametrize(
    "pattern", [r"(?P<score>[1-5])(x+x+)+y", r"(?P<score>[1-5])(?:x|xx)*y", r"(?P<score>(\d+)*)!"]
)
def test_a_pattern_with_nested_quantifiers_is_refused_at_load(
    pattern: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the definition loaded and a reply "3" + 40 "x" hung the run (no output after
    90 s). After: exit 2 before any call, naming the file, the field and why."""
    parse = f"parse:\n  method: regex\n  pattern: '{pattern}'\n"
    err, _ = _refused(tmp_path, capsys, _definition(tmp_path, parse))
    assert "field parse.pattern" in err and "backtrack exponentially" in err, err[-800:]


def test_a_safe_pattern_reads_only_the_start_of_a_long_reply() -> None:
    """The bound on a pattern's input: a verdict past the first MAX_REGEX_INPUT characters
    is not read (and a polynomial pattern's work is bounded by it)."""
    from metajudge.metrics.judges.parsers.defined import MAX_REGEX_INPUT, read_choice

    parse = {"method": "regex", "pattern": r"Score: (?P<score>\d)", "group": "score"}
    near = "Score: 4" + " " * MAX_REGEX_INPUT
    far = " " * MAX_REGEX_INPUT + "Score: 4"
    kw: dict[str, Any] = {"kind": "rating", "labels": (), "scale": (1, 5)}
    assert read_choice(near, None, parse, **kw).verdict == 4.0
    assert read_choice(far, None, parse, **kw).verdict is None


# -- group 9: a template that fails is exit 2 naming file and field, before any call --------------
TEMPLATE_FAULTS = {
    "type-error": ("{{ response + 1 }}", "TypeError"),
    "division-by-zero": ("{{ scale.min / 0 }}", "ZeroDivisionError"),
    "overflow": ("{{ meta.n|float ** 1000 }}", "OverflowError"),
    "recursive-macro": ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
    "include": ("{% include '/etc/passwd' %}", "{% include %}"),
}


@pytest.mark.parametrize("case", list(TEMPLATE_FAULTS))
def test_a_template_runtime_error_is_exit_2_naming_file_and_field(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a TypeError / ZeroDivisionError / OverflowError / RecursionError traceback (and
    ``TypeError: no loader`` for an include). After: exit 2 before any call, naming the file,
    ``prompt.user`` and the error; the overflow (which needs a record's ``meta.n``) is found
    when the records are rendered, still before the first call."""
    body, why = TEMPLATE_FAULTS[case]
    judge = _definition(tmp_path, **{"Answer with one digit.": body})
    err, _ = _refused(tmp_path, capsys, judge)
    assert "field prompt.user" in err and why in err, err[-800:]


# -- group 10: a template's work and its prompt are bounded ---------------------------------------
HUNGRY = {
    "nested-loops": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "loop steps",
    ),
    "string-product": ("{{ 'x' * 2000000 }}", "over 1,000,000 characters"),
    "concatenation": (
        (
            "{% set ns = namespace(s='xxxxxxxxxx') %}"
            "{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}"
        ),
        "characters or items",
    ),
    "power": ("{{ 10 ** 100000 }}", "a power over"),
    "filter-width": ("{{ 'x'|center(10 ** 9) }}", "an argument over"),
    "format-width": ("{{ '{:>999999999}'.format(1) }}", "a format width over"),
    "percent-width": ("{{ '%0999999999d' % 1 }}", "a format width over"),
}


@pytest.mark.parametrize("case", list(HUNGRY))
def test_a_template_over_a_bound_is_refused_at_load(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: nested ``range(100000)`` loops hung, ``'x' * N`` sent N-character requests.
    After: the rendering stops at its bound; exit 2 naming the file and the field."""
    body, why = HUNGRY[case]
    judge = _definition(tmp_path, **{"Answer with one digit.": body})
    err, _ = _refused(tmp_path, capsys, judge)
    assert "field prompt.user" in err and why in err, err[-800:]


def test_a_prompt_over_the_backbones_context_is_refused_counted_and_not_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A prompt that cannot fit the backbone's context (512 tokens: 4,096 characters) is
    refused per item, counted and never sent; the run exits 1 with every row saying why."""
    judge = _definition(
        tmp_path, **{"Answer with one digit.": "{% for i in range(500) %}{{ context }}{% endfor %}"}
    )
    with Scripted() as server:
        _backbone(tmp_path, server.base_url, n_ctx=512)
        rc, rows, err = _run(tmp_path, capsys, judge)
    assert rc == 1 and "Traceback" not in err, (rc, err[-800:])
    assert _calls(server) == 0 and len(rows) == 2 * N_ITEMS
    assert all(r["score"] is None for r in rows)
    assert all(r["error"].startswith("prompt refused, not sent: a prompt of") for r in rows)
    assert all("512-token context" in r["error"] for r in rows)


# -- group 15: a sampling number that is not finite ------------------------------------------------
@pytest.mark.parametrize("value", [".nan", ".inf", "-0.5"])
def test_a_non_finite_or_negative_temperature_is_exit_2_naming_the_key(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``.nan`` passed the definition check; every call then failed (exit 1)."""
    judge = _definition(tmp_path, **{"temperature: 0": f"temperature: {value}"})
    err, _ = _refused(tmp_path, capsys, judge)
    assert "sampling.temperature" in err, err[-800:]


@pytest.mark.parametrize("reply", [DEEP, HUGE_NUMBER], ids=["deep", "huge-number"])
def test_a_hostile_claim_verdict_is_unparseable_and_not_cached(reply: str, tmp_path: Path) -> None:
    """MT-RAIG's verification through the response cache: a deep or huge-number reply is a
    counted parse failure (before: RecursionError / ValueError), not stored, asked again."""
    from metajudge.backends.cache import ResponseCache
    from metajudge.backends.cached import CachedBackend
    from metajudge.metrics.judges.mtraig import MTRAIGFaithfulness
    from tests.metrics.judges.test_metrics import ScriptedBackend, _faith_script, item

    inner = ScriptedBackend(_faith_script(reply))
    with CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite")) as be:
        for run in (1, 2):
            m = MTRAIGFaithfulness(mode="batched", backend=be)  # type: ignore[arg-type]
            [r] = m.score_batch([item("a")])
            assert r.score is None and r.error == "no claim verdict could be parsed"
            assert r.details["parse_failures"] == 3
            verify = [q for q in inner.seen if q.json_schema is not None]
            assert len(verify) == run  # asked again: never served from the cache
        assert be.cache.refused == 2
