"""One failure taxonomy for every way an agent is driven (in-process, sandboxed, and the
transports that follow).

Seed 004's rule, applied to the harness itself: a harness problem never wears the
agent's jersey, and an agent's problem never wears the harness's.

- ``agent_error`` is final and the agent's: its constructor raised, a decision raised,
  it broke the protocol, its output was oversized, it hit a resource limit, or it raised
  ``SystemExit``/``KeyboardInterrupt``. It is never retried; the cell records it.
- ``runtime`` is retryable and ours (or the transport's): the agent's process exited
  unexpectedly, timed out, or the pipe to it broke. The cell is restarted from its
  first step with a fresh process; once attempts run out the cell is ``harness_error``
  and the run is not rankable.
- ``incomplete`` is neither side's verdict but a fact: the agent's own process exited (or
  closed its pipe) on every attempt. Seed 002 retries such a cell from its first step;
  when no attempt gets through, the cell has no result, the run is not rankable, and the
  receipt says what happened without calling it our failure or the agent's fault.
"""

from __future__ import annotations

from dataclasses import dataclass

# Kinds of agent_error. ``decision_raised`` ends only its session (the session scores
# nothing, the cell goes on); every other kind ends the cell.
CONSTRUCTOR_RAISED = "constructor_raised"
LOAD_FAILED = "load_failed"
DECISION_RAISED = "decision_raised"
PROTOCOL_VIOLATION = "protocol_violation"
OVERSIZED_OUTPUT = "oversized_output"
RESOURCE_LIMIT = "resource_limit"
AGENT_EXIT = "agent_exit"
AGENT_ERROR_KINDS = (
    CONSTRUCTOR_RAISED,
    LOAD_FAILED,
    DECISION_RAISED,
    PROTOCOL_VIOLATION,
    OVERSIZED_OUTPUT,
    RESOURCE_LIMIT,
    AGENT_EXIT,
)

# Cell statuses written into the receipt.
COMPLETE = "complete"
AGENT_ERROR = "agent_error"
HARNESS_ERROR = "harness_error"
INCOMPLETE = "incomplete"
ABORTED = "aborted"
NOT_RUN = "not_run"
CELL_STATUSES = (COMPLETE, AGENT_ERROR, HARNESS_ERROR, INCOMPLETE, ABORTED, NOT_RUN)
# The probe's status for an agent whose dialect cannot be asked its question (sharpebench).
NOT_APPLICABLE = "not_applicable"

# Why a cell is incomplete (the one reason there is).
AGENT_PROCESS_EXITED = "the agent's process exited"

RUNTIME_ATTEMPTS = 3

# Exit codes of ``pit-harness run`` (and the other commands where they apply).
EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_AGENT_FAILED = 4
# ``pit-harness gate``: the run and its baseline are not comparable (another release, or
# another shape of run), so nothing was judged: neither a pass nor a rule failed.
EXIT_VOID = 5
# a signed statement that holds, but whose revocation was not checked (no list given)
EXIT_UNCHECKED = 6


@dataclass(frozen=True)
class Fault:
    kind: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message[:500]}


class AgentFault(Exception):
    """The agent's own failure (final). ``fatal`` ends the cell; otherwise only the
    session that raised it scores nothing."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.fault = Fault(kind, message)

    @property
    def fatal(self) -> bool:
        return self.fault.kind != DECISION_RAISED


class RuntimeFailure(Exception):
    """Ours or the transport's (retryable): the agent's process died, hung or the
    pipe broke. Never scored as the agent's result."""


class AgentProcessExited(RuntimeFailure):
    """The agent's process exited or closed its pipe mid-cell: retried like any runtime
    failure; a cell where every attempt ends this way is ``incomplete``."""


def json_data_problem(value: object, where: str = "value", depth: int = 0) -> str | None:
    """Why ``value`` is not JSON data the trajectory can hold, or None: NaN and the
    infinities, a lone surrogate in a string or key, a key that is not a string, a type
    JSON does not have, nesting past 64 levels."""
    if depth > 64:
        return f"{where}: nested more than 64 levels"
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if value == value and abs(value) != float("inf") else f"{where}: {value!r}"
    if isinstance(value, str):
        return None if _encodable(value) else f"{where}: a lone surrogate in a string"
    if isinstance(value, list | tuple):
        items = [(f"{where}[{n}]", item) for n, item in enumerate(value)]
    elif isinstance(value, dict):
        bad_key = next((k for k in value if not isinstance(k, str) or not _encodable(k)), None)
        if bad_key is not None:
            return f"{where}: a key that is not a string of text ({bad_key!r})"[:200]
        items = [(f"{where}.{key[:40]}", item) for key, item in value.items()]
    else:
        return f"{where}: a {type(value).__name__}, not JSON data"
    return next((p for at, item in items if (p := json_data_problem(item, at, depth + 1))), None)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def require_json_data(value: object, where: str) -> None:
    """The agent sent something that is not JSON data: its protocol fault (ends the cell)."""
    problem = json_data_problem(value, where)
    if problem:
        raise AgentFault(PROTOCOL_VIOLATION, f"not JSON data: {problem}")


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]
