"""promptfoo results (``promptfoo eval -o results.json``), read as JSON without promptfoo.

One entry of ``results.results`` is one test case run by one provider: the item is the test's
variable ``id`` (``--id-field VAR``: another variable, or a key of the test's ``metadata``), the
system the provider's label or id. Each assertion of ``gradingResult.componentResults`` is a
column named by its ``metric`` (else its type, e.g. ``llm-rubric``; a second of one name is
``llm-rubric#2``): its ``score``, with its ``pass`` and ``reason`` (the explanation) kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import read_json
from metajudge.scores.readers.base import Head, Reading
from metajudge.scores.readers.framework import (
    ID_NAMES,
    FileInfo,
    Judged,
    first_id,
    framework_reader,
    json_score,
    shaped,
)

#: results versions this reader knows (``results.version``)
VERSIONS = (2, 3)


def sniff(head: Head) -> bool:
    """A JSON object with ``results.version`` and a ``results.results`` list."""
    res = head.json.get("results") if isinstance(head.json, dict) else None
    return isinstance(res, dict) and "version" in res and isinstance(res.get("results"), list)


def read(path: Path, reading: Reading) -> tuple[FileInfo, list[Judged]]:
    data = read_json(path)
    res = data.get("results") if isinstance(data, dict) else None
    if not isinstance(res, dict) or not isinstance(res.get("results"), list):
        raise InputError(
            "not a promptfoo results file (no results.results list)", path=path, field="results"
        )
    version = res.get("version")
    if version not in VERSIONS:
        raise InputError(
            f"promptfoo results version {version!r} is not one this reader knows "
            f"({', '.join(map(str, VERSIONS))})",
            path=path,
            field="results.version",
        )
    info = FileInfo("promptfoo", f"promptfoo results v{version}")
    info.id_field = reading.id_field
    out: list[Judged] = []
    for n, r in enumerate(res["results"]):
        out += _entry(path, n, r, reading, info)
    info.rows = len(res["results"])
    info.columns = list(dict.fromkeys(j.metric for j in out))
    info.label_columns = [f"{c} (pass)" for c in info.columns]
    info.systems = sorted({j.system for j in out if j.system})
    info.epochs = max((j.epoch for j in out), default=1)
    return info, out


def _entry(path: Path, n: int, r: Any, reading: Reading, info: FileInfo) -> list[Judged]:
    at = f"results.results[{n}]"
    if not isinstance(r, dict):
        raise InputError("expected an object", path=path, field=at)
    test = shaped(r.get("testCase"), dict, path, f"{at}.testCase")
    vars_ = shaped(r.get("vars"), dict, path, f"{at}.vars") or shaped(
        test.get("vars"), dict, path, f"{at}.testCase.vars"
    )
    meta = shaped(test.get("metadata"), dict, path, f"{at}.testCase.metadata")
    info.id_fields = info.id_fields or [f"vars.{k}" for k in vars_] + [
        f"metadata.{k}" for k in meta
    ]
    if reading.id_field:
        v = vars_.get(reading.id_field, meta.get(reading.id_field))
        name = reading.id_field if v not in (None, "") else None
    else:
        name, v = first_id(vars_, ID_NAMES)
        if name is None:
            name, v = first_id(meta, ID_NAMES)
    info.id_field = info.id_field or name
    prov = r.get("provider") or {}
    system = prov.get("label") or prov.get("id") if isinstance(prov, dict) else str(prov)
    system = None if system in (None, "") else str(system)
    grading = shaped(r.get("gradingResult"), dict, path, f"{at}.gradingResult")
    comps = shaped(
        grading.get("componentResults"), list, path, f"{at}.gradingResult.componentResults"
    )
    epoch = shaped(r.get("repeatIndex"), int, path, f"{at}.repeatIndex") + 1
    out, names = [], {}
    for k, c in enumerate(comps):
        c = shaped(c, dict, path, f"{at}.gradingResult.componentResults[{k}]")
        a = shaped(
            c.get("assertion"), dict, path, f"{at}.gradingResult.componentResults[{k}].assertion"
        )
        base = str(a.get("metric") or a.get("type") or "assertion")
        names[base] = names.get(base, 0) + 1
        metric = base if names[base] == 1 else f"{base}#{names[base]}"
        field = f"{at}.gradingResult.componentResults[{k}].score"
        out.append(
            Judged(
                item=None if v in (None, "") else str(v),
                system=system,
                metric=metric,
                value=json_score(c.get("score"), path, field),
                where={"path": path, "line": None, "field": field},
                epoch=epoch,
                explanation=c.get("reason"),
            )
        )
        info.explanations += bool(c.get("reason"))
    return out


READER = framework_reader(
    "promptfoo", "promptfoo results (promptfoo eval -o results.json)", (".json",), sniff, read
)
