"""``one_session_late``: an honest baseline that is slow on purpose.

At each bell it buys the filings that became knowable at the bell before this one: it
reads what the tools show and no more, one session behind. Where the market moves on a
filing in the first session it is known (the demo's SYNTHETIC market does), it buys after
the move and ranks below the stub, which buys at the first bell: a baseline of lower
quality whose score owes nothing to memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.agents.base import AgentSpec, Decision, Task

if TYPE_CHECKING:
    from harness.tools import Toolbox


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


one_session_late = AgentSpec("one_session_late", _OneSessionLate)
