"""Issue 66, groups 6, 18 and 19: the judge card's folders, a killed card, nested run folders.

6. ``judge card --judge 'a<b' --judge 'a>b'`` wrote one folder ``a_b/`` (one card, linked twice),
   ``--judge tests`` let the comparison run replace that card and ``--judge cards.html`` failed
   with "Is a directory". Now each judge has a folder of its own, never a name the comparison
   writes.
18. ``kill -9`` of ``judge card`` left empty ``tmp*`` folders in ``$TMPDIR`` (the reliability
    diagram's). Now nothing goes to ``$TMPDIR``: the card draws inside its stage, which the next
    run into the same ``--out`` removes.
19. ``meta-eval --out both/meta_eval`` while ``judge card --out both`` ran reported success and
    the card's folder swap then replaced its output. Now a run folder inside (or holding) a
    folder another run is writing is refused with exit 2.

Real subprocesses and real signals throughout; every input checked (``inputs_unchanged``).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.robustness.conftest import ROOT, InputGuard

GRADED = ROOT / "tests" / "fixtures" / "byod" / "graded.jsonl"
JUDGES = ["a<b", "a>b", "tests", "cards.html"]


def _scores(tmp_path: Path) -> Path:
    """A score table of four judges (columns named as :data:`JUDGES`) on the graded fixture."""
    src = ROOT / "tests" / "fixtures" / "byod" / "partial_judge.csv"
    with src.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    p = tmp_path / "scores.csv"
    with p.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "system", *JUDGES])
        for k, r in enumerate(rows):
            v = int(r["judge"])
            w.writerow([r["item"], r["system"], v, 6 - v, 1 + k % 5, 1 + (k * 3) % 5])
    return p


def _card_argv(scores: Path, out: Path, *judges: str, n_boot: str = "50") -> list[str]:
    argv = ["judge", "card", "--input", str(GRADED), "--scores", str(scores)]
    for j in judges:
        argv += ["--judge", j]
    return [*argv, "--n-boot", n_boot, "--repeats", "2", "--out", str(out)]


def _popen(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    base = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "metajudge", *argv],
        env={**base, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_card_folders_are_distinct_and_never_the_comparisons(
    tmp_path: Path, inputs_unchanged: InputGuard
) -> None:
    scores, out = _scores(tmp_path), tmp_path / "cmp"
    proc = inputs_unchanged.run(_card_argv(scores, out, *JUDGES), GRADED, scores)
    assert proc.returncode == 0, proc.stderr[-1500:]
    doc = json.loads((out / "cards.json").read_text(encoding="utf-8"))
    folders = [link.split("/")[0] for link in doc["cards"]]
    assert len(set(folders)) == len(JUDGES) and not {"tests", "cards.html"} & set(folders)
    for judge, folder in zip(JUDGES, folders, strict=True):
        card = json.loads((out / folder / "card.json").read_text(encoding="utf-8"))
        assert card["judge"] == judge, (folder, card["judge"])
    assert (out / "cards.html").is_file() and (out / "tests").is_dir()
    assert doc["tests"]["status"] == "ok", doc["tests"]


def test_a_killed_card_leaves_nothing_in_tmpdir_and_its_stage_goes_next_run(
    tmp_path: Path, inputs_unchanged: InputGuard
) -> None:
    """The card is killed (SIGKILL) the moment a folder appears in its private ``$TMPDIR`` (or
    when it ends); then once more while its stage exists; a third run completes and nothing
    of the killed runs is left beside ``--out`` or in ``$TMPDIR``."""
    scores, out = _scores(tmp_path), tmp_path / "card"
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    inputs_unchanged.watch(GRADED, scores)
    argv = _card_argv(scores, out, "a<b")
    proc = _popen(argv, {"TMPDIR": str(tmpdir)})
    seen: list[str] = []
    while proc.poll() is None and not seen:
        seen = [n for n in os.listdir(tmpdir) if n.startswith("tmp")]
        time.sleep(0.002)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert not seen, f"a temporary folder in $TMPDIR: {seen}"
    deadline = time.monotonic() + 10  # a plots child of the run removes its own folder
    while os.listdir(tmpdir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.listdir(tmpdir) == []

    proc = _popen(argv, {"TMPDIR": str(tmpdir)})
    while proc.poll() is None and not list(tmp_path.glob(".card.stage-*/meta_eval")):
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert list(tmp_path.glob(".card.stage-*")), "killed after its stage was put in place"
    again = inputs_unchanged.run(argv, GRADED, scores, env={"TMPDIR": str(tmpdir)})
    assert again.returncode == 0, again.stderr[-1500:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card", "scores.csv", "tmpdir"]
    deadline = time.monotonic() + 10
    while os.listdir(tmpdir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.listdir(tmpdir) == []


def test_a_run_folder_inside_a_running_card_is_refused(
    tmp_path: Path, inputs_unchanged: InputGuard
) -> None:
    """The probe's case: ``meta-eval --out both/meta_eval`` while ``judge card --out both``
    runs; then the other way round, a folder holding one another run writes."""
    scores, work = _scores(tmp_path), tmp_path / "work"
    both = work / "both"
    inputs_unchanged.watch(GRADED, scores)
    meta = ["meta-eval", "--input", str(GRADED), "--scores", f"{scores}:a<b", "--no-plots"]
    meta += ["--n-boot", "10"]
    first = inputs_unchanged.run([*meta, "--out", str(work)])  # a run folder to hold "both"
    assert first.returncode == 0, first.stderr[-1500:]
    card = _popen(_card_argv(scores, both, "a<b", n_boot="3000"))
    try:
        lock = work / ".both.lock"
        while card.poll() is None and not lock.exists():
            time.sleep(0.01)
        inner = inputs_unchanged.run([*meta, "--out", str(both / "meta_eval")])
        assert inner.returncode == 2, (card.poll(), inner.stderr[-1500:])
        assert card.poll() is None, "the card ended before meta-eval ran: make it slower"
        assert f"lies inside the run folder {both}" in inner.stderr, inner.stderr
        assert "--out" in inner.stderr and not (both / "meta_eval").exists()
        outer = inputs_unchanged.run([*meta, "--out", str(work)])
        assert card.poll() is None, "the card ended before meta-eval ran: make it slower"
        assert outer.returncode == 2, outer.stderr[-1500:]
        assert f"holds the run folder {both}" in outer.stderr, outer.stderr
    finally:
        card.send_signal(signal.SIGKILL)
        card.wait(timeout=60)
