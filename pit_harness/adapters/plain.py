"""``from_callable`` and ``from_tool_loop``: see ``harness.agents.adapters.plain``."""

from harness.agents.adapters.plain import (
    ROW_KEY,
    SYSTEM_PROMPT,
    ToolLoopError,
    from_callable,
    from_tool_loop,
)

__all__ = ["ROW_KEY", "SYSTEM_PROMPT", "ToolLoopError", "from_callable", "from_tool_loop"]
