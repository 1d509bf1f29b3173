"""Parsers of judge output: pure functions; a failure is ``None`` (counted upstream), never 0.

Every parser takes the model's text (``<think>`` already stripped by the backend) and returns
the parsed value or ``None``. :data:`PARSER_VERSION` goes into cache keys and signatures: bump
it whenever a parser changes what it accepts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from metajudge.backends.base import TokenLogprob

PARSER_VERSION = "judges-1"  # bump on any change of what a parser accepts (it is in cache keys)

# markdown emphasis / headings the small models like to emit (underscores inside words stay)
_MD = re.compile(r"[*`#>]+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])")


def _clean(text: str) -> str:
    return _MD.sub("", text or "").strip()


# ---------------------------------------------------------------------------------------------
# Likert scores (G-Eval)

_LABELLED = re.compile(
    r"(?:score|rating|faithfulness|completeness)[^0-9\n]{0,24}?(?<![\d.])([0-9]+(?:\.[0-9]+)?)(?!\.?\d)(?:\s*/\s*5)?",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^\s*[\[(]?([0-9]+(?:\.[0-9]+)?)(?:\s*/\s*5)?(?![0-9])(?!\.\s)"
)  # "1. …" is a list item


#: The scale itself, echoed by small models ("Faithfulness (1–5): 4"): never a score.
_RANGE = re.compile(r"\(?\b1\s*(?:–|—|-|to)\s*5\b\)?")


def _blank_ranges(text: str) -> str:
    return _RANGE.sub(lambda m: " " * len(m.group(0)), text)


def parse_score(text: str, lo: float = 1, hi: float = 5) -> float | None:
    """A Likert score in ``[lo, hi]``: a number labelled "score"/"faithfulness"/…, else a number
    that opens the answer. A list item ("1. Carefully review …"), an out-of-range number or no
    number is ``None``.

    >>> parse_score(" 4")
    4.0
    >>> parse_score("Faithfulness: **3** - the insight invents a year")
    3.0
    >>> parse_score("4/5. Most facts match.")
    4.0
    >>> parse_score("The score is 4.5")
    4.5
    >>> parse_score("Faithfulness (1–5): 2")
    2.0
    >>> parse_score("1. Carefully review the retrieved tables") is None
    True
    >>> parse_score("1. 50m breaststroke: 25.63") is None
    True
    >>> parse_score("7") is None
    True
    >>> parse_score("") is None
    True
    """
    t = _blank_ranges(_clean(text))
    if not t.strip():
        return None
    m = _LABELLED.search(t) or _LEADING.match(t.strip())
    if not m:
        return None
    v = float(m.group(1))
    return v if lo <= v <= hi else None


def _score_token(tok: str, lo: int, hi: int) -> int | None:
    s = tok.strip()
    return int(s) if s.isdigit() and len(s) == 1 and lo <= int(s) <= hi else None


@dataclass(frozen=True)
class ScoreDistribution:
    """Probabilities of the score tokens at the position where the model wrote its score."""

    probs: dict[int, float]  # normalised over lo..hi
    mass: float  # probability mass the score tokens had before normalising
    position: int  # index of the generated token

    @property
    def expected(self) -> float:
        return sum(s * p for s, p in self.probs.items())


def score_distribution(
    logprobs: Sequence[TokenLogprob] | None, lo: int = 1, hi: int = 5
) -> ScoreDistribution | None:
    """G-Eval's probability-weighted score (Liu et al. 2023, Eq. 1): Σ s·p(s) over the score tokens.

    The position used is the first generated token that is itself a score digit ``lo..hi``
    (so "Score: 4" works, not only a bare "4"), skipping an echoed scale such as "(1–5)".
    At that position the top alternatives are read;
    tokens that strip to the same digit (``"4"``, ``" 4"``) are summed, then normalised over
    ``lo..hi``. No score token generated → ``None``.

    >>> lp = [TokenLogprob(" 4", math.log(0.6), ((" 4", math.log(0.6)), (" 3", math.log(0.2)), ("4", math.log(0.1)), (" The", math.log(0.1))))]
    >>> d = score_distribution(lp)
    >>> round(d.expected, 4), round(d.mass, 2)
    (3.7778, 0.9)
    >>> score_distribution([TokenLogprob("Yes", -0.1)]) is None
    True
    >>> echo = [TokenLogprob(t, -0.1) for t in ("Faith", " (", "1", "–", "5", "):", " ")] + lp
    >>> score_distribution(echo).position
    7
    """
    if not logprobs:
        return None
    text = "".join(tl.token for tl in logprobs)
    masked = _blank_ranges(text)
    offset = 0
    for i, tl in enumerate(logprobs):
        start, offset = offset, offset + len(tl.token)
        if _score_token(tl.token, lo, hi) is None or not masked[start:offset].strip():
            continue
        acc: dict[int, float] = {}
        alts = tl.top or ((tl.token, tl.logprob),)
        if tl.token not in {a for a, _ in alts}:
            alts = ((tl.token, tl.logprob), *alts)
        for tok, lp in alts:
            s = _score_token(tok, lo, hi)
            if s is not None:
                acc[s] = acc.get(s, 0.0) + math.exp(lp)
        mass = sum(acc.values())
        if mass <= 0:
            return None
        return ScoreDistribution({s: acc.get(s, 0.0) / mass for s in range(lo, hi + 1)}, mass, i)
    return None


# ---------------------------------------------------------------------------------------------
# Lists (claims, topics)

_ITEM = re.compile(r"^\s*(?:(\d{1,3})\s*[.):]|[-*•])\s+(.*\S)\s*$")
_NONE = re.compile(r"^\s*(none|no claims?|no topics?|n/?a|nothing|\[\s*\])\.?\s*$", re.IGNORECASE)


def _dedupe(items: list[str], max_items: int) -> list[str]:
    seen: set[str] = set()
    out = []
    for it in items:
        key = " ".join(it.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(it)
    return out[:max_items]


def parse_list(text: str, *, max_items: int = 30, continued: bool = False) -> list[str] | None:
    """Items of a numbered/bulleted list or a JSON array of strings.

    ``continued=True`` when the prompt already wrote "1." and the model continues the first item
    (the ``small`` prompts): the first line is then item 1. Exact duplicates (small models loop)
    are dropped, at most ``max_items`` kept. An explicit "None" is ``[]`` (no claims); empty or
    list-less text is ``None`` (a parse failure). A truncated last item is kept as written.

    >>> parse_list("1. A won.\\n2. B lost.\\nThat is all.")
    ['A won.', 'B lost.']
    >>> parse_list(' Sales were 10.\\n2. Sales were 15.', continued=True)
    ['Sales were 10.', 'Sales were 15.']
    >>> parse_list('["x", "y", "x"]')
    ['x', 'y']
    >>> parse_list("None")
    []
    >>> parse_list("The insight is about football.") is None
    True
    >>> parse_list("2.", continued=True) is None
    True
    """
    t = (text or "").strip()
    if not t:
        return None
    if t.startswith("["):
        try:
            arr = json.loads(t)
        except json.JSONDecodeError:
            arr = None
        if isinstance(arr, list) and all(isinstance(x, str) for x in arr):
            return _dedupe([x.strip() for x in arr], max_items)
    if _NONE.match(_clean(t)):
        return []
    lines = t.splitlines()
    items: list[str] = []
    if continued and lines and not _ITEM.match(lines[0]) and lines[0].strip():
        first = _clean(lines[0])
        if not re.fullmatch(r"(\d{1,3}\s*[.):]|[-*•])?", first):  # a bare marker ("2.") is no item
            items.append(first)
        lines = lines[1:]
    for ln in lines:
        m = _ITEM.match(ln) or _ITEM.match(_MD.sub("", ln))
        if m:
            items.append(_clean(m.group(2)))
    items = [i for i in items if i]
    if not items:
        return None
    return _dedupe(items, max_items)


# ---------------------------------------------------------------------------------------------
# Binary verdicts (claim verification)

_NEG = re.compile(
    r"\b(no|false|unfaithful|not\s+faithful|not\s+supported|unsupported|incorrect|not\s+correct|"
    r"contradict\w*|refuted|not\s+true|cannot\s+be\s+verified|not\s+verified)\b",
    re.IGNORECASE,
)
_POS = re.compile(r"\b(yes|true|faithful|supported|correct|verified|accurate)\b", re.IGNORECASE)


def parse_verdict(text: str) -> int | None:
    """1 (faithful) / 0 (not) from the first sentence of a verification; ``None`` if neither.

    Negations are checked first ("not faithful" is 0); a bare ``1``/``0`` or ``1.0``/``0.0``
    (the paper's Table 26 style) is accepted.

    >>> parse_verdict(" Yes")
    1
    >>> parse_verdict("The claim is not faithful to the tables.")
    0
    >>> parse_verdict("Faithful. The 1988 row shows #1.")
    1
    >>> parse_verdict("0.0")
    0
    >>> parse_verdict("Tables: [TITLE] x") is None
    True
    >>> parse_verdict("1. The claim is faithful to the data in the tables.")
    1
    """
    t = _clean(text)
    if not t:
        return None
    m = re.match(r"^\s*\[?\s*([01])(?:\.0)?\s*\]?(?![\d.])", t)
    if m:
        return int(m.group(1))
    t = re.sub(r"^\s*(?:\d{1,3}[.)]\s+)+", "", t)  # a list marker before the verdict sentence
    first = re.split(r"(?<=[.!?])\s|\n", t, maxsplit=1)[0][:200]
    neg, pos = _NEG.search(first), _POS.search(first)
    if neg and (not pos or neg.start() <= pos.start()):
        return 0
    if pos:
        return 1
    return None


def _json_object(text: str) -> dict | None:
    t = (text or "").strip()
    i = t.find("{")
    if i < 0:
        return None
    j = t.rfind("}")
    if j > i:
        try:
            obj = json.loads(t[i : j + 1])
            return obj if isinstance(obj, dict) else None
        except json.JSONDecodeError:
            pass
    return None


_YN_ITEM = re.compile(r'\s*(?:"\s*(yes|no|true|false)\s*"|(true|false))\s*,?', re.IGNORECASE)


def parse_verdict_list(text: str, n: int) -> list[int | None] | None:
    """``n`` verdicts of a batched verification: ``{"verdicts": ["yes", "no", …]}``, or numbered
    lines ("1. Yes"). Truncated JSON keeps the verdicts written before the cut; missing ones are
    ``None`` (counted per claim). Nothing readable → ``None``.

    >>> parse_verdict_list('{"verdicts": ["yes", "no", "yes"]}', 3)
    [1, 0, 1]
    >>> parse_verdict_list('{"verdicts": ["yes", "no"', 3)
    [1, 0, None]
    >>> parse_verdict_list("1. Yes\\n2. No, the table says 15", 2)
    [1, 0]
    >>> parse_verdict_list("I cannot tell.", 2) is None
    True
    >>> parse_verdict_list('{ "verdicts": ["yes', 2) is None
    True
    >>> parse_verdict_list('{"verdicts": [{"id": 1, "title": "No"', 1) is None
    True
    """
    obj = _json_object(text)
    vals: list[int | None] = []
    if obj is not None and isinstance(obj.get("verdicts"), list):
        for v in obj["verdicts"]:
            if isinstance(v, bool) or isinstance(v, (int, float)) and v in (0, 1):
                vals.append(int(v))
            elif isinstance(v, str):
                vals.append(parse_verdict(v))
            else:
                vals.append(None)
    else:
        t = text or ""
        arr = re.search(r'"verdicts"\s*:\s*\[', t)
        tokens = []
        if arr:  # truncated JSON: the complete verdict strings written before the cut, in order
            for m in _YN_ITEM.finditer(t, arr.end()):
                if m.start() != (tokens[-1][1] if tokens else arr.end()):
                    break
                tokens.append((m.group(1) or m.group(2), m.end()))
        if tokens:
            vals = [1 if v.lower() in ("yes", "true") else 0 for v, _ in tokens]
        elif arr:
            return None
        else:
            by_index: dict[int, int | None] = {}
            for ln in t.splitlines():
                m = re.match(r"^\s*(\d{1,3})\s*[.):]\s*(.*)$", _MD.sub("", ln))
                if m and 1 <= int(m.group(1)) <= n and int(m.group(1)) not in by_index:
                    by_index[int(m.group(1))] = parse_verdict(m.group(2))
            if not by_index:
                return None
            vals = [by_index.get(i) for i in range(1, n + 1)]
    if not any(v is not None for v in vals):
        return None
    vals = vals[:n]
    return vals + [None] * (n - len(vals))


# ---------------------------------------------------------------------------------------------
# Topic matching (MT-RAIG completeness)


def _indices(s: str, n: int) -> tuple[list[int], int]:
    found = [int(x) for x in re.findall(r"(?<![\d.])(\d{1,3})(?!\d)(?!\.\d)", s)]
    valid = sorted({i for i in found if 1 <= i <= n})
    return valid, len([i for i in found if not 1 <= i <= n])


@dataclass(frozen=True)
class Matching:
    matched_a: tuple[int, ...]  # 1-based indices into topic set A (reference)
    matched_b: tuple[int, ...]  # 1-based indices into topic set B (prediction)
    invalid: int = 0  # indices outside the sets (ignored, reported)


def parse_matching(text: str, n_a: int, n_b: int) -> Matching | None:
    """The two matched subsets of MT-RAIG Table 16: ``{"matched_a": [...], "matched_b": [...]}``
    or the paper's "Matched topic subset of A: [1, 2] … of B: [1, 3]". Indices outside the sets
    are dropped and counted; no B section found → ``None``.

    >>> parse_matching("Matched topic subset of A: [1, 2, 8]\\n\\nMatched topic subset of B: [1, 3]", 5, 4)
    Matching(matched_a=(1, 2), matched_b=(1, 3), invalid=1)
    >>> parse_matching('{"matched_a": [2], "matched_b": []}', 3, 3)
    Matching(matched_a=(2,), matched_b=(), invalid=0)
    >>> parse_matching(" [1, 2]\\nMatched topic subset of B: None", 2, 2)
    Matching(matched_a=(1, 2), matched_b=(), invalid=0)
    >>> parse_matching("Both sets discuss attendance.", 3, 3) is None
    True
    >>> parse_matching("Topic set A: 1. x\\n2. y\\nTopic set B:", 2, 2) is None
    True
    """
    obj = _json_object(text)
    if obj is not None and ("matched_a" in obj or "matched_b" in obj):
        a_raw, b_raw = obj.get("matched_a", []), obj.get("matched_b", [])
        if not isinstance(a_raw, list) or not isinstance(b_raw, list):
            return None
        a, ia = _indices(" ".join(str(x) for x in a_raw), n_a)
        b, ib = _indices(" ".join(str(x) for x in b_raw), n_b)
        return Matching(tuple(a), tuple(b), ia + ib)
    t = _MD.sub("", text or "")
    # the headers must say "matched" (an echo of the input "Topic set B:" is no answer)
    mb = re.search(r"match\w*[^\n:]{0,30}?\bB\s*[:\-]", t, re.IGNORECASE)
    if not mb:
        return None
    a_part = t[: mb.start()]
    ma = re.search(r"match\w*[^\n:]{0,30}?\bA\s*[:\-]", a_part, re.IGNORECASE)
    if ma:
        a_part = a_part[ma.end() :]
    b_part = t[mb.end() :]
    b_part = re.split(r"\n\s*\n", b_part.strip(), maxsplit=1)[0] if b_part.strip() else ""
    a, ia = _indices(a_part, n_a)
    b, ib = _indices(b_part, n_b)
    return Matching(tuple(a), tuple(b), ia + ib)


# ---------------------------------------------------------------------------------------------
# Answer equivalence and fact coverage (MuDABench)


def parse_equivalence(text: str) -> tuple[int | None, str]:
    """``(1|0|None, rationale)`` from ``{"equivalent": true, "rationale": "…"}`` or a Yes/No
    sentence. Truncated JSON still yields the verdict when ``"equivalent"`` was written.

    >>> parse_equivalence('{"equivalent": true, "rationale": "Same value."}')
    (1, 'Same value.')
    >>> parse_equivalence('{"equivalent": false, "rationale": "The sign di')
    (0, 'The sign di')
    >>> parse_equivalence("No. The gold answer is 12.5%.")
    (0, 'No. The gold answer is 12.5%.')
    >>> parse_equivalence("")
    (None, '')
    """
    obj = _json_object(text)
    if obj is not None and "equivalent" in obj:
        v = obj["equivalent"]
        verdict = int(v) if isinstance(v, bool) else parse_verdict(str(v))
        return verdict, str(obj.get("rationale", ""))[:300]
    t = (text or "").strip()
    m = re.search(r'"equivalent"\s*:\s*(true|false)', t, re.IGNORECASE)
    if m:
        r = re.search(r'"rationale"\s*:\s*"([^"]*)', t)
        return (1 if m.group(1).lower() == "true" else 0), (r.group(1) if r else "")
    if not t:
        return None, ""
    low = _clean(t).lower()
    if re.match(r"^(not equivalent|no\b|false\b|incorrect|different)", low):
        return 0, t[:300]
    if re.match(r"^(equivalent|yes\b|true\b|correct|same)", low):
        return 1, t[:300]
    first = re.split(r"(?<=[.!?])\s|\n", low, maxsplit=1)[0]
    if re.search(r"\bnot\s+(?:semantically\s+)?equivalent\b|\bnot the same\b", first):
        return 0, t[:300]
    if re.search(r"\bis\s+(?:semantically\s+)?equivalent\b|\bis the same\b", first):
        return 1, t[:300]
    return None, t[:300]


FACT_LABELS = ("covered", "wrong", "missing")


def parse_fact_labels(text: str, n: int) -> list[str | None] | None:
    """``n`` labels in {covered, wrong, missing} from ``{"facts": [...]}`` or numbered lines;
    unreadable ones ``None``; truncated JSON keeps what was written.

    >>> parse_fact_labels('{"facts": ["covered", "Wrong", "missing"]}', 3)
    ['covered', 'wrong', 'missing']
    >>> parse_fact_labels('{"facts": ["covered", "wro', 3)
    ['covered', None, None]
    >>> parse_fact_labels("1. covered\\n2. missing", 2)
    ['covered', 'missing']
    >>> parse_fact_labels("n/a", 2) is None
    True
    """

    def one(s: str) -> str | None:
        s = _clean(str(s)).lower()
        for lab in FACT_LABELS:
            if re.match(rf"^{lab}\b", s):
                return lab
        return None

    obj = _json_object(text)
    labels: list[str | None]
    if obj is not None and isinstance(obj.get("facts"), list):
        labels = [one(x) for x in obj["facts"]]
    else:
        t = text or ""
        k = t.find("[")
        quoted = re.findall(r'"(covered|wrong|missing)"', t[k:], re.IGNORECASE) if k >= 0 else []
        if quoted:
            labels = [q.lower() for q in quoted]
        else:
            by_index: dict[int, str | None] = {}
            for ln in t.splitlines():
                m = re.match(r"^\s*(\d{1,3})\s*[.):]\s*(.*)$", _MD.sub("", ln))
                if m and 1 <= int(m.group(1)) <= n and int(m.group(1)) not in by_index:
                    by_index[int(m.group(1))] = one(m.group(2))
            labels = [by_index.get(i) for i in range(1, n + 1)]
    if not any(lab is not None for lab in labels):
        return None
    labels = labels[:n]
    return labels + [None] * (n - len(labels))
