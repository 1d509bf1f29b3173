"""``metajudge metrics list`` / ``metrics show``: what each registered metric is (direction,
range, signature under the backbone) and its options, from :mod:`metajudge.metrics.registry`.
A metric that cannot be built here (a missing extra, an unset backbone) is listed with the
reason it is unavailable, not dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal


def metric_listing(backbone: str, *, with_options: bool = False) -> list[dict[str, Any]]:
    """One row per registered metric; ``with_options``: each metric's options too (what
    :func:`metric_details` gives for one)."""
    from metajudge.errors import MetajudgeError
    from metajudge.metrics.registry import list_metrics, metric_info, metric_options

    infos = []
    for name in list_metrics():
        try:
            info = metric_info(name, backbone=backbone)
            if with_options:
                info["options"] = metric_options(name, backbone=backbone)
            infos.append(info)
        except MetajudgeError as e:
            infos.append(
                {
                    "name": name,
                    "direction": None,
                    "range": None,
                    "signature": None,
                    "unavailable": str(e),
                }
            )
    return infos


def metric_details(name: str, backbone: str) -> dict[str, Any]:
    """A metric's direction, range and signature, what it needs, and its options."""
    from metajudge.metrics.registry import metric_info, metric_options, requirements

    info = metric_info(name, backbone=backbone)
    info["needs"] = list(requirements(name) or ())
    info["options"] = metric_options(name, backbone=backbone)
    return info


def run_setup_wordnet(
    target: str | Path | None,
    *,
    source: Literal["auto", "nltk", "debian"] = "auto",
    force: bool = False,
) -> list[str]:
    """``metajudge setup wordnet``: make WordNet available to NLTK
    (:func:`metajudge.metrics.wordnet.setup_wordnet`) into ``target`` (None: metajudge's own
    folder); the lines to show, a note when METEOR would not find ``target`` by itself."""
    import os

    from metajudge.metrics.wordnet import managed_nltk_data_dir, setup_wordnet

    folder = Path(target) if target else None
    res = setup_wordnet(folder, source=source, force=force)
    lines = [f"WordNet ready ({res.source}{', ' + res.detail if res.detail else ''}): {res.path}"]
    if (
        folder is not None
        and folder.resolve() != managed_nltk_data_dir().resolve()
        and "NLTK_DATA" not in os.environ
    ):
        lines.append(f"note: set METAJUDGE_NLTK_DATA={folder} so METEOR finds it")
    return lines
