"""``pit_tools`` and ``from_inspect_solver`` (the extra ``[inspect]``): see
``harness.agents.adapters.inspect``."""

from harness.agents.adapters.inspect import from_inspect_solver, pit_tools

__all__ = ["from_inspect_solver", "pit_tools"]
