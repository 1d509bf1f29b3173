"""One converter per upstream format: upstream files -> canonical records.

The converters live in :mod:`metajudge.data.convert_pairwise` and
:mod:`metajudge.data.convert_likert`, on top of :mod:`metajudge.data.upstream` (file access and
record validation against the card). How each upstream label is read is stated in the card's
``notes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data import convert_alt_test as alt
from metajudge.data import convert_likert as lik
from metajudge.data import convert_pairwise as pw
from metajudge.data import judge_bench as jb
from metajudge.data.convert_likert import parse_list_cell
from metajudge.data.convert_pairwise import parse_serialized_table
from metajudge.data.formats import DatasetCard, Record
from metajudge.data.upstream import Converter, _Source
from metajudge.errors import InputError

CONVERTERS: dict[str, Converter] = {
    "ragchecker_meta_eval": pw.convert_ragchecker,
    "lftqa_mitigation_pradhumant": pw.convert_lftqa_mitigation,
    "lftqa_eval": lik.convert_lftqa_eval,
    "summeval_ppairs": lik.convert_summeval_ppairs,
    "summeval_summac_consistency": lik.convert_summac,
    "hanna": lik.convert_hanna,
    "pandalm_testset": pw.convert_pandalm,
    "autoj_pairwise_test": pw.convert_autoj,
    "llmbar": pw.convert_llmbar,
    "judgebench": pw.convert_judgebench,
    "unieval_topicalchat_sfres_sfhot": lik.convert_unieval,
    "trust_or_escalate_jung2025": pw.convert_trust_or_escalate,
    "conformal_judge_sheng2025": lik.convert_sheng,
    "judging_the_judges_thakur2024": lik.convert_thakur,
}


# cards whose folder holds several datasets, each file its own subset with its own card
COLLECTIONS = {
    "dmg_judge_bench": jb.load_judge_bench_collection,
    "alt_test_calderon2025": alt.load_alt_test_collection,
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
