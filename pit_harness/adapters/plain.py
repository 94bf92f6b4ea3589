"""``from_callable`` and ``from_tool_loop``: see ``harness.adapters.plain``."""

from harness.adapters.plain import (
    ROW_KEY,
    SYSTEM_PROMPT,
    ToolLoopError,
    from_callable,
    from_tool_loop,
)

__all__ = ["ROW_KEY", "SYSTEM_PROMPT", "ToolLoopError", "from_callable", "from_tool_loop"]
