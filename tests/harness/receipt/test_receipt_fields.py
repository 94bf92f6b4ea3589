"""Every claim of a receipt is re-derived, or named as a declaration.

``receipt-body.fields.json`` sorts every leaf of the published schema into the two lists;
these tests keep it in step with the schema, and forge each re-derived field in real
receipts (the body hashed again, every other hash holding) to see `rederive` catch it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness import RunConfig, load_prices, run
from harness.agents.adapters.plain import from_callable
from harness.agents.baselines import earliest_five
from harness.agents.external import command_agent
from harness.market.index import MarketIndex, load_index
from harness.market.prices import Prices
from harness.receipt.build import receipt_text
from harness.receipt.rederive import rederive
from harness.receipt.schemas import leaf_paths, receipt_body_fields, receipt_body_schema
from tests.harness.receipt.test_receipt_schema import FAULT_PLAN
from tests.support.loopback_agents import openai_agent
from tests.support.model_server import SECRET, egress_config, serving_model
from tests.support.sandbox import crash_when_told as _crash_when_told
from tests.support.sandbox import require_sandbox

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"


def test_every_leaf_of_the_schema_is_re_derived_or_named_a_declaration() -> None:
    leaves = leaf_paths(receipt_body_schema())
    fields = receipt_body_fields()
    rederived, declared = set(fields["rederived"]), set(fields["declared"])
    assert len(leaves) == len(set(leaves))
    assert not rederived & declared, "a field is both re-derived and declared"
    assert set(leaves) - rederived - declared == set(), "a schema leaf is in neither list"
    assert (rederived | declared) - set(leaves) == set(), "a listed field is not in the schema"
    assert all(fields["rederived"].values()) and all(fields["declared"].values())


def test_leaf_paths_follow_properties_items_and_open_objects() -> None:
    schema = {
        "properties": {
            "a": {"type": "integer"},
            "b": {"items": {"properties": {"c": {}, "d": {"items": {}}}}},
            "e": {"additionalProperties": {"properties": {"f": {}}}},
        }
    }
    assert leaf_paths(schema) == [".a", ".b[].c", ".b[].d[]", ".e.*.f"]


@dataclass
class _Run:
    out: Path
    release: Path
    prices: Prices | None
    index: MarketIndex | None = None


def _picky(prompt: str, tools: Any) -> list[str]:
    told = tools.pit_coverage()
    if told.get("dial_now"):
        with contextlib.suppress(OSError):
            socket.create_connection(("example.com", 443), timeout=1)
    if told.get("crash_now"):
        os._exit(9)
    rows = tools.pit_list(limit=3)["rows"]
    tools.pit_read(rows[0]["row_key"] if rows else "r-0")
    return [r["row_key"] for r in rows] + ["not-a-row-key"]  # one rejected per session


@pytest.fixture(scope="module")
def runs(
    march_release: Path,
    march_prices: Path,
    march_market_prices: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> list[_Run]:
    """A priced in-process run that declares its model and cutoff, and an isolated one
    whose first attempt of a cell dials out and dies (a ledger entry, egress recorded)."""
    out = tmp_path_factory.mktemp("fields")
    priced = {"path": str(march_prices), "source": "SYNTHETIC", "pulled_at": "2026-01-01"}

    def config(name: str, **extra: Any) -> RunConfig:
        return RunConfig(
            bundle_path=str(march_release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-03",
            trajectory_path=str(out / name / "trajectory.jsonl"),
            receipt_path=str(out / name / "receipt.json"),
            probe=3,
            **extra,
        )

    run(
        from_callable(_picky),
        config(
            "priced",
            prices=priced,
            agent_process="in_process",
            model_version="gpt-x-2026-01-01",
            training_cutoff="2023-03-02",
        ),
    )
    made = [_Run(out / "priced", march_release, load_prices(march_prices, **_stated(priced)))]
    # measured against a market index, net of a cost model with a minimum fee
    market = {**priced, "path": str(march_market_prices)}
    run(
        earliest_five,
        config(
            "market",
            agent="earliest_five",
            prices=market,
            agent_process="in_process",
            benchmark_index={**market, "symbol": "MKT"},
            costs={"bps_per_side": 10, "min_fee_per_side": 12.5, "notional": 10_000},
        ),
    )
    made.append(
        _Run(
            out / "market",
            march_release,
            load_prices(march_market_prices, **_stated(priced)),
            load_index(march_market_prices, symbol="MKT", **_stated(priced)),
        )
    )
    require_sandbox()
    with pytest.MonkeyPatch.context() as patch:
        _crash_when_told(patch, times=1, dial_first=True)
        run(from_callable(_picky), config("retried", agent_process="isolated"))
    made.append(_Run(out / "retried", march_release, None))
    # an external agent speaking sharpebench's dialect: its transport, dialect, digest and
    # ignored orders are claims too; so are a model endpoint (declared, never reached) and
    # the settings the agent is handed, and the commitment it runs (the forward track)
    command = f"{sys.executable} {EXAMPLES / 'sharpebench_stdio.py'}"
    costed = out / "costed_agent.py"
    costed.write_text(COSTED_AGENT)
    costed_command = f"{sys.executable} {costed}"
    forward = {
        "kind": "backtest",
        "entry": "sha256:" + "e1" * 32,
        "seq": 2,
        "stamped_at": "2023-03-06T14:00:00Z",
        "agent_digest": "sha256:" + "a9" * 32,
        "log_head": {"seq": 3, "digest": "sha256:" + "f3" * 32},
    }
    run(
        command_agent(costed_command, dialect="sharpebench"),
        config(
            "sharpebench",
            agent_cmd=costed_command,
            dialect="sharpebench",
            agent_process="isolated",
            model_endpoints=("https://api.example.test",),
            agent_env={"PIT_MODEL": "declared-never-asked"},
            forward=forward,
        ),
    )
    made.append(_Run(out / "sharpebench", march_release, None))
    # an agent asking a loopback model through the run's proxy: its usage, per model
    with pytest.MonkeyPatch.context() as patch, serving_model(out / "model") as served:
        patch.setenv("PIT_TEST_MODEL_KEY", SECRET)
        port, cert, _ = served
        agent = from_callable(openai_agent(f"https://127.0.0.1:{port}/v1"))
        run(agent, egress_config(march_release, out / "model", port, cert))
    made.append(_Run(out / "model", march_release, None))
    # the same agent under a fault plan: the plan in its config and the report it makes;
    # each of its faults first once (a forgery changes an array's first element)
    faults = FAULT_PLAN["faults"]
    for first in range(len(faults)):
        plan = {**FAULT_PLAN, "faults": faults[first:] + faults[:first]}
        run(
            command_agent(command, dialect="sharpebench"),
            config(
                f"faults-{first}",
                agent_cmd=command,
                dialect="sharpebench",
                agent_process="in_process",
                fault_plan=plan,
            ),
        )
        made.append(_Run(out / f"faults-{first}", march_release, None))
    return made


# sharpebench's template agent, reporting what each decision cost it (as said, unchecked)
COSTED_AGENT = """
import json, sys

for line in sys.stdin:
    observation = json.loads(line)
    held = {p["symbol"] for p in observation["portfolio"]}
    new = [s["symbol"] for s in observation["symbols"] if s["symbol"] not in held]
    orders = [{"symbol": s, "action": "buy", "target_weight": 0.1} for s in new[:2]]
    cost = {"cost_usd": 0.0015, "tokens_in": 120, "tokens_out": 30, "reasoning_tokens": 4}
    sys.stdout.write(json.dumps({"orders": orders, "cost": cost}) + "\\n")
    sys.stdout.flush()
"""


def _stated(priced: dict[str, str]) -> dict[str, str]:
    return {"source": priced["source"], "pulled_at": priced["pulled_at"]}


def _forged(value: Any) -> Any:
    """A value of the same kind that differs."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.125
    if isinstance(value, str):
        return value + "-forged"
    if isinstance(value, list):
        return [*value, value[0] if value else "forged"]
    if isinstance(value, dict):
        return {**value, "forged": 1}
    return "forged"  # None


def _step(node: Any, head: str) -> Any:
    if head == "[]":
        return node[0]
    if head == "*":
        return node[next(iter(node))]
    return node[head]


def _ways(node: Any, rest: list[str]) -> list[str]:
    """How the field at ``rest`` below ``node`` can be forged (none if it is absent)."""
    if not rest:
        return [f"key {k}" for k in node] if isinstance(node, dict) and node else ["value"]
    head = rest[0]
    if head in ("[]", "*") and not node:
        return ["append"] if len(rest) == 1 else []
    if head not in ("[]", "*") and not (isinstance(node, dict) and head in node):
        return []
    return _ways(_step(node, head), rest[1:])


def _forge_at(node: Any, last: str, way: str) -> None:
    if way == "append":
        if last == "[]":
            node.append("forged")
        else:
            node["forged"] = 1
    elif last in ("[]", "*"):
        first = 0 if last == "[]" else next(iter(node))
        node[first] = _forged(node[first])
    elif way.startswith("key "):
        key = way.removeprefix("key ")
        node[last][key] = _forged(node[last][key])
    else:
        node[last] = _forged(node.get(last))


def _forgeries(body: dict[str, Any], path: str) -> list[tuple[str, dict[str, Any]]]:
    """Copies of ``body`` with the field at ``path`` changed: the first element where the
    path crosses an array (or one appended to an empty array leaf), the first key of an
    open object (or a new one), and for an object leaf each of its keys in turn."""
    parts = [p for p in path.replace("[]", ".[]").split(".") if p]
    found = []
    for way in _ways(body, parts):
        copy = json.loads(json.dumps(body))
        node: Any = copy
        for head in parts[:-1]:
            node = _step(node, head)
        _forge_at(node, parts[-1], way)
        found.append((way, copy))
    return found


def test_every_re_derived_field_forged_and_hashed_again_is_caught(
    runs: list[_Run], tmp_path: Path
) -> None:
    exercised: set[str] = set()
    missed: list[str] = []
    for made in runs:
        receipt = json.loads((made.out / "receipt.json").read_text())
        honest = rederive(
            made.out / "receipt.json",
            trajectory=made.out / "trajectory.jsonl",
            release=made.release,
            prices=made.prices,
            index=made.index,
        )
        assert honest.ok, honest.first_mismatch
        for path in receipt_body_fields()["rederived"]:
            for label, body in _forgeries(receipt["body"], path):
                exercised.add(path)
                forged = tmp_path / "receipt.json"
                forged.write_text(receipt_text(body, receipt["emitted_at"]))
                result = rederive(
                    forged,
                    trajectory=made.out / "trajectory.jsonl",
                    release=made.release,
                    prices=made.prices,
                    index=made.index,
                    check_release=False,
                )
                if result.ok:
                    missed.append(f"{made.out.name}: {path} ({label})")
    assert missed == [], "forged and not caught"
    assert set(receipt_body_fields()["rederived"]) - exercised == set(), "not exercised"
