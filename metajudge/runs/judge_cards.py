"""Several judge cards: the judges' paired tests and the page of cards side by side, and the
requirements' gate (``--require``: the exit status of a card or a comparison).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.data.source import DataSource
from metajudge.errors import InputError
from metajudge.runs.judge_card import (
    CARD_FILE,
    CARD_HTML,
    CardOptions,
    CardRun,
    _absent,
    _attempt,
    _meta_eval,
    _ok,
    _one_column,
    _spec_args,
    _verdicts,
    card_texts,
    run_card,
)

CARDS_FILE = "cards.json"
CARDS_HTML = "cards.html"


def judge_card(
    input: str | Path | None = None,
    *,
    out: str | Path,
    dataset: str | None = None,
    scores: Sequence[str | Path] = (),
    judges: Sequence[str] = (),
    require: Sequence[str] = (),
    dimension: str | None = None,
    data_dir: str | Path | None = None,
    **settings: Any,
) -> CardRun:
    """``metajudge judge card`` from Python (``mj.judge_card``): the card of one judge (``judges``
    one column of ``scores``, or the dataset's own), or several judges' cards with their
    comparison page (``cards.html``, ``cards.json``) written into ``out``; ``input`` a labelled
    file or a CJE folder, or ``dataset`` a built-in name; ``require``: ``--require``
    expressions (:func:`card_gate` gives their exit status); ``settings``: the other
    :class:`~metajudge.runs.judge_card.CardOptions` (``seed``, ``n_boot``, ``repeats``, ``risk``,
    ``miscoverage``, ``probes`` …)."""
    from metajudge.runs.judge_card_folder import folder_card, is_cje_folder

    src = DataSource(
        dataset=dataset,
        path=None if input is None else str(input),
        scores=tuple(str(s) for s in scores),
        judge=judges[0] if len(judges) == 1 else None,
        dimension=dimension,
        data_dir=data_dir,
    )
    opts = CardOptions(require=parse_requirements(require), **settings)
    if is_cje_folder(src):
        return folder_card(src, opts, out)
    if len(judges) > 1:
        return run_cards(src, judges, opts, out)
    return run_card(src, opts, out)


def card_gate(card: dict[str, Any]) -> int:
    """The exit status ``judge card --require`` gives ``card`` (a card's or a comparison's
    JSON): 0 every requirement holds, 3 one fails, 2 one cannot be measured."""
    return gate(card)[0]


def parse_requirements(exprs: Sequence[str]) -> tuple[Any, ...]:
    """``--require`` expressions parsed (:func:`metajudge.analyses.card_decision.
    parse_requirement`), before any work: an unknown measure is exit 2."""
    from metajudge.analyses.card_decision import parse_requirement

    return tuple(parse_requirement(r) for r in exprs)


def gate(doc: dict[str, Any]) -> tuple[int, list[str]]:
    """The exit status of the requirements of a card (or of each card of a comparison), and a
    line for each failed or unmeasurable one."""
    from metajudge.analyses.card_decision import exit_code

    outcomes = [{"judge": doc.get("judge"), **r} for r in doc.get("requirements") or ()]
    said = [
        f"requirement {r['require']} {r['status']} for {r['judge']} (measured: {r['value']})"
        for r in outcomes
        if r["status"] != "pass"
    ]
    return exit_code(outcomes), said


#: what a comparison run writes beside the judges' card folders (no judge's folder may be one)
RESERVED = ("tests", CARDS_FILE, CARDS_HTML, "manifest.json")
#: the longest card folder name kept as it is (a longer one is cut and given a hash)
_NAME_CHARS = 80


def folder_names(judges: Sequence[str]) -> list[str]:
    """Each judge's card folder under a comparison, one per judge and never the same for two
    (letters of any case: a case-insensitive disk): its name with path characters replaced,
    and ``-`` with the first 8 hex digits of the name's sha256 after it wherever replacing
    changed the name, cut it, or it is a name the comparison writes (:data:`RESERVED`) or
    another judge's folder. The same judge twice is refused (``InputError``).

    >>> folder_names(["a<b", "a>b", "tests", "gpt-4"])
    ['a_b-4a826aac', 'a_b-998a5be8', 'tests-59830ebc', 'gpt-4']
    """
    import hashlib
    import re
    from collections import Counter

    twice = [j for j, n in Counter(judges).items() if n > 1]
    if twice:
        raise InputError(f"{twice[0]!r} given twice; give each judge once", field="--judge")

    def tagged(j: str, name: str) -> str:
        return f"{name}-{hashlib.sha256(j.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"

    names = []
    for j in judges:
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", j).strip("._")[:_NAME_CHARS] or "judge"
        reserved = name.casefold() in {r.casefold() for r in RESERVED}
        names.append(tagged(j, name) if name != j or reserved else name)
    seen = Counter(n.casefold() for n in names)
    names = [
        tagged(j, n) if seen[n.casefold()] > 1 and n == j else n for j, n in zip(judges, names)
    ]
    if len({n.casefold() for n in names}) < len(names):  # two hashes alike: never one folder
        raise InputError("two judges' card folders would be the same", field="--judge")
    return names


def comparison_tests(
    src: DataSource, judges: Sequence[str], opts: CardOptions, out_dir: Path
) -> dict[str, Any]:
    """The judges' paired tests and the one-line answer
    (:mod:`metajudge.analyses.judge_comparison`): McNemar on label data (Holm), else
    ``meta-eval`` of all their columns at once (bootstrap, permutation and Williams tests,
    Holm-adjusted)."""
    from metajudge.analyses.judge_comparison import answer

    if _verdicts(src.load()) and src.load().card.label_kind != "pairwise":
        return _label_tests(src, judges)
    specs = [_one_column(s, j) for j in judges for s in (list(src.scores) or ["shipped"])]
    res = _meta_eval(src, opts, out_dir, specs, baselines=False)
    comps = res.to_dict().get("comparisons")
    if not comps:
        return _absent("meta-eval ran no paired test between these judges")
    cmd = ["meta-eval", *src.args(), *_spec_args(specs), "--no-baselines"]
    cmd += ["--n-boot", str(opts.n_boot), "--seed", str(opts.seed), "--out", "DIR"]
    return _ok(cmd, {"comparisons": comps, "answer": answer(comps)})


def _label_tests(src: DataSource, judges: Sequence[str]) -> dict[str, Any]:
    """McNemar between every two label judges on the items both judged (Holm)."""
    from metajudge.analyses.judge_comparison import answer, label_comparisons
    from metajudge.analyses.metric_vs_human.categorical import gold_labels
    from metajudge.runs.jury import label_columns

    specs = [_one_column(s, j) for j in judges for s in (list(src.scores) or ["shipped"])]
    ds, dim, preds = label_columns(src.but(scores=tuple(specs)), list(judges))
    comps = label_comparisons(gold_labels(ds, dim).labels, {j: preds[j] for j in judges})
    result = {"comparisons": comps, "answer": answer(comps)}
    return {"status": "ok", "by": "metajudge.analyses.judge_comparison", "result": result}


def run_cards(
    src: DataSource, judges: Sequence[str], opts: CardOptions, out: str | Path
) -> CardRun:
    """Several judges on one dataset (read once): each judge's card under ``out/<judge>/``,
    their paired tests, and the comparison page ``cards.html`` (``cards.json`` beside it)."""
    from metajudge.io import check_out_dir
    from metajudge.reports.judge_card import cards_html
    from metajudge.results import finite
    from metajudge.run_folder import run_folder
    from metajudge.scores.spec import input_paths

    check_out_dir(out, inputs=input_paths(src))
    src = src.loaded_once(texts=card_texts(src, opts))
    names = folder_names(judges)
    with run_folder(out) as rf:
        cards, links = [], []
        for j, name in zip(judges, names):
            run = run_card(src.but(judge=j), opts, rf.stage / name)
            cards.append(run.card)
            links.append(f"{name}/{CARD_HTML}")
        tests = _attempt(
            "meta-eval", lambda: comparison_tests(src, judges, opts, rf.stage / "tests")
        )
        doc = finite({"schema": "metajudge.judge_cards/1", "cards": links, "tests": tests})
        if opts.require:
            doc["requirements"] = [
                {"judge": c["judge"], **r} for c in cards for r in c.get("requirements", ())
            ]
        rf.write_text(CARDS_FILE, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        rf.write_text(CARDS_HTML, cards_html(cards, links, tests))
    from metajudge.reports.judge_card import board_markdown

    written = [rf.final(rf.stage / n) for n in (*links, CARDS_FILE, CARDS_HTML)]
    return CardRun(doc, board_markdown(cards, tests), written)


def cards_page(folder: str | Path) -> Path:
    """The page of the cards in ``folder``'s subfolders (each a ``judge card`` run folder),
    side by side: ``folder/cards.html`` (what ``make demo`` prints last). No paired test: the
    cards may be on different datasets."""
    from metajudge.io import read_json
    from metajudge.reports.judge_card import cards_html
    from metajudge.run_folder import write_file

    root = Path(folder)
    found = sorted(p for p in root.glob(f"*/{CARD_FILE}") if p.is_file())
    if not found:
        raise InputError(f"no judge card ({CARD_FILE}) in a subfolder", path=root)
    cards = [read_json(p) for p in found]
    links = [f"{p.parent.name}/{CARD_HTML}" for p in found]
    tests = _absent("cards of different datasets or settings: no paired test between them")
    return write_file(root, CARDS_HTML, cards_html(cards, links, tests))
