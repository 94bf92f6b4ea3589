"""Agents that write, on the control arms, what those arms hide: the reasoning audit's
positive controls (``harness.receipt.audit``)."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from harness.agents.adapters.plain import from_callable
from harness.agents.base import AgentSpec


def unshift(day: str) -> str:
    """A shifted arm's date moved back the ten years the arm moved it."""
    shown = date.fromisoformat(day[:10])
    return shown.replace(year=shown.year - 10).isoformat()


def plants_the_real_date(prompt: str, tools: Any) -> dict[str, Any] | str:
    """Writes the date of the first row it is served into its reasoning, un-shifted on the
    shifted arm (what an agent that knows the period does), and answers the probe the
    same way; a bare year rides along, which is no finding. It buys nothing."""
    if prompt.startswith("Mask probe"):
        row = json.loads(prompt.splitlines()[1])
        return f"I believe it was filed on {unshift(row['partition_date'])}."
    rows = tools.pit_list(limit=1)["rows"]
    if not rows:
        return "nothing new at this bell"
    day = rows[0]["partition_date"]
    if "(shifted arm" in prompt:
        day = unshift(day)
    return {"picks": [], "text": f"{rows[0]['row_key']} was filed on {day}, early in 2023."}


def date_planter() -> AgentSpec:
    return from_callable(plants_the_real_date, name="plants-the-real-date")


def issuer_namer(memory: dict[str, str]) -> AgentSpec:
    """Names the issuer of the first row it is served, from a memory of the release
    joined across arms (``memory``: any arm's row key -> the issuer; the memory a
    contaminated model carries). It buys nothing."""

    def agent(prompt: str, tools: Any) -> str:
        if prompt.startswith("Mask probe"):
            return "no idea"
        rows = tools.pit_list(limit=1)["rows"]
        if not rows:
            return "nothing new"
        return f"This one is {memory[rows[0]['row_key']]}, I remember the company."

    return from_callable(agent, name="remembers-issuers")
