"""The receipt body's published schema and what the harness writes are one thing: every
key a body can hold is in the schema, every schema property occurs in some body, and every
body the harness writes validates."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness import RunConfig, run
from harness.agents import stub
from harness.agents.base import AgentSpec, Decision
from harness.agents.baselines import earliest_five
from harness.agents.external import command_agent
from harness.receipt.schemas import receipt_body_schema
from harness.version import RECEIPT_VERSION
from tests.support.sandbox import require_sandbox

INT_MAX = 2**31 - 1


class _Flaky:
    """Fails one session's decision and the probe's: the optional keys appear."""

    def decide(self, task: Any, tools: Any) -> Decision:
        if task.kind == "probe" or task.session_date.endswith("-03-02"):
            raise ValueError("no answer today")
        return Decision(picks=tuple(r["row_key"] for r in tools.pit_list(limit=3)["rows"]))


SHARPEBENCH_AGENT = Path(__file__).resolve().parents[3] / "examples/agents/sharpebench_stdio.py"


FORWARD = {
    "kind": "forward",
    "entry": "sha256:" + "e1" * 32,
    "seq": 1,
    "stamped_at": "2023-02-28T14:00:00Z",
    "agent_digest": "sha256:" + "a9" * 32,
    "log_head": {"seq": 1, "digest": "sha256:" + "e1" * 32},
}


# every mode once, one of them in a group: every key a plan and its report can hold
FAULT_PLAN = {
    "schema_version": "sharpebench.fault-plan.v1",
    "seed": 2**64 - 1,
    "declared_relaxations": [
        "read_your_writes", "position_sign_convention", "submission_acceptance"
    ],
    "faults": [
        {"id": "lag", "cohort_ppm": 1_000_000,
         "fault": {"mode": "projection_lag", "max_lag_steps": 1}},
        {"id": "flip", "group": "book", "cohort_ppm": 1_000_000,
         "fault": {"mode": "amount_sign", "max_span_steps": 2}},
        {"id": "limit", "cohort_ppm": 1_000_000,
         "fault": {"mode": "rate_limit", "max_rejected_presentations": 2}},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def bodies(
    march_release: Path,
    march_prices: Path,
    march_market_prices: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("bodies")

    def config(name: str, **extra: Any) -> RunConfig:
        return RunConfig(
            bundle_path=str(march_release),
            forms=("8-K",),
            start="2023-03-01",
            end="2023-03-03",
            trajectory_path=str(out / name / "t.jsonl"),
            receipt_path=str(out / name / "r.json"),
            **extra,
        )

    priced = {"path": str(march_prices), "source": "SYNTHETIC", "pulled_at": "2026-01-01"}
    made = [
        run(stub(), config("stub", prices=priced, training_cutoff="2023-01-01")).body,
        # measured against a market index, net of a cost model
        run(
            earliest_five,
            config(
                "market",
                agent="earliest_five",
                prices={**priced, "path": str(march_market_prices)},
                benchmark_index={**priced, "path": str(march_market_prices), "symbol": "MKT"},
                costs={"bps_per_side": 10, "min_fee_per_side": 1, "notional": 10_000},
            ),
        ).body,
        # a window that crosses its declared cutoff: the placebo split (unpriced: no delta)
        run(
            AgentSpec("flaky", _Flaky), config("flaky", probe=3, training_cutoff="2023-03-02")
        ).body,
        # an external agent in sharpebench's dialect: its transport, dialect, digest, the
        # orders it gave that opened nothing, and the probe it cannot be asked
        run(
            command_agent([sys.executable, str(SHARPEBENCH_AGENT)], dialect="sharpebench"),
            config(
                "sharpebench",
                agent_cmd="x",
                dialect="sharpebench",
                agent_process="in_process",
                forward=FORWARD,  # and the commitment it runs (the forward track)
            ),
        ).body,
        # the same agent under a fault plan: the plan in the config, the report beside it
        run(
            command_agent([sys.executable, str(SHARPEBENCH_AGENT)], dialect="sharpebench"),
            config(
                "faults",
                agent_cmd="x",
                dialect="sharpebench",
                agent_process="in_process",
                fault_plan=FAULT_PLAN,
            ),
        ).body,
    ]
    # a run that declares a model endpoint (never reached) and hands its agent settings:
    # it needs the sandbox
    require_sandbox()
    endpoint = ("https://api.example.test",)
    settings = {"PIT_MODEL": "declared-never-asked"}
    made.append(
        run(
            "stub",
            config("model", agent_process="isolated", model_endpoints=endpoint, agent_env=settings),
        ).body
    )
    return made


def _levels(body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    probe = body["probe"]
    return {
        "": [body],
        "config": [body["config"]],
        "cells": body["cells"],
        "probe": [probe],
        "probe_item": probe.get("items", []),
        "score": [i["score"] for i in probe.get("items", [])],
        "network": [body["network"]],
        "model_egress": [body["network"]["model_egress"]],
        "placebo": [body["placebo"]] if "placebo" in body else [],
        "placebo_side": [
            side
            for sides in (body.get("placebo") or {}).get("clocks", {}).values()
            for side in sides.values()
        ],
    }


def _schema_levels() -> dict[str, dict[str, Any]]:
    schema = receipt_body_schema()
    top = schema["properties"]
    item = top["probe"]["properties"]["items"]["items"]
    return {
        "": top,
        "config": top["config"]["properties"],
        "cells": top["cells"]["items"]["properties"],
        "probe": top["probe"]["properties"],
        "probe_item": item["properties"],
        "score": item["properties"]["score"]["properties"],
        "network": top["network"]["properties"],
        "model_egress": top["network"]["properties"]["model_egress"]["properties"],
        "placebo": top["placebo"]["properties"],
        "placebo_side": top["placebo"]["properties"]["clocks"]["additionalProperties"][
            "properties"
        ]["before"]["properties"],
    }


def test_every_key_a_body_holds_is_in_the_schema_and_every_property_occurs(
    bodies: list[dict[str, Any]],
) -> None:
    schema = _schema_levels()
    seen: dict[str, set[str]] = {level: set() for level in schema}
    for body in bodies:
        for level, objects in _levels(body).items():
            for obj in objects:
                missing = set(obj) - set(schema[level])
                assert not missing, f"{level or 'body'}: {sorted(missing)} not in the schema"
                seen[level] |= set(obj)
    for level, properties in schema.items():
        never = set(properties) - seen[level]
        assert not never, f"{level or 'body'}: schema properties {sorted(never)} never occur"


def test_every_body_validates_and_integers_fit_the_sites_columns(
    bodies: list[dict[str, Any]],
) -> None:
    schema = receipt_body_schema()
    assert schema["properties"]["receipt_version"] == {"const": RECEIPT_VERSION}
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    for body in bodies:
        assert list(validator.iter_errors(body)) == []
    integers = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "integer" or "integer" in (node.get("type") or []):
                integers.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    # a fault plan's seed is a u64 by the plan's format: kept in the body, never in a column
    u64 = [i for i in integers if i.get("description", "").startswith("the plan's seed, a u64")]
    assert len(u64) == 1 and u64[0].get("minimum") == 0
    integers = [i for i in integers if i not in u64]
    # sums of tokens and nanodollars may pass 2^31 in a long run: each says so, and its bound
    sums = [i for i in integers if i.get("description", "").startswith("a sum of tokens")]
    assert sums and all(i.get("maximum") == 2**53 - 1 and i.get("minimum") == 0 for i in sums)
    integers = [i for i in integers if i not in sums]
    assert integers and all(i.get("maximum") == INT_MAX and i.get("minimum") == 0 for i in integers)
    too_big = {**bodies[0], "cells": [{**bodies[0]["cells"][0], "trades": INT_MAX + 1}]}
    assert list(validator.iter_errors(too_big))


def test_the_vocabulary_is_declared_once() -> None:
    from harness.vocabulary import ARMS, CLOCKS, TOOL_NAMES

    schema = receipt_body_schema()["properties"]
    cell = schema["cells"]["items"]["properties"]
    assert cell["arm"]["enum"] == list(ARMS) and cell["clock"]["enum"] == list(CLOCKS)
    config = schema["config"]["properties"]
    assert config["arms"]["items"]["enum"] == list(ARMS)
    assert config["clocks"]["items"]["enum"] == list(CLOCKS)
    root = Path(__file__).resolve().parents[3]
    spelled = [", ".join(f'"{w}"' for w in words) for words in (ARMS, CLOCKS, TOOL_NAMES)]
    elsewhere = [
        f"{path.relative_to(root)}: {text}"
        for folder in ("harness", "pitweb")
        for path in (root / folder).rglob("*.py")
        if path.name != "vocabulary.py"
        for text in spelled
        if text in path.read_text()
    ]
    assert elsewhere == [], elsewhere
