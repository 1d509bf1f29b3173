"""One converter per upstream format: upstream files -> canonical records (DESIGN.md §2).

Each converter reads the files named in the dataset's card (through :func:`resolve_file`, which
verifies their sha256), builds plain dicts in the canonical layout and validates them with
:func:`~metajudge.data.validation.record_from_dict` against the card's scale and dimensions, so an
upstream value outside the declared scale fails loudly with the file, the line (or item index)
and the field. How each upstream label is read is stated in the card's ``notes``.
"""

from __future__ import annotations

import ast
import csv
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import DatasetCard, Record
from metajudge.data.validation import record_from_dict
from metajudge.errors import InputError
from metajudge.io import read_json

Converter = Callable[["_Source"], list[Record]]

SUMMARISE_QUESTION = "Summarize the news article."
DIALOGUE_QUESTION = "Write the next turn of the dialogue, grounded in the knowledge fact."
D2T_QUESTION = "Verbalise the dialogue act as a natural-language utterance."


class _Source:
    """Access to one dataset's upstream files and record validation against its card."""

    def __init__(
        self,
        card: DatasetCard,
        data_dir: str | Path | None,
        options: Mapping[str, Any],
        files: Mapping[str, Path] | None = None,
    ) -> None:
        self.card = card
        self.data_dir = data_dir
        self.options = dict(options)
        self.files = dict(files or {})

    def path(self, relpath: str) -> Path:
        """The verified upstream file: ``files[relpath]`` if given, else :func:`resolve_file`."""
        from metajudge.data.fetch import find_source, verify_file
        from metajudge.data.registry import resolve_file

        if relpath in self.files:
            p = Path(self.files[relpath])
            verify_file(p, find_source(self.card, relpath), dataset=self.card.name)
            return p
        return resolve_file(self.card.name, relpath, self.data_dir)

    def json(self, relpath: str) -> Any:
        return read_json(self.path(relpath))

    def jsonl(self, relpath: str) -> Iterator[tuple[Path, int, Any]]:
        p = self.path(relpath)
        with open(p, encoding="utf-8") as fh:
            for i, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    yield p, i, json.loads(raw)
                except json.JSONDecodeError as e:
                    raise InputError(
                        f"malformed JSON: {e.msg}", path=p, line=i, field="<json>"
                    ) from None

    def csv_rows(self, relpath: str) -> tuple[Path, list[tuple[int, dict[str, str]]]]:
        """Rows of a CSV file with the (last physical) line number of each row."""
        p = self.path(relpath)
        csv.field_size_limit(1 << 30)
        with open(p, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            rows = [(reader.line_num, row) for row in reader]
        return p, rows

    def record(
        self, d: Mapping[str, Any], path: Path, *, line: int | None = None, where: str | None = None
    ) -> Record:
        """Validate one canonical dict; errors name the upstream file, line or item index, and field."""
        try:
            return record_from_dict(
                d,
                kind=self.card.kind if self.card.kind != "benchmark" else None,
                scale=self.card.scale,
                dimensions=self.card.dimensions,
                path=path,
                line=line,
            )
        except InputError as e:
            fld = f"{where}: {e.field}" if where else e.field
            raise InputError(e.message, path=path, line=line, field=fld) from None


def _num(v: Any, path: Path, field: str, *, line: int | None = None) -> float | None:
    """A finite float, None for missing/NaN/blank; anything else is an error naming the field."""
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        raise InputError(f"expected a number, got {v!r}", path=path, line=line, field=field)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(
            f"expected a number, got {v!r}", path=path, line=line, field=field
        ) from None
    return None if math.isnan(x) else x


def _req(obj: Any, key: str, path: Path, where: str, *, line: int | None = None) -> Any:
    if not isinstance(obj, Mapping):
        raise InputError(
            f"expected an object, got {type(obj).__name__}", path=path, line=line, field=where
        )
    if key not in obj:
        raise InputError(
            "missing required field", path=path, line=line, field=f"{where}.{key}" if where else key
        )
    return obj[key]


def _mapped(
    v: Any, mapping: Mapping[Any, float | None], path: Path, field: str, *, line: int | None = None
) -> float | None:
    if v in mapping:
        return mapping[v]
    allowed = ", ".join(repr(k) for k in mapping)
    raise InputError(
        f"unexpected label {v!r} (expected one of {allowed})", path=path, line=line, field=field
    )


# ---------------------------------------------------------------------------------------------
# RAGChecker (amazon-science/RAGChecker data/meta_evaluation/human_labeled_data.json)


def convert_ragchecker(src: _Source) -> list[Record]:
    """Rows 2i, 2i+1 = annotators 1, 2 of instance i; labels −2..2, positive = model2 better
    (RAGChecker ``meta_eval.py``: delta = model2 − model1)."""
    rel = "human_labeled_data.json"
    p = src.path(rel)
    rows = src.json(rel)
    if not isinstance(rows, list) or not rows:
        raise InputError("expected a non-empty JSON list", path=p, field="<root>")
    if len(rows) % 2:
        raise InputError(
            f"expected an even number of rows (2 annotators per instance), got {len(rows)}",
            path=p,
            field="<root>",
        )
    dims = ("correctness", "completeness", "overall")
    out: list[Record] = []
    for i in range(0, len(rows), 2):
        r1, r2 = rows[i], rows[i + 1]
        iid = _req(r1, "instance_id", p, f"[{i}]")
        if _req(r2, "instance_id", p, f"[{i + 1}]") != iid:
            raise InputError(
                f"rows {i} and {i + 1} must share instance_id (annotator 1 and 2), got {iid!r} and {r2['instance_id']!r}",
                path=p,
                field=f"[{i + 1}].instance_id",
            )
        m1, m2 = _req(r1, "model1", p, f"[{i}]"), _req(r1, "model2", p, f"[{i}]")
        labels = {
            d: [_req(r, f"{d}_label", p, f"[{j}]") for j, r in ((i, r1), (i + 1, r2))] for d in dims
        }
        d = {
            "id": str(iid),
            "input": {"question": _req(r1, "query", p, f"[{i}]"), "reference": r1.get("gt_answer")},
            "a": {
                "system": _req(m1, "model_name", p, f"[{i}].model1"),
                "response": _req(m1, "response", p, f"[{i}].model1"),
            },
            "b": {
                "system": _req(m2, "model_name", p, f"[{i}].model2"),
                "response": _req(m2, "response", p, f"[{i}].model2"),
            },
            "labels": labels,
            "meta": {"dataset": r1.get("dataset"), "query_id": str(r1.get("query_id"))},
        }
        out.append(src.record(d, p, where=f"rows [{i}],[{i + 1}] -> {d['id']}"))
    return out


# ---------------------------------------------------------------------------------------------
# LFTQA mitigation (PradhumanT/paper-repo human_mitigation_eval/)

_MITIGATION_LABELS: dict[str, float | None] = {
    "Improved": 1.0,
    "Unchanged": 0.0,
    "Deteriorated": -1.0,
    "": None,
}
_FULLY = {"none": None, "tie": 0.0, "improved": 1.0}


def parse_serialized_table(text: str) -> tuple[dict[str, Any] | None, str]:
    """Parse ``'Table Title: T\\nTable:\\nh1 | h2\\nv1 | v2\\n...'`` into {title, header, rows}.

    Returns ``(None, text)`` if the text does not have that layout.

    >>> t, _ = parse_serialized_table("Table Title: X\\nTable:\\na | b\\n1 | 2\\n")
    >>> t
    {'title': 'X', 'header': ['a', 'b'], 'rows': [['1', '2']]}
    """
    lines = text.split("\n")
    if len(lines) < 3 or not lines[0].startswith("Table Title:") or lines[1].strip() != "Table:":
        return None, text
    title = lines[0][len("Table Title:") :].strip()
    body = [ln for ln in lines[2:] if ln.strip()]
    if not body:
        return None, text
    header = [c.strip() for c in body[0].split(" | ")]
    rows = [[c.strip() for c in ln.split(" | ")] for ln in body[1:]]
    return {"title": title, "header": header, "rows": rows}, text


def convert_lftqa_mitigation(src: _Source) -> list[Record]:
    """Two pairs per annotated row (original answer vs each rewrite); see the card's notes for
    how 'Fully Factual' / 'Fully Complete' are read (option ``fully``: none | tie | improved)."""
    fully_opt = str(src.options.get("fully", "none"))
    if fully_opt not in _FULLY:
        raise InputError(
            f"option fully={fully_opt!r}: expected one of {', '.join(_FULLY)}", field="fully"
        )
    fully_val = _FULLY[fully_opt]
    labels_map = dict(_MITIGATION_LABELS)
    labels_map["Fully Factual"] = fully_val
    labels_map["Fully Complete"] = fully_val
    # (method, dimension) -> CSV column
    columns = {
        ("geval", "faithfulness"): "geval_faithfulness_label",
        ("geval", "completeness"): "geval_completeness_label",
        ("mtraig_eval", "faithfulness"): "mtraig_eval_faithfulness_label",
    }
    out: list[Record] = []
    for subset in ("fetaqa", "qtsumm"):
        raw_rel = f"human_mitigation_eval/raw/gpt-4o_{subset}.json"
        raw_p = src.path(raw_rel)
        raw = src.json(raw_rel)
        if not isinstance(raw, list) or not raw:
            raise InputError("expected a non-empty JSON list", path=raw_p, field="<root>")
        ann: list[tuple[Path, list[tuple[int, dict[str, str]]]]] = [
            src.csv_rows(f"human_mitigation_eval/annotated/annotator{k}/gpt-4o_{subset}.csv")
            for k in (1, 2)
        ]
        cons = src.csv_rows(f"human_mitigation_eval/consolidated_annotations/gpt-4o_{subset}.csv")
        for ap, rows in [*ann, cons]:
            if len(rows) != len(raw):
                raise InputError(
                    f"{len(rows)} rows, but {raw_p.name} has {len(raw)} items",
                    path=ap,
                    field="<rows>",
                )
        for i, item in enumerate(raw):
            ex = _req(item, "example_id", raw_p, f"[{i}]")
            model = _req(item, "original_model", raw_p, f"[{i}]")
            for ap, rows in [*ann, cons]:
                line, row = rows[i]
                if row.get("example_id") != ex or row.get("original_model") != model:
                    raise InputError(
                        f"row {i + 1} is ({row.get('example_id')!r}, {row.get('original_model')!r}) but {raw_p.name} item {i} "
                        f"is ({ex!r}, {model!r}): the files are not aligned",
                        path=ap,
                        line=line,
                        field="example_id",
                    )
            table, table_text = parse_serialized_table(str(_req(item, "table", raw_p, f"[{i}]")))
            inp: dict[str, Any] = {
                "question": _req(item, "question", raw_p, f"[{i}]"),
                "reference": item.get("ideal_answer"),
                "context": table_text,
            }
            if table is not None:
                inp["tables"] = [table]
            outputs = {"geval": "lftqa_mitigated_output", "mtraig_eval": "mtraig_mitigated_output"}
            for method, out_field in outputs.items():
                labels: dict[str, list[float | None]] = {}
                raw_labels: dict[str, list[str]] = {}
                consolidated: dict[str, str] = {}
                for (m, dim), col in columns.items():
                    if m != method:
                        continue
                    vals: list[float | None] = []
                    raws: list[str] = []
                    for ap, rows in ann:
                        line, row = rows[i]
                        s = (row.get(col) or "").strip()
                        raws.append(s)
                        vals.append(_mapped(s, labels_map, ap, col, line=line))
                    labels[dim] = vals
                    raw_labels[dim] = raws
                    consolidated[dim] = (cons[1][i][1].get(col) or "").strip()
                d = {
                    "id": f"{ex}/{model}/{method}",
                    "input": inp,
                    "a": {
                        "system": model,
                        "response": _req(item, "original_answer", raw_p, f"[{i}]"),
                    },
                    "b": {
                        "system": f"gpt-4o-{method}-mitigation",
                        "response": _req(item, out_field, raw_p, f"[{i}]"),
                    },
                    "labels": labels,
                    "meta": {
                        "subset": subset,
                        "item_id": f"{ex}/{model}",
                        "example_id": ex,
                        "original_model": model,
                        "original_idx": item.get("original_idx"),
                        "method": method,
                        "raw_labels": raw_labels,
                        "consolidated": consolidated,
                        "fully": fully_opt,
                    },
                }
                out.append(src.record(d, raw_p, where=f"[{i}] -> {d['id']}"))
    return out


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
# Pairwise preference sets

_PANDALM = {1: -1.0, 2: 1.0, 0: 0.0}


def _text(v: Any) -> Any:
    """A response stored as a JSON boolean or number upstream (PandaLM items 157-164 hold ``true``
    for the answer 'True') becomes its text; anything else is left for validation."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (int, float)):
        return str(v)
    return v


def convert_pandalm(src: _Source) -> list[Record]:
    """PandaLM testset-v1: annotatorK 1 → −1 (response1 better), 2 → +1, 0 → 0 (tie)."""
    rel = "testset-v1.json"
    p = src.path(rel)
    rows = src.json(rel)
    if not isinstance(rows, list) or not rows:
        raise InputError("expected a non-empty JSON list", path=p, field="<root>")
    out: list[Record] = []
    for i, r in enumerate(rows):
        w = f"[{i}]"
        key = str(_req(r, "cmp_key", p, w))
        sys_a, _, sys_b = key.partition("_")
        if not sys_a or not sys_b:
            raise InputError(f"expected 'modelA_modelB', got {key!r}", path=p, field=f"{w}.cmp_key")
        instr = str(_req(r, "instruction", p, w))
        extra = str(r.get("input") or "")
        labels = [
            _mapped(_req(r, f"annotator{k}", p, w), _PANDALM, p, f"{w}.annotator{k}")
            for k in (1, 2, 3)
        ]
        d = {
            "id": str(_req(r, "idx", p, w)),
            "input": {"question": f"{instr}\n\n{extra}" if extra.strip() else instr},
            "a": {"system": sys_a, "response": _text(_req(r, "response1", p, w))},
            "b": {"system": sys_b, "response": _text(_req(r, "response2", p, w))},
            "labels": {"preference": labels},
            "meta": {
                "instruction": instr,
                "input": extra,
                "motivation_app": r.get("motivation_app"),
            },
        }
        out.append(src.record(d, p, where=w))
    return out


_AUTOJ = {0: -1.0, 1: 1.0, 2: 0.0}


def convert_autoj(src: _Source) -> list[Record]:
    """Auto-J pairwise test: label 0 → −1, 1 → +1, 2 → 0 (tie)."""
    out: list[Record] = []
    for idx, (p, line, o) in enumerate(src.jsonl("testdata_pairwise.jsonl")):
        d = {
            "id": str(idx),
            "input": {"question": _req(o, "prompt", p, "", line=line)},
            "a": {"system": "response 1", "response": _req(o, "response 1", p, "", line=line)},
            "b": {"system": "response 2", "response": _req(o, "response 2", p, "", line=line)},
            "labels": {
                "preference": [
                    _mapped(_req(o, "label", p, "", line=line), _AUTOJ, p, "label", line=line)
                ]
            },
            "meta": {"scenario": o.get("scenario")},
        }
        out.append(src.record(d, p, line=line))
    return out


_LLMBAR = {1: -1.0, 2: 1.0}


def _llmbar_subset(local: str) -> str:
    """'LLMBar/Adversarial/GPTInst/dataset.json' → 'Adversarial/GPTInst'; 'Processed/X/dataset.json' → 'Processed/X'."""
    parts = local.split("/")[:-1]
    return "/".join(parts[1:]) if parts and parts[0] == "LLMBar" else "/".join(parts)


def convert_llmbar(src: _Source) -> list[Record]:
    """LLMBar: label 1 → −1 (output_1 better), 2 → +1; subset from the folder."""
    from metajudge.data.fetch import local_relpath

    order = [
        "Natural",
        "Adversarial/GPTInst",
        "Adversarial/GPTOut",
        "Adversarial/Manual",
        "Adversarial/Neighbor",
    ]
    rels = sorted(
        (local_relpath(sf) for sf in src.card.files),
        key=lambda r: (
            order.index(_llmbar_subset(r)) if _llmbar_subset(r) in order else len(order),
            r,
        ),
    )
    out: list[Record] = []
    for rel in rels:
        subset = _llmbar_subset(rel)
        p = src.path(rel)
        rows = src.json(rel)
        if not isinstance(rows, list) or not rows:
            raise InputError("expected a non-empty JSON list", path=p, field="<root>")
        for i, r in enumerate(rows):
            w = f"[{i}]"
            d = {
                "id": f"{subset}/{i}",
                "input": {"question": _req(r, "input", p, w)},
                "a": {"system": "output_1", "response": _req(r, "output_1", p, w)},
                "b": {"system": "output_2", "response": _req(r, "output_2", p, w)},
                "labels": {
                    "preference": [_mapped(_req(r, "label", p, w), _LLMBAR, p, f"{w}.label")]
                },
                "meta": {"subset": subset},
            }
            out.append(src.record(d, p, where=w))
    return out


_JUDGEBENCH = {"A>B": -1.0, "B>A": 1.0}


def convert_judgebench(src: _Source) -> list[Record]:
    """JudgeBench: 'A>B' → −1, 'B>A' → +1 (objective, correctness-based labels)."""
    from metajudge.data.fetch import local_relpath

    out: list[Record] = []
    for sf in src.card.files:
        for p, line, o in src.jsonl(local_relpath(sf)):
            model = str(_req(o, "response_model", p, "", line=line))
            d = {
                "id": str(_req(o, "pair_id", p, "", line=line)),
                "input": {"question": _req(o, "question", p, "", line=line)},
                "a": {"system": f"{model}/A", "response": _req(o, "response_A", p, "", line=line)},
                "b": {"system": f"{model}/B", "response": _req(o, "response_B", p, "", line=line)},
                "labels": {
                    "correctness": [
                        _mapped(
                            _req(o, "label", p, "", line=line), _JUDGEBENCH, p, "label", line=line
                        )
                    ]
                },
                "meta": {
                    "subset": model,
                    "source": o.get("source"),
                    "original_id": o.get("original_id"),
                    "response_model": model,
                },
            }
            out.append(src.record(d, p, line=line))
    return out


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
    out: list[Record] = []
    rel = "topical_chat.json"
    p = src.path(rel)
    rows = src.json(rel)
    ctx_ids: dict[str, int] = {}
    for i, r in enumerate(rows):
        w = f"[{i}]"
        hist = str(_req(r, "source", p, w))
        k = ctx_ids.setdefault(hist, len(ctx_ids))
        sc = _scores_dict(_req(r, "scores", p, w), p, f"{w}.scores")
        d = {
            "id": f"topical_chat/{k}",
            "input": {
                "question": DIALOGUE_QUESTION,
                "context": hist,
                "documents": [str(_req(r, "context", p, w))],
            },
            "system": str(_req(r, "system_id", p, w)),
            "response": _req(r, "system_output", p, w),
            "scores": {dim: [_num(v, p, f"{w}.scores.{dim}")] for dim, v in sc.items()},
            "meta": {"subset": "topical_chat"},
        }
        out.append(src.record(d, p, where=w))
    for subset in ("sfres", "sfhot"):
        rel = f"{subset}.json"
        p = src.path(rel)
        rows = src.json(rel)
        src_ids: dict[str, int] = {}
        for i, r in enumerate(rows):
            w = f"[{i}]"
            mr = str(_req(r, "source", p, w))
            k = src_ids.setdefault(mr, len(src_ids))
            sc = _scores_dict(_req(r, "scores", p, w), p, f"{w}.scores")
            d = {
                "id": f"{subset}/{k}",
                "input": {
                    "question": D2T_QUESTION,
                    "context": mr,
                    "reference": _req(r, "reference", p, w),
                },
                "system": f"doc{_req(r, 'doc_id', p, w)}",
                "response": _req(r, "system_output", p, w),
                "scores": {dim: [_num(v, p, f"{w}.scores.{dim}")] for dim, v in sc.items()},
                "meta": {"subset": subset},
            }
            out.append(src.record(d, p, where=w))
    return out


CONVERTERS: dict[str, Converter] = {
    "ragchecker_meta_eval": convert_ragchecker,
    "lftqa_mitigation_pradhumant": convert_lftqa_mitigation,
    "lftqa_eval": convert_lftqa_eval,
    "summeval_ppairs": convert_summeval_ppairs,
    "summeval_summac_consistency": convert_summac,
    "hanna": convert_hanna,
    "pandalm_testset": convert_pandalm,
    "autoj_pairwise_test": convert_autoj,
    "llmbar": convert_llmbar,
    "judgebench": convert_judgebench,
    "unieval_topicalchat_sfres_sfhot": convert_unieval,
}


def convert(
    card: DatasetCard,
    data_dir: str | Path | None = None,
    *,
    files: Mapping[str, Path] | None = None,
    **options: Any,
) -> list[Record]:
    """Run the converter registered for ``card.name`` (``files``: local name -> path to use)."""
    fn = CONVERTERS.get(card.name)
    if fn is None:
        raise InputError(f"no converter for dataset {card.name!r} (kind {card.kind})", field="name")
    return fn(_Source(card, data_dir, options, files))


def records_in_subsets(records: Sequence[Record], subsets: Sequence[str]) -> list[Record]:
    """The records whose ``meta['subset']`` is one of ``subsets``."""
    keep = set(subsets)
    return [r for r in records if r.meta.get("subset") in keep]


__all__ = [
    "CONVERTERS",
    "convert",
    "parse_list_cell",
    "parse_serialized_table",
    "records_in_subsets",
]
