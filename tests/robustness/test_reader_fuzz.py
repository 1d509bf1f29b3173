"""Issue 66: every reader fuzzed through the commands a user runs. Each reader's seed file (a
score file of each registered format in :mod:`metajudge.scores.readers`, the framework files,
a CJE folder, a judge definition, a label plan) is mutated — truncated, oversized, wrongly typed,
deeply nested, extreme numbers — and read by its command in-process:

- ``data doctor FILE --input graded.jsonl`` (score files and framework files: the reader's rows
  against the dataset, as ``meta-eval --scores`` reads them; ``data doctor FILE`` for upstream
  formats of other datasets);
- ``metrics show judge:PATH`` (a definition, read and checked whole; no model is called);
- ``calibrate estimate --input DIR`` (a CJE folder), ``... --plan PLAN`` (a label plan).

Every case must end in exit 0, or exit 2 with a message naming the file; never a traceback or
an exception out of ``main``, never a numpy overflow warning (a ``RuntimeWarning`` is an error
here), never a hang (each case is bounded by ``SIGALRM``), never a changed input (bytes and
inode). The cases are built at import, so ``pytest --collect-only`` counts them
per reader (``test_reader_fuzz[<reader>|<mutation>]``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import signal
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main

FIX = Path(__file__).parents[1] / "fixtures"
GRADED = FIX / "byod" / "graded.jsonl"
FW = FIX / "frameworks"
CASE_SECONDS = 30  # a case past this is a hang
DEEP = "[" * 100_000 + "]" * 100_000
BIG_TEXT = "x" * 200_000  # past the csv module's 131,072-character cell
#: raw JSON tokens of extreme numbers (written as they are, not through json.dumps)
EXTREMES = {
    "int4000": "7" * 4000,
    "int5000": "7" * 5000,
    "e309": "1e309",
    "neg_e309": "-1e309",
    "nan": "NaN",
    "inf": "Infinity",
    "e-320": "1e-320",
    "max": "1.7e308",
    "neg0": "-0.0",
}
WRONG: dict[str, Any] = {"list": ["x"], "object": {"x": 1}, "string": "x", "bool": True}


# -- the seeds --------------------------------------------------------------------------------------
def _graded() -> list[dict[str, Any]]:
    return [json.loads(x) for x in GRADED.read_text(encoding="utf-8").splitlines()[1:]]


def _score_rows() -> bytes:
    rows = [
        {"item": r["id"], "system": r["system"], "metric": "bleu", "score": 0.1 * k}
        for k, r in enumerate(_graded())
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _wide_csv() -> bytes:
    lines = ["item,system,bleu,rouge"] + [
        f"{r['id']},{r['system']},{0.1 * k:.2f},{0.05 * k:.2f}" for k, r in enumerate(_graded())
    ]
    return ("\n".join(lines) + "\n").encode()


def _wide_json() -> bytes:
    rows = [
        {"item": r["id"], "system": r["system"], "bleu": 0.1 * k} for k, r in enumerate(_graded())
    ]
    return json.dumps(rows).encode()


def _lftqa() -> bytes:
    rows = [
        {"example_id": r["id"], "model": r["system"], "score": 0.1 * k, "reason": "r"}
        for k, r in enumerate(_graded())
    ]
    return json.dumps(rows).encode()


def _ragchecker() -> bytes:
    side = {"model_name": "m", "ragchecker": {"correctness_label": 1, "overall_label": 2}}
    return json.dumps([{"instance_id": 1, "model1": side, "model2": side}]).encode()


def _hanna() -> bytes:
    return b'Model,BLEU,Coherence\nm1,"[0.1, 0.2]","[1, 2]"\nm2,"[0.3, 0.4]","[3, 4]"\n'


def _released() -> bytes:
    line = {"instruction": "q", "outputs": ["a", "b"], "preferences": [1, 0], "probs": [0.7, 0.3]}
    return (json.dumps(line) + "\n").encode()


def _arena_folder(data_dir: Path) -> bytes:
    src = data_dir / "cje_arena_sample" / "fresh_draws" / "base_responses.jsonl"
    assert src.is_file(), f"{src}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    lines = src.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) for x in lines]
    lab = [r for r in rows if r.get("oracle_label") is not None][:60]
    unlab = [r for r in rows if r.get("oracle_label") is None][:40]
    return "".join(json.dumps(r) + "\n" for r in lab + unlab).encode()


def _plan(data_dir: Path) -> bytes:
    rows = [json.loads(x) for x in _arena_folder(data_dir).decode().splitlines()]
    lines = ["system,item,cluster,judge_score,probability,selected"]
    for k, r in enumerate(r for r in rows if r.get("oracle_label") is not None):
        if k % 3 == 0:
            pid = r["prompt_id"]
            lines.append(f"base,{pid}#{r.get('draw_idx', 0)},{pid},{r['judge_score']},0.5,1")
    return ("\n".join(lines) + "\n").encode()


@dataclass(frozen=True)
class Seed:
    """One reader's input: the file name, how to make its bytes, its kind (json, jsonl, csv,
    yaml, zip), the subtree the structure mutations fuzz, and how many paths of it."""

    name: str
    make: Callable[[Path], bytes]
    kind: str
    focus: tuple[Any, ...] = ()
    paths: int = 16
    numbers: int = 2  # numeric paths that get every extreme number
    against: str = "graded"  # graded: doctor --input graded.jsonl; alone: doctor; cje; plan; judge


def _fixture(*parts: str) -> Callable[[Path], bytes]:
    return lambda _d: FW.joinpath(*parts).read_bytes()


SEEDS: dict[str, Seed] = {
    "jsonl": Seed("scores.jsonl", lambda _d: _score_rows(), "jsonl"),
    "csv": Seed("scores.csv", lambda _d: _wide_csv(), "csv"),
    "json": Seed("scores.json", lambda _d: _wide_json(), "json", (0,)),
    "lftqa": Seed("lftqa.json", lambda _d: _lftqa(), "json", (0,)),
    "ragchecker": Seed("ragchecker.json", lambda _d: _ragchecker(), "json", (0,), against="alone"),
    "hanna": Seed("hanna_metric_scores_llm.csv", lambda _d: _hanna(), "csv", against="alone"),
    "released_probs": Seed("released.jsonl", lambda _d: _released(), "jsonl", against="alone"),
    "promptfoo": Seed(
        "results.json", _fixture("promptfoo", "results.json"), "json", ("results", "results", 0)
    ),
    "deepeval": Seed(
        "test_run.json", _fixture("deepeval", "test_run.json"), "json", ("testCases", 0)
    ),
    "ragas": Seed("results.csv", _fixture("ragas", "results.csv"), "csv"),
    "inspect_json": Seed(
        "graded.json", _fixture("inspect", "graded.json"), "json", ("samples", 0), paths=6
    ),
    "inspect_eval": Seed("graded.eval", _fixture("inspect", "graded.eval"), "zip"),
    "cje_folder": Seed(
        "base_responses.jsonl", _arena_folder, "jsonl", paths=8, numbers=1, against="cje"
    ),
    "label_plan": Seed("selection.csv", _plan, "csv", against="plan"),
    "definition": Seed(
        "judge.yaml",
        lambda _d: (FIX / "judges" / "faithfulness_rubric.yaml").read_bytes(),
        "yaml",
        against="judge",
    ),
}


# -- the mutations ----------------------------------------------------------------------------------
def _truncations(b: bytes) -> Iterator[tuple[str, bytes]]:
    yield "cut_half", b[: len(b) // 2]
    yield "cut_third", b[: len(b) // 3]
    yield "cut_last_byte", b[:-1]
    yield "empty", b""


def _paths(obj: Any, focus: tuple[Any, ...], limit: int) -> list[tuple[Any, ...]]:
    """The first ``limit`` paths below ``focus``, breadth first (a list's first element only)."""
    out: list[tuple[Any, ...]] = []
    level = [focus]
    while level and len(out) < limit:
        below = []
        for p in level:
            v = _get(obj, p)
            kids = list(v)[:12] if isinstance(v, dict) else [0] if isinstance(v, list) and v else []
            for k in kids:
                below.append((*p, k))
        out += below
        level = below
    return out[:limit]


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(obj))
    _get(copy, path[:-1])[path[-1]] = value
    return copy


def _dump(obj: Any, raw: str | None = None) -> bytes:
    """``obj`` as JSON, the placeholder ``"@RAW@"`` replaced by the raw token ``raw``."""
    text = json.dumps(obj)
    return (text.replace('"@RAW@"', raw, 1) if raw is not None else text).encode()


def _json_cases(obj: Any, seed: Seed) -> Iterator[tuple[str, bytes]]:
    paths = _paths(obj, seed.focus, seed.paths)
    for i, p in enumerate(paths):
        name = ".".join(map(str, p))[-40:]
        kind = list(WRONG)[i % len(WRONG)]
        yield f"type_{kind}@{name}", _dump(_set(obj, p, WRONG[kind]))
    numbers = [p for p in paths if type(_get(obj, p)) in (int, float)][:3]
    strings = [p for p in paths if type(_get(obj, p)) is str][:2]
    for p in numbers[: seed.numbers] or paths[:1]:
        name = ".".join(map(str, p))[-40:]
        for tag, tok in EXTREMES.items():
            yield f"number_{tag}@{name}", _dump(_set(obj, p, "@RAW@"), tok)
    for p in (numbers + strings)[:2]:
        name = ".".join(map(str, p))[-40:]
        yield f"deep@{name}", _dump(_set(obj, p, "@RAW@"), DEEP)
    for p in strings[:2]:
        yield f"oversized@{'.'.join(map(str, p))[-40:]}", _dump(_set(obj, p, BIG_TEXT))


def _jsonl_cases(b: bytes, seed: Seed) -> Iterator[tuple[str, bytes]]:
    first, _, rest = b.partition(b"\n")
    for name, line in _json_cases(json.loads(first), seed):
        yield name, line + b"\n" + rest
    yield "not_an_object", b"[1, 2]\n" + rest


def _csv_cases(b: bytes) -> Iterator[tuple[str, bytes]]:
    rows = list(csv.reader(io.StringIO(b.decode("utf-8"))))

    def out(rs: list[list[str]]) -> bytes:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rs)
        return buf.getvalue().encode()

    cells = {**EXTREMES, "text": "x", "empty": "", "list": "[1]", "oversized": BIG_TEXT}
    cells["deep"] = DEEP
    tags = list(cells)
    last = len(rows[0]) - 1  # (a score column in every seed: it gets every cell)
    for j, col in enumerate(rows[0]):
        for tag in tags if j == last else ["text", "empty", tags[j % len(tags)]]:
            rs = [list(r) for r in rows]
            rs[1][j] = cells[tag]
            yield f"{tag}@{col[:20]}", out(rs)
    yield "header_duplicate", out([[rows[0][0], *rows[0][:-1]], *rows[1:]])
    yield "header_short", out([rows[0][:-1], *rows[1:]])
    yield "row_short", out([*rows[:-1], rows[-1][:-2]])
    yield "row_long", out([*rows[:-1], [*rows[-1], "extra"]])
    yield "open_quote", b.rstrip(b"\n") + b',"unterminated\n'
    yield "nul_byte", b.replace(b",", b",\x00", 1)


def _yaml_cases(b: bytes) -> Iterator[tuple[str, bytes]]:
    text = b.decode("utf-8")
    subs = {
        "max_int4000": ("  max: 5", "  max: " + "7" * 4000),
        "max_int5000": ("  max: 5", "  max: " + "7" * 5000),
        "max_inf": ("  max: 5", "  max: .inf"),
        "max_nan": ("  max: 5", "  max: .nan"),
        "max_list": ("  max: 5", "  max: [5]"),
        "max_string": ("  max: 5", "  max: five"),
        "min_tiny": ("  min: 1", "  min: 1e-320"),
        "scale_list": ("scale:\n  min: 1\n  max: 5", "scale: [1, 5]\nx:\n  min: 1\n  max: 5"),
        "kind_number": ("kind: rating", "kind: 7"),
        "kind_list": ("kind: rating", "kind: [rating]"),
        "parse_string": ("parse:\n  method: logprobs", "parse: logprobs\nx:\n  method: logprobs"),
        "name_object": ("name: faithfulness-rubric", "name: {a: 1}"),
        "deep_flow": ("kind: rating", "kind: rating\nextra: " + "[" * 100_000 + "]" * 100_000),
        "oversized_name": ("name: faithfulness-rubric", "name: " + BIG_TEXT),
        "anchor_alias": ("kind: rating", "kind: &k rating\nalias: *k"),
        "python_tag": ("kind: rating", "kind: !!python/name:os.system rating"),
    }
    for tag, (old, new) in subs.items():
        assert old in text, tag
        yield tag, text.replace(old, new, 1).encode()
    yield "not_a_mapping", b"- 1\n- 2\n"
    yield "tab_indent", text.replace("  max: 5", "\tmax: 5").encode()


def _zip_cases(b: bytes) -> Iterator[tuple[str, bytes]]:
    yield "flipped_middle", b[: len(b) // 2] + bytes([b[len(b) // 2] ^ 0xFF]) + b[len(b) // 2 + 1 :]
    yield "no_directory", b[: b.rfind(b"PK\x05\x06")]
    yield "garbage", bytes(range(256)) * 8


def _cases(seed: Seed, b: bytes) -> Iterator[tuple[str, bytes]]:
    yield from _truncations(b)
    if seed.kind == "json":
        yield from _json_cases(json.loads(b), seed)
    elif seed.kind == "jsonl":
        yield from _jsonl_cases(b, seed)
    elif seed.kind == "csv":
        yield from _csv_cases(b)
    elif seed.kind == "yaml":
        yield from _yaml_cases(b)
    else:
        yield from _zip_cases(b)


def _case_names() -> list[str]:
    """``reader|mutation`` for every case (the seeds that need the data folder are built from a
    stand-in of the same shape, its first row's fields in the same order: the names do not
    depend on the data)."""
    out = []
    for key, seed in SEEDS.items():
        b = seed.make(Path()) if seed.against not in ("cje", "plan") else _stand_in(seed)
        out += [f"{key}|{name}" for name, _ in _cases(seed, b)]
    return out


def _stand_in(seed: Seed) -> bytes:
    if seed.against == "cje":
        row = {"prompt_id": "p", "prompt": "q", "response": "r", "judge_score": 0.5}
        return (json.dumps({**row, "draw_idx": 0, "oracle_label": 0.5}) + "\n").encode()
    return b"system,item,cluster,judge_score,probability,selected\nbase,p#0,p,0.5,0.5,1\n"


CASES = _case_names()


# -- running one case -------------------------------------------------------------------------------
class Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"no answer after {CASE_SECONDS} s")


def _argv(seed: Seed, p: Path, data_dir: Path, tmp_path: Path) -> list[str]:
    if seed.against == "graded":
        return ["data", "doctor", str(p), "--input", str(GRADED)]
    if seed.against == "alone":
        return ["data", "doctor", str(p)]
    if seed.against == "judge":
        return ["metrics", "show", f"judge:{p}"]
    folds = ["--folds", "5", "--format", "json"]
    if seed.against == "cje":
        return ["calibrate", "estimate", "--input", str(p.parent), *folds]
    folder = tmp_path / "cje"
    folder.mkdir()
    (folder / "base_responses.jsonl").write_bytes(_arena_folder(data_dir))
    return ["calibrate", "estimate", "--input", str(folder), "--plan", str(p), *folds]


def _state(paths: list[Path]) -> list[tuple[str, int, str]]:
    return [
        (str(q), q.stat().st_ino, hashlib.sha256(q.read_bytes()).hexdigest())
        for p in paths
        for q in ([p] if p.is_file() else sorted(p.rglob("*")))
        if q.is_file()
    ]


@pytest.fixture(scope="module")
def seeds(data_dir: Path) -> dict[str, dict[str, bytes]]:
    """Every seed's cases by name (built once: the CJE and plan seeds need the data folder)."""
    return {key: dict(_cases(seed, seed.make(data_dir))) for key, seed in SEEDS.items()}


@pytest.mark.parametrize("case", CASES)
def test_reader_fuzz(
    case: str,
    seeds: dict[str, dict[str, bytes]],
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key, name = case.split("|", 1)
    seed = SEEDS[key]
    data = seeds[key].get(name)
    assert data is not None, f"{name}: the stand-in's shape differs from the real seed's"
    folder = tmp_path / "in"
    folder.mkdir()
    p = folder / seed.name
    p.write_bytes(data)
    argv = _argv(seed, p, data_dir, tmp_path)
    inputs = [folder, GRADED, *([tmp_path / "cje"] if seed.against == "plan" else [])]
    before = _state(inputs)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    capsys.readouterr()
    try:
        with warnings.catch_warnings():  # numpy's overflow warnings fail the case
            warnings.simplefilter("error", RuntimeWarning)
            rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {str(e)[:300]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    assert rc in (0, 2), (rc, err[-600:])
    assert "Traceback" not in err, err[-1500:]
    if rc == 2:  # the file, or the folder given (a CJE folder with no row at all)
        assert p.name in err or (seed.against == "cje" and str(folder) in err), err[-600:]
    assert _state(inputs) == before, "an input changed"
