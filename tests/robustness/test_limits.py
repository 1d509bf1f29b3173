"""Issue 18: sizes are checked before allocating (``limits.check_allocation``), and the reusable
argparse validators (``cli_types``) refuse negative, NaN, infinite and out-of-range values."""

from __future__ import annotations

import argparse

import pytest

from metajudge.cli import types as cli_types
from metajudge.errors import InputError
from metajudge.limits import check_allocation


def test_check_allocation_refuses_with_need_and_limit() -> None:
    assert check_allocation(1000, 200, 3) == 1000 * 200 * 3 * 8
    with pytest.raises(
        InputError,
        match=r"field --n-boot: 1000000000 resamples .* need 1\.8 TiB.*limit of 1\.0 GiB",
    ):
        check_allocation(10**9, 250, 1, limit_bytes=2**30)
    with pytest.raises(InputError, match="resamples must be >= 0"):
        check_allocation(-5, 10, 1)
    with pytest.raises(InputError, match="field --cv-folds"):
        check_allocation(10**12, 10**3, 1, field="--cv-folds")


@pytest.mark.parametrize(
    ("fn", "bad", "good"),
    [
        (cli_types.positive_int, ["0", "-5", "1.5", "x", ""], [("1", 1), ("1000", 1000)]),
        (cli_types.nonneg_int, ["-1", "nan", "x"], [("0", 0), ("7", 7)]),
        (cli_types.seed, ["-1", str(2**63), "x"], [("0", 0), (str(2**63 - 1), 2**63 - 1)]),
        (
            cli_types.nonneg_float,
            ["-0.1", "nan", "inf", "-inf", "1e999", "x"],
            [("0", 0.0), ("0.25", 0.25)],
        ),
        (cli_types.probability, ["-0.1", "1.5", "nan"], [("0.05", 0.05), ("1", 1.0)]),
        (cli_types.duration_days, ["-1", "nan", "inf"], [("0", 0.0), ("30", 30.0)]),
        (cli_types.bounded_int(1, 10_000_000), ["0", "10000001", "1e3"], [("200", 200)]),
    ],
)
def test_validators(fn, bad: list[str], good: list[tuple[str, object]]) -> None:  # type: ignore[no-untyped-def]
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError):
            fn(text)
    for text, value in good:
        assert fn(text) == value


def test_validators_in_a_parser(capsys: pytest.CaptureFixture[str]) -> None:
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--n-boot", type=cli_types.positive_int)
    with pytest.raises(SystemExit) as ei:
        p.parse_args(["--n-boot", "-5"])
    assert ei.value.code == 2
    assert "argument --n-boot: must be >= 1, got -5" in capsys.readouterr().err


def test_check_kwargs() -> None:
    class M:
        def __init__(
            self,
            *,
            use_stemmer: bool = True,
            n: int = 20,
            temperature: float = 2.0,
            mode: str = "a",
        ) -> None:
            pass

    cli_types.check_kwargs(M, {"use_stemmer": False, "n": 3, "temperature": 1}, field="--option m")
    for opts, msg in (
        ({"use_stemmer": "maybe"}, "expected bool"),
        ({"n": 1.5}, "expected int"),
        ({"n": True}, "expected int"),
        ({"temperature": float("nan")}, "expected float"),
        ({"n": -1}, "must be >= 0"),
        ({"nope": 1}, "unknown option"),
    ):
        with pytest.raises(InputError, match=msg):
            cli_types.check_kwargs(M, opts, field="--option m")
