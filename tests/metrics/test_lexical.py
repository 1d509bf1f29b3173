"""Golden values for BLEU, ROUGE-L and METEOR against the reference implementations."""

from __future__ import annotations

from pathlib import Path

import pytest
import sacrebleu
from nltk.translate.meteor_score import meteor_score
from rouge_score import rouge_scorer

from metajudge.errors import InputError, MissingResourceError
from metajudge.metrics.base import ScoreItem
from metajudge.metrics.lexical import BLEU, Meteor, RougeL, corpus_bleu, tokenize_text

CASES = [
    ("the cat sat on the mat", "the cat sat on a mat"),
    ("It is a guide to action which ensures that the military always obeys the commands of the party.",
     "It is a guide to action that ensures that the military will forever heed Party commands."),
    ("Revenue grew 12.5% to $1,234 million in 2020.", "In 2020 revenue rose by 12.5 percent to $1.234 billion."),
    ("completely different words", "nothing in common here"),
    ("a", "a b c d e f"),
]  # fmt: skip


def _wordnet_or_skip() -> None:
    from metajudge.metrics.wordnet import wordnet_path

    try:
        wordnet_path()
    except MissingResourceError as e:
        pytest.skip(reason=f"WordNet not installed: {e}")


@pytest.mark.parametrize("hyp,ref", CASES)
def test_bleu_matches_sacrebleu_sentence_bleu(hyp: str, ref: str) -> None:
    expected = sacrebleu.sentence_bleu(hyp, [ref]).score  # 13a, exp smoothing, effective order
    assert BLEU().score(hyp, ref).score == pytest.approx(expected, abs=1e-9)


def test_bleu_fixed_values() -> None:
    m = BLEU()
    assert m.score(*CASES[0]).score == pytest.approx(53.7284965911771, abs=1e-9)
    assert m.score(*CASES[3]).score == pytest.approx(0.0, abs=1e-9)
    assert (
        m.signature
        == "bleu|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:" + sacrebleu.__version__
    )


def test_bleu_options_change_signature_and_value() -> None:
    a, b = BLEU(), BLEU(smooth_method="floor", smooth_value=0.1, lowercase=True)
    assert a.signature != b.signature and "smooth:floor" in b.signature and "case:lc" in b.signature
    hyp, ref = CASES[2]
    assert b.score(hyp, ref).score == pytest.approx(
        sacrebleu.sentence_bleu(
            hyp, [ref], smooth_method="floor", smooth_value=0.1, lowercase=True
        ).score
    )
    with pytest.raises(InputError):
        BLEU(tokenize="no-such-tokenizer")


def test_corpus_bleu_matches_sacrebleu() -> None:
    hyps = [h for h, _ in CASES]
    refs = [r for _, r in CASES]
    score, sig = corpus_bleu(hyps, refs)
    assert score == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9)
    assert sig.startswith("bleu|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp")
    with pytest.raises(InputError, match="2 responses but 1 references"):
        corpus_bleu(["a", "b"], ["a"])
    with pytest.raises(InputError, match=r"responses\[1\]"):
        corpus_bleu(["a", None], ["a", "b"])  # type: ignore[list-item]


@pytest.mark.parametrize("hyp,ref", CASES)
@pytest.mark.parametrize("stem", [True, False])
def test_rouge_l_matches_rouge_score(hyp: str, ref: str, stem: bool) -> None:
    expected = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem).score(ref, hyp)["rougeL"]
    r = RougeL(use_stemmer=stem).score(hyp, ref)
    assert r.score == pytest.approx(expected.fmeasure, abs=1e-12)
    assert r.details["precision"] == pytest.approx(expected.precision)
    assert r.details["recall"] == pytest.approx(expected.recall)


def test_rouge_l_fixed_values() -> None:
    # "the cats sat" vs "the cat sat": stemming makes the LCS 3/3; without it 2/3 both ways.
    assert RougeL().score("the cats sat", "the cat sat").score == pytest.approx(1.0)
    assert RougeL(use_stemmer=False).score("the cats sat", "the cat sat").score == pytest.approx(
        2 / 3
    )
    assert "stem:yes" in RougeL().signature and "stem:no" in RougeL(use_stemmer=False).signature


def test_meteor_nltk_documented_example() -> None:
    _wordnet_or_skip()
    hyp = "It is a guide to action which ensures that the military always obeys the commands of the party"
    ref = "It is a guide to action that ensures that the military will forever heed Party commands"
    m = Meteor(tokenize="whitespace")
    assert round(m.score(hyp, ref).score, 4) == 0.6944  # NLTK's meteor_score docstring
    assert m.score("non matching hypothesis", "this is a cat").score == 0.0  # NLTK docstring: 0.0


@pytest.mark.parametrize("hyp,ref", CASES)
def test_meteor_matches_nltk_on_13a_tokens(hyp: str, ref: str) -> None:
    _wordnet_or_skip()
    m = Meteor()
    expected = meteor_score(
        [tokenize_text(ref, "13a")], tokenize_text(hyp, "13a"), wordnet=m._load()
    )
    assert m.score(hyp, ref).score == pytest.approx(expected, abs=1e-12)


def test_meteor_identical_text_is_one_chunk_maximum() -> None:
    _wordnet_or_skip()
    text = "the quick brown fox jumps over the lazy dog"
    n = len(tokenize_text(text, "13a"))
    assert Meteor().score(text, text).score == pytest.approx(1 - 0.5 / n**3)


def test_meteor_signature_pins_wordnet_and_options() -> None:
    _wordnet_or_skip()
    sig = Meteor().signature
    for part in ("meteor|", "tok:13a", "alpha:0.9", "beta:3", "gamma:0.5", "wordnet:3.0@", "nltk:"):
        assert part in sig
    assert Meteor(tokenize="whitespace").signature != sig
    with pytest.raises(InputError):
        Meteor(tokenize="spacy")  # type: ignore[arg-type]


def test_tokenize_13a_keeps_numbers() -> None:
    assert tokenize_text("It costs $1,234.50, (roughly).", "13a") == [
        "It",
        "costs",
        "$",
        "1,234.50",
        ",",
        "(",
        "roughly",
        ")",
        ".",
    ]


@pytest.mark.parametrize("cls", [BLEU, RougeL, Meteor])
def test_empty_and_missing_texts(cls: type) -> None:
    if cls is Meteor:
        _wordnet_or_skip()
    m = cls()
    items = [
        ScoreItem("e1", "", "a reference"),
        ScoreItem("e2", "a response", ""),
        ScoreItem("e3", "   ", "a reference"),
        ScoreItem("n1", None, "a reference"),
        ScoreItem("n2", "a response", None),
    ]
    res = m.score_batch(items)
    assert [r.key for r in res] == ["e1", "e2", "e3", "n1", "n2"]
    assert [r.score for r in res[:3]] == [0.0, 0.0, 0.0]  # documented: empty text scores 0
    assert res[3].score is None and "no response" in (res[3].error or "")
    assert res[4].score is None and "no reference" in (res[4].error or "")


@pytest.mark.parametrize("cls", [BLEU, RougeL, Meteor])
def test_non_string_input_is_a_clear_error(cls: type) -> None:
    m = cls()
    with pytest.raises(InputError, match="item 'x'.*int"):
        m.score_batch([ScoreItem("x", 5, "ref")])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not a ScoreItem"):
        m.score_batch([("resp", "ref")])  # type: ignore[list-item]
    with pytest.raises(InputError):
        m.score_batch("not a list")  # type: ignore[arg-type]


@pytest.mark.parametrize("hyp,ref", CASES)
@pytest.mark.parametrize("variant,name", [("rouge1", "rouge_1"), ("rouge2", "rouge_2")])
def test_rouge_1_and_2_are_rouge_scores_own_variants(
    hyp: str, ref: str, variant: str, name: str
) -> None:
    from metajudge.metrics.registry import get_metric

    expected = rouge_scorer.RougeScorer([variant], use_stemmer=True).score(ref, hyp)[variant]
    m = get_metric(name)
    assert m.score(hyp, ref).score == pytest.approx(expected.fmeasure, abs=1e-12)
    assert m.signature.startswith(f"{name}|variant:{variant}|stem:yes|")
    same = get_metric("rouge_l", variant=variant)
    assert same.score(hyp, ref).score == pytest.approx(expected.fmeasure, abs=1e-12)
    assert same.signature.startswith(f"rouge_l|variant:{variant}|")


def test_rouge_variant_option_through_the_command_line(tmp_path: Path) -> None:
    """`--option rouge_l.variant=rouge1` is accepted (it was "unknown option"); a bad variant
    is refused naming the field."""
    from metajudge.cli.metrics import check_cli_options, parse_options
    from metajudge.metrics.registry import get_metric

    check_cli_options(parse_options(["rouge_l.variant=rouge1"]))
    with pytest.raises(InputError, match="unknown variant 'rouge3'") as e:
        get_metric("rouge_l", variant="rouge3")
    assert e.value.field == "variant"


def test_rouge_builds_no_scorer_until_it_scores() -> None:
    """Listing metrics reads signatures only: rouge-score (which imports NLTK) is not built."""
    m = RougeL()
    assert m.signature and m._scorer is None
    m.score("a b", "a b")
    assert m._scorer is not None


def test_meteor_signature_reads_the_wordnet_version_as_nltk_does() -> None:
    _wordnet_or_skip()
    from metajudge.metrics.wordnet import load_wordnet_reader, wordnet_path, wordnet_version

    assert wordnet_version(wordnet_path()) == load_wordnet_reader().get_version() == "3.0"
