"""Converters of the pairwise-preference datasets: upstream files -> canonical pairwise records.

RAGChecker, the LFTQA mitigation study, PandaLM, Auto-J, LLMBar and JudgeBench. How each upstream
label is read is stated in the dataset's card (``notes``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metajudge.data.formats import Record
from metajudge.data.upstream import (
    _mapped,
    _req,
    _Source,
)
from metajudge.errors import InputError

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


_MITIGATION_COLUMNS = {  # method -> {dimension: CSV column}
    "geval": {
        "faithfulness": "geval_faithfulness_label",
        "completeness": "geval_completeness_label",
    },
    "mtraig_eval": {"faithfulness": "mtraig_eval_faithfulness_label"},
}
_MITIGATION_OUTPUTS = {"geval": "lftqa_mitigated_output", "mtraig_eval": "mtraig_mitigated_output"}
_Rows = list[tuple[int, dict[str, str]]]


def _mitigation_files(
    src: _Source, subset: str
) -> tuple[Path, list[Any], list[tuple[Path, _Rows]], tuple[Path, _Rows]]:
    """The raw items, both annotators' CSVs and the consolidated CSV of one subset, aligned."""
    raw_rel = f"human_mitigation_eval/raw/gpt-4o_{subset}.json"
    raw_p, raw = src.path(raw_rel), src.json(raw_rel)
    if not isinstance(raw, list) or not raw:
        raise InputError("expected a non-empty JSON list", path=raw_p, field="<root>")
    ann = [
        src.csv_rows(f"human_mitigation_eval/annotated/annotator{k}/gpt-4o_{subset}.csv")
        for k in (1, 2)
    ]
    cons = src.csv_rows(f"human_mitigation_eval/consolidated_annotations/gpt-4o_{subset}.csv")
    for ap, rows in [*ann, cons]:
        if len(rows) != len(raw):
            msg = f"{len(rows)} rows, but {raw_p.name} has {len(raw)} items"
            raise InputError(msg, path=ap, field="<rows>")
        for i, item in enumerate(raw):
            ex = _req(item, "example_id", raw_p, f"[{i}]")
            model = _req(item, "original_model", raw_p, f"[{i}]")
            line, row = rows[i]
            if row.get("example_id") != ex or row.get("original_model") != model:
                raise InputError(
                    f"row {i + 1} is ({row.get('example_id')!r}, {row.get('original_model')!r}) "
                    f"but {raw_p.name} item {i} is ({ex!r}, {model!r}): the files are not aligned",
                    path=ap,
                    line=line,
                    field="example_id",
                )
    return raw_p, raw, ann, cons


def _mitigation_input(item: Any, raw_p: Path, i: int) -> dict[str, Any]:
    table, table_text = parse_serialized_table(str(_req(item, "table", raw_p, f"[{i}]")))
    inp: dict[str, Any] = {
        "question": _req(item, "question", raw_p, f"[{i}]"),
        "reference": item.get("ideal_answer"),
        "context": table_text,
    }
    if table is not None:
        inp["tables"] = [table]
    return inp


def _mitigation_pair(
    item: Any, i: int, method: str, files: tuple[Any, ...], labels_map: dict[str, float | None]
) -> dict[str, Any]:
    """The canonical dict of one (row, rewrite method) pair, with raw and consolidated labels."""
    raw_p, _, ann, cons = files
    ex, model = item["example_id"], item["original_model"]
    labels: dict[str, list[float | None]] = {}
    raw_labels: dict[str, list[str]] = {}
    consolidated: dict[str, str] = {}
    for dim, col in _MITIGATION_COLUMNS[method].items():
        raws = [(rows[i][1].get(col) or "").strip() for _, rows in ann]
        labels[dim] = [
            _mapped(s, labels_map, ap, col, line=rows[i][0]) for s, (ap, rows) in zip(raws, ann)
        ]
        raw_labels[dim] = raws
        consolidated[dim] = (cons[1][i][1].get(col) or "").strip()
    return {
        "id": f"{ex}/{model}/{method}",
        "input": _mitigation_input(item, raw_p, i),
        "a": {"system": model, "response": _req(item, "original_answer", raw_p, f"[{i}]")},
        "b": {
            "system": f"gpt-4o-{method}-mitigation",
            "response": _req(item, _MITIGATION_OUTPUTS[method], raw_p, f"[{i}]"),
        },
        "labels": labels,
        "meta": {
            "subset": "",
            "item_id": f"{ex}/{model}",
            "example_id": ex,
            "original_model": model,
            "original_idx": item.get("original_idx"),
            "method": method,
            "raw_labels": raw_labels,
            "consolidated": consolidated,
        },
    }


def convert_lftqa_mitigation(src: _Source) -> list[Record]:
    """Two pairs per annotated row (original answer vs each rewrite); see the card's notes for
    how 'Fully Factual' / 'Fully Complete' are read (option ``fully``: none | tie | improved)."""
    fully_opt = str(src.options.get("fully", "none"))
    if fully_opt not in _FULLY:
        raise InputError(
            f"option fully={fully_opt!r}: expected one of {', '.join(_FULLY)}", field="fully"
        )
    labels_map = dict(_MITIGATION_LABELS)
    labels_map["Fully Factual"] = labels_map["Fully Complete"] = _FULLY[fully_opt]
    out: list[Record] = []
    for subset in ("fetaqa", "qtsumm"):
        files = _mitigation_files(src, subset)
        for i, item in enumerate(files[1]):
            for method in _MITIGATION_COLUMNS:
                d = _mitigation_pair(item, i, method, files, labels_map)
                d["meta"].update(subset=subset, fully=fully_opt)
                out.append(src.record(d, files[0], where=f"[{i}] -> {d['id']}"))
    return out


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
    # the pairs are the data/ files; outputs/ holds judges' verdicts on them, not records
    pair_files = [local_relpath(sf) for sf in src.card.files if sf.path.startswith("data/")]
    for rel in pair_files:
        for p, line, o in src.jsonl(rel):
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


def convert_trust_or_escalate(src: _Source) -> list[Record]:
    """Trust or Escalate: the pairs of the first judge file (human 1 → −1, 2 → +1); every other
    judge file must hold the same pairs, labels and order (:mod:`metajudge.data.released_probs`)."""
    from metajudge.data.fetch import local_relpath
    from metajudge.data.released_probs import read_lines, record_dict

    rels = [local_relpath(sf) for sf in src.card.files]
    first = src.path(rels[0])
    lines = read_lines(first)
    for rel in rels[1:]:
        p = src.path(rel)
        other = read_lines(p)
        if len(other) != len(lines):
            raise InputError(f"{len(other)} lines, {first.name} has {len(lines)}", path=p)
        for a, b in zip(lines, other, strict=True):
            if a.key != b.key or a.label != b.label:
                raise InputError(
                    f"not the pair (or label) of line {a.line} of {first.name}",
                    path=p,
                    line=b.line,
                    field="instruction",
                )
    dim = src.card.dimensions[0]
    return [src.record(record_dict(i, r, dim), first, line=r.line) for i, r in enumerate(lines)]
