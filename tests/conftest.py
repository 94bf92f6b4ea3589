"""Shared fixtures: small synthetic releases and the shared data folder."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


def shared_path(*parts: str) -> Path:
    """A file of the shared data folder; skip (with the reason) only where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: ../shared/{'/'.join(parts)}")
    return path


@pytest.fixture(scope="session")
def march_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """March 2023, 12,000 rows, 5% stamped: small enough to run nine cells in a blink."""
    from harness.release.synth import synth_release

    out = tmp_path_factory.mktemp("release") / "march"
    synth_release(
        out,
        start=date(2023, 3, 1),
        end=date(2023, 3, 31),
        seed=11,
        rows=12_000,
        acceptance_fraction=0.05,
    )
    return out


@pytest.fixture(scope="session")
def march_prices(tmp_path_factory: pytest.TempPathFactory, march_release: Path) -> Path:
    from harness.prices import synth_prices
    from harness.release.bundle import Bundle

    tickers = sorted({r["ticker"] for r in Bundle.load(march_release).rows("main") if r["ticker"]})
    out = tmp_path_factory.mktemp("prices") / "prices-SYNTHETIC.csv"
    synth_prices(out, symbols=tickers, start=date(2023, 2, 1), end=date(2023, 5, 31), seed=5)
    return out
