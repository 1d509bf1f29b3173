"""Issue 26's done-when: a researcher's own graded set walked end to end with commands only.

``tests/fixtures/byod/faithfulness.jsonl``: eight news snippets, three summarisers, three raters
per summary (faithfulness, coherence on 1-5), a reference summary per snippet.
``faithfulness_authors.csv``: the authors' own metric scores, with one extra row for an item the
set does not contain (``39553812``, as in the issue).

The walk, in one scratch folder, each step a ``python -m metajudge`` process:
data validate -> agreement -> score (BLEU, ROUGE-1/2/L, METEOR, BERTScore) -> meta-eval (no
``--protocol``: chosen from the data) -> report. All steps run in order inside one test: each
reads what the one before wrote, so xdist must not split them.

The meta-eval step's arguments come from :func:`_meta_eval_argv` and the written tables are
checked by :func:`_check_tables`: an option such as a published-values file is added to the
first and its values checked in the second.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "fixtures" / "byod" / "faithfulness.jsonl"
PUBLISHED = DATA.parent / "faithfulness_published.csv"
AUTHORS = ROOT / "tests" / "fixtures" / "byod" / "faithfulness_authors.csv"
METRICS = ("bleu", "rouge_1", "rouge_2", "rouge_l", "meteor", "bertscore")
N_RESPONSES = 24  # 8 inputs x 3 systems
CHOSEN = "protocol: pointwise (chosen from the data: per-response labels; --protocol to change)"
DROPPED = (
    "1 score row for ids the dataset does not contain was dropped (faithfulness_authors.csv: 1; "
    "first ids: 39553812/abstractive; --strict-ids refuses them)"
)


def _mj(workdir: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "metajudge", *argv],
        check=False,
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _ok(p: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert p.returncode == 0, f"{p.args}\n{p.stdout}\n{p.stderr}"
    return p


def _meta_eval_argv(scores: Path, out: Path) -> list[str]:
    """The meta-eval step: our scores and the authors' CSV, no --protocol (the data chooses)."""
    return [
        "meta-eval",
        "--input",
        str(DATA),
        "--scores",
        str(scores),
        "--scores",
        str(AUTHORS),
        "--published",
        str(PUBLISHED),
        "--n-boot",
        "200",
        "--no-plots",
        "--out",
        str(out),
    ]


def _visible(html: str) -> str:
    """report.html without its scripts (the page's JSON payload repeats every text it shows)."""
    return re.sub(r"<script.*?</script>", "", html, flags=re.DOTALL)


def _warning_lines(md: str, html: str) -> tuple[list[str], list[str]]:
    """The warning-like lines of table.md (bullets and bold notes) and report.html (its <li>s)."""
    md_lines = [ln for ln in md.splitlines() if ln.startswith(("- ", "**"))]
    html_lines = [x.strip() for x in re.findall(r"<li>(.*?)</li>", html, flags=re.DOTALL)]
    return md_lines, html_lines


def _check_tables(md: str, page: str) -> None:
    """What table.md and report.html (``page``) must show for this walk."""
    html = _visible(page)
    md_lines, html_lines = _warning_lines(md, html)
    assert any("ids the dataset does not contain" in ln for ln in html_lines)
    for lines in (md_lines, html_lines):
        repeated = [ln for ln, n in Counter(lines).items() if n > 1]
        assert repeated == [], repeated  # no warning line is repeated
    for text in (md, html):
        assert text.count(DROPPED) == 1  # the unknown row: one warning, with its count and id
        # the protocol line: protocol, level and aggregation, and no pairwise-only setting
        assert "protocol=pointwise at level global" in text
        assert "aggregation=per_annotator" in text
        assert "24 responses, 8 items, 3 label(s) per response" in text
        assert "normalize=" not in text and "epsilon=" not in text
    for name in ("authors_factcc", *METRICS):
        assert name in md and name in html
    # the paper's number (--published) stands beside ours: in table.md's authors_factcc row, and
    # in the page's table row (drawn from its payload: ours {v, lo, hi}, then the published value)
    row = next(ln for ln in md.splitlines() if ln.startswith("| authors_factcc |"))
    assert "| 0.4321 |" in row
    assert "},0.4321," in page and "Authors et al. (2024) Table 2" in page


@pytest.mark.slow  # BERTScore loads torch in its own process: 30 s CPU, minutes on a busy machine
def test_researchers_own_graded_set_walked_with_commands(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "eval"
    scores = tmp_path / "runs" / "scores.jsonl"

    p = _ok(_mj(tmp_path, "data", "validate", str(DATA)))
    assert p.stdout.startswith("OK ") and "error" not in p.stderr

    p = _ok(_mj(tmp_path, "data", "agreement", "--input", str(DATA)))
    assert "Krippendorff α" in p.stdout

    _ok(
        _mj(
            tmp_path,
            "metrics",
            "run",
            "--input",
            str(DATA),
            "--metrics",
            ",".join(METRICS),
            "-o",
            str(scores),
        )
    )
    rows = [json.loads(ln) for ln in scores.read_text(encoding="utf-8").splitlines()]
    per_metric = Counter(r["metric"] for r in rows if r["score"] is not None)
    assert per_metric == {m: N_RESPONSES for m in METRICS}

    p = _ok(_mj(tmp_path, *_meta_eval_argv(scores, out)))
    assert p.stderr.count(CHOSEN) == 1  # the protocol the data chose, said once
    assert p.stderr.count("ids the dataset does not contain") == 1  # one warning, not fatal
    assert "protocol=pointwise at level global" in p.stdout
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["protocol"]["correlate"] == "pointwise"
    assert result["run"]["score_ids"] == {
        "rule": "drop",
        "rows_dropped": 1,
        "files": {"faithfulness_authors.csv": 1},
        "first": ["39553812/abstractive"],
        "rows_other_subsets": 0,
        "subset": None,
    }
    names = [m["name"] for m in result["metrics"]]
    assert set(METRICS) | {"authors_factcc"} <= set(names)

    p = _ok(_mj(tmp_path, "report", "render", str(out)))
    assert "table.md" in p.stdout
    _check_tables(
        (out / "table.md").read_text(encoding="utf-8"),
        (out / "report.html").read_text(encoding="utf-8"),
    )

    # --strict-ids refuses the same file as before: exit 2 naming file, line and field
    p = _mj(tmp_path, *_meta_eval_argv(scores, tmp_path / "strict"), "--strict-ids")
    assert p.returncode == 2, p.stderr
    assert "faithfulness_authors.csv:26: field item: " in p.stderr
    assert "unknown item id '39553812'" in p.stderr
    assert not (tmp_path / "strict" / "result.json").exists()


@pytest.mark.parametrize("given", ["pairwise-difference", "pointwise"])
def test_an_explicit_protocol_wins_over_the_datas_kind(tmp_path: Path, given: str) -> None:
    """--protocol is taken as given (pairwise differences of Likert data, as before) and the
    chosen-protocol line is not printed."""
    scores = tmp_path / "authors_only.csv"
    scores.write_text(AUTHORS.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "eval"
    argv = ["meta-eval", "--input", str(DATA), "--scores", str(scores), "--protocol", given]
    p = _ok(_mj(tmp_path, *argv, "--n-boot", "20", "--no-plots", "--out", str(out)))
    assert "chosen from the data" not in p.stderr
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["protocol"]["correlate"] == given
