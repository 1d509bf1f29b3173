"""Planning an Alt-Test: the simulation of Calderon, Reichart & Dror (ACL 2025) for choosing ε
and the number of items (``metajudge decide alt-test-plan``).

Seeded synthetic annotation sets are run through the one Alt-Test procedure
(:func:`metajudge.analyses.alt_test.alt_test`). Per replicate and number of items ``n``, the
``dirichlet`` model (the default; the paper's Appendix C and the authors' notebook
``alt_test_example.ipynb``, ``sample_priors`` / ``generate_dataset``):

- category priors π are drawn from Dirichlet(1, ..., 1) over ``categories`` labels;
- each item's true label is drawn from π;
- each of ``annotators`` humans labels every item from ``noise·π + (1 − noise)·onehot(truth)``:
  the true label with probability ``1 - annotator_noise``, otherwise a label drawn from π;
- the LLM labels every item the same way with ``llm_noise``.

The authors draw one π per dataset of 500 items and 6 annotators and take 10 subsamples of n
items and 3 annotators from it; here each replicate draws its own π and its n items (given π the
items are i.i.d. either way, so a replicate has the same distribution; the authors' replicates of
one dataset share π). The ``uniform`` model (metajudge's earlier one, kept by name): labels and
noise drawn uniformly over the categories instead of from π.

For each ε the result gives, per ``n``, the mean winning rate over ``reps`` replicates, the
pass rate (share of replicates with winning rate >= 0.5) and the mean advantage probability.
Replicate ``r`` at size ``n`` draws from ``numpy.random.default_rng([seed, n, r])``, so a size's
numbers do not depend on which other sizes are asked for; every ε sees the same sets.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metajudge.analyses.alt_test import AltTestSettings, alt_test_one
from metajudge.data.alt_test_dir import AltTestData
from metajudge.errors import InputError
from metajudge.results import Result


@dataclass(frozen=True)
class PlanSettings:
    """The simulated annotation sets (see the module docstring) and the test's settings."""

    categories: int = 3
    annotators: int = 5
    annotator_noise: float = 0.3
    llm_noise: float = 0.3
    n_items: tuple[int, ...] = (30, 50, 100, 200, 400)
    epsilons: tuple[float, ...] = (0.1, 0.15, 0.2)
    reps: int = 100
    seed: int = 0
    q: float = 0.05
    min_items: int = 30
    model: str = "dirichlet"  # SIMULATIONS: the paper's (Dirichlet(1) priors) or "uniform"


#: the simulation models: the paper's (the default) and the uniform one
SIMULATIONS = ("dirichlet", "uniform")


@dataclass(frozen=True)
class PlanRow:
    epsilon: float
    n: int
    winning_rate: float  # mean over replicates
    pass_rate: float  # share of replicates with winning rate >= 0.5
    advantage_probability: float  # mean over replicates


@dataclass(frozen=True)
class AltTestPlan(Result):
    """Winning and pass rates of the simulated Alt-Test by ε and number of items."""

    settings: PlanSettings
    rows: tuple[PlanRow, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        s = asdict(self.settings)
        s["n_items"] = list(self.settings.n_items)
        s["epsilons"] = list(self.settings.epsilons)
        return {"settings": s, "rows": [asdict(r) for r in self.rows]}

    def smallest_n(self, epsilon: float, pass_rate: float = 0.8) -> int | None:
        """The smallest simulated n whose pass rate reaches ``pass_rate`` at ``epsilon``."""
        ok = [r.n for r in self.rows if r.epsilon == epsilon and r.pass_rate >= pass_rate]
        return min(ok) if ok else None


def _draw(n: int, k: int, priors: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """``n`` labels from ``priors`` (None: uniform over ``k``)."""
    return rng.integers(0, k, n) if priors is None else rng.choice(k, size=n, p=priors)


def _noisy(
    truth: np.ndarray, noise: float, k: int, rng: np.random.Generator, priors: np.ndarray | None
) -> np.ndarray:
    flip = rng.random(truth.size) < noise
    return np.where(flip, _draw(truth.size, k, priors, rng), truth)


def simulated_set(settings: PlanSettings, n: int, rep: int) -> AltTestData:
    """One seeded synthetic annotation set of ``n`` items (the module docstring's models)."""
    rng = np.random.default_rng([settings.seed, n, rep])
    k = settings.categories
    priors = rng.dirichlet(np.ones(k)) if settings.model == "dirichlet" else None
    truth = _draw(n, k, priors, rng)
    items = [f"i{i}" for i in range(n)]

    def labels(noise: float) -> dict[str, str]:
        drawn = _noisy(truth, noise, k, rng, priors)
        return {i: f"c{v}" for i, v in zip(items, drawn, strict=True)}

    humans = {f"h{a}": labels(settings.annotator_noise) for a in range(settings.annotators)}
    llm = {"llm": labels(settings.llm_noise)}
    return AltTestData(humans=humans, llms=llm, label_type="categorical", source="simulated")


def _check(s: PlanSettings) -> None:
    if s.model not in SIMULATIONS:
        raise InputError(
            f"unknown simulation {s.model!r} (known: {', '.join(SIMULATIONS)})",
            field="--simulation",
        )
    if s.categories < 2:
        raise InputError("the simulation needs at least 2 categories", field="--categories")
    if s.annotators < 3:
        raise InputError(
            "the simulation needs at least 3 annotators (leave one out, >= 2 remain)",
            field="--annotators",
        )
    for name, v in (("--annotator-noise", s.annotator_noise), ("--llm-noise", s.llm_noise)):
        if not 0.0 <= v <= 1.0:
            raise InputError(f"{name} must be in [0, 1], got {v:g}", field=name)
    small = [n for n in s.n_items if n < s.min_items]
    if small:
        raise InputError(
            f"n = {small[0]} is below --min-items {s.min_items}: no annotator would be kept",
            field="--n",
        )


def alt_test_plan(settings: PlanSettings = PlanSettings()) -> AltTestPlan:
    """The simulation (module docstring): one :class:`PlanRow` per (ε, n)."""
    _check(settings)
    rows: list[PlanRow] = []
    tests = {
        e: AltTestSettings(
            epsilon=e, q=settings.q, scoring="accuracy", min_items=settings.min_items
        )
        for e in settings.epsilons
    }
    for n in settings.n_items:
        got: dict[float, list[tuple[float, float]]] = {e: [] for e in settings.epsilons}
        for rep in range(settings.reps):
            data = simulated_set(settings, n, rep)
            for e, t in tests.items():
                res, _, _ = alt_test_one(data, "llm", t)
                got[e].append((res.winning_rate, res.advantage_probability))
        for e in settings.epsilons:
            w = np.array([g[0] for g in got[e]])
            adv = np.array([g[1] for g in got[e]])
            rows.append(PlanRow(e, n, float(w.mean()), float((w >= 0.5).mean()), float(adv.mean())))
    rows.sort(key=lambda r: (r.epsilon, r.n))
    return AltTestPlan(settings, tuple(rows))


def plan_markdown(plan: AltTestPlan) -> str:
    """The simulation's table: one row per n, winning rate and pass rate per ε."""
    s = plan.settings
    eps = list(s.epsilons)
    model = (
        "the paper's model: category priors from Dirichlet(1), labels and noise drawn from them"
        if s.model == "dirichlet"
        else "the uniform model: labels and noise drawn uniformly over the categories"
    )
    head = (
        f"Simulated Alt-Test ({model}): {s.categories} categories, {s.annotators} annotators "
        f"(noise {s.annotator_noise:g}), LLM noise {s.llm_noise:g}; {s.reps} seeded replicates "
        f"per n (seed {s.seed}), BY q = {s.q:g}, accuracy scoring"
    )
    cols = " | ".join(f"ω ε={e:g} | pass ε={e:g}" for e in eps)
    lines = [head, "", f"| n | {cols} |", "|---|" + "---|---|" * len(eps)]
    by = {(r.epsilon, r.n): r for r in plan.rows}
    for n in sorted(set(s.n_items)):
        cells = " | ".join(f"{by[e, n].winning_rate:.3f} | {by[e, n].pass_rate:.2f}" for e in eps)
        lines.append(f"| {n} | {cells} |")
    lines.append("")
    for e in eps:
        m = plan.smallest_n(e)
        lines.append(
            f"- ε = {e:g}: "
            + (
                f"pass rate >= 0.8 from n = {m}"
                if m
                else "pass rate stays below 0.8 up to the largest n"
            )
        )
    lines.append(
        "- ω: winning rate (share of annotators the LLM beats), mean over replicates; "
        "pass: share of replicates with ω >= 0.5. Labels: the truth with probability "
        "1 − noise, else a draw "
        + (
            "from the replicate's category priors."
            if s.model == "dirichlet"
            else "uniform over the categories."
        )
    )
    return "\n".join(lines) + "\n"
