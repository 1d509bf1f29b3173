"""report.html of the largest run: LFTQA-Eval backbone swap (13,392 pairs), size and load time.

Runs ``metajudge judge swap`` on LFTQA-Eval with the shipped gpt-4o / gpt-4o-mini /
Llama-3.1-70B columns into a temporary folder, then opens ``report.html`` in headless Chromium
(``metajudge.reports.html_check.selftest``). Prints the page size, the in-page load time
(navigation start to the page fully drawn, ``performance.now()``) and Chromium's wall time.
Targets: < 15 MB and < 2 s. Needs ``$METAJUDGE_DATA_DIR`` and Debian's ``chromium``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from metajudge.cli import main
from metajudge.reports.html_check import find_chromium, selftest


def run() -> int:
    if find_chromium() is None:
        print("chromium not found: run `make setup`")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "swap"
        ext = "shipped:gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo"
        argv = ["judge", "swap", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness"]
        main([*argv, "--scores", ext, "--n-boot", "200", "--out", str(out)])
        page = out / "report.html"
        mb = page.stat().st_size / 1e6
        loads = [selftest(page) for _ in range(3)]
    errors = [e for r in loads for e in r["errors"]]
    load_s = min(r["load_ms"] for r in loads) / 1000
    wall_s = min(r["wall_s"] for r in loads)
    print(f"LFTQA-Eval backbone swap report.html: {mb:.2f} MB (limit 15)")
    print(f"load in headless Chromium: {load_s:.3f} s to fully drawn (limit 2), best of 3; ")
    print(f"chromium wall incl. start-up and self-test: {wall_s:.2f} s; console errors: {errors}")
    ok = mb < 15 and load_s < 2 and not errors
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(run())
