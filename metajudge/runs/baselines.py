"""Our reference results: every dataset × deterministic metric under the default protocol.

``metajudge baselines check --write`` (``make baselines``) writes ``baselines/ours_<dataset>.json``;
``metajudge baselines check`` and ``tests/runs/test_baselines.py`` recompute them and fail when a
change moves a correlation of a deterministic metric.

What is in a baseline (:data:`BASELINE_SPECS`):

- reference-based lexical metrics (BLEU, ROUGE-L; METEOR where WordNet is installed) on every
  dataset whose responses have a reference answer;
- external score columns the dataset ships (RAGChecker's own scores, LFTQA-Eval's metric files,
  HANNA's metric columns).

LLM judges run here are not deterministic across machines and BERTScore is slow on CPU; they are
not in the baselines (their numbers come with signatures in run reports, and the matrix's cells
in ``baselines/judges/``, written by ``metajudge matrix run``). Shipped judge scores
(LFTQA-Eval's G-Eval files, HANNA's LLM columns) are fixed files and are baselined.
Datasets with no reference answers and no shipped scores (PandaLM, Auto-J, LLMBar, JudgeBench,
SummEval pairs as stored) have no deterministic metric to baseline; each file's ``skipped``
lists what was left out and why.

Default protocol: :func:`metajudge.analyses.metric_vs_human.evaluate.meta_evaluate`'s defaults (``minmax``
normalisation, per-annotator rows, RAGChecker's protocol) for pairwise data; for Likert data the
per-input ("grouped") correlation of G-Eval / LFTQA-Eval. No bootstrap (point estimates only):
the file pins values, not intervals.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge import __version__
from metajudge.errors import InputError, MetajudgeError
from metajudge.io import atomic_write

BASELINES_SCHEMA = "metajudge.baselines/1"
#: Relative tolerance of ``check``: deterministic metrics must reproduce to float noise.
TOLERANCE = 1e-6
BASELINE_STATISTICS = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class BaselineSpec:
    dataset: str
    lexical: tuple[str, ...] = ()  # metrics computed here (need references)
    external: bool = False  # the scores the dataset ships (the card's shipped_scores)
    grouped: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)  # dataset converter options


BASELINE_SPECS: tuple[BaselineSpec, ...] = (
    BaselineSpec("ragchecker_meta_eval", lexical=("bleu", "rouge_l", "meteor"), external=True),
    BaselineSpec("lftqa_mitigation_pradhumant", lexical=("bleu", "rouge_l", "meteor")),
    BaselineSpec("lftqa_eval", external=True, grouped=True),
    BaselineSpec("hanna", lexical=("bleu", "rouge_l"), external=True, grouped=True),
    BaselineSpec("unieval_topicalchat_sfres_sfhot", lexical=("bleu", "rouge_l"), grouped=True),
)
_PAIRWISE_ONLY = (
    "no reference answers and no shipped metric scores: no deterministic metric applies "
    "(the pairwise judge's cell: baselines/judges/, `metajudge matrix`)"
)
_NO_REF_SUMMARIES = (
    "the stored records carry no reference summaries: no reference-based metric applies "
    "(the reference-free G-Eval cells: baselines/judges/, `metajudge matrix`)"
)
NOT_BASELINED: dict[str, str] = {
    "pandalm_testset": _PAIRWISE_ONLY,
    "autoj_pairwise_test": _PAIRWISE_ONLY,
    "llmbar": _PAIRWISE_ONLY,
    "judgebench": _PAIRWISE_ONLY,
    "summeval_ppairs": _NO_REF_SUMMARIES,
    "summeval_summac_consistency": _NO_REF_SUMMARIES,
}


def _meteor_available() -> bool:
    try:
        from metajudge.metrics.registry import get_metric

        m = get_metric("meteor")
        m.score("a cat sat", "a cat sat")
        return True
    except (
        MetajudgeError,
        LookupError,
        OSError,
    ):  # WordNet missing: METEOR is skipped and the file says so
        return False


def compute_baseline(
    spec: BaselineSpec, *, data_dir: str | Path | None = None, meteor: bool | None = None
) -> dict[str, Any]:
    """One dataset's reference results (point estimates) as a JSON-ready dict."""
    from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
    from metajudge.data.loading import load
    from metajudge.scores.scoring import score_dataset

    ds = load(spec.dataset, data_dir, **dict(spec.options))
    skipped: dict[str, str] = {}
    lexical = list(spec.lexical)
    if "meteor" in lexical and not (meteor if meteor is not None else _meteor_available()):
        lexical.remove("meteor")
        skipped["meteor"] = "WordNet not installed (metajudge setup wordnet)"
    rows: list[dict[str, Any]] = []
    if lexical:
        rows += score_dataset(ds, lexical, progress=False)
    if spec.external:
        from metajudge.scores.spec import SHIPPED, gather_scores

        rows += gather_scores(ds, [SHIPPED], data_dir=data_dir)
    res = meta_evaluate(ds, rows, grouped=spec.grouped, n_boot=0, seed=0, compare=False).to_dict()
    sig_of = {m["name"]: m.get("signatures") for m in res.get("metrics", [])}
    entries = [_entry(c, sig_of.get(c["metric"])) for c in res.get("cells", [])]
    if not entries:
        raise InputError(
            f"{spec.dataset}: the meta-evaluation result has no metric cells to baseline"
        )
    return {
        "schema": BASELINES_SCHEMA,
        "dataset": spec.dataset,
        "metajudge_version": __version__,
        "protocol": res.get("protocol", {}),
        "lexical": lexical,
        "external": spec.external,
        "skipped": skipped,
        "entries": sorted(entries, key=lambda e: (e["metric"], e["dimension"])),
    }


def _entry(cell: Mapping[str, Any], sigs: Any) -> dict[str, Any]:
    stats = cell.get("stats") or {}
    vals = {s: (stats.get(s) or {}).get("value") for s in BASELINE_STATISTICS}
    col = cell.get("column") or cell["metric"]
    if isinstance(sigs, Mapping):
        sig = sigs.get(col) or sigs.get(cell["metric"]) or next(iter(sigs.values()), None)
    elif isinstance(sigs, list):
        sig = sigs[0] if sigs else None
    else:
        sig = sigs
    return {
        "metric": cell["metric"],
        "dimension": cell["dimension"],
        "column": col,
        "signature": sig,
        "n_rows": cell.get("n_rows"),
        "n_items": cell.get("n_items"),
        **vals,
    }


def baseline_path(out_dir: str | Path, dataset: str) -> Path:
    return Path(out_dir) / f"ours_{dataset}.json"


def _specs(datasets: Sequence[str] | None) -> list[BaselineSpec]:
    if not datasets:
        return list(BASELINE_SPECS)
    known = {s.dataset: s for s in BASELINE_SPECS}
    bad = [d for d in datasets if d not in known]
    if bad:
        raise InputError(
            f"no baseline spec for {', '.join(bad)} (baselined: {', '.join(known)})",
            field="datasets",
        )
    return [known[d] for d in datasets]


def regenerate_baselines(
    out_dir: str | Path = "baselines",
    *,
    datasets: Sequence[str] | None = None,
    data_dir: str | Path | None = None,
) -> list[Path]:
    """Recompute and write ``ours_<dataset>.json`` for every spec (atomically); returns the paths."""
    meteor = _meteor_available()
    written = []
    for spec in _specs(datasets):
        b = compute_baseline(spec, data_dir=data_dir, meteor=meteor)
        p = baseline_path(out_dir, spec.dataset)
        with atomic_write(p) as fh:
            json.dump(b, fh, indent=1, ensure_ascii=False, sort_keys=True)
            fh.write("\n")
        written.append(p)
    from metajudge.runs.rank_baselines import regenerate_rank_baselines

    written += regenerate_rank_baselines(out_dir, datasets=datasets, data_dir=data_dir)
    if not datasets:
        p = Path(out_dir) / "ours_index.json"
        with atomic_write(p) as fh:
            json.dump(
                {
                    "schema": BASELINES_SCHEMA,
                    "datasets": [s.dataset for s in BASELINE_SPECS],
                    "not_baselined": NOT_BASELINED,
                },
                fh,
                indent=1,
                sort_keys=True,
            )
            fh.write("\n")
        written.append(p)
    return written


def compare_baseline(
    stored: Mapping[str, Any], fresh: Mapping[str, Any], *, tol: float = TOLERANCE
) -> list[str]:
    """Lines naming every entry whose correlation moved (or appeared/disappeared)."""

    def index(b: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
        return {(e["metric"], e["dimension"]): e for e in b.get("entries", [])}

    old, new = index(stored), index(fresh)
    ds = stored.get("dataset")
    problems = []
    for k in sorted(set(old) | set(new)):
        if k not in new:
            problems.append(f"{ds}: {k[0]} / {k[1]}: in the stored baseline but no longer computed")
            continue
        if k not in old:
            problems.append(
                f"{ds}: {k[0]} / {k[1]}: new entry not in the stored baseline (regenerate)"
            )
            continue
        for s in BASELINE_STATISTICS:
            a, b = old[k].get(s), new[k].get(s)
            if a is None and b is None:
                continue
            if a is None or b is None or not math.isclose(a, b, rel_tol=tol, abs_tol=tol):
                problems.append(f"{ds}: {k[0]} / {k[1]}: {s} moved {a} -> {b}")
    return problems


def check_baselines(
    out_dir: str | Path = "baselines",
    *,
    datasets: Sequence[str] | None = None,
    data_dir: str | Path | None = None,
) -> list[str]:
    """Recompute every baseline and compare with the stored files; returns the problems (empty = OK)."""
    meteor = _meteor_available()
    problems: list[str] = []
    for spec in _specs(datasets):
        p = baseline_path(out_dir, spec.dataset)
        if not p.is_file():
            problems.append(
                f"{spec.dataset}: no stored baseline {p} (run `metajudge baselines check --write`)"
            )
            continue
        stored = json.loads(p.read_text(encoding="utf-8"))
        problems += compare_baseline(
            stored, compute_baseline(spec, data_dir=data_dir, meteor=meteor)
        )
    from metajudge.runs.rank_baselines import check_rank_baselines

    return problems + check_rank_baselines(out_dir, datasets=datasets, data_dir=data_dir)
