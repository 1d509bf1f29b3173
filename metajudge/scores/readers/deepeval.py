"""deepeval test-run results (JSON), read without deepeval: a saved test run (``testCases``,
camelCase, as ``deepeval`` writes it to ``DEEPEVAL_RESULTS_FOLDER``) or an ``EvaluationResult``
dumped as JSON (``test_results``, snake_case).

The item is an id-like key of the test case's metadata (``metadata``, deepeval 4; earlier
``additional_metadata``) (``--id-field KEY``: that key, or ``name``), else the test case's
``name`` when it is not deepeval's default ``test_case_<n>``; the system is the metadata's
``system`` when there is one. Each metric is
a column: its ``score``, with ``success`` and ``reason`` (the explanation) kept.
"""

from __future__ import annotations

import re
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

#: the two layouts: (test cases key, metrics key, metadata keys: deepeval 4 writes ``metadata``,
#: earlier versions ``additionalMetadata`` / ``additional_metadata``)
LAYOUTS = {
    "testCases": ("test-run", "metricsData", ("metadata", "additionalMetadata")),
    "test_results": ("evaluation-result", "metrics_data", ("metadata", "additional_metadata")),
}
_DEFAULT_NAME = re.compile(r"test_case_\d+$")


def sniff(head: Head) -> bool:
    """A JSON object with a ``testCases`` / ``test_results`` list of cases with metrics."""
    data = head.json
    if not isinstance(data, dict):
        return False
    for key, (_, metrics, _) in LAYOUTS.items():
        cases = data.get(key)
        if isinstance(cases, list) and (
            not cases or (isinstance(cases[0], dict) and metrics in cases[0])
        ):
            return True
    return False


def read(path: Path, reading: Reading) -> tuple[FileInfo, list[Judged]]:
    data = read_json(path)
    key = next((k for k in LAYOUTS if isinstance(data, dict) and k in data), None)
    if key is None:
        raise InputError(
            "not a deepeval test run (no testCases or test_results list)",
            path=path,
            field="testCases",
        )
    layout, mkey, meta_keys = LAYOUTS[key]
    info = FileInfo("deepeval", f"deepeval {layout}")
    out: list[Judged] = []
    for n, case in enumerate(data[key] or ()):
        at = f"{key}[{n}]"
        if not isinstance(case, dict):
            raise InputError("expected an object", path=path, field=at)
        meta_key = next((k for k in meta_keys if isinstance(case.get(k), dict)), meta_keys[0])
        meta = shaped(case.get(meta_key), dict, path, f"{at}.{meta_key}")
        item, name = _item(case, meta, reading)
        info.id_fields = info.id_fields or ["name", *(f"{meta_key}.{k}" for k in meta)]
        info.id_field = info.id_field or name
        system = meta.get("system")
        for k, m in enumerate(shaped(case.get(mkey), list, path, f"{at}.{mkey}")):
            field = f"{at}.{mkey}[{k}].score"
            m = shaped(m, dict, path, f"{at}.{mkey}[{k}]")
            out.append(
                Judged(
                    item=item,
                    system=None if system in (None, "") else str(system),
                    metric=str(m.get("name") or f"metric{k}"),
                    value=json_score(m.get("score"), path, field),
                    where={"path": path, "line": None, "field": field},
                    explanation=m.get("reason") or m.get("error"),
                )
            )
            info.explanations += bool(m.get("reason"))
        info.rows += 1
    info.columns = list(dict.fromkeys(j.metric for j in out))
    info.label_columns = [f"{c} (success)" for c in info.columns]
    info.systems = sorted({j.system for j in out if j.system})
    return info, out


def _item(
    case: dict[str, Any], meta: dict[str, Any], reading: Reading
) -> tuple[str | None, str | None]:
    if reading.id_field:
        v = case.get("name") if reading.id_field == "name" else meta.get(reading.id_field)
        return (None if v in (None, "") else str(v)), reading.id_field
    name, v = first_id(meta, ID_NAMES)
    if name is not None:
        return str(v), name
    nm = case.get("name")
    if nm and not _DEFAULT_NAME.match(str(nm)):
        return str(nm), "name"
    return None, None


READER = framework_reader("deepeval", "deepeval test-run results (JSON)", (".json",), sniff, read)
