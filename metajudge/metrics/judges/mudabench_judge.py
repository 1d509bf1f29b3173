"""MuDABench judging (Li et al. 2026): the LLM verdicts behind final, process and full accuracy.

Per question: T (final answer equivalent to the gold answer) comes from
:class:`~metajudge.metrics.judges.equivalence.AnswerEquivalence` (numeric fast path first);
the process verdicts (standard RAG variant) come from one judge call per question that labels
every gold atomic fact ``covered`` / ``wrong`` / ``missing`` against the system's output (its
extracted facts when the predictions file gives them, plus its final answer) and counts the
stated facts that match no gold fact (``extra_wrong``: a hallucinated figure), which enter E.
The aggregation (C, E, P = min(C, 1 − E), full = mean 1[P = 1]·T) is
:func:`metajudge.metrics.mudabench.aggregate`.

A question whose verdict could not be parsed (T, any fact label or the extra count) stays in
|Q| as not correct (T = 0, or P = 0), as the card's (1/|Q|) Σ prescribes, and is counted
(``unjudged``; ``unparsed_final`` / ``unparsed_process`` beside the accuracies).

Predictions file: JSONL, one object per question: ``question_id`` (upstream id; or ``index``,
the position in the variant's file, for the two duplicated ids), ``answer`` (str), optional
``facts`` (list of str).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metajudge.backends.base import Backend, BackendError
from metajudge.data.formats import Input
from metajudge.errors import InputError
from metajudge.metrics.base import MetricResult, ScoreItem
from metajudge.metrics.judges.common import JudgeMetric
from metajudge.metrics.judges.equivalence import AnswerEquivalence
from metajudge.metrics.judges.parsers.ratings import parse_extra_wrong, parse_fact_labels
from metajudge.metrics.judges.prompts import numbered


def facts_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": {"type": "string", "enum": ["covered", "wrong", "missing"]},
                "minItems": n,
                "maxItems": n,
            },
            "extra_wrong": {"type": "integer"},
        },
        "required": ["facts", "extra_wrong"],
    }


@dataclass(frozen=True)
class Prediction:
    key: str  # question_id, or "#<index>"
    answer: str
    facts: tuple[str, ...] | None = None


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read a MuDABench predictions JSONL file (errors name the file, line and field)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("predictions file not found", path=p)
    out = []
    for ln, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"malformed JSON: {e.msg}", path=p, line=ln) from None
        if not isinstance(d, dict):
            raise InputError("expected an object", path=p, line=ln)
        if "question_id" in d:
            key = str(d["question_id"])
        elif isinstance(d.get("index"), int):
            key = f"#{d['index']}"
        else:
            raise InputError("needs question_id (or index)", path=p, line=ln, field="question_id")
        ans = d.get("answer")
        if not isinstance(ans, str):
            raise InputError("expected a string", path=p, line=ln, field="answer")
        facts = d.get("facts")
        if facts is not None and (
            not isinstance(facts, list) or not all(isinstance(f, str) for f in facts)
        ):
            raise InputError("expected a list of strings", path=p, line=ln, field="facts")
        out.append(Prediction(key, ans, tuple(facts) if facts is not None else None))
    if not out:
        raise InputError("no predictions", path=p)
    return out


class FactCoverageJudge(JudgeMetric):
    """Labels every gold fact of a question covered / wrong / missing in one call."""

    name = "mudabench_process"
    direction = "higher"
    range = (0.0, 1.0)
    needs_reference = False
    tasks = ("fact_coverage",)

    def __init__(
        self,
        *,
        backbone: str | None = None,
        variant: str | None = None,
        backend: Backend | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, backend=backend, **kw)

    @property
    def signature(self) -> str:
        return self._signature("mudabench_process")

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        """Process accuracy P = min(C, 1 − E) per item: ``response`` is the system's output,
        ``input.documents`` the gold atomic facts (MuDABench ``source_answer``)."""
        from fractions import Fraction

        from metajudge.metrics.mudabench import FactVerdict, QuestionVerdict, coverage_error

        rows, idx, results = [], [], [None] * len(items)  # type: list[tuple[str, str, Sequence[str]]], list[int], list[MetricResult | None]
        for i, it in enumerate(items):
            facts = tuple(it.input.documents or ()) if it.input else ()
            if not facts:
                results[i] = MetricResult(it.key, None, {}, "no gold facts (input.documents)")
            elif it.response is None or not it.response.strip():
                results[i] = MetricResult(
                    it.key, 0.0, {"coverage": 0.0, "error": 1.0, "decided_by": "empty"}
                )
            else:
                rows.append((it.input.question if it.input else "", it.response, facts))
                idx.append(i)
        for i, (lab, det) in zip(idx, self.label(rows), strict=True):
            key = items[i].key
            if not labels_parsed(lab, det):
                self.items_failed += 1
                results[i] = MetricResult(
                    key, None, {**det, "labels": lab}, det.get("error", "unparseable fact labels")
                )
                continue
            assert lab is not None
            v = QuestionVerdict(
                key,
                0,
                tuple(FactVerdict(f, s) for f, s in zip(rows[idx.index(i)][2], lab, strict=True)),  # type: ignore[arg-type]
                extra_wrong=int(det["extra_wrong"]),
            )
            c, e = coverage_error(v)
            self.items_scored += 1
            results[i] = MetricResult(
                key,
                float(min(c, Fraction(1) - e)),
                {**det, "labels": lab, "coverage": float(c), "error": float(e)},
            )
        return [r for r in results if r is not None]

    def label(
        self, rows: Sequence[tuple[str, str, Sequence[str]]]
    ) -> list[tuple[list[str | None] | None, dict[str, Any]]]:
        """For (question, system output, gold facts) rows: the labels (``None`` if unparseable) and
        details, with ``extra_wrong`` (``None`` if unparseable)."""
        tpl = self.prompt("fact_coverage")
        reqs = []
        for q, pred, facts in rows:
            n = len(facts)
            dec: dict[str, Any] = {
                "max_tokens": 16 + 5 * n,
                "temperature": 0.0,
                "seed": self.seed,
                "json_schema": facts_schema(n),
            }
            reqs.append(
                self.client.request(
                    tpl.render(question=q, prediction=pred, gold_facts=numbered(list(facts))), **dec
                )
            )
        out = []
        for (_, _, facts), c in zip(rows, self.client.run(reqs), strict=True):
            if isinstance(c, BackendError):
                out.append((None, {"error": f"backend error: {c}"}))
                continue
            labels = parse_fact_labels(c.text, len(facts))
            extra = parse_extra_wrong(c.text)
            fails = len(facts) if labels is None else sum(x is None for x in labels)
            fails += int(extra is None)
            self.count(len(facts) + 1, fails)
            out.append((labels, {"raw": c.text, "parse_failures": fails, "extra_wrong": extra}))
        return out


def labels_parsed(lab: list[str | None] | None, det: dict[str, Any]) -> bool:
    """Every fact label and the extra count of one question's fact-coverage answer parsed."""
    return (
        lab is not None and all(x is not None for x in lab) and det.get("extra_wrong") is not None
    )


def _match_questions(
    predictions: Sequence[Prediction], variant: str, data_dir: str | Path | None
) -> list[tuple[Prediction, Any]]:
    """Each prediction with its MuDABench question (by question id or ``#index``)."""
    from metajudge.data.benchmarks import load_mudabench

    by_id: dict[str, Any] = {}
    for q in load_mudabench(variant, data_dir=data_dir):  # type: ignore[arg-type]
        by_id.setdefault(q.question_id, q)
        by_id[f"#{q.index}"] = q
    rows = []
    for p in predictions:
        if p.key not in by_id:
            raise InputError(f"unknown MuDABench {variant} question {p.key!r}", field="question_id")
        rows.append((p, by_id[p.key]))
    return rows


def _verdicts(
    rows: Sequence[tuple[Prediction, Any]],
    t_res: Sequence[Any],
    labels: Sequence[tuple[list[str | None] | None, dict[str, Any]]] | None,
) -> tuple[list[Any], list[dict[str, Any]], int]:
    """Per-question verdicts (final + fact labels) of every question, their records, and how many
    had a verdict that could not be parsed (kept in |Q| as not correct: ``unparsed``)."""
    from metajudge.metrics.mudabench import FactVerdict, QuestionVerdict

    verdicts, per_q, unjudged = [], [], 0
    for i, ((_, q), t) in enumerate(zip(rows, t_res, strict=True)):
        rec: dict[str, Any] = {
            "id": f"{q.variant}#{q.index}",
            "question_id": q.question_id,
            "final": t.score,
            "final_details": t.details,
        }
        unparsed = [] if t.score is not None else ["final"]
        facts: tuple[Any, ...] = ()
        extra = 0
        if labels is not None:
            lab, det = labels[i]
            rec["facts"], rec["facts_details"] = lab, det
            if not labels_parsed(lab, det):
                unparsed.append("facts")
            else:
                assert lab is not None
                facts = tuple(FactVerdict(f, s) for f, s in zip(q.gold_facts, lab, strict=True))  # type: ignore[arg-type]
                extra = int(det["extra_wrong"])
        rec["unparsed"] = unparsed
        per_q.append(rec)
        unjudged += bool(unparsed)
        final = 0 if t.score is None else int(t.score)
        verdicts.append(QuestionVerdict(rec["id"], final, facts, extra, unparsed=tuple(unparsed)))
    return verdicts, per_q, unjudged


def judge_mudabench(
    predictions: Sequence[Prediction],
    *,
    variant: str = "simple",
    backbone: str | None = None,
    prompt_variant: str | None = None,
    fast_path: bool = True,
    process: bool = True,
    data_dir: str | Path | None = None,
    backend: Backend | None = None,
) -> dict[str, Any]:
    """Judge a predictions file against MuDABench's gold answers and facts; returns the
    aggregates, per-question verdicts, parse-failure counts and the judges' cost."""
    from metajudge.metrics.mudabench import aggregate

    rows = _match_questions(predictions, variant, data_dir)
    eq = AnswerEquivalence(
        backbone=backbone, variant=prompt_variant, fast_path=fast_path, backend=backend
    )
    cov = FactCoverageJudge(backbone=backbone, variant=prompt_variant, backend=backend or None)
    try:
        t_res = eq.score_batch(
            [
                ScoreItem(f"{q.variant}#{q.index}", p.answer, q.final_answer, Input(q.question))
                for p, q in rows
            ]
        )
        labels = None
        if process:
            if backend is None:  # share the running server between the two judges
                cov.use_client(eq.client)
            texts = [("\n".join(p.facts) + "\n" if p.facts else "") + p.answer for p, _ in rows]
            labels = cov.label(
                [(q.question, t, q.gold_facts) for t, (_, q) in zip(texts, rows, strict=True)]
            )
        verdicts, per_q, unjudged = _verdicts(rows, t_res, labels)
        return {
            "variant": variant,
            "backbone": backbone,
            "n_predictions": len(rows),
            "unjudged": unjudged,
            "aggregate": aggregate(verdicts) if verdicts else {"n": 0},
            "equivalence": eq.summary,
            "fact_coverage": {
                "parse_attempts": cov.parse_attempts,
                "parse_failures": cov.parse_failures,
            },
            "signatures": {"equivalence": eq.signature, "fact_coverage": cov.signature},
            "cost": eq.cost() or {},
            "questions": per_q,
        }
    finally:
        cov.use_client(None)
        eq.close()
