"""Parsers of judge replies: pure functions; a failure is ``None`` (counted upstream), never 0.

- :mod:`.ratings` — scores, score distributions, pairwise A/B/tie verdicts.
- :mod:`.claims` — claim-verification verdicts (MT-RAIG Eval's verifier).
- :mod:`.labels` — a label on a dataset's scale in a free-text reply (JUDGE-BENCH prompts).
"""
