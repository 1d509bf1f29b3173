"""The pointwise protocol: levels, the matched inter-human reference, LFTQA-Eval's 48 cells."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from metajudge import stats
from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.data.formats import DatasetCard, Input, LikertRecord, Scale
from metajudge.data.registry import Dataset
from metajudge.errors import InputError
from tests.conftest import Load


def _likert(n_items: int = 30, n_sys: int = 4, annotators: int = 3, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    card = DatasetCard(
        name="toy_likert",
        kind="likert",
        description="",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("q",),
        scale=Scale(1, 5),
        annotators=annotators,
        direction="higher = better",
    )
    recs, rows, truth = [], [], {}
    for i in range(n_items):
        for s in range(n_sys):
            t = float(rng.normal()) + 0.3 * s
            labels = tuple(
                float(np.clip(round(3 + t + rng.normal(scale=0.7)), 1, 5))
                for _ in range(annotators)
            )
            recs.append(
                LikertRecord(
                    id=f"i{i}",
                    input=Input(question="q"),
                    system=f"s{s}",
                    response="r",
                    scores={"q": labels},
                )
            )
            key = f"i{i}::s{s}"
            truth[key] = t
            rows.append({"key": key, "metric": "m", "score": t + float(rng.normal(scale=0.5))})
            rows.append({"key": key, "metric": "noise", "score": float(rng.normal())})
    return Dataset(card=card, records=recs), rows


def test_pointwise_global_is_pearson_over_responses_against_the_mean() -> None:
    ds, rows = _likert()
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", aggregation="mean", n_boot=50))
    x = np.array([r["score"] for r in rows if r["metric"] == "m"])
    y = np.array([np.mean(r.scores["q"]) for r in ds.records])
    assert res.value("m", "q") == pytest.approx(stats.pearson(x, y), abs=1e-12)
    assert res.value("m", "q", "acc_ties") is None
    assert "pairwise accuracy needs pairs" in res.cell("m", "q")["stats"]["acc_ties"]["undefined"]
    assert res.cell("m", "q")["n_responses"] == 120
    assert res.ci("m", "q") is not None


def test_levels_item_system_and_system_level() -> None:
    ds, rows = _likert()
    x = np.array([r["score"] for r in rows if r["metric"] == "m"])
    y = np.array([np.mean(r.scores["q"]) for r in ds.records])
    items = np.array([r.id for r in ds.records])
    systems = np.array([r.system for r in ds.records])
    got = {
        lvl: meta_evaluate(
            ds, rows, Protocol(correlate="pointwise", aggregation="mean", level=lvl, n_boot=30)
        ).value("m", "q")
        for lvl in ("item", "system-grouped", "system", "system-level")
    }
    assert got["item"] == pytest.approx(stats.grouped_correlation(x, y, items)[0], abs=1e-12)
    assert got["system-grouped"] == pytest.approx(
        stats.grouped_correlation(x, y, systems)[0], abs=1e-12
    )
    mx = [x[systems == s].mean() for s in np.unique(systems)]
    my = [y[systems == s].mean() for s in np.unique(systems)]
    assert got["system-level"] == pytest.approx(stats.pearson(mx, my), abs=1e-12)
    assert got["system"] == got["system-level"]  # issue 14: system = system-level


def test_matched_reference_is_leave_one_annotator_out_beside_the_metric() -> None:
    ds, rows = _likert(annotators=3)
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", aggregation="mean", n_boot=30))
    L = np.array([r.scores["q"] for r in ds.records])
    x = np.array([r["score"] for r in rows if r["metric"] == "m"])
    human = np.mean(
        [stats.pearson(np.delete(L, j, axis=1).mean(axis=1), L[:, j]) for j in range(3)]
    )
    matched = np.mean([stats.pearson(x, L[:, j]) for j in range(3)])
    ceil = res.data["ceiling"][0]
    assert res.ceiling("q") == pytest.approx(human, abs=1e-12)
    assert ceil["matched"]["m"]["pearson"]["value"] == pytest.approx(matched, abs=1e-12)
    assert "leave-one-annotator-out at level global" in ceil["method"]
    from metajudge.reports import tables

    assert "leave-one-annotator-out" in tables.to_markdown(res)


def test_two_annotators_every_annotator_is_compared() -> None:
    ds, rows = _likert(annotators=2)
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", n_boot=0))
    L = np.array([r.scores["q"] for r in ds.records])
    x = np.array([r["score"] for r in rows if r["metric"] == "m"])
    assert res.ceiling("q") == pytest.approx(stats.pearson(L[:, 0], L[:, 1]), abs=1e-12)
    want = (stats.pearson(x, L[:, 0]) + stats.pearson(x, L[:, 1])) / 2
    assert res.data["ceiling"][0]["matched"]["m"]["pearson"]["value"] == pytest.approx(want)


def test_one_response_per_input_is_fine_pointwise() -> None:
    ds, rows = _likert(n_items=40, n_sys=1, annotators=1)
    with pytest.raises(InputError, match="use the pointwise protocol"):
        meta_evaluate(ds, rows, n_boot=0)
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", n_boot=20))
    assert res.value("m", "q") is not None and res.data["ceiling"][0]["method"] is None


def test_pointwise_comparisons_use_the_smoothed_bootstrap_p() -> None:
    ds, rows = _likert()
    res = meta_evaluate(ds, rows, Protocol(correlate="pointwise", n_boot=99, seed=1))
    c = next(c for c in res.comparisons if c["statistic"] == "pearson")
    assert c["p_bootstrap"] >= 2 / 100 and c["ci"] is not None


def test_options_are_checked() -> None:
    with pytest.raises(InputError, match="pointwise"):
        Protocol(level="system")
    with pytest.raises(InputError, match="level"):
        Protocol(correlate="pointwise", level="corpus")
    assert Protocol(grouped=True).level == "item" and Protocol(level="item").grouped
    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(10)
    with pytest.raises(InputError, match="Likert"):
        meta_evaluate(ds, _rows("m", [0.0] * 10, list(truth)), Protocol(correlate="pointwise"))


def test_lftqa_eval_pointwise_item_level_equals_published_48_cells(
    data_dir: Path, load: Load
) -> None:
    from metajudge.data.registry import resolve_file
    from metajudge.scores.shipped import shipped_scores

    ds = load("lftqa_eval")
    with open(resolve_file("lftqa_eval", "correlation_results.csv", data_dir), newline="") as fh:
        header, *body = list(csv.reader(fh))
    proto = Protocol(
        correlate="pointwise", level="item", n_boot=0, compare=False, statistics=("pearson",)
    )
    checked = 0
    for subset in ("qtsumm", "fetaqa"):
        sub = ds.subset(subset)
        res = meta_evaluate(sub, shipped_scores(sub, data_dir), proto, metrics=[r[0] for r in body])
        grouped = meta_evaluate(
            sub,
            shipped_scores(sub, data_dir),
            Protocol(
                grouped=True, normalize="raw", n_boot=0, compare=False, statistics=("pearson",)
            ),
            metrics=[r[0] for r in body],
        )
        for r in body:
            for j, col in enumerate(header[1:], start=1):
                s, dim = col.split("-")
                if s != subset:
                    continue
                assert round(res.value(r[0], dim), 3) == pytest.approx(float(r[j]), abs=1e-9)
                assert res.value(r[0], dim) == pytest.approx(grouped.value(r[0], dim), abs=1e-12)
                checked += 1
    assert checked == 48


def test_cli_pointwise_item_level_on_lftqa_eval(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from metajudge.cli import main

    args = ["meta-eval", "--dataset", "lftqa_eval", "--subset", "qtsumm", "--scores", "shipped"]
    args += ["--metrics", "bleu,geval_gpt-4o_faithfulness", "--protocol", "pointwise"]
    args += ["--level", "item", "--n-boot", "50", "--no-plots", "--data-dir", str(data_dir)]
    assert main([*args, "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "protocol=pointwise at level item" in out
    md = (tmp_path / "run" / "table.md").read_text()
    assert "Pointwise correlation" in md and "leave-one-annotator-out" in md  # its definition
    assert (
        main(
            [
                "meta-eval",
                "--dataset",
                "ragchecker_meta_eval",
                "--scores",
                "shipped",
                "--level",
                "system",
                "--out",
                str(tmp_path / "r2"),
                "--data-dir",
                str(data_dir),
            ]
        )
        == 2
    )


def test_cli_meta_eval_on_a_user_file_with_one_response_per_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 12: Likert data with one response per input, from a file, meta-evaluated pointwise."""
    import json

    from metajudge.cli import main
    from metajudge.data.formats import write_jsonl

    ds, rows = _likert(n_items=40, n_sys=1, annotators=3, seed=3)
    data = tmp_path / "mine.jsonl"
    write_jsonl(data, ds.records, card=ds.card)
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["meta-eval", "--input", str(data), "--scores", str(scores), "--protocol", "pointwise"]
    args += ["--aggregation", "mean", "--n-boot", "100", "--no-plots", "--out", str(tmp_path / "r")]
    assert main(args) == 0
    res = json.loads((tmp_path / "r" / "result.json").read_text())
    assert res["dataset"]["name"] == "toy_likert" and res["run"]["dataset"] == str(data)
    assert res["ceiling"][0]["method"].startswith("leave-one-annotator-out")
    # argparse's refusal (mutually exclusive options) is returned as exit status 2
    assert main(["meta-eval", "--input", str(data), "--dataset", "x", "--out", str(tmp_path)]) == 2


def test_hanna_global_fisher_ci_counts_responses_not_annotator_rows(
    data_dir: Path, load: Load
) -> None:
    """Issue 25 item 6: HANNA's 3 annotators give 3,168 rows for 1,056 responses; the global
    Fisher-z CI (and the small-n rule's n, ``ci_n``) counts the 1,056 responses, and the
    protocol says so."""
    from metajudge.scores.shipped import shipped_scores

    ds = load("hanna")
    proto = Protocol(
        correlate="pointwise",
        level="global",
        aggregation="per_annotator",
        n_boot=0,
        compare=False,
        statistics=("pearson", "spearman"),
    )
    res = meta_evaluate(ds, shipped_scores(ds, data_dir, metrics=["hanna.bleu"]), proto)
    cell = res.cell("hanna.bleu", "coherence")
    assert (cell["n_rows"], cell["n_responses"]) == (3168, 1056)
    for s in ("pearson", "spearman"):
        e = cell["stats"][s]
        assert e["ci_n"] == 1056
        assert e["fisher_ci"] == list(stats.fisher_z_ci(e["value"], 1056, method=s))
        assert e["fisher_ci"] != list(stats.fisher_z_ci(e["value"], 3168, method=s))
    assert res.data["protocol"]["fisher_n"].startswith("number of responses")
    assert "not annotator rows" in res.data["protocol"]["fisher_n"]


def test_williams_one_sided_is_half_the_two_sided_and_stated() -> None:
    """issue 64: Williams' p one- or two-sided by option (FRANK reports one-sided), stated; Holm
    within each dimension and statistic."""
    ds, rows = _likert()
    got = {}
    for sided in ("two-sided", "one-sided"):
        proto = Protocol(correlate="pointwise", aggregation="mean", n_boot=50, williams=sided)
        res = meta_evaluate(ds, rows, proto)
        (c,) = [c for c in res.data["comparisons"] if c["statistic"] == "pearson"]
        got[sided] = c["p_williams"]
        assert res.data["protocol"]["williams_sided"].startswith(sided)
        assert res.data["protocol"]["holm"].startswith("per dimension and statistic")
    assert 0 < got["one-sided"] < 0.5 and got["one-sided"] == pytest.approx(got["two-sided"] / 2)
    with pytest.raises(InputError, match="williams"):
        Protocol(williams="three-sided")


def test_system_level_header_names_the_interval_method_of_its_cells() -> None:
    """issue 64: 8 systems get Fisher z intervals; the header must not say percentile CIs."""
    from metajudge.reports import tables

    ds, rows = _likert(n_items=30, n_sys=8)
    proto = Protocol(correlate="pointwise", aggregation="mean", level="system", n_boot=30)
    res = meta_evaluate(ds, rows, proto)
    assert res.cell("m", "q")["stats"]["pearson"]["ci_method"].startswith("Fisher z")
    line = tables.protocol_line(res)
    assert "percentile CIs" not in line and "CIs by method: Fisher z" in line
    item = meta_evaluate(ds, rows, proto.with_options(level="item", grouped=True))
    assert tables.protocol_line(item).endswith("95% percentile CIs")
