"""``judge card --input DIR``: the card of a CJE fresh-draw folder (judge scores on every
response, oracle labels on some; ``--probes DIR``: held-out labelled probes).

Such a folder is the few-label case: the card runs ``calibrate estimate`` on it, with the
transport audit of ``--probes`` (each system's calibrated mean beside the judge's raw mean, the
support and transport gates), through the command's own run function; the parts that read a
labelled canonical file say so and how to get one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metajudge.data.source import DataSource
from metajudge.runs.judge_card import (
    CARD_FILE,
    CARD_HTML,
    CARD_SCHEMA,
    PARTS,
    CardOptions,
    CardRun,
    _absent,
    _attempt,
    _data,
    _decision,
    _ok,
)


def is_cje_folder(src: DataSource) -> bool:
    """A folder of ``<system>_responses.jsonl`` files."""
    p = Path(src.path) if src.path else None
    return bool(p and p.is_dir() and any(p.glob("*_responses.jsonl")))


def _estimate(src: DataSource, opts: CardOptions) -> dict[str, Any]:
    from metajudge.runs.calibrate_estimate import run_estimate

    run = run_estimate(src, probes=opts.probes, seed=opts.seed)
    cmd = ["calibrate", "estimate", "--input", str(src.path)]
    cmd += ["--probes", str(opts.probes)] if opts.probes else []
    return _ok(cmd + ["--seed", str(opts.seed), "--format", "json"], _data(run.result))


def _folder_hash(folder: Path) -> str:
    from metajudge.io import sha256_file, sha256_text

    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return sha256_text("\n".join(f"{p.relative_to(folder)} {sha256_file(p)}" for p in files))


def _labels(part: dict[str, Any]) -> dict[str, Any]:
    systems = (part.get("result") or {}).get("systems", [])
    rows = sum(int(s["rows"]) for s in systems)
    labelled = sum(int(s["labelled"]) for s in systems)
    return {"records": rows, "labelled": labelled, "partial": labelled < rows}


def _signature(src: DataSource, judge: str) -> dict[str, Any]:
    from metajudge import __version__
    from metajudge.io import sha256_text

    return {
        "data": {"source": src.name, "subset": None},
        "data_sha256": _folder_hash(Path(str(src.path))),
        "judge": judge,
        "judge_signatures": [],
        "judge_definition_sha256": sha256_text(json.dumps({"judge": judge})),
        "definition_digest": None,
        "backbone": None,
        "metajudge_version": __version__,
    }


def folder_card(src: DataSource, opts: CardOptions, out: str | Path) -> CardRun:
    """The card of the CJE folder ``src.path`` into the run folder ``out`` (module docstring)."""
    from metajudge.io import check_out_dir
    from metajudge.reports.judge_card import card_html, card_markdown, verdict
    from metajudge.results import finite
    from metajudge.run_folder import run_folder

    check_out_dir(out, inputs=[src.path, opts.probes])
    why = (
        "a CJE folder serves the system estimates; this part reads a labelled canonical file "
        "(--input FILE.jsonl with --scores)"
    )
    parts: dict[str, Any] = {p: _absent(why) for p in PARTS}
    parts["estimate"] = _attempt("calibrate estimate", lambda: _estimate(src, opts))
    judge = src.judge or "judge_score"
    card: dict[str, Any] = {
        "schema": CARD_SCHEMA,
        "judge": judge,
        "dataset": Path(str(src.path)).name,
        "label_kind": "likert",
        "annotators": 1,
        "dimension": None,
        "labels": _labels(parts["estimate"]),
        "settings": opts.settings(),
        "signature": _signature(src, judge),
        "parts": parts,
    }
    card["verdict"] = verdict(card, opts.statistic)
    _decision(card, opts)
    card = finite(card)
    with run_folder(out) as rf:
        rf.write_text(CARD_FILE, json.dumps(card, indent=1, ensure_ascii=False) + "\n")
        rf.write_text(CARD_HTML, card_html(card, rf.stage, None))
    written = [rf.final(rf.stage / n) for n in (CARD_FILE, CARD_HTML)]
    return CardRun(card, card_markdown(card), written)
