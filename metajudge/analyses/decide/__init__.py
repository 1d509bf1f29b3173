"""The backbone decision: can judge Y replace judge X, at what cost, with valid uncertainty.

- :mod:`.noninferiority` — paired bootstrap of agreement_Y − agreement_X, the verdict, power.
- :mod:`.swap_decision` — the decision on aligned swap data: agreement per the dataset's protocol,
  leaderboards and Kendall τ, swapped system pairs, flip rate, κ, per-slice heterogeneity.
- :mod:`.drift` — two runs of a judge on the same anchor items, with a pass/fail gate.
- :mod:`.frontier` — cost against agreement, the Pareto frontier, published judge tables.
- :mod:`.verdict_decision` — the same decision on released pairwise verdicts (JudgeBench).
"""
