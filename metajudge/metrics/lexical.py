"""Lexical overlap metrics: BLEU (sacreBLEU), ROUGE-L (rouge-score), METEOR (NLTK).

Each is a thin, signature-carrying wrapper around the reference implementation (signatures in
the spirit of sacreBLEU, Post 2018):

- **BLEU** — ``sacrebleu.metrics.BLEU`` (Post 2018), sentence BLEU with the 13a tokenizer and
  exponential smoothing by default; effective order on (sacreBLEU's ``sentence_bleu`` default).
  Range 0–100 (sacreBLEU's scale; a float round-off above 100 on identical texts is clipped).
  :func:`corpus_bleu` gives corpus BLEU.
- **ROUGE-L** — ``rouge_score.rouge_scorer.RougeScorer(["rougeL"])`` F-measure (Lin 2004), Porter
  stemmer on by default. rouge-score's tokenizer lower-cases and keeps only ``[a-z0-9]`` tokens,
  so a text without ASCII letters or digits scores 0.
- **METEOR** — ``nltk.translate.meteor_score.meteor_score`` (Banerjee & Lavie 2005; NLTK's
  alpha=0.9, beta=3, gamma=0.5, Porter stemmer, WordNet synonyms, lower-casing). NLTK needs
  pre-tokenised input: we tokenise with sacreBLEU's 13a tokenizer (``tokenize="13a"``, the
  default) or on whitespace (``tokenize="whitespace"``, NLTK's documented examples). On identical
  texts of n tokens METEOR is ``1 - gamma / n**beta`` (one chunk), not 1.

Empty strings are scored (they are answers): BLEU, ROUGE-L and METEOR give 0 for an empty
response or an empty reference. ``None`` texts give a ``None`` score with the reason.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any, Literal

from metajudge.errors import InputError
from metajudge.metrics._common import PairMetric, fmt_opt, version
from metajudge.metrics.base import MetricResult

TokenizeMode = Literal["13a", "whitespace"]
RougeVariant = Literal["rougeL", "rouge1", "rouge2", "rougeLsum"]


def _identity(s: str) -> str:
    return s


class BLEU(PairMetric):
    """sacreBLEU sentence BLEU (0–100).

    >>> m = BLEU()
    >>> round(m.score("the cat sat on the mat", "the cat sat on a mat").score, 4)
    53.7285
    >>> m.signature
    'bleu|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0'
    """

    name = "bleu"
    direction = "higher"
    range = (0.0, 100.0)

    def __init__(
        self,
        *,
        tokenize: str = "13a",
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        lowercase: bool = False,
        effective_order: bool = True,
    ) -> None:
        from sacrebleu.metrics import BLEU as _BLEU

        try:
            self._bleu = _BLEU(
                tokenize=tokenize,
                smooth_method=smooth_method,
                smooth_value=smooth_value,
                lowercase=lowercase,
                effective_order=effective_order,
            )
        except (AssertionError, ValueError, KeyError, RuntimeError) as e:
            raise InputError(f"bleu: bad option: {e}", field="options") from None
        # sacreBLEU fills nrefs once it has seen references; sentence BLEU here always has one.
        self._bleu.sentence_score("a", ["a"])

    @property
    def signature(self) -> str:
        return "bleu|" + self._bleu.get_signature().format()

    def _score_pair(self, key: str, response: str, reference: str, state: object) -> MetricResult:
        s = self._bleu.sentence_score(response, [reference])
        details: dict[str, Any] = {
            "bp": s.bp,
            "precisions": list(s.precisions),
            "sys_len": s.sys_len,
            "ref_len": s.ref_len,
        }
        # sacreBLEU can return 100.00000000000004 on identical texts: clip the float round-off
        return MetricResult(key, min(float(s.score), 100.0), details)


def corpus_bleu(
    responses: Sequence[str], references: Sequence[str], **options: Any
) -> tuple[float, str]:
    """sacreBLEU corpus BLEU of ``responses`` against one reference each; returns (score, signature).

    ``options`` go to ``sacrebleu.metrics.BLEU`` (default 13a, exp smoothing, no effective order
    — sacreBLEU's corpus defaults).

    >>> s, sig = corpus_bleu(["the cat sat on the mat", "hello there"], ["the cat sat on a mat", "hello there general"])
    >>> round(s, 2), sig
    (49.28, 'bleu|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0')
    """
    from sacrebleu.metrics import BLEU as _BLEU

    for name, seq in (("responses", responses), ("references", references)):
        if isinstance(seq, str) or not isinstance(seq, Sequence):
            raise InputError(f"corpus_bleu: {name} must be a list of strings", field=name)
        for i, t in enumerate(seq):
            if not isinstance(t, str):
                raise InputError(
                    f"corpus_bleu: {name}[{i}] is {type(t).__name__}, not a string",
                    field=f"{name}[{i}]",
                )
    if len(responses) != len(references):
        raise InputError(
            f"corpus_bleu: {len(responses)} responses but {len(references)} references",
            field="references",
        )
    if not responses:
        raise InputError("corpus_bleu: no responses", field="responses")
    opts = {"tokenize": "13a", "smooth_method": "exp", **options}
    bleu = _BLEU(**opts)
    s = bleu.corpus_score(list(responses), [list(references)])
    return float(s.score), "bleu|" + bleu.get_signature().format()


class RougeL(PairMetric):
    """rouge-score ROUGE F-measure (0–1); precision and recall in details.

    ``variant`` is rouge-score's own name: ``rougeL`` (longest common subsequence, the default),
    ``rouge1`` / ``rouge2`` (unigram / bigram overlap; registered as ``rouge_1`` and ``rouge_2``)
    or ``rougeLsum`` (summary-level LCS over newline-split sentences).

    >>> round(RougeL().score("the cats sat", "the cat sat").score, 4)
    1.0
    >>> round(RougeL(use_stemmer=False).score("the cats sat", "the cat sat").score, 4)
    0.6667
    >>> round(RougeL(variant="rouge2").score("the cat sat", "the cat sat down").score, 4)
    0.8
    """

    name = "rouge_l"
    direction = "higher"
    range = (0.0, 1.0)
    VARIANTS: tuple[str, ...] = typing.get_args(RougeVariant)

    def __init__(self, *, use_stemmer: bool = True, variant: RougeVariant = "rougeL") -> None:
        if variant not in self.VARIANTS:
            raise InputError(
                f"rouge: unknown variant {variant!r} ({', '.join(self.VARIANTS)})", field="variant"
            )
        self.use_stemmer = bool(use_stemmer)
        self.variant: RougeVariant = variant
        self._scorer: Any = None  # rouge_score imports NLTK (seconds): built on first use

    @property
    def signature(self) -> str:
        return (
            f"{self.name}|variant:{self.variant}|stem:{fmt_opt(self.use_stemmer)}|"
            f"tok:rouge_score-default|score:f|version:{version('rouge-score')}"
        )

    def _prepare(self) -> object:
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer([self.variant], use_stemmer=self.use_stemmer)
        return self._scorer

    def _score_pair(self, key: str, response: str, reference: str, state: Any) -> MetricResult:
        s = state.score(target=reference, prediction=response)[self.variant]
        return MetricResult(
            key, float(s.fmeasure), {"precision": float(s.precision), "recall": float(s.recall)}
        )


def tokenize_text(text: str, mode: TokenizeMode) -> list[str]:
    """Tokens for METEOR: sacreBLEU 13a tokenisation or whitespace split.

    >>> tokenize_text("It costs $1,234.50, (roughly).", "13a")
    ['It', 'costs', '$', '1,234.50', ',', '(', 'roughly', ')', '.']
    """
    if mode == "whitespace":
        return text.split()
    if mode == "13a":
        return _tok13a()(text).split()
    raise InputError(f"unknown tokenize mode {mode!r} (13a, whitespace)", field="tokenize")


_TOK13A: Any = None


def _tok13a() -> Any:
    global _TOK13A
    if _TOK13A is None:
        from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

        _TOK13A = Tokenizer13a()
    return _TOK13A


class Meteor(PairMetric):
    """NLTK METEOR (0–1) with WordNet synonyms.

    WordNet comes from :mod:`metajudge.metrics.wordnet` (``metajudge setup wordnet``); a missing
    WordNet raises one :class:`~metajudge.errors.MissingResourceError` that says how to fix it.
    """

    name = "meteor"
    direction = "higher"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        tokenize: TokenizeMode = "13a",
        alpha: float = 0.9,
        beta: float = 3.0,
        gamma: float = 0.5,
        lowercase: bool = True,
    ) -> None:
        if tokenize not in ("13a", "whitespace"):
            raise InputError(
                f"meteor: unknown tokenize mode {tokenize!r} (13a, whitespace)", field="tokenize"
            )
        self.tokenize: TokenizeMode = tokenize
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.lowercase = bool(lowercase)
        self._wordnet: Any = None
        self._wn_path: Any = None

    def _load(self) -> Any:
        if self._wordnet is None:
            from metajudge.metrics.wordnet import load_wordnet_reader, wordnet_path

            self._wn_path = wordnet_path()
            self._wordnet = load_wordnet_reader(self._wn_path)
        return self._wordnet

    @property
    def signature(self) -> str:
        from metajudge.metrics.wordnet import wordnet_fingerprint, wordnet_path, wordnet_version

        if self._wn_path is None:
            self._wn_path = wordnet_path()
        return (
            f"meteor|tok:{self.tokenize}|case:{'lc' if self.lowercase else 'mixed'}|alpha:{self.alpha:g}|"
            f"beta:{self.beta:g}|gamma:{self.gamma:g}|stem:porter|wordnet:{wordnet_version(self._wn_path)}@"
            f"{wordnet_fingerprint(self._wn_path)}|nltk:{version('nltk')}"
        )

    def _prepare(self) -> object:
        return self._load()

    def _score_pair(self, key: str, response: str, reference: str, state: object) -> MetricResult:
        from nltk.translate.meteor_score import meteor_score

        hyp = tokenize_text(response, self.tokenize)
        ref = tokenize_text(reference, self.tokenize)
        if not hyp or not ref:
            which = "both" if not hyp and not ref else ("response" if not hyp else "reference")
            return MetricResult(key, 0.0, {"empty": which})
        pre = str.lower if self.lowercase else _identity
        s = meteor_score(
            [ref],
            hyp,
            preprocess=pre,
            wordnet=state,
            alpha=self.alpha,
            beta=self.beta,
            gamma=self.gamma,
        )
        return MetricResult(key, float(s), {"hyp_tokens": len(hyp), "ref_tokens": len(ref)})
