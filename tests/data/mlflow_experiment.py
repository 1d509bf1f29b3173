"""An MLflow experiment made with mlflow's own API for the ``mlflow:EXPERIMENT`` tests, and the
same data as a canonical JSONL file with a judges' CSV (label codes: 0 = no, 1 = yes) (:func:`log_experiment`).

A traced app "answers" the 24 responses of ``tests/fixtures/byod/faithfulness.jsonl`` (it
returns the record's response) under the active model named after the record's system (the
app version); each trace is tagged with its item and system. The binary
dimension ``faithful`` (a 1-5 faithfulness grade of 4 or more): reviewers ``alice`` and ``bob``
(annotators 1 and 2; alice as feedback, bob as an expectation) on all but every fourth trace;
``bob`` skips every fifth labelled one; two LLM judges, ``judge-a`` (annotator 3's grade, a bool)
and ``judge-b`` (whether the response is longer than 60 characters, as "yes"/"no"), ``judge-b``
logging an ``AssessmentError`` on the second trace.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "byod" / "faithfulness.jsonl"
DIM = "faithful"


def _items() -> list[dict[str, Any]]:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(line) for line in lines]


def log_experiment(uri: str, name: str, out: Path, n: int = 24) -> dict[str, Any]:
    """Log the experiment ``name`` at tracking URI ``uri`` (the first ``n`` responses); write ``out/labels.jsonl`` and
    ``out/judges.csv`` (the same data, canonical); return the trace ids and the paths."""
    import mlflow
    from mlflow.entities import AssessmentError, AssessmentSource

    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment(name)

    @mlflow.trace(name="summarise")
    def summarise(question: str, item: dict[str, Any]) -> str:
        mlflow.update_current_trace(tags={"item": item["id"], "summariser": item["system"]})
        return str(item["response"])

    human = lambda source: AssessmentSource(source_type="HUMAN", source_id=source)
    judge = lambda source: AssessmentSource(source_type="LLM_JUDGE", source_id=source)
    records, judges = [], []
    for i, item in enumerate(_items()[:n]):
        mlflow.set_active_model(name=item["system"])  # the app version: the record's system
        summarise(item["input"]["question"], item)
        tid = mlflow.get_last_active_trace_id()
        grades = item["scores"]["faithfulness"]
        labels: list[str | None] = [None, None]
        if i % 4 != 3:
            mlflow.log_feedback(trace_id=tid, name=DIM, value=grades[0] >= 4, source=human("alice"))
            labels[0] = "yes" if grades[0] >= 4 else "no"
            if i % 5 != 4:
                mlflow.log_expectation(
                    trace_id=tid, name=DIM, value=grades[1] >= 4, source=human("bob")
                )
                labels[1] = "yes" if grades[1] >= 4 else "no"
        a = grades[2] >= 4
        mlflow.log_feedback(trace_id=tid, name=DIM, value=a, source=judge("judge-a"))
        b = "yes" if len(item["response"]) > 60 else "no"
        if i == 1:
            err = AssessmentError(error_code="RATE_LIMIT", error_message="429 from the provider")
            mlflow.log_feedback(trace_id=tid, name=DIM, error=err, source=judge("judge-b"))
        else:
            mlflow.log_feedback(trace_id=tid, name=DIM, value=b, source=judge("judge-b"))
        scores = {DIM: labels} if any(v is not None for v in labels) else {}
        records.append(
            {
                "id": tid,
                "input": {"question": item["input"]["question"]},
                "system": item["system"],
                "response": item["response"],
                "scores": scores,
            }
        )
        judges.append(
            {
                "item": tid,
                "system": item["system"],
                "judge-a": int(a),
                "judge-b": "" if i == 1 else int(b == "yes"),
            }
        )
    mlflow.clear_active_model()  # mlflow's process-wide state: no later test logs under it
    return {"ids": [r["id"] for r in records], **_write(out, records, judges)}


def _write(out: Path, records: list[dict[str, Any]], judges: list[dict[str, Any]]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    card = {
        "name": "traces",
        "kind": "binary",
        "dimensions": [DIM],
        "scale": {"labels": ["no", "yes"]},
        "annotators": 2,
    }
    labels = out / "labels.jsonl"
    lines = [json.dumps({"card": card})] + [json.dumps(r) for r in records]
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = out / "judges.csv"
    with open(table, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["item", "system", "judge-a", "judge-b"])
        w.writeheader()
        w.writerows(judges)
    return {"labels": labels, "judges": table}
