"""Shared fixtures: small synthetic releases and the shared data folder."""

from __future__ import annotations

import os
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


def build_release(out: Path, *, end: date, seed: int, rows: int) -> Path:
    """A small synthetic release from 2023-03-01, 5% of rows acceptance-stamped."""
    from harness.release.synth import synth_release

    synth_release(
        out, start=date(2023, 3, 1), end=end, seed=seed, rows=rows, acceptance_fraction=0.05
    )
    return out


def build_prices(out: Path, release: Path, *, seed: int) -> Path:
    """SYNTHETIC prices for every ticker of ``release``, with room for holds either side."""
    from harness.market.prices import synth_prices
    from harness.release.bundle import Bundle

    tickers = sorted({r["ticker"] for r in Bundle.load(release).rows("main") if r["ticker"]})
    synth_prices(out, symbols=tickers, start=date(2023, 2, 1), end=date(2023, 5, 31), seed=seed)
    return out


@pytest.fixture(scope="session")
def march_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """March 2023, 12,000 rows: small enough to run nine cells in a blink."""
    return build_release(
        tmp_path_factory.mktemp("release") / "march", end=date(2023, 3, 31), seed=11, rows=12_000
    )


@pytest.fixture(scope="session")
def march_prices(tmp_path_factory: pytest.TempPathFactory, march_release: Path) -> Path:
    return build_prices(
        tmp_path_factory.mktemp("prices") / "prices-SYNTHETIC.csv", march_release, seed=5
    )


def require_sandbox() -> None:
    """Skip where bubblewrap cannot run, with the reason; in CI, fail instead."""
    from harness.isolation.sandbox.outside import availability

    available, why = availability()
    if not available:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the sandboxed tests, but {why}")
        pytest.skip(f"needs bubblewrap: {why}")


@pytest.fixture(params=["isolated", "in_process"])
def agent_process(request: pytest.FixtureRequest) -> str:
    """Run a test once with the agent sandboxed and once in the harness's process."""
    if request.param == "isolated":
        require_sandbox()
    mode: str = request.param
    return mode


# What makes a test slow here: a browser, a real worker or a served site, the agent's
# sandbox per cell, a wheel built and installed, a walk-through run whole. These are
# marked `slow`; `make test-fast` runs the rest (the unit tests of both parts).
SLOW_MODULES = {
    "test_boundaries",
    "test_deploy",
    "test_demo_seed",
    "test_golden",
    "test_model_egress",
    "test_object_store",
    "test_readme",
    "test_readme_site",
    "test_run_network",
    "test_sandbox",
    "test_tree_limits",
    "test_wheel",
    "test_worker_integration",
}
SLOW_FIXTURES = {"live_server", "real_worker", "browser", "page"}


def _slow(item: pytest.Item) -> bool:
    path = Path(str(item.fspath))
    if "e2e" in path.parts or path.stem in SLOW_MODULES:
        return True
    if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    return params.get("agent_process") == "isolated"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)
