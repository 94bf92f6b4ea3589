"""Shared fixtures: small synthetic releases and the shared data folder (their helpers live
in tests/support/), and which tests are slow."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.support.data import build_prices, build_release
from tests.support.sandbox import require_sandbox


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


@pytest.fixture(scope="session")
def march_market_prices(tmp_path_factory: pytest.TempPathFactory, march_release: Path) -> Path:
    """``march_prices``'s walk with a SYNTHETIC market index, ``MKT``, every stock moves on."""
    return build_prices(
        tmp_path_factory.mktemp("market") / "prices-SYNTHETIC.csv",
        march_release,
        seed=5,
        market="MKT",
    )


@pytest.fixture(scope="session")
def march_news_prices(tmp_path_factory: pytest.TempPathFactory, march_release: Path) -> Path:
    """The demo's kind of market over ``march_release``: its 8-Ks move their stocks."""
    return build_prices(
        tmp_path_factory.mktemp("news") / "prices-SYNTHETIC.csv", march_release, seed=5, news=True
    )


@pytest.fixture(params=["isolated", "in_process"])
def agent_process(request: pytest.FixtureRequest) -> str:
    """Run a test once with the agent sandboxed and once in the harness's process."""
    if request.param == "isolated":
        require_sandbox()
    mode: str = request.param
    return mode


# What makes a test slow here: a browser, a real worker or a served site, the agent's
# sandbox per cell, a wheel built and installed, a walk-through run whole, a fuzzer over
# every URL or field, the site's flows end to end through its HTTP client, the command
# line in subprocesses. These are marked `slow`; `make test-fast` runs the rest (the unit
# tests of both parts, about five and a half minutes on two cores: the README's table).
# A module whose tests together take more than a few seconds belongs here.
SLOW_MODULES = {
    # sandboxes, servers, workers, browsers, wheels, walk-throughs
    "test_boundaries",
    "test_forward_execution",
    "test_forward_workers",
    "test_deploy",
    "test_demo_seed",
    "test_golden_board",
    "test_external_agents",
    "test_inspect",
    "test_golden",
    "test_model_egress",
    "test_object_store",
    "test_machines",  # the web process and two workers on machines of their own
    "test_compose_processes",  # docker-compose.yml started as processes
    "test_readme",
    "test_readme_site",
    "test_run_network",
    "test_sandbox",
    "test_tree_limits",
    "test_wheel",
    "test_worker_integration",
    "test_points_jobs",
    "test_execution",  # registered agents executed, a sandbox per cell
    "test_forward_pages",  # a browser
    # fuzzers over every URL, parameter and upload field
    "test_hostile_uploads",
    "test_cache_abuse",
    "test_fault_cleanup",
    "test_url_params_fuzz",
    "test_digest_routes",
    "test_status_privacy",
    # the site's flows end to end through its HTTP client
    "test_access",
    "test_pages",
    "test_points_site",
    "test_platform_figures",
    "test_memory_flag",
    "test_service",
    "test_submit",
    "test_verification",
    "test_verify_yourself",
    "test_verify_commands",
    "test_release_downloads",
    # whole runs and the command line in subprocesses
    "test_attempts_site",  # twenty whole runs, uploaded and verified again for each test
    "test_points",
    "test_points_gates",
    "test_points_judge",
    "test_points_run",
    "test_run",
    "test_run_inputs",
    "test_verify_cli",
    "test_ci_workflow",  # examples/ci's workflow steps run as CI runs them
    "test_submit_cli",
    "test_progress",  # whole runs on a terminal (a pty)
    "test_progress_bars",
    "test_model_agent",  # a model agent's whole runs, sandboxed, and their re-execution
    "test_memory_cheat",
}
SLOW_FIXTURES = {"live_server", "real_worker", "browser", "page"}


def _slow(item: pytest.Item) -> bool:
    path = item.path
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
