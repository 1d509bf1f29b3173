"""Reports rendered from saved results: tables (Markdown, CSV, JSON, LaTeX), plots, published numbers.

- :mod:`~metajudge.reports.tables` — MT-RAIG Table 17 layout, CIs, footer with protocol and signatures.
- :mod:`~metajudge.reports.plots` — correlation bars with CIs and the human ceiling; scatter plots.
- :mod:`~metajudge.reports.published` — ``baselines/published_*.json``.
- :mod:`~metajudge.reports.render` — ``render_all(run_dir)`` (``metajudge report DIR``).
"""
