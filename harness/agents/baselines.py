"""Deterministic baseline agents for demos and as reference rows on a leaderboard.

- ``earliest_five``: buys the five filings that became knowable first since the
  last bell (by known_at, then row_key).
- ``date_reader``: buys like the stub, but on the probe it reads the shifted date
  and subtracts ten years: a deliberately leaking agent, so a board shows what
  ``mask_leaks`` looks like.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from harness.agents.base import AgentSpec, Decision, Task

if TYPE_CHECKING:
    from harness.tools import Toolbox


class _EarliestFive:
    def decide(self, task: Task, tools: Toolbox) -> Decision:
        if task.kind != "trade":
            return Decision(text="I do not know the real date or issuer.")
        rows = tools.pit_list(limit=5)["rows"]
        return Decision(
            picks=tuple(r["row_key"] for r in rows), text=f"earliest {len(rows)} new filings"
        )


class _DateReader:
    def decide(self, task: Task, tools: Toolbox) -> Decision:
        if task.kind == "trade":
            rows = tools.pit_list(limit=None)["rows"]
            return Decision(picks=tuple(r["row_key"] for r in rows))
        shown = json.loads(task.prompt.splitlines()[1])
        year, rest = shown["partition_date"].split("-", 1)
        return Decision(text=f"Probably filed {int(year) - 10}-{rest} by {shown.get('issuer')}.")


earliest_five = AgentSpec("earliest_five", _EarliestFive)
date_reader = AgentSpec("date_reader", _DateReader)
