"""Claim-verification verdicts (MT-RAIG Eval's verifier V, Seo et al. 2025, Eq. 2) read from
free judge text: an explicit label set, negation and hedging understood.

Labels: ``supported`` (V = 1), ``not_supported`` (V = 0) and ``partially`` (a mixed verdict:
"partially faithful", "not entirely correct", "correct about the year but wrong about the
value"), scored ``partial`` — 0 by default, as Eq. 2's V is binary; 0.5 on request. ``None``
is a reply with no verdict (a refusal, "unclear", an echo of the input): counted, never a 0.

Rules, in order (tested on ``tests/fixtures/verdict_corpus.jsonl``, replies in the styles of
strong chat models):

1. a JSON object with a verdict key (``verdict``, ``label``, ``answer``, ``supported``, …);
2. a bare ``1``/``0`` (the paper's Table 26 style);
3. a labelled verdict ("Verdict: No", "**Final answer:** Supported") — the last one written;
4. a first sentence that *is* a verdict ("Yes, …", "Not supported.", "The claim is …");
5. a concluding sentence ("Therefore …", "Thus …", "Overall …", "In conclusion …"), the last one;
6. the last sentence, then the first one.

Within the chosen phrase: double negatives ("not false", "does not contradict") read as
support; "not entirely / not fully / only partly" as partial; a negated support word ("not
accurate", "do not support", "cannot be verified from the tables") as not supported; positive
and negative words joined by "but"/"however"/"although" as partial; else the first verdict
word decides. Hedges ("likely", "appears to be") keep their direction. A claim the tables
"cannot verify" is not supported (the verifier asks whether the tables support it); "unclear"
alone is no verdict.
"""

from __future__ import annotations

import json
import re
from typing import Literal

ClaimLabel = Literal["supported", "not_supported", "partially"]
LABELS: tuple[ClaimLabel, ...] = ("supported", "not_supported", "partially")

_MD = re.compile(r"[*`#>]+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])")

_POS_W = (
    r"yes|true|supported|supports?|faithful|accurate(?:ly)?|correct(?:ly)?|verified|verifiable|"
    r"confirmed|confirms?|consistent|matches|match|valid|entailed|holds|backed|aligns?"
)
_NEG_W = (
    r"no|false|unfaithful|unsupported|inaccurate|incorrect|wrong|contradict\w*|refut\w*|"
    r"inconsistent|mismatch\w*|fabricat\w*|hallucinat\w*|misstat\w*|misrepresent\w*|"
    r"overstat\w*|understat\w*|erroneous|invalid|untrue|unverifiable|unsubstantiated|"
    r"incorrectly|inaccurately|wrongly|falsely|"
    r"insufficient|lacks?|absent|not_v"
)
_PART_W = r"partial\w*|partly|mostly|largely|somewhat|half|part_v|mixed"
_NOT = r"(?:not|\w+n't|never|cannot|can ?not|unable to|no longer|neither|nor|hardly)"

_DOUBLE_NEG = re.compile(
    rf"\b{_NOT}\s+(?:a\s+|an\s+|at all\s+)?(?:false|wrong|incorrect|inaccurate|unsupported|untrue|"
    rf"unfaithful)\b|\b(?:does|do|did|is|are)\s*{_NOT}\s+(?:\w+\s+){{0,2}}?contradict\w*|"
    r"\bno\s+(?:contradiction|discrepanc\w+|inconsistenc\w+|error)s?\b|"
    r"\bnothing\s+(?:\w+\s+){0,4}?contradicts\b",
    re.IGNORECASE,
)
_PARTIAL_NEG = re.compile(
    rf"\b{_NOT}\s+(?:be\s+)?(?:entirely|fully|completely|wholly|totally|quite|100%|all that|"
    r"exactly|perfectly)\b|\bonly\s+(?:partly|partially|in part)\b|\bin part\b|\byes and no\b",
    re.IGNORECASE,
)
_NEG_PHRASE = re.compile(
    rf"\b{_NOT}\s+(?:\w+\s+){{0,4}}?(?:be\s+)?(?:{_POS_W}|verify|confirm|support\w*|back\w*|"
    r"determine\w*|tell|reflect\w*|mention\w*|state\w*|show\w*|found|appear\w*|present|"
    r"enough|sufficient|establish\w*|substantiat\w*|hold)\b|"
    r"\b(?:nothing|none)\s+(?:\w+\s+){0,4}?(?:support\w*|confirm\w*|show\w*|mention\w*)\b|"
    r"\b(?:probably|likely|definitely|certainly|clearly|absolutely|simply)\s+not\b|^\W*not\W*$|"
    r"\bno\s+(?:evidence|support|mention|indication|data|information|record)\b|"
    r"\b(?:does|do|did)\s+not\s+(?:\w+\s+){0,2}?(?:say|list|include|contain|give|provide)\b",
    re.IGNORECASE,
)
_WORD = re.compile(
    rf"\b(?:(?P<part>{_PART_W})|(?P<neg>{_NEG_W})|(?P<pos>{_POS_W}))\b", re.IGNORECASE
)
_CONTRAST = re.compile(r"\b(?:but|however|although|though|while|whereas|yet)\b", re.IGNORECASE)
_WHETHER = re.compile(r"\b(?:whether|if)\b[^.;:!?]*", re.IGNORECASE)

_LABELLED = re.compile(
    r"(?:final\s+)?(?:answer|verdict|judge?ment|conclusion|label|decision|assessment|result|"
    r"evaluation|rating)\s*(?:\([^)\n]{0,30}\))?\s*(?:is\s*)?[:=\-–]\s*(.+)",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^\s*(?:yes|no|true|false|supported|not\b|unsupported|faithful|unfaithful|partial\w*|"
    r"correct|incorrect|accurate|inaccurate|verified|refuted|wrong|right|"
    r"(?:the|this)\s+(?:claim|statement)\s+(?:is|was|appears|seems|does|cannot|can't|can|"
    r"holds|matches|contradicts|aligns|accurately|correctly|incorrectly|inaccurately|fully|"
    r"entirely|misstates|misrepresents|overstates|understates|fabricates))\b",
    re.IGNORECASE,
)
_CONCLUDING = re.compile(
    r"^\s*(?:therefore|thus|hence|so|overall|in conclusion|in summary|in short|consequently|"
    r"accordingly|as such|to conclude|in sum)\b",
    re.IGNORECASE,
)
#: a reply that asks for input or declines: no verdict, whatever words it holds
_REFUSAL = re.compile(
    r"\b(?:can't|cannot|unable to)\s+(?:help|assist|comply)|\bas an ai\b|"
    r"\b(?:could|can) you (?:share|provide|give)|\bplease (?:provide|share|give)|\bor no\?",
    re.IGNORECASE,
)
_JSON_KEYS = (
    "verdict",
    "label",
    "answer",
    "supported",
    "is_supported",
    "faithful",
    "is_faithful",
    "decision",
    "judgment",
    "judgement",
    "result",
    "conclusion",
)


def classify_phrase(phrase: str) -> ClaimLabel | None:
    """The label of one verdict phrase; ``None`` when it holds no verdict.

    >>> classify_phrase("The claim is not accurate.")
    'not_supported'
    >>> classify_phrase("The tables do not support the claim.")
    'not_supported'
    >>> classify_phrase("The claim is not entirely correct.")
    'partially'
    >>> classify_phrase("It is not a false claim.")
    'supported'
    >>> classify_phrase("It depends.") is None
    True
    """
    s = _MD.sub("", phrase).replace("\u2019", "'").replace("_", " ")
    s = _WHETHER.sub(" ", s)
    s = _DOUBLE_NEG.sub(" supported ", s)
    s = _PARTIAL_NEG.sub(" part_v ", s)
    s = _NEG_PHRASE.sub(" not_v ", s)
    found = [(m.lastgroup, m.start()) for m in _WORD.finditer(s)]
    kinds = {k for k, _ in found}
    if not found:
        return None
    if "part" in kinds:
        return "partially"
    if {"pos", "neg"} <= kinds:
        first_neg = min(p for k, p in found if k == "neg")
        first_pos = min(p for k, p in found if k == "pos")
        between = s[min(first_neg, first_pos) : max(first_neg, first_pos)]
        if _CONTRAST.search(between):
            return "partially"
    return "supported" if found[0][0] == "pos" else "not_supported"


def _from_json(text: str) -> tuple[bool, ClaimLabel | None]:
    i, j = text.find("{"), text.rfind("}")
    if i < 0 or j <= i:
        return False, None
    obj = loads_reply(text[i : j + 1])
    if not isinstance(obj, dict):
        return False, None
    low = {str(k).lower(): v for k, v in obj.items()}
    for key in _JSON_KEYS:
        if key in low:
            v = low[key]
            if isinstance(v, bool):
                return True, "supported" if v else "not_supported"
            if isinstance(v, (int, float)) and v in (0, 1):
                return True, "supported" if v == 1 else "not_supported"
            return True, classify_phrase(str(v).replace("_", " "))
    return False, None


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p.strip()]


def verdict_label(text: str) -> ClaimLabel | None:
    """The verdict of a claim-verification reply (rules in the module docstring).

    >>> verdict_label("Yes")
    'supported'
    >>> verdict_label("The 2019 row lists 41,213 spectators, not 45,000. Therefore, the claim is not supported.")
    'not_supported'
    >>> verdict_label('{"verdict": "partially supported", "reason": "year right, value wrong"}')
    'partially'
    >>> verdict_label("I'm sorry, I can't help with that.") is None
    True
    """
    t = _MD.sub("", text or "").replace("\u2019", "'").strip()
    if not t:
        return None
    found, label = _from_json(t)
    if found:
        return label
    m = re.match(r"^\s*\[?\s*([01])(?:\.0)?\s*\]?(?![\d.])", t)
    if m:
        return "supported" if m.group(1) == "1" else "not_supported"
    if _REFUSAL.search(t):
        return None
    t = re.sub(r"^\s*(?:\d{1,3}[.)]\s+)+", "", t)  # a list marker before the verdict sentence
    labelled = [m.group(1) for m in _LABELLED.finditer(t)]
    for phrase in reversed(labelled):
        got = classify_phrase(_sentences(phrase)[0] if _sentences(phrase) else phrase)
        if got is not None:
            return got
    sents = [s[:300] for s in _sentences(t)]
    candidates: list[str] = []
    if sents and _LEADING.match(sents[0]):
        candidates.append(sents[0])
    candidates += [s for s in reversed(sents) if _CONCLUDING.match(s)]
    candidates += sents[-1:] + sents[:1]
    for s in candidates:
        got = classify_phrase(s)
        if got is not None:
            return got
    return None


def verdict_value(label: ClaimLabel | None, *, partial: float = 0.0) -> float | None:
    """V of a label: supported 1, not supported 0, partially ``partial`` (0 or 0.5)."""
    if label is None:
        return None
    return {"supported": 1.0, "not_supported": 0.0, "partially": float(partial)}[label]


def parse_verdict(text: str, *, partial: float = 0.0) -> int | float | None:
    """V of one verification reply: 1 supported, 0 not, ``partial`` (default 0) partially;
    ``None`` when the reply holds no verdict (see :func:`verdict_label`).

    >>> parse_verdict(" Yes"), parse_verdict("The claim is not faithful to the tables.")
    (1, 0)
    >>> parse_verdict("Partially faithful."), parse_verdict("Partially faithful.", partial=0.5)
    (0, 0.5)
    >>> parse_verdict("Tables: [TITLE] x") is None
    True
    """
    v = verdict_value(verdict_label(text), partial=partial)
    return int(v) if v in (0.0, 1.0) else v


#: Longest reply text the JSON readers parse (a judge's verdict object is far shorter).
MAX_JSON_CHARS = 1_000_000


def loads_reply(text: str) -> object | None:
    """``text`` parsed as JSON, or ``None`` when it is not JSON a parser can use: invalid,
    longer than :data:`MAX_JSON_CHARS`, nested too deep for the decoder (``RecursionError``) or
    holding an integer over Python's digit limit (``ValueError``). The one place judge replies
    are decoded, so no reply can raise out of a parser (issue 66).

    >>> loads_reply('{"score": 4}'), loads_reply("{nope")
    ({'score': 4}, None)
    >>> loads_reply('{"score": ' + "[" * 100_000 + "]" * 100_000 + "}") is None
    True
    >>> loads_reply('{"score": ' + "9" * 5000 + "}") is None
    True
    """
    if len(text) > MAX_JSON_CHARS:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None


def json_object(text: str) -> dict | None:
    """The outermost ``{...}`` of a judge reply parsed as a JSON object; ``None`` if there is none
    (the one lenient JSON reader of the judge parsers; :func:`loads_reply` decodes)."""
    t = (text or "").strip()
    i = t.find("{")
    j = t.rfind("}")
    if i < 0 or j <= i:
        return None
    obj = loads_reply(t[i : j + 1])
    return obj if isinstance(obj, dict) else None


_YN_ITEM = re.compile(r'\s*(?:"\s*(yes|no|true|false)\s*"|(true|false))\s*,?', re.IGNORECASE)


def parse_verdict_list(
    text: str, n: int, *, partial: float = 0.0
) -> list[int | float | None] | None:
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
    obj = json_object(text)
    vals: list[int | float | None] = []
    if obj is not None and isinstance(obj.get("verdicts"), list):
        for v in obj["verdicts"]:
            if isinstance(v, bool) or isinstance(v, (int, float)) and v in (0, 1):
                vals.append(int(v))
            elif isinstance(v, str):
                vals.append(parse_verdict(v, partial=partial))
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
            by_index: dict[int, int | float | None] = {}
            for ln in t.splitlines():
                m = re.match(r"^\s*(\d{1,3})\s*[.):]\s*(.*)$", _MD.sub("", ln))
                if m and 1 <= int(m.group(1)) <= n and int(m.group(1)) not in by_index:
                    by_index[int(m.group(1))] = parse_verdict(m.group(2), partial=partial)
            if not by_index:
                return None
            vals = [by_index.get(i) for i in range(1, n + 1)]
    if not any(v is not None for v in vals):
        return None
    vals = vals[:n]
    return vals + [None] * (n - len(vals))
