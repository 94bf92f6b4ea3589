"""The stub: no model, acts on every filing the window has just made knowable.

On a probe it does not answer the question; it replies with the same sentence it
gives the trading task, which carries the session's own timestamp (as its arm shows
it). A probe scorer that matches that sentence is being literal, and the receipt's
per-item scores show it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.agents.base import AgentSpec, Decision, Task

if TYPE_CHECKING:
    from harness.tools import Toolbox


class StubAgent:
    def decide(self, task: Task, tools: Toolbox) -> Decision:
        if task.kind != "trade":
            return Decision(text=self._sentence(task, tools.newly_knowable()))
        rows = tools.pit_list(limit=None)["rows"]
        return Decision(
            picks=tuple(r["row_key"] for r in rows), text=self._sentence(task, len(rows))
        )

    @staticmethod
    def _sentence(task: Task, count: int) -> str:
        return f"stub: at {task.known_at} buying every filing made knowable since the last bell ({count})"


def stub() -> AgentSpec:
    return AgentSpec("stub", StubAgent, ref="stub", source=__file__)
