"""An agent that leaves a mark for every call it answers, and can be made to stop.

It trades as the stub does. With ``PIT_MARKS`` set (a folder), each call adds a line to
the file ``<kind>-<arm>-<clock>-<session date>`` there (the date as the arm shows it), so
a test counts how often each cell and session was run. With ``PIT_STOP_AT`` set
(``arm/clock/session date``), the trade call there creates ``PIT_STOP_MARKER`` and waits
to be killed: a kill at a point the test chose, and knows has been reached. Named by
reference (``tests.support.marking_agent:marking``) in a run of the command line."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from harness.agents.base import AgentSpec, Decision, Task
from harness.agents.stub import StubAgent

WAIT_FOR_THE_KILL = 300.0  # seconds: a test that never kills has failed long before


class MarkingAgent(StubAgent):
    def decide(self, task: Task, tools: Any) -> Decision:
        marks = os.environ.get("PIT_MARKS")
        if marks:
            name = f"{task.kind}-{task.arm}-{task.clock}-{task.session_date}"
            with open(Path(marks) / name, "a", encoding="utf-8") as handle:
                handle.write("called\n")
        here = f"{task.arm}/{task.clock}/{task.session_date}"
        if task.kind == "trade" and os.environ.get("PIT_STOP_AT") == here:
            Path(os.environ["PIT_STOP_MARKER"]).touch()
            deadline = time.monotonic() + WAIT_FOR_THE_KILL
            while time.monotonic() < deadline:
                time.sleep(0.05)
            raise SystemExit("marking agent: no one killed the run")
        return super().decide(task, tools)


marking = AgentSpec("marking", MarkingAgent, source=__file__)
