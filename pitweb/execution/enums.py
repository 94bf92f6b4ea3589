"""The closed sets of values the executions API returns, as the OpenAPI schema's enums,
each value with the words the pages use for it (as ``pitweb.runs.enums`` does for runs)."""

from __future__ import annotations

from typing import get_args

from harness.receipt.model import CellStatus
from pitweb.execution.models import ExecutionCell, ExecutionJob, ExecutionState

Choices = list[tuple[str, str]]

EXECUTION_STATE_WORDS = {
    ExecutionState.CELLS: "cells: its cells are queued or running",
    ExecutionState.QUEUED: "queued: every cell is done; the assembly waits for a worker",
    ExecutionState.ASSEMBLING: "assembling: a worker is writing the run from its cells",
    ExecutionState.EXECUTED: "executed: the site ran the agent and stored the run",
    ExecutionState.REPRODUCED: "reproduced: run again, the agent repeated every "
    "score-bearing decision of the run it checks",
    ExecutionState.DIVERGED: "diverged: run again, the agent decided differently (the first "
    "divergence is shown)",
    ExecutionState.FAILED: "re-execution failed: the harness could not run a cell again; "
    "this proves nothing about the run",
    ExecutionState.HARNESS_ERROR: "harness error: our failure, never the agent's result",
}
EXECUTION_KIND_WORDS = {
    ExecutionJob.Kind.EXECUTE: "execution: the site runs a registered agent",
    ExecutionJob.Kind.REEXECUTE: "re-execution: an uploaded run's agent run again on the same "
    "frozen data",
}
CELL_STATE_WORDS = {
    ExecutionCell.State.QUEUED: "queued: waiting for a worker",
    ExecutionCell.State.RUNNING: "running: a worker runs the cell",
    ExecutionCell.State.DONE: "done: the cell's record is stored",
    ExecutionCell.State.HARNESS_ERROR: "harness error: our failure, never the agent's result",
}
CELL_STATUS_WORDS = {
    "complete": "complete: every session of the window was run",
    "agent_error": "agent error: the agent failed in this cell",
    "harness_error": "harness error: the harness failed in this cell",
    "incomplete": "incomplete: the cell stopped before its last session",
    "aborted": "aborted: the run was stopped (a network attempt under fail_closed)",
    "not_run": "not run",
}

EXECUTION_STATE: Choices = [(str(s), EXECUTION_STATE_WORDS[s]) for s in ExecutionState]
EXECUTION_KIND: Choices = [(str(k), EXECUTION_KIND_WORDS[k]) for k in ExecutionJob.Kind]
CELL_STATE: Choices = [(str(s), CELL_STATE_WORDS[s]) for s in ExecutionCell.State]
# the receipt's cell status (the harness's set), read off the cell's record once it is done
CELL_STATUS: Choices = [(s, CELL_STATUS_WORDS[s]) for s in get_args(CellStatus)]
