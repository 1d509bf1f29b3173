"""The notebooks execute top to bottom (nbclient) on the local data, in the venv's kernel."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"


def _kernel_runs_this_python() -> None:
    """The ``python3`` kernelspec must start this interpreter (the venv), not some other Python."""
    from jupyter_client.kernelspec import KernelSpecManager

    argv0 = KernelSpecManager().get_kernel_spec("python3").argv[0]
    # jupyter_client replaces a bare "python"/"python3" with sys.executable when it launches the kernel
    if argv0 not in (
        "python",
        f"python{sys.version_info[0]}",
        f"python{sys.version_info[0]}.{sys.version_info[1]}",
    ):
        assert Path(argv0).resolve() == Path(sys.executable).resolve(), (
            f"kernel python {argv0} is not {sys.executable}"
        )


def _run(name: str, data_dir: Path, timeout: int) -> nbformat.NotebookNode:
    _kernel_runs_this_python()
    nb = nbformat.read(NB_DIR / name, as_version=4)
    env_before = os.environ.get("METAJUDGE_DATA_DIR")
    os.environ["METAJUDGE_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        client = nbclient.NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(NB_DIR)}},
        )
        client.execute()
    finally:
        if env_before is None:
            os.environ.pop("METAJUDGE_DATA_DIR", None)
        else:
            os.environ["METAJUDGE_DATA_DIR"] = env_before
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
    return nb


def _text(nb: nbformat.NotebookNode) -> str:
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            out.append(o.get("text", ""))
            out.append(str(o.get("data", {}).get("text/markdown", "")))
    return "\n".join(out)


def test_notebooks_hold_no_library_logic() -> None:
    for p in sorted(NB_DIR.glob("*.ipynb")):
        nb = nbformat.read(p, as_version=4)
        src = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert "import metajudge" in src or "from metajudge" in src, p.name
        assert "def " not in src and "class " not in src, (
            f"{p.name} defines functions: move them into the library"
        )
        assert "from metajudge." not in src and "import metajudge." not in src, (
            f"{p.name} imports internal modules: use the public API (import metajudge as mj)"
        )


@pytest.mark.slow  # a real model: BERTScore (MiniLM) on all 280 pairs, about a minute
def test_notebook_ragchecker_meta_eval(data_dir: Path) -> None:
    nb = _run("01_ragchecker_meta_eval.ipynb", data_dir, timeout=900)
    text = _text(nb)
    assert "published  49.66 /  46.95" in text and "bertscore" in text


def test_notebook_backbone_swap_lftqa_eval(data_dir: Path) -> None:
    nb = _run("02_backbone_swap_lftqa_eval.ipynb", data_dir, timeout=600)
    text = _text(nb)
    assert "Krippendorff" in text and "significantly worse" in text
    assert (
        sum(1 for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
        == 3
    )


@pytest.mark.slow
@pytest.mark.llm
def test_notebook_mtraig_eval_walkthrough(data_dir: Path) -> None:
    nb = _run("03_mtraig_eval_walkthrough.ipynb", data_dir, timeout=1200)
    text = _text(nb)
    assert (
        "S_faith =" in text
        and "reference topics:" in text
        and "signature: mtraig_faithfulness|backbone:smollm2-135m" in text
    )


def test_notebook_judge_card(data_dir: Path) -> None:
    """Two simulated inspect_ai graders on 400 labelled answers: the cards' figures, McNemar
    naming the strict grader, and the ``--require`` gate exiting 3 for the lenient one."""
    import re

    nb = _run("04_judge_card.ipynb", data_dir, timeout=300)
    text = _text(nb)
    assert "strict_grader   400 answers graded, 254 pass, 0 missing, 400 explanations" in text
    assert "strict_grader: accuracy 0.948 [0.925, 0.968], κ 0.888" in text
    assert "lenient_grader: accuracy 0.780 [0.740, 0.818], κ 0.491" in text
    assert "accepts_wrong 53% [45%, 61%] (82 of 155)" in text
    assert "judge 0.802, corrected 0.613 [0.479, 0.723], humans 0.613" in text
    assert "decision: Use with care: it accepts 53% of the fail answers" in text
    p = float(re.search(r"only one right: 80 / 13; McNemar \S+ \S+ \S+ p = (\S+) ", text)[1])
    assert p < 0.001
    assert "answer: use strict_grader: accuracy higher by 0.168" in text
    assert "exit status 3" in text
    assert "lenient_grader  tnr.lower>=0.8   fail" in text
    assert "strict_grader   kappa.lower>=0.6 pass" in text
