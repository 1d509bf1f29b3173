"""Metric vs human: the aligned view, the protocol, levels, normalisation, the table of cells,
comparisons and the categorical branch. :func:`.evaluate.meta_evaluate` is the entry point."""
