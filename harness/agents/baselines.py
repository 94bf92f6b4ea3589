"""Deterministic baseline agents for demos and as reference rows on a leaderboard.

- ``earliest_five``: buys the five filings that became knowable first since the
  last bell (by known_at, then row_key).
- ``date_reader``: buys like the stub, but on the probe it reads the shifted date
  and subtracts ten years: a deliberately leaking agent, so a board shows what
  ``mask_leaks`` looks like.
- ``one_session_late``: buys the filings that became knowable at the bell before
  this one: honest, and slow. Where the market moves on a filing in the first session it
  is known (the demo's market does), it buys after the move and ranks below the stub.
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


class _OneSessionLate:
    def __init__(self) -> None:
        # one agent per cell walks its sessions in order: the bell before's new filings
        self._before: tuple[str, ...] = ()

    def decide(self, task: Task, tools: Toolbox) -> Decision:
        if task.kind != "trade":
            return Decision(text="I do not know the real date or issuer.")
        rows = tools.pit_list(limit=None)["rows"]
        picks, self._before = self._before, tuple(r["row_key"] for r in rows)
        return Decision(picks=picks, text=f"{len(picks)} filings made knowable at the bell before")


earliest_five = AgentSpec("earliest_five", _EarliestFive)
date_reader = AgentSpec("date_reader", _DateReader)
one_session_late = AgentSpec("one_session_late", _OneSessionLate)
