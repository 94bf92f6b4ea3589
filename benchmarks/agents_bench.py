"""External agents: decisions per second over stdio (in the cell's sandbox) and over HTTP
on loopback, beside a Python agent in the harness's own process, in one run each; and the
seed-shaped window re-executed end to end.

Every agent is the same trivial deterministic one (it picks nothing and calls no tool), so
what differs is the transport: a fresh process per cell and a line each way per decision
(stdio), a request per decision (HTTP), a function call (in process). The window is the
whole five months of 8-Ks on the seed-sized release (about 900 decisions), which the
release's loading is kept out of: the bundle is loaded once and handed to each run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench-out"
RELEASE = OUT / "release-full"
WHOLE = {"forms": ("8-K",), "start": "2022-11-01", "end": "2023-03-31"}
SEED = {"forms": ("8-K",), "start": "2023-03-01", "end": "2023-03-10"}

# The checkout on the path, as pytest has it (pyproject.toml): the HTTP agent is served by
# the tests' loopback server (tests.support.http_agents), run alone or from run.py.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TRIVIAL = """
import json, sys
for line in sys.stdin:
    print(json.dumps({"type": "decision", "picks": [], "text": ""}), flush=True)
"""


def _nothing(prompt: str, tools: Any) -> list[str]:
    return []


def _nothing_over_http(path: str, body: dict[str, Any]) -> tuple[int, Any]:
    return 200, {"type": "decision", "picks": [], "text": ""}


def _timed_run(agent: Any, folder: Path, bundle: Any, **extra: Any) -> tuple[float, int]:
    from harness import RunConfig, run

    config = RunConfig(
        bundle_path=str(RELEASE),
        trajectory_path=str(folder / "trajectory.jsonl"),
        receipt_path=str(folder / "receipt.json"),
        probe=0,
        **WHOLE,  # type: ignore[arg-type]
        **extra,
    )
    started = time.perf_counter()
    result = run(agent, config, bundle)
    took = time.perf_counter() - started
    return took, sum(c["sessions"] for c in result.body["cells"])


def rows() -> list[tuple[str, str, str]]:
    from harness import Bundle
    from harness.agents.adapters.plain import from_callable
    from harness.agents.external import command_agent, http_agent
    from harness.isolation.sandbox.outside import availability
    from harness.runs.reexecute import reexecute
    from tests.support.http_agents import serving

    if not availability()[0]:
        return [("k. external agents", "n/a", "bubblewrap unavailable: " + availability()[1])]
    out: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="pit-bench-agents-") as scratch:
        folder = Path(scratch)
        script = folder / "trivial.py"
        script.write_text(TRIVIAL)
        bundle = Bundle.load(RELEASE, **WHOLE)  # type: ignore[arg-type]
        python, n = _timed_run(
            from_callable(_nothing), folder / "python", bundle, agent_process="in_process"
        )
        stdio, _ = _timed_run(
            command_agent([sys.executable, str(script)]),
            folder / "stdio",
            bundle,
            agent_cmd="x",
            agent_process="isolated",
        )
        with serving(_nothing_over_http, keep_alive=True) as url:  # a connection per cell
            http, _ = _timed_run(http_agent(url), folder / "http", bundle, agent_http=url)
        out += [
            (f"k. {n} decisions, Python agent in process", f"{n / python:.0f} /s", ""),
            ("   the same over stdio, in the sandbox", f"{n / stdio:.0f} /s", ""),
            (
                "   ratio stdio / in process (run time)",
                f"{stdio / python:.2f}x",
                "<= 3x" + ("  met" if stdio <= 3 * python else "  MISSED"),
            ),
            ("   the same over HTTP on loopback (remote)", f"{n / http:.0f} /s", ""),
        ]
        # the seed-shaped window, run and then re-executed end to end (a fresh sandbox,
        # the release loaded again from disk, every decision compared)
        from harness import RunConfig, run

        agent = command_agent([sys.executable, str(script)])
        config = RunConfig(
            bundle_path=str(RELEASE),
            trajectory_path=str(folder / "seed" / "trajectory.jsonl"),
            receipt_path=str(folder / "seed" / "receipt.json"),
            agent_cmd="x",
            agent_process="isolated",
            **SEED,  # type: ignore[arg-type]
        )
        run(agent, config)
        started = time.perf_counter()
        again = reexecute(
            config.receipt_path, trajectory=config.trajectory_path, bundle=RELEASE, agent=agent
        )
        took = time.perf_counter() - started
        out.append(
            (
                f"   seed window re-executed end to end ({again.result}, "
                f"{again.steps_compared} steps)",
                f"{took:.2f} s",
                "< 2 s" + ("  met" if took < 2 else "  MISSED"),
            )
        )
    return out


if __name__ == "__main__":
    for row in rows():
        print(*row, sep="  ")
