"""metajudge's own judge on a JUDGE-BENCH set, with the set's annotation prompts (issue 13).

:func:`run_judge_bench` renders each annotation spec's ``prompt`` for ``limit`` instances
drawn with ``seed`` (or the ``first`` ones: :func:`chosen_instances`) (:func:`render_prompt`: ``{{ instance }}`` or the instance's own keys, as upstream's
Jinja templates), asks the backbone (temperature 0), writes the raw replies back into a copy of
the file under the model's name (:func:`metajudge.scores.readers.judge_bench.add_replies`, the
format JUDGE-BENCH itself uses), parses them (:func:`metajudge.metrics.judges.parsers.ratings.parse_reply`:
an invalid reply is counted, never replaced by a guess), and meta-evaluates them
(:func:`~metajudge.analyses.judge_bench.evaluate_judge`) beside the paper's 11 LLM judges
(``results_regular/<set>.json``, computed on the *whole* set — ours on ``limit`` items).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.results import Result

_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def render_prompt(template: str, instance: Any) -> str:
    """Fill ``{{ name }}`` placeholders: ``instance`` (the whole instance), or a key of a dict
    instance. An unknown placeholder raises (no silent empty prompt).

    >>> render_prompt("Is this grammatical? {{ instance }}", "Dogs bark.")
    'Is this grammatical? Dogs bark.'
    >>> render_prompt("{{ user_prompt }} / {{response}}", {"user_prompt": "hi", "response": "yo"})
    'hi / yo'
    """

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if isinstance(instance, Mapping) and key in instance:
            return str(instance[key])
        if key == "instance":
            return (
                instance if isinstance(instance, str) else json.dumps(instance, ensure_ascii=False)
            )
        raise InputError(f"prompt placeholder {{{{ {key} }}}} has no value", field="prompt")

    return _VAR.sub(sub, template)


@dataclass
class JudgeBenchRun(Result):
    """Our judge's evaluation on one set, the published judges' numbers and the run's counts."""

    dataset: str
    model: str
    backbone: str
    limit: int | None
    instances: int  # instances judged
    requests: int
    backend_errors: int  # calls that returned no reply (no reply written; counted)
    evaluation: dict[str, Any]  # JudgeEval.to_dict()
    published: dict[str, dict[str, dict[str, float]]]
    replies_file: str
    cost: dict[str, Any] = field(default_factory=dict)
    first: int | None = None  # --first N instead of the seeded --limit draw
    seed: int = 0  # of the --limit draw

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(comparison_rows(self.to_dict()))


def _source(
    dataset: str | None, input_file: str | None, subset: str | None, data_dir: Any
) -> tuple[Path, str]:
    """The JUDGE-BENCH file to judge and the set's name (for the published results)."""
    from metajudge.data.fetch import local_relpath
    from metajudge.data.loading import file_kind, open_dataset
    from metajudge.data.registry import resolve_file

    kind = file_kind(input_file)[0] if input_file is not None else "judge_bench"
    if kind != "judge_bench":
        raise InputError(
            f"judge-bench judges the prompts of a JUDGE-BENCH unified-format file; this is a "
            f"{kind} file",
            path=input_file,
            field="input",
        )
    ds = open_dataset(dataset, input_file, data_dir=data_dir)
    if input_file is not None:
        return Path(input_file), (subset or ds.name)
    if not subset or subset not in ds.parts:
        names = ", ".join(ds.parts) or "none"
        raise InputError(f"give --subset (one of: {names})", field="subset")
    part = ds.parts[subset]
    return resolve_file(str(dataset), local_relpath(part.card.files[0]), data_dir), subset


def chosen_instances(
    instances: Sequence[Any], limit: int | None, first: int | None, seed: int
) -> list[Any]:
    """The instances judged: ``limit`` drawn with ``numpy.random.default_rng(seed)``
    (:func:`metajudge.data.subsample.draw_positions`, the ``--limit`` rule of every command; all
    when ``limit`` covers them), the ``first`` ones, or all."""
    if limit is not None and first is not None:
        raise InputError("give --limit N (a seeded draw) or --first N, not both", field="first")
    if first is not None:
        return list(instances[:first])
    if limit is None or limit >= len(instances):
        return list(instances)
    import numpy as np

    from metajudge.data.subsample import draw_positions

    return [
        instances[i] for i in draw_positions(len(instances), limit, np.random.default_rng(seed))
    ]


def _requests(
    obj: Mapping[str, Any], limit: int | None, first: int | None = None, seed: int = 0
) -> list[tuple[str, str, str]]:
    """``(instance id, metric, prompt)`` for the instances :func:`chosen_instances` picks."""
    specs = {s["metric"]: s for s in obj["annotations"]}
    out = []
    for inst in chosen_instances(obj["instances"], limit, first, seed):
        for metric in inst.get("annotations", {}):
            prompt = specs[metric].get("prompt")
            if not prompt:
                raise InputError(f"annotation {metric!r} has no prompt", field="annotations")
            out.append((str(inst["id"]), metric, render_prompt(prompt, inst.get("instance"))))
    return out


def run_judge_bench(
    *,
    output: str | Path,
    backbone: str,
    dataset: str | None = None,
    input_file: str | None = None,
    subset: str | None = None,
    limit: int | None = None,
    max_tokens: int = 32,
    data_dir: Any = None,
    backend: Any = None,
    first: int | None = None,
    seed: int = 0,
) -> JudgeBenchRun:
    """Judge, write the replies file ``output``, parse and evaluate (module docstring)."""
    from metajudge.analyses.judge_bench import evaluate_judge, published_results
    from metajudge.data.judge_bench import read_file
    from metajudge.io import read_json
    from metajudge.metrics.judges.engine import JudgeClient
    from metajudge.scores.readers.judge_bench import add_replies

    src, name = _source(dataset, input_file, subset, data_dir)
    reqs = _requests(read_json(src), limit, first, seed)
    client = JudgeClient(backbone, backend=backend)
    try:
        done = client.run(
            [client.request(p, max_tokens=max_tokens, temperature=0.0) for *_, p in reqs]
        )
        cost = client.stats.summary()
    finally:
        client.close()
    model = f"metajudge/{backbone}"
    replies = {(i, m): c.text for (i, m, _), c in zip(reqs, done) if not isinstance(c, Exception)}
    add_replies(src, output, model, replies)
    ev = evaluate_judge(read_file(output, name=name), model)
    run = JudgeBenchRun(
        dataset=name,
        model=model,
        backbone=backbone,
        limit=limit,
        first=first,
        seed=seed,
        instances=len({i for i, _, _ in reqs}),
        requests=len(reqs),
        backend_errors=len(reqs) - len(replies),
        evaluation=ev.to_dict(),
        published=published_results(name, data_dir),
        replies_file=str(output),
        cost=cost,
    )
    return run


JUDGE_BENCH_STATS = ("cohen_kappa", "accuracy", "macro_f1", "pearson", "spearman", "kendall")


def _which(run: Mapping[str, Any]) -> str:
    """Which instances were judged: ``first N``, ``N drawn, seed S`` or ``all``."""
    if run.get("first"):
        return f"first {run['first']}"
    if run.get("limit"):
        return f"{run['instances']} drawn, seed {run.get('seed', 0)}"
    return "all"


def comparison_rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (judge, dimension): ours first, then the published judges (their statistics
    where the paper reports them: κ and correlations; accuracy and macro-F1 are ours only)."""
    rows = []
    for d in run["evaluation"]["rows"]:
        rec = {
            "judge": run["model"] + f" ({_which(run)})",
            "dimension": d["dimension"],
        }
        rec.update(valid=d["valid"], total=d["total"], **d["scores"])
        rows.append(rec)
        for judge, metrics in sorted(run["published"].items()):
            p = metrics.get(d["dimension"])
            if p is None:
                continue
            pub = {"judge": f"{judge} [published]", "dimension": d["dimension"]}
            pub.update(valid=int(p["valid"]), total=int(p["total"]))
            pub.update({s: p[s] for s in JUDGE_BENCH_STATS if s in p and s in d["scores"]})
            rows.append(pub)
    return rows


def judge_bench_markdown(run: Mapping[str, Any]) -> str:
    rows = comparison_rows(run)
    stats = [s for s in JUDGE_BENCH_STATS if any(s in r for r in rows)]
    head = ["judge", "dimension", "valid/total", *stats]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["judge"], r["dimension"], f"{r['valid']}/{r['total']}"]
        cells += [f"{r[s]:.3f}" if isinstance(r.get(s), float) else "–" for s in stats]
        out.append("| " + " | ".join(cells) + " |")
    notes = [
        (
            f"{run['requests']} requests on {run['instances']} instances; "
            f"{run['backend_errors']} backend errors (no reply written)"
        ),
        "invalid replies (no label found) are counted (valid < total) and left out, never guessed",
        (
            "published: JUDGE-BENCH results_regular (whole set, upstream replaces invalid replies by "
            "a random label); ours: the first instances only"
        ),
    ]
    return "\n".join(out) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"
