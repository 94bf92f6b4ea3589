"""The shared data folder (``../shared``) and small synthetic releases and prices."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"  # beside the checkout


def shared_path(*parts: str) -> Path:
    """A file of the shared data folder; skip (with the reason) only where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not present: ../shared/{'/'.join(parts)}")
    return path


def build_release(out: Path, *, end: date, seed: int, rows: int) -> Path:
    """A small synthetic release from 2023-03-01, 5% of rows acceptance-stamped."""
    from harness.release.synth import synth_release

    synth_release(
        out, start=date(2023, 3, 1), end=end, seed=seed, rows=rows, acceptance_fraction=0.05
    )
    return out


def build_prices(out: Path, release: Path, *, seed: int, news: bool = False) -> Path:
    """SYNTHETIC prices for every ticker of ``release``, with room for holds either side;
    ``news``: a market that moves on the release's 8-Ks, as the demo's does."""
    from harness.market.prices import news_sessions, synth_prices
    from harness.release.bundle import Bundle

    rows = Bundle.load(release).rows("main")
    tickers = sorted({r["ticker"] for r in rows if r["ticker"]})
    synth_prices(
        out, symbols=tickers, start=date(2023, 2, 1), end=date(2023, 5, 31), seed=seed,
        news=news_sessions(rows, form="8-K") if news else None,
    )  # fmt: skip
    return out
