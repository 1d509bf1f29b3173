"""Open a ``report.html`` in headless Chromium: its self-test, screenshots and load time.

The page's ``?selftest=1`` mode (``static/report.js``) sorts the first table, opens the first
item of the disagreement browser (and of the backbone flips) and writes the results, the
console errors and the load time into ``<pre id="selftest">``; ``chromium --dump-dom`` returns
that DOM. Used by ``tests/reports/test_html.py`` and ``benchmarks/bench_html.py``.
"""

from __future__ import annotations

import html as _html
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run")


def find_chromium() -> str | None:
    """Debian's ``chromium`` (or ``chromium-browser``) on PATH, else None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(args: list[str], timeout: float) -> str:
    # Chromium's own stderr chatter (dbus, GPU) is not a page error: only the DOM is read
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False).stdout


def selftest(
    page: str | Path, *, chromium: str | None = None, timeout: float = 120
) -> dict[str, Any]:
    """Run the page's self-test; returns its JSON plus ``wall_s`` (Chromium start to DOM dump)."""
    exe = chromium or find_chromium()
    if exe is None:
        raise RuntimeError("chromium not found (make setup installs Debian's chromium)")
    url = Path(page).resolve().as_uri() + "?selftest=1"
    t0 = time.perf_counter()
    # a 1,400 px wide window: the self-test reports the page width it laid out
    flags = [*_FLAGS, "--window-size=1400,900", "--virtual-time-budget=20000", "--dump-dom"]
    dom = _run([exe, *flags, url], timeout)
    wall = time.perf_counter() - t0
    m = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.DOTALL)
    if m is None:
        return {"errors": ["self-test did not run (script error before it)"], "wall_s": wall}
    out: dict[str, Any] = json.loads(_html.unescape(m.group(1)))
    out["wall_s"] = wall
    return out


def screenshot(
    page: str | Path,
    png: str | Path,
    *,
    query: str = "",
    chromium: str | None = None,
    size: str = "1400,1800",
    timeout: float = 120,
) -> Path:
    """A PNG of the page (``query`` e.g. ``tab=browser&open=0`` opens the first item)."""
    exe = chromium or find_chromium()
    if exe is None:
        raise RuntimeError("chromium not found (make setup installs Debian's chromium)")
    url = Path(page).resolve().as_uri() + (f"?{query}" if query else "")
    png = Path(png).resolve()
    _run(
        [
            exe,
            *_FLAGS,
            f"--window-size={size}",
            "--virtual-time-budget=10000",
            f"--screenshot={png}",
            url,
        ],
        timeout,
    )
    return png
