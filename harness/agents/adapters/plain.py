"""Wrap the function you already have.

``from_callable(fn)``: ``fn(prompt, tools)`` returns a list of row keys (or a str, a
dict ``{"picks", "text"}``, or a Decision).

``from_tool_loop(step)``: ``step(messages, tools)`` has the shape most provider SDKs
already have: it receives chat messages and the four tools as OpenAI-style function
specs, and returns an assistant message ``{"content": ..., "tool_calls": [...]}``. The
adapter runs the tools, appends their results as ``tool`` messages and calls ``step``
again until a message carries no tool call; picks are the row keys in that final
content (a JSON ``{"picks": [...]}`` or free text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.agents.base import AgentSpec, Decision, Task, source_file
from harness.tools.table import TOOLS

if TYPE_CHECKING:
    from harness.tools.toolbox import Toolbox

ROW_KEY = re.compile(r"\br-[0-9a-f]{16}\b")
SYSTEM_PROMPT = (
    "You are evaluated point-in-time. You may read filings only through the tools; "
    "each answer says when it was knowable. Reply with the row_key values to buy."
)


def from_callable(fn: Callable[[str, Toolbox], Any], name: str | None = None) -> AgentSpec:
    class _Callable:
        def decide(self, task: Task, tools: Toolbox) -> Decision:
            return Decision.coerce(fn(task.prompt, tools))

    return AgentSpec(
        name or str(getattr(fn, "__qualname__", "callable")), _Callable, source=source_file(fn)
    )


class ToolLoopError(RuntimeError):
    """The model's side of the loop broke the contract (an agent fault)."""


def _run_tool(tools: Toolbox, name: str, arguments: Any) -> dict[str, Any]:
    if name not in TOOLS:
        return {"error": f"unknown tool {name!r}"}
    if arguments is None:  # some SDKs leave the field out for a tool without arguments
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return {"error": f"arguments are not JSON: {exc}"}
    if not isinstance(arguments, dict):
        return {"error": "arguments must be a JSON object"}
    # the model is told of an argument of the wrong type, and may call again; handed to
    # the toolbox, it would be the agent's protocol fault and end the cell
    tool = TOOLS[name]
    given = {p.name: p.default for p in tool.params if not p.required} | arguments
    wrong = tool.type_problem(given)
    if wrong is not None:
        return {"error": f"bad arguments for {wrong}"}
    try:
        result: dict[str, Any] = getattr(tools, name)(**arguments)
    except TypeError as exc:
        return {"error": f"bad arguments for {name}: {exc}"}
    return result


def picks_in(content: str) -> tuple[str, ...]:
    """The row keys a final answer names: a JSON ``{"picks": [...]}``, or every row key
    in free text, in order, once each."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        value = None
    if isinstance(value, dict) and isinstance(value.get("picks"), list):
        return tuple(str(p) for p in value["picks"])
    return tuple(dict.fromkeys(ROW_KEY.findall(content or "")))


def from_tool_loop(
    step: Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]],
    name: str | None = None,
    max_steps: int = 16,
) -> AgentSpec:
    class _Loop:
        def decide(self, task: Task, tools: Toolbox) -> Decision:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": task.prompt},
            ]
            for _ in range(max_steps):
                reply = step(messages, tools.schema())
                if not isinstance(reply, dict):
                    raise ToolLoopError(
                        f"step returned {type(reply).__name__}, expected a message dict"
                    )
                calls = reply.get("tool_calls") or []
                messages.append({"role": "assistant", **reply})
                if not calls:
                    content = reply.get("content") or ""
                    text = content if isinstance(content, str) else json.dumps(content)
                    return Decision(picks=picks_in(text) if task.kind == "trade" else (), text=text)
                for call in calls:
                    function = call.get("function", call)
                    result = _run_tool(tools, str(function.get("name")), function.get("arguments"))
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": call.get("id", ""),
                            "content": json.dumps(result),
                        }
                    )
            raise ToolLoopError(f"no final answer after {max_steps} steps")

    return AgentSpec(
        name or str(getattr(step, "__qualname__", "tool_loop")), _Loop, source=source_file(step)
    )
