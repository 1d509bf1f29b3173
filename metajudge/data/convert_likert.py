"""Converters of the graded (Likert) datasets: upstream files -> canonical per-response records.

LFTQA-Eval, SummEval (PPairS), SummaC's SummEval subset, HANNA and the UniEval data. How each
upstream score is read is stated in the dataset's card (``notes``).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from metajudge.data.formats import Record
from metajudge.data.upstream import (
    D2T_QUESTION,
    DIALOGUE_QUESTION,
    SUMMARISE_QUESTION,
    _num,
    _req,
    _Source,
)
from metajudge.errors import InputError

# ---------------------------------------------------------------------------------------------
# LFTQA-Eval (YukiiWWW/LFTQA-Eval scores/<subset>/human_scores/*.json), scores only


def convert_lftqa_eval(src: _Source) -> list[Record]:
    """Likert record per (example_id, model), response None (texts are not in the snapshot)."""
    out: list[Record] = []
    for subset in ("fetaqa", "qtsumm"):
        merged: dict[tuple[str, str], dict[str, float | None]] = {}
        origin: dict[tuple[str, str], tuple[Path, int]] = {}
        for dim in ("faithfulness", "comprehensiveness"):
            rel = f"scores/{subset}/human_scores/human_{dim}_scores.json"
            p = src.path(rel)
            rows = src.json(rel)
            if not isinstance(rows, list) or not rows:
                raise InputError("expected a non-empty JSON list", path=p, field="<root>")
            for i, r in enumerate(rows):
                key = (str(_req(r, "example_id", p, f"[{i}]")), str(_req(r, "model", p, f"[{i}]")))
                slot = merged.setdefault(key, {})
                if dim in slot:
                    raise InputError(
                        f"duplicate (example_id, model) {key!r}", path=p, field=f"[{i}].example_id"
                    )
                slot[dim] = _num(_req(r, "score", p, f"[{i}]"), p, f"[{i}].score")
                origin.setdefault(key, (p, i))
        for (ex, model), scores in merged.items():
            p, i = origin[(ex, model)]
            d = {
                "id": ex,
                "input": {"question": ""},
                "system": model,
                "response": None,
                "scores": {k: [v] for k, v in scores.items()},
                "meta": {"subset": subset},
            }
            out.append(src.record(d, p, where=f"[{i}] -> ({ex}, {model})"))
    return out


# ---------------------------------------------------------------------------------------------
# SummEval via PPairS (data/summeval.jsonl)


def convert_summeval_ppairs(src: _Source) -> list[Record]:
    """One Likert record per (article_id, summary_id); each score is the mean of 3 experts."""
    out: list[Record] = []
    for p, line, o in src.jsonl("summeval.jsonl"):
        d = {
            "id": str(_req(o, "article_id", p, "", line=line)),
            "input": {
                "question": SUMMARISE_QUESTION,
                "context": _req(o, "article", p, "", line=line),
            },
            "system": str(_req(o, "summary_id", p, "", line=line)),
            "response": _req(o, "summary", p, "", line=line),
            "scores": {
                dim: [_num(_req(o, dim, p, "", line=line), p, dim, line=line)]
                for dim in src.card.dimensions
            },
        }
        out.append(src.record(d, p, line=line))
    return out


# ---------------------------------------------------------------------------------------------
# SummaC SummEval consistency subset (tingofurro/summac data/summeval.json)


def convert_summac(src: _Source) -> list[Record]:
    """One Likert record per item with its 3 expert consistency scores."""
    rel = "summeval.json"
    p = src.path(rel)
    obj = src.json(rel)
    if not isinstance(obj, dict) or not obj:
        raise InputError("expected a non-empty JSON object {item id: item}", path=p, field="<root>")
    out: list[Record] = []
    for key, it in obj.items():
        anns = _req(it, "annotations", p, key)
        if not isinstance(anns, list):
            raise InputError("expected a list of expert scores", path=p, field=f"{key}.annotations")
        d = {
            "id": str(key),
            "input": {"question": SUMMARISE_QUESTION, "context": _req(it, "document", p, key)},
            "system": str(_req(it, "model_name", p, key)),
            "response": _req(it, "claim", p, key),
            "scores": {
                "consistency": [_num(a, p, f"{key}.annotations[{j}]") for j, a in enumerate(anns)]
            },
            "meta": {
                k: it.get(k)
                for k in ("label", "cnndm_id", "cut", "error_type", "origin")
                if k in it
            },
        }
        out.append(src.record(d, p, where=str(key)))
    return out


# ---------------------------------------------------------------------------------------------
# HANNA (dig-team/hanna-benchmark-asg hanna_metric_scores_llm.csv + PPairS data/hanna.jsonl texts)

HANNA_CRITERIA: dict[str, str] = {
    "relevance": "RE",
    "coherence": "CH",
    "empathy": "EM",
    "surprise": "SU",
    "engagement": "EG",
    "complexity": "CX",
}


def parse_list_cell(
    cell: str, path: Path, field: str, *, line: int | None = None
) -> list[float | None]:
    """A python-list string of numbers (HANNA's CSV cells) -> floats (NaN -> None)."""
    try:
        vals = json.loads(cell)
    except (json.JSONDecodeError, TypeError):
        try:
            vals = ast.literal_eval(cell.replace("nan", "None"))
        except (ValueError, SyntaxError):
            raise InputError(
                f"expected a list of numbers, got {cell[:60]!r}", path=path, line=line, field=field
            ) from None
    if not isinstance(vals, list):
        raise InputError(
            f"expected a list of numbers, got {type(vals).__name__}",
            path=path,
            line=line,
            field=field,
        )
    return [_num(v, path, f"{field}[{j}]", line=line) for j, v in enumerate(vals)]


def read_hanna_table(src: _Source) -> tuple[Path, list[tuple[int, str, dict[str, str]]]]:
    """(path, [(line, system, row)]) of hanna_metric_scores_llm.csv."""
    p, rows = src.csv_rows("hanna_metric_scores_llm.csv")
    out = []
    for line, row in rows:
        system = (row.get("Model") or "").strip()
        if not system:
            raise InputError("missing system name", path=p, line=line, field="Model")
        out.append((line, system, row))
    return p, out


def convert_hanna(src: _Source) -> list[Record]:
    """Likert record per (story index, system) with the 3 raters' scores; texts aligned from PPairS."""
    p, table = read_hanna_table(src)
    per_ann: dict[str, dict[str, list[list[float | None]]]] = {}
    means: dict[str, dict[str, list[float | None]]] = {}
    n_items: int | None = None
    for line, system, row in table:
        per_ann[system] = {}
        means[system] = {}
        for dim, code in HANNA_CRITERIA.items():
            cols = [f"Human {k} {code}" for k in (1, 2, 3)]
            lists = []
            for c in cols:
                if c not in row:
                    raise InputError("missing column", path=p, line=line, field=c)
                lists.append(parse_list_cell(row[c], p, c, line=line))
            mean_col = dim.capitalize()
            means[system][dim] = (
                parse_list_cell(row[mean_col], p, mean_col, line=line) if mean_col in row else []
            )
            if n_items is None:
                n_items = len(lists[0])
            if any(len(x) != n_items for x in lists):
                raise InputError(
                    f"expected {n_items} values per cell", path=p, line=line, field=cols[0]
                )
            per_ann[system][dim] = lists
    texts, prompts = _align_hanna_texts(src, means, n_items or 0)
    reference = {i: texts.get((i, "Human")) for i in range(n_items or 0)}
    out: list[Record] = []
    for i in range(n_items or 0):
        for _line, system, _row in table:
            d = {
                "id": str(i),
                "input": {"question": prompts.get(i, ""), "reference": reference[i]},
                "system": system,
                "response": texts.get((i, system)),
                "scores": {dim: [lst[i] for lst in per_ann[system][dim]] for dim in HANNA_CRITERIA},
            }
            out.append(src.record(d, p, line=_line, where=f"story index {i}"))
    return out


def _align_hanna_texts(
    src: _Source, means: Mapping[str, Mapping[str, list[float | None]]], n_items: int
) -> tuple[dict[tuple[int, str], str], dict[int, str]]:
    """Attribute PPairS stories (prompt P<i>) to HANNA systems by their 6 mean human scores.

    PPairS (process_data.py) sorted stories by text, so ``S<j>`` is not a system id; the mean
    scores identify the system where they are unique at that prompt. Returns
    ``{(index, system): story}`` (unattributable stories left out) and ``{index: prompt}``.
    """
    texts: dict[tuple[int, str], str] = {}
    prompts: dict[int, str] = {}
    candidates: dict[tuple[int, str], list[str]] = {}
    stories: dict[tuple[int, str], str] = {}
    for p, line, o in src.jsonl("hanna_ppairs.jsonl"):
        pid = str(_req(o, "prompt_id", p, "", line=line))
        if not pid.startswith("P") or not pid[1:].isdigit():
            raise InputError(
                f"expected 'P<index>', got {pid!r}", path=p, line=line, field="prompt_id"
            )
        i = int(pid[1:])
        if i >= n_items:
            raise InputError(
                f"prompt index {i} >= {n_items} stories per system",
                path=p,
                line=line,
                field="prompt_id",
            )
        prompts.setdefault(i, str(_req(o, "prompt", p, "", line=line)))
        sid = str(_req(o, "story_id", p, "", line=line))
        row = {
            dim: _num(_req(o, dim, p, "", line=line), p, dim, line=line) for dim in HANNA_CRITERIA
        }
        cands = [
            system
            for system, m in means.items()
            if all(
                m[dim]
                and m[dim][i] is not None
                and row[dim] is not None
                and abs(m[dim][i] - row[dim]) < 1e-6  # type: ignore[operator]
                for dim in HANNA_CRITERIA
            )
        ]
        candidates[(i, sid)] = cands
        stories[(i, sid)] = str(_req(o, "story", p, "", line=line))
    for (i, sid), cands in candidates.items():
        if len(cands) == 1:
            texts[(i, cands[0])] = stories[(i, sid)]
    return texts, prompts


# ---------------------------------------------------------------------------------------------
# UniEval reproduce data (Topical-Chat, SFRES, SFHOT)


def _scores_dict(v: Any, path: Path, field: str) -> dict[str, Any]:
    """UniEval stores ``scores`` as a dict or as a python-dict string."""
    if isinstance(v, str):
        try:
            v = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            raise InputError(
                f"expected a dict of scores, got {v[:60]!r}", path=path, field=field
            ) from None
    if not isinstance(v, dict):
        raise InputError(
            f"expected a dict of scores, got {type(v).__name__}", path=path, field=field
        )
    return v


def convert_unieval(src: _Source) -> list[Record]:
    """Topical-Chat (60 contexts × 6 responses) and SFRES / SFHOT, one value per dimension."""

    def dialogue(r: Any, p: Path, w: str, source: str) -> tuple[dict[str, Any], str]:
        doc = [str(_req(r, "context", p, w))]
        inp = {"question": DIALOGUE_QUESTION, "context": source, "documents": doc}
        return inp, str(_req(r, "system_id", p, w))

    def data_to_text(r: Any, p: Path, w: str, source: str) -> tuple[dict[str, Any], str]:
        inp = {"question": D2T_QUESTION, "context": source, "reference": _req(r, "reference", p, w)}
        return inp, f"doc{_req(r, 'doc_id', p, w)}"

    out: list[Record] = _unieval_subset(src, "topical_chat", dialogue)
    for subset in ("sfres", "sfhot"):
        out += _unieval_subset(src, subset, data_to_text)
    return out


def _unieval_subset(src: _Source, subset: str, make_input: Any) -> list[Record]:
    """One UniEval file: items numbered by their distinct ``source`` (the dialogue history or the
    meaning representation); ``make_input`` gives each row's input and system."""
    p = src.path(f"{subset}.json")
    ids: dict[str, int] = {}
    out: list[Record] = []
    for i, r in enumerate(src.json(f"{subset}.json")):
        w = f"[{i}]"
        source = str(_req(r, "source", p, w))
        k = ids.setdefault(source, len(ids))
        sc = _scores_dict(_req(r, "scores", p, w), p, f"{w}.scores")
        inp, system = make_input(r, p, w, source)
        d = {
            "id": f"{subset}/{k}",
            "input": inp,
            "system": system,
            "response": _req(r, "system_output", p, w),
            "scores": {dim: [_num(v, p, f"{w}.scores.{dim}")] for dim, v in sc.items()},
            "meta": {"subset": subset},
        }
        out.append(src.record(d, p, where=w))
    return out


# ---------------------------------------------------------------------------------------------
# Sheng et al. 2025 (conformal_judge_sheng2025): rating log-probabilities beside expert means

SHENG_MODELS = ("4omini", "qwen", "dsr1")
#: the file whose row order the records follow (SummEval's / PPairS' order: document-major)
SHENG_REFERENCE = "qwen"
SHENG_BLOCK = 16  # summaries per document


def sheng_row_id(i: int) -> tuple[str, str]:
    """(id, system) of reference row ``i``: PPairS' ``A<document>`` and ``S<summary>``."""
    return f"A{i // SHENG_BLOCK}", f"S{i % SHENG_BLOCK}"


def _human_matrix(src: _Source, model: str) -> tuple[Any, list[Any]]:
    import numpy as np

    from metajudge.data.rating_csv import read_rating_csv

    got = [read_rating_csv(src.path(f"summeval/{model}_{d}.csv")) for d in src.card.dimensions]
    return np.stack([g.human for g in got], axis=1), got


def sheng_alignment(src: _Source) -> dict[str, Any]:
    """For each model, the reference row of each of its file rows. The 4omini files hold the
    same 100 documents x 16 summaries in another document order: each block of 16 rows is
    matched to the reference block with identical expert means on all dimensions (it must be a
    one-to-one match, else an error names the file)."""
    import numpy as np

    ref, _ = _human_matrix(src, SHENG_REFERENCE)
    n = len(ref)
    blocks = {ref[b : b + SHENG_BLOCK].round(6).tobytes(): b for b in range(0, n, SHENG_BLOCK)}
    out: dict[str, Any] = {}
    for model in SHENG_MODELS:
        h, got = _human_matrix(src, model)
        if len(h) != n:
            raise InputError(f"{len(h)} rows, the reference file has {n}", path=got[0].path)
        if np.array_equal(h, ref):
            out[model] = np.arange(n)
            continue
        order = np.empty(n, dtype=int)
        used: set[int] = set()
        for b in range(0, n, SHENG_BLOCK):
            r = blocks.get(h[b : b + SHENG_BLOCK].round(6).tobytes())
            if r is None or r in used:
                raise InputError(
                    f"rows {b + 2}..{b + SHENG_BLOCK + 1} match no (or an already matched) block "
                    f"of 16 summaries in {SHENG_REFERENCE}'s files",
                    path=got[0].path,
                    field="<rows>",
                )
            used.add(r)
            order[b : b + SHENG_BLOCK] = np.arange(r, r + SHENG_BLOCK)
        out[model] = order
    return out


def convert_sheng(src: _Source) -> list[Record]:
    """One Likert record per row of the reference files; each score = the last column (the mean
    of 3 experts). Every model's rows are aligned to them (:func:`sheng_alignment`)."""
    sheng_alignment(src)  # the files agree on the human scores (an error names the file)
    ref, got = _human_matrix(src, SHENG_REFERENCE)
    out: list[Record] = []
    for i in range(len(ref)):
        rid, system = sheng_row_id(i)
        d = {
            "id": rid,
            "input": {"question": SUMMARISE_QUESTION},
            "system": system,
            "response": None,
            "scores": {dim: [float(ref[i, j])] for j, dim in enumerate(src.card.dimensions)},
            "meta": {},
        }
        out.append(src.record(d, got[0].path, line=got[0].lines[i]))
    return out


# Judging the Judges (UMass-Meta-LLM-Eval/llm_eval results/TriviaQA_Judges_w_HumanJudgement_V2.csv)

THAKUR_FILE = "TriviaQA_Judges_w_HumanJudgement_V2.csv"
THAKUR_JUDGES = (
    "JudgeLM",
    "Gemma-2B",
    "Llama3-70B",
    "Llama-70B",
    "GPT-4",
    "Llama-7B",
    "Llama3-8B",
    "Llama-13B",
    "Mistral-7B",
)


def thakur_rows(
    path: Path, rows: list[tuple[int, dict[str, str]]]
) -> Iterator[tuple[int, str, dict[str, str]]]:
    """``(line, item id, row)`` of each CSV row that carries a human verdict; the item id is
    ``q<k>``, k the question's first position in the file (0-based). Rows without a verdict
    (400 of gpt-4t's, which carry no judge verdict either) are skipped."""
    ids: dict[str, str] = {}
    for line, row in rows:
        for col in ("model", "question", "Human-Eval"):
            if col not in row:
                raise InputError(f"missing column {col!r}", path=path, line=line, field=col)
        q = row["question"]
        ids.setdefault(q, f"q{len(ids)}")
        if row["Human-Eval"].strip():
            yield line, ids[q], row


def _verdict(v: str, path: Path, line: int, col: str) -> str:
    s = v.strip()
    if s not in ("True", "False"):
        raise InputError(f"expected True or False, got {v!r}", path=path, line=line, field=col)
    return s


def convert_thakur(src: _Source) -> list[Record]:
    """One binary record per (question, exam-taker) with a human verdict ('correct')."""
    p, rows = src.csv_rows(THAKUR_FILE)
    out: list[Record] = []
    for line, iid, row in thakur_rows(p, rows):
        refs = [r for r in row.get("references", "").split("\n") if r.strip()]
        d = {
            "id": iid,
            "input": {"question": row["question"], "reference": refs[0] if refs else None},
            "system": row["model"],
            "response": None,
            "scores": {"correct": [_verdict(row["Human-Eval"], p, line, "Human-Eval")]},
            "meta": {"references": refs},
        }
        out.append(src.record(d, p, line=line))
    return out
