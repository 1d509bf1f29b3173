"""Issue 18: every command, driven in-process with generated bad input, ends in exit 2 with a
message naming the file (line, field) or the argument — never a traceback, never an output file,
never a changed input or cache.

Bad files are generated per class (non-UTF-8 bytes, truncated JSON, a JSON array instead of JSON
Lines, wrong types — an integer id, a score given as the string "0.5", an unknown card kind —,
an empty file, a folder, a missing file, random bytes); bad argument lists per class (negative,
NaN, infinite and huge numbers, non-numbers, traversal paths, an output equal to an input, a file
where a folder is expected). The case list is built at import, so ``pytest --collect-only``
counts the cases per command (``test_bad_input[<command>|...]``).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from metajudge.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
HEADER, RECORD = FIXTURE.read_text(encoding="utf-8").splitlines()[:2]
DEEP = "[" * 100_000 + "]" * 100_000  # issue 30: 100,000-deep nesting


# -- generated bad files ----------------------------------------------------------------------------
def _rec(**change: object) -> str:
    r = json.loads(RECORD)
    r.update(change)
    return json.dumps(r, ensure_ascii=False)


def _card(**change: object) -> str:
    h = json.loads(HEADER)
    h["card"].update(change)
    return json.dumps(h)


def _score_row(**change: object) -> str:
    row = {
        "key": "news1::extractive",
        "item": "news1",
        "system": "extractive",
        "side": None,
        "metric": "rouge_l",
        "score": 0.5,
        "signature": "rouge_l|x",
        "details": {},
        "error": None,
    }
    row.update(change)
    return json.dumps(row)


def _garbage(seed: int) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(128, 256) for _ in range(200))


#: name -> bytes of a bad records file (canonical JSONL), or None for "a folder" / "missing"
RECORD_FILES: dict[str, bytes | None] = {
    "non_utf8": (HEADER + "\n" + RECORD + "\n").encode() + b'{"id": "x\xff\xfe"}\n',
    "latin1": (HEADER + "\n").encode() + _rec(response="caf\xe9").encode("latin-1") + b"\n",
    "random_bytes": _garbage(1),
    "truncated_json": (HEADER + "\n" + RECORD[: len(RECORD) // 2]).encode(),
    "json_array": ("[" + RECORD + "]\n").encode(),
    "json_object_multiline": json.dumps(json.loads(RECORD), indent=2).encode(),
    "id_int": (HEADER + "\n" + _rec(id=17) + "\n").encode(),
    "label_str": (HEADER + "\n" + _rec(scores={"coherence": ["3", "4", "3"]}) + "\n").encode(),
    "response_int": (HEADER + "\n" + _rec(response=5) + "\n").encode(),
    "kind_weird": (_card(kind="weird") + "\n" + RECORD + "\n").encode(),
    "card_local_escape": (
        _card(files=[{"path": "x.json", "sha256": "0" * 64, "local": "../../escape.json"}])
        + "\n"
        + RECORD
        + "\n"
    ).encode(),
    # issue 30: RecursionError (exit 1) before; a lone surrogate passed validate, then crashed
    "deep_nesting": (HEADER + "\n" + RECORD[:-1] + ', "meta": ' + DEEP + "}\n").encode(),
    "lone_surrogate": (
        HEADER + "\n" + RECORD.replace('"news1"', '"news1\\ud800"', 1) + "\n"
    ).encode(),
    "empty": b"",
    "folder": None,
    "missing": None,
}

#: name -> bytes of a bad score file (JSONL score rows)
SCORE_FILES: dict[str, bytes | None] = {
    "non_utf8": (_score_row() + "\n").encode() + b"\xff\xfe\n",
    "truncated_json": _score_row()[:40].encode(),
    "json_array": ("[" + _score_row() + "]").encode(),
    "score_str": (_score_row(score="0.5") + "\n").encode(),
    # NaN is a missing score (counted, tests/scores/test_nan_policy.py); an infinite one is refused
    "score_inf": (_score_row().replace("0.5", "Infinity") + "\n").encode(),
    "key_int": (_score_row(key=3) + "\n").encode(),
    "deep_nesting": (_score_row()[:-1] + ', "x": ' + DEEP + "}\n").encode(),
    "lone_surrogate": (_score_row().replace('"news1"', '"news1\\ud800"') + "\n").encode(),
    "empty": b"",
    "folder": None,
    "missing": None,
}

#: name -> bytes of a bad cache file
CACHE_FILES: dict[str, bytes | None] = {
    "text": b"this is not a database\n" * 40,
    "random_bytes": _garbage(2) * 30,
    "sqlite_header_only": b"SQLite format 3\x00" + b"\x00" * 84,
    "folder": None,
    "missing": None,
}

#: name -> content of a run folder's result.json
RESULT_FILES: dict[str, bytes | None] = {
    "missing_keys": b"{}",
    "non_utf8": b'{"dataset": "\xff"}',
    "truncated_json": b'{"dataset": "x", "rows": [',
    "json_array": b"[]",
    "deep_nesting": ('{"dataset": ' + DEEP + "}").encode(),
    "missing": None,
}


# -- the cases ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    command: str
    label: str
    argv: Callable[[dict[str, Path]], list[str]]
    expect: Callable[[dict[str, Path]], list[str]]  # one of these must be in stderr


def _files(group: str, files: dict[str, bytes | None]) -> list[str]:
    return [f"{group}:{name}" for name in files]


CASES: list[Case] = []


def case(command: str, label: str, argv: Callable, expect: Callable) -> None:  # type: ignore[type-arg]
    CASES.append(Case(command, label, argv, expect))


def _name(p: dict[str, Path], key: str) -> list[str]:
    return [p[key].name]


# files: records
for f in RECORD_FILES:
    k = f"records:{f}"
    case(
        "data validate",
        f,
        lambda p, k=k: ["data", "validate", str(p[k])],
        lambda p, k=k: _name(p, k),
    )
    case(
        "data show",
        f,
        lambda p, k=k: ["data", "show", "--input", str(p[k])],
        lambda p, k=k: _name(p, k),
    )
    case(
        "data export",
        f,
        lambda p, k=k: ["data", "export", "--input", str(p[k]), "-o", str(p["out_file"])],
        lambda p, k=k: _name(p, k),
    )
    case(
        "metrics run",
        f,
        lambda p, k=k: [
            "metrics",
            "run",
            "--input",
            str(p[k]),
            "-o",
            str(p["out_file"]),
            "--metrics",
            "rouge_l",
        ],
        lambda p, k=k: _name(p, k),
    )
    case(
        "data agreement",
        f,
        lambda p, k=k: ["data", "agreement", "--input", str(p[k])],
        lambda p, k=k: _name(p, k),
    )
    case(
        "meta-eval",
        f,
        lambda p, k=k: [
            "meta-eval",
            "--input",
            str(p[k]),
            "--scores",
            str(p["scores"]),
            "--metrics",
            "rouge_l",
            "--n-boot",
            "10",
            "--no-plots",
            "--paths-only",
            "--out",
            str(p["out_dir"]),
        ],
        lambda p, k=k: _name(p, k),
    )
    case(
        "judge diagnostics",
        f,
        lambda p, k=k: [
            # a backbone that does not exist: a file that loads must never start a model here
            "judge",
            "diagnostics",
            "--input",
            str(p[k]),
            "--backbones",
            "no-such-backbone-zz",
            "--limit",
            "1",
            "--out",
            str(p["out_dir"]),
        ],
        lambda p, k=k: _name(p, k),
    )

# files: scores
for f, content in SCORE_FILES.items():
    k = f"scores:{f}"
    case(
        "meta-eval",
        f"scores-{f}",
        lambda p, k=k: [
            "meta-eval",
            "--input",
            str(p["good"]),
            "--scores",
            str(p[k]),
            "--metrics",
            "rouge_l",
            "--n-boot",
            "10",
            "--no-plots",
            "--paths-only",
            "--out",
            str(p["out_dir"]),
        ],
        lambda p, k=k: _name(p, k),
    )
    case(
        "judge swap",
        f"external-{f}",
        lambda p, k=k: [
            "judge",
            "swap",
            "--input",
            str(p["good"]),
            "--metric",
            "rouge_l",
            "--dimension",
            "coherence",
            "--scores",
            f"a={p[k]}:rouge_l",
            "--scores",
            f"b={p['scores']}:bleu",
            "--n-boot",
            "10",
            "--no-plots",
            "--out",
            str(p["out_dir"]),
        ],
        lambda p, k=k: _name(p, k),
    )
    if (
        content
    ):  # an existing bad output file: resume refuses, file unchanged (empty: a fresh start)
        case(
            "metrics run",
            f"resume-{f}",
            lambda p, k=k: [
                "metrics",
                "run",
                "--input",
                str(p["good"]),
                "-o",
                str(p[k]),
                "--metrics",
                "rouge_l",
            ],
            lambda p, k=k: _name(p, k),
        )

# files: cache
for f in CACHE_FILES:
    k = f"cache:{f}"
    case(
        "cache stats",
        f,
        lambda p, k=k: ["cache", "stats", "--cache-file", str(p[k])],
        lambda p, k=k: [str(p[k])],
    )
    case(
        "cache export",
        f,
        lambda p, k=k: ["cache", "export", "--cache-file", str(p[k]), "-o", str(p["out_file"])],
        lambda p, k=k: [str(p[k])],
    )
    case(
        "cache prune",
        f,
        lambda p, k=k: ["cache", "prune", "--cache-file", str(p[k]), "--older-than", "1", "--yes"],
        lambda p, k=k: [str(p[k])],
    )

# files: result.json of a run folder
for f in RESULT_FILES:
    k = f"result:{f}"
    case(
        "report render",
        f,
        lambda p, k=k: ["report", "render", str(p[k]), "--no-plots"],
        lambda p, k=k: [p[k].name, "result.json"],
    )

# arguments
for v in ("-1", "nan", "inf", "-inf", "1e999", "abc", ""):
    case(
        "cache prune",
        f"older-than={v}",
        lambda p, v=v: ["cache", "prune", "--cache-file", str(p["cache"]), "--older-than", v],
        lambda p: ["--older-than"],
    )
case(
    "cache prune",
    "all-without-yes",
    lambda p: ["cache", "prune", "--cache-file", str(p["cache"]), "--all"],
    lambda p: ["--yes"],
)
case(
    "cache stats",
    "path-in-missing-folder",
    lambda p: ["cache", "stats", "--cache-file", str(p["root"] / "nonexistent" / "x.sqlite")],
    lambda p: ["x.sqlite"],
)
case(
    "cache export",
    "output-is-the-cache",
    lambda p: ["cache", "export", "--cache-file", str(p["cache"]), "-o", str(p["cache"])],
    lambda p: ["--output"],
)
case(
    "cache export",
    "output-is-a-folder",
    lambda p: ["cache", "export", "--cache-file", str(p["cache"]), "-o", str(p["root"])],
    lambda p: ["--output"],
)
for opt in (
    "rouge_l.use_stemmer=maybe",
    "rouge_l.use_stemmer=1",
    "rouge_l.nope=1",
    "geval_faithfulness.backend=evil",
    "geval_faithfulness.top_logprobs=-1",
    "geval_faithfulness.max_rows=-1",
    "geval_faithfulness.n=1.5",
    "geval_faithfulness.temperature=NaN",
    "geval_faithfulness.mode=weird",
    "bleu.smooth_value=Infinity",
    "nodot=1",
    "rouge_l.use_stemmer",
    "unknown_metric.x=1",
):
    metric = opt.split(".")[0] if "." in opt else "rouge_l"
    metric = metric if metric in ("rouge_l", "geval_faithfulness", "bleu") else "rouge_l"
    case(
        "metrics run",
        f"option={opt}",
        lambda p, opt=opt, metric=metric: [
            "metrics",
            "run",
            "--input",
            str(p["good"]),
            "-o",
            str(p["out_file"]),
            "--metrics",
            metric,
            "--option",
            opt,
        ],
        lambda p, opt=opt: ["--option", opt.split("=")[0], opt.split(".")[0]],
    )
for label, out_key in (
    ("output-is-input", "good"),
    ("output-is-folder", "root"),
    ("output-below-file", "below_file"),
):
    case(
        "metrics run",
        label,
        lambda p, out_key=out_key: [
            "metrics",
            "run",
            "--input",
            str(p["good"]),
            "-o",
            str(p[out_key]),
            "--metrics",
            "rouge_l",
            "--fresh",
        ],
        lambda p: ["--output"],
    )
    case(
        "data export",
        label,
        lambda p, out_key=out_key: [
            "data",
            "export",
            "--input",
            str(p["good"]),
            "-o",
            str(p[out_key]),
        ],
        lambda p: ["--output"],
    )
TRAVERSAL = (
    "../x",
    "../baselines/ours_ragchecker_meta_eval",
    "/etc/passwd",
    "..",
    ".hidden",
    "a/../../b",
)
for name in TRAVERSAL:
    case(
        "data show",
        f"dataset={name}",
        lambda p, n=name: ["data", "show", "--dataset", n],
        lambda p, n=name: [n],
    )
    case(
        "data fetch", f"name={name}", lambda p, n=name: ["data", "fetch", n], lambda p, n=name: [n]
    )
    case(
        "metrics run",
        f"dataset={name}",
        lambda p, n=name: [
            "metrics",
            "run",
            "--dataset",
            n,
            "-o",
            str(p["out_file"]),
            "--metrics",
            "rouge_l",
        ],
        lambda p, n=name: [n],
    )
    case(
        "data agreement",
        f"dataset={name}",
        lambda p, n=name: ["data", "agreement", "--dataset", n],
        lambda p, n=name: [n],
    )
    case(
        "meta-eval",
        f"dataset={name}",
        lambda p, n=name: [
            "meta-eval",
            "--dataset",
            n,
            "--metrics",
            "rouge_l",
            "--out",
            str(p["out_dir"]),
        ],
        lambda p, n=name: [n],
    )
for v in ("-1", "abc", "1.5"):
    case(
        "data show",
        f"records={v}",
        lambda p, v=v: ["data", "show", "--input", str(p["good"]), "-n", v],
        lambda p: ["-n/--records", "--records"],
    )
for v in ("0", "-3", "x"):
    case(
        "data validate",
        f"max-errors={v}",
        lambda p, v=v: ["data", "validate", str(p["good"]), "--max-errors", v],
        lambda p: ["--max-errors"],
    )


def _meta(p: dict[str, Path], *extra: str, out: str | None = None) -> list[str]:
    return [
        "meta-eval",
        "--input",
        str(p["good"]),
        "--scores",
        str(p["scores"]),
        "--metrics",
        "rouge_l",
        "--no-plots",
        "--paths-only",
        "--out",
        out or str(p["out_dir"]),
        *extra,
    ]


def _swap(p: dict[str, Path], *extra: str, out: str | None = None) -> list[str]:
    return [
        "judge",
        "swap",
        "--input",
        str(p["good"]),
        "--metric",
        "rouge_l",
        "--dimension",
        "coherence",
        "--scores",
        f"a={p['scores']}:rouge_l",
        "--scores",
        f"b={p['scores']}:bleu",
        "--no-plots",
        "--out",
        out or str(p["out_dir"]),
        *extra,
    ]


for opt, vals in (
    ("--n-boot", ("-5", "0", "abc", "1e3")),
    ("--cv-folds", ("0", "-2")),
    ("--seed", ("-1", "99999999999999999999999")),
    ("--tie-band", ("nan", "-1", "inf")),
):
    for v in vals:
        case(
            "meta-eval",
            f"{opt}={v}",
            lambda p, opt=opt, v=v: _meta(
                p, opt, v, *(["--n-boot", "10"] if opt != "--n-boot" else [])
            ),
            lambda p, opt=opt: [opt],
        )
for opt, vals in (
    ("--n-boot", ("-5", "0")),
    ("--seed", ("-1",)),
    ("--tie-band", ("nan", "-1")),
    ("--limit", ("-1", "0")),
):
    for v in vals:
        case(
            "judge swap",
            f"{opt}={v}",
            lambda p, opt=opt, v=v: _swap(
                p, opt, v, *(["--n-boot", "10"] if opt != "--n-boot" else [])
            ),
            lambda p, opt=opt: [opt],
        )
case(
    "meta-eval",
    "out-is-a-file",
    lambda p: _meta(p, "--n-boot", "10", out=str(p["good"])),
    lambda p: ["--out", p["good"].name],
)
case(
    "judge swap",
    "out-is-a-file",
    lambda p: _swap(p, "--n-boot", "10", out=str(p["good"])),
    lambda p: ["--out", p["good"].name],
)
case(
    "report render",
    "folder-is-a-file",
    lambda p: ["report", "render", str(p["good"]), "--no-plots"],
    lambda p: [p["good"].name],
)

# the validators of the other analysis commands (issue 18 item 8), one case per bad value
_AGREE = ["data", "agreement", "--input"]
for opt, vals in (("--seed", ("-1", "x")), ("--splits", ("0", "-3", "2.5"))):
    for v in vals:
        case(
            "data agreement",
            f"{opt}={v}",
            lambda p, opt=opt, v=v: [*_AGREE, str(p["good"]), opt, v],
            lambda p, opt=opt: [opt],
        )
case(
    "data agreement",
    "output-is-the-input",
    lambda p: [*_AGREE, str(p["good"]), "-o", str(p["good"])],
    lambda p: [p["good"].name],
)
case(
    "data agreement",
    "output-is-a-folder",
    lambda p: [*_AGREE, str(p["good"]), "-o", str(p["root"])],
    lambda p: [p["root"].name],
)
for opt, vals in (("--n-boot", ("0", "-5", "20000000")), ("--seed", ("-1",))):
    for v in vals:
        case(
            "judge verdicts",
            f"{opt}={v}",
            lambda p, opt=opt, v=v: ["judge", "verdicts", "--verdicts", str(p["good"]), opt, v],
            lambda p, opt=opt: [opt],
        )
        case(
            "judge verdicts --choose",
            f"{opt}={v}",
            lambda p, opt=opt, v=v: [
                "judge",
                "verdicts",
                "--choose",
                "--verdicts",
                str(p["good"]),
                opt,
                v,
            ],
            lambda p, opt=opt: [opt],
        )
case(
    "judge verdicts",
    "output-is-the-input",
    lambda p: ["judge", "verdicts", "--verdicts", str(p["good"]), "-o", str(p["good"])],
    lambda p: [p["good"].name],
)
for opt, v in (("--margin", "-1"), ("--margin", "nan"), ("--alpha", "2"), ("--alpha", "-0.1")):
    case(
        "judge verdicts --choose",
        f"{opt}={v}",
        lambda p, opt=opt, v=v: [
            "judge",
            "verdicts",
            "--choose",
            "--verdicts",
            str(p["good"]),
            opt,
            v,
        ],
        lambda p, opt=opt: [opt],
    )
case(
    "judge verdicts --choose",
    "out-is-a-file",
    lambda p: [
        "judge",
        "verdicts",
        "--choose",
        "--verdicts",
        str(p["good"]),
        "--out",
        str(p["good"]),
    ],
    lambda p: ["--out", p["good"].name],
)
for opt, v in (
    ("--runs", "0"),
    ("--temperature", "-1"),
    ("--temperature", "nan"),
    ("--seed", "-1"),
):
    case(
        "judge diagnostics",
        f"{opt}={v}",
        lambda p, opt=opt, v=v: [
            "judge",
            "diagnostics",
            "--input",
            str(p["good"]),
            "--backbones",
            "no-such-backbone-zz",
            opt,
            v,
        ],
        lambda p, opt=opt: [opt],
    )
case(
    "judge swap",
    "--n-boot=20000000",
    lambda p: _swap(p, "--n-boot", "20000000"),
    lambda p: ["--n-boot"],
)
case(
    "meta-eval",
    "--n-boot=20000000",
    lambda p: _meta(p, "--n-boot", "20000000"),
    lambda p: ["--n-boot"],
)


# -- the fixture world --------------------------------------------------------------------------------
def _write(root: Path, group: str, files: dict[str, bytes | None], suffix: str) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, data in files.items():
        p = root / group / f"{name}{suffix}"
        p.parent.mkdir(parents=True, exist_ok=True)
        if name == "folder":
            p.mkdir()
        elif data is not None:
            p.write_bytes(data)
        out[f"{group}:{name}"] = p
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from metajudge.backends.base import Choice, Completion, Request
    from metajudge.backends.cache import ResponseCache, cache_key

    root = tmp_path_factory.mktemp("fuzz")
    p: dict[str, Path] = {"root": root}
    p.update(_write(root, "records", RECORD_FILES, ".jsonl"))
    p.update(_write(root, "scores", SCORE_FILES, ".jsonl"))
    p.update(_write(root, "cache", CACHE_FILES, ".sqlite"))
    for name, data in RESULT_FILES.items():
        d = root / "runs" / name
        d.mkdir(parents=True)
        if data is not None:
            (d / "result.json").write_bytes(data)
        p[f"result:{name}"] = d
    p["good"] = root / "good.jsonl"
    shutil.copy(FIXTURE, p["good"])
    p["scores"] = root / "good_scores.jsonl"
    assert (
        main(
            [
                "metrics",
                "run",
                "--input",
                str(p["good"]),
                "-o",
                str(p["scores"]),
                "--metrics",
                "rouge_l,bleu",
                "--quiet",
            ]
        )
        == 0
    )
    p["cache"] = root / "good_cache.sqlite"
    c = ResponseCache(p["cache"])
    r = Request(prompt="q")
    c.put(
        cache_key("x", "m", r, ""),
        kind="x",
        model_id="m",
        parser_version="",
        request=r,
        completion=Completion((Choice("a", "a"),), 1, 1, 0.0),
    )
    c._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    p["below_file"] = p["good"] / "sub.jsonl"
    p["out_file"] = root / "never" / "out.jsonl"
    p["out_dir"] = root / "never_run"
    return p


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(root.rglob("*"))
        if f.is_file() and not f.name.endswith(("-wal", "-shm"))
    }


@pytest.mark.parametrize("c", [pytest.param(c, id=f"{c.command}|{c.label}") for c in CASES])
def test_bad_input(c: Case, world: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = c.argv(world)
    for stale in (world["out_file"], world["out_dir"]):  # a case that failed leaves no trace
        shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(
            missing_ok=True
        )
    before = _snapshot(world["root"])
    capsys.readouterr()
    try:
        rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    out, err = capsys.readouterr()
    assert rc == 2, (rc, err[-800:])
    assert "Traceback" not in err and "Traceback" not in out
    wanted = c.expect(world)
    assert any(w in err for w in wanted), (wanted, err[-800:])
    assert _snapshot(world["root"]) == before  # inputs, caches unchanged; no output written
    assert not world["out_file"].exists() and not world["out_dir"].exists()


def test_case_counts() -> None:
    """The number of generated cases per command (printed with ``-s``)."""
    counts: dict[str, int] = {}
    for c in CASES:
        counts[c.command] = counts.get(c.command, 0) + 1
    print("\nfuzz cases per command: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    assert sum(counts.values()) == len(CASES) >= 150
