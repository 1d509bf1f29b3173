"""`--input` on every shipped JUDGE-BENCH file: each one under dmg_judge_bench/data loads through
``load_file`` (what every ``--input FILE`` calls) with the counts below (issue 13, "a new
JUDGE-BENCH-format file works with no code change"). ``annotations`` = non-null human labels.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metajudge.data.loading import load as load_file
from metajudge.errors import InputError

DATA = Path(os.environ.get("METAJUDGE_DATA_DIR", "")) / "dmg_judge_bench" / "data"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs $METAJUDGE_DATA_DIR")

# file: (dataset name, card kind, dimensions, items, annotations, label kinds of the dimensions)
COUNTS = {
    "cola/cola.json": ("cola", "categorical", 1, 1043, 1043, "categorical"),
    "dices/dices_350_crowdsourced.json": (
        "dices-350-crowdsourced",
        "categorical",
        1,
        350,
        43050,
        "categorical",
    ),
    "dices/dices_350_expert.json": ("dices-350-expert", "categorical", 1, 350, 350, "categorical"),
    "dices/dices_990.json": ("dices-990", "categorical", 1, 990, 72103, "categorical"),
    "example.json": ("example", "likert", 2, 2, 12, "graded"),
    "inferential-strategies/inferential_strategies.json": (
        "inferential-strategies",
        "categorical",
        1,
        300,
        600,
        "categorical",
    ),
    "llmbar/data-adversarial.json": (
        "llmbar-adversarial",
        "categorical",
        1,
        319,
        319,
        "categorical",
    ),
    "llmbar/data-natural.json": ("llmbar-natural", "categorical", 1, 100, 100, "categorical"),
    "medical-safety/data.json": ("medical-safety", "categorical", 2, 3701, 7402, "categorical"),
    "recipe_crowd_sourcing_data/meta_evaluation_recipes.json": (
        "recipe-crowd-sourcing-data",
        "likert",
        6,
        52,
        6336,
        "graded",
    ),
    "roscoe/roscoe-cosmos-overall.json": (
        "roscoe-cosmos-overall",
        "categorical",
        4,
        195,
        780,
        "categorical",
    ),
    "roscoe/roscoe-cosmos-stepwise.json": (
        "roscoe-cosmos-stepwise",
        "categorical",
        9,
        410,
        3690,
        "categorical",
    ),
    "roscoe/roscoe-drop-overall.json": (
        "roscoe-drop-overall",
        "categorical",
        4,
        210,
        840,
        "categorical",
    ),
    "roscoe/roscoe-drop-stepwise.json": (
        "roscoe-drop-stepwise",
        "categorical",
        9,
        451,
        4059,
        "categorical",
    ),
    "roscoe/roscoe-esnli-overall.json": (
        "roscoe-esnli-overall",
        "categorical",
        4,
        151,
        604,
        "categorical",
    ),
    "roscoe/roscoe-esnli-stepwise.json": (
        "roscoe-esnli-stepwise",
        "categorical",
        9,
        272,
        2448,
        "categorical",
    ),
    "roscoe/roscoe-gsm8k-overall.json": (
        "roscoe-gsm8k-overall",
        "categorical",
        4,
        200,
        800,
        "categorical",
    ),
    "roscoe/roscoe-gsm8k-stepwise.json": (
        "roscoe-gsm8k-stepwise",
        "categorical",
        9,
        881,
        7929,
        "categorical",
    ),
    "toxic_chat/toxic_chat_test.json": (
        "toxic-chat-test",
        "categorical",
        2,
        2853,
        5706,
        "categorical",
    ),
    "toxic_chat/toxic_chat_train.json": (
        "toxic-chat-train",
        "categorical",
        2,
        2801,
        5602,
        "categorical",
    ),
}
# not a data file: the recipe set's questionnaire (no annotations/instances)
AUXILIARY = ("recipe_crowd_sourcing_data/questions.json",)


def _kinds(ds) -> str:  # type: ignore[no-untyped-def]
    out = set()
    for d in ds.card.dimensions:
        sc = ds.card.scale_of(d)
        out.add("categorical" if sc.labels else "graded" if sc.values else "continuous")
    return ",".join(sorted(out))


def test_every_shipped_file_is_listed() -> None:
    found = {str(p.relative_to(DATA)) for p in DATA.rglob("*.json")}
    assert found == set(COUNTS) | set(AUXILIARY)


@pytest.mark.parametrize("rel", sorted(COUNTS))
def test_load_file_counts(rel: str) -> None:
    ds = load_file(DATA / rel)
    recs = ds.records
    annotations = sum(1 for r in recs for vs in r.scores.values() for v in vs if v is not None)
    got = (ds.name, ds.card.kind, len(ds.card.dimensions), len(recs), annotations, _kinds(ds))
    print(rel, got)
    assert got == COUNTS[rel]


def test_auxiliary_file_is_refused() -> None:
    with pytest.raises(InputError, match="not one of its data files"):
        load_file(DATA / AUXILIARY[0])
