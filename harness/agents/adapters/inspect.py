"""Inspect (inspect_ai) on either side of the harness: the optional extra ``[inspect]``.

``pit_tools(toolbox)``: the four window tools as Inspect tools. Each returns its whole
answer as a JSON string (Inspect passes tools' results to the model as text), raises
Inspect's ``ToolError`` where the harness answered an error (the model is told, the run
goes on), and is never truncated (``max_output=0``): Inspect cuts a tool's output at
16 KiB by default, and the trajectory, which records every result whole, would then no
longer show what the model saw.

``from_inspect_solver(solver, model)``: an agent that runs an Inspect solver at every
session and probe item, inside the harness's run (its sandbox, network guard, trajectory
and receipt). The solver gets a ``TaskState`` holding the task's prompt and the four
tools, and a ``Generate`` built on Inspect's public API (``Model.generate`` and
``execute_tools``); the model is reached the way any agent's is: a provider through the
run's declared ``model_endpoints`` and its recording proxy, or Inspect's ``mockllm``,
which needs no network. Picks are the row keys in the final completion (a JSON
``{"picks": [...]}`` or free text), as for a tool loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, Unpack

from harness.agents.adapters.plain import SYSTEM_PROMPT, picks_in
from harness.agents.base import AgentSpec, Decision, Task, source_file
from harness.tools.table import TOOLS

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfigArgs, Model
    from inspect_ai.solver import Generate, Solver, TaskState
    from inspect_ai.tool import Tool

    from harness.tools.toolbox import Toolbox

# What each parameter means, for the model (the table holds the rest: names, types, defaults).
_ARGS = {
    "limit": "How many rows at most (pit_list: null for no cap).",
    "offset": "Rows to skip, for paging.",
    "since": "'previous_session' (new at this bell) or 'window_start' (all knowable so far).",
    "form": "Only filings of this form (e.g. '8-K'); null for every form.",
    "query": "Text to look for in title, issuer, ticker, form or accession number.",
    "row_key": "The row_key of the filing to read.",
}


def _doc(name: str) -> str:
    """A tool's docstring in the form Inspect reads (description, then ``Args:``)."""
    tool = TOOLS[name]
    lines = [tool.description]
    if tool.params:
        lines += ["", "Args:"] + [f"    {p.name}: {_ARGS[p.name]}" for p in tool.params]
    return "\n".join(lines) + "\n"


def _answer(result: dict[str, Any]) -> str:
    from inspect_ai.tool import ToolError

    if "error" in result:
        raise ToolError(str(result["error"]))
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def pit_tools(toolbox: Toolbox) -> list[Tool]:
    """The four window tools of ``toolbox`` as Inspect tools (see the module's words)."""
    from inspect_ai.tool import tool

    @tool(name="pit_list", max_output=0)
    def pit_list() -> Tool:
        async def execute(
            limit: int | None = 100,
            offset: int = 0,
            since: Literal["previous_session", "window_start"] = "previous_session",
            form: str | None = None,
        ) -> str:
            return _answer(toolbox.pit_list(limit=limit, offset=offset, since=since, form=form))

        execute.__doc__ = _doc("pit_list")
        return execute

    @tool(name="pit_search", max_output=0)
    def pit_search() -> Tool:
        async def execute(query: str, limit: int = 20, form: str | None = None) -> str:
            return _answer(toolbox.pit_search(query, limit=limit, form=form))

        execute.__doc__ = _doc("pit_search")
        return execute

    @tool(name="pit_read", max_output=0)
    def pit_read() -> Tool:
        async def execute(row_key: str) -> str:
            return _answer(toolbox.pit_read(row_key))

        execute.__doc__ = _doc("pit_read")
        return execute

    @tool(name="pit_coverage", max_output=0)
    def pit_coverage() -> Tool:
        async def execute() -> str:
            return _answer(toolbox.pit_coverage())

        execute.__doc__ = _doc("pit_coverage")
        return execute

    return [pit_list(), pit_search(), pit_read(), pit_coverage()]


def _generate(model: Model, message_limit: int) -> Generate:
    """Inspect's ``generate`` for one task: the model answers, its tool calls are run
    (whole results, never truncated), until it calls none or the message limit is hit."""
    from inspect_ai.model import GenerateConfig, execute_tools

    async def generate(
        state: TaskState,
        tool_calls: Literal["loop", "single", "none"] = "loop",
        **kwargs: Unpack[GenerateConfigArgs],
    ) -> TaskState:
        config = GenerateConfig(**kwargs)
        while len(state.messages) < message_limit:
            state.output = await model.generate(state.messages, state.tools, config=config)
            state.messages.append(state.output.message)
            if tool_calls == "none" or not state.output.message.tool_calls:
                break
            executed = await execute_tools(state.messages, state.tools, max_output=0)
            state.messages.extend(executed.messages)
            if executed.output is not None:
                state.output = executed.output
            if tool_calls == "single":
                break
        return state

    return generate


async def _decide(
    solver: Solver, model: Model, task: Task, tools: Toolbox, message_limit: int
) -> Decision:
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelName
    from inspect_ai.solver import TaskState

    state = TaskState(
        model=ModelName(model),
        sample_id=f"{task.kind}-{task.arm}-{task.clock}-{task.session_date}",
        epoch=1,
        input=task.prompt,
        messages=[ChatMessageSystem(content=SYSTEM_PROMPT), ChatMessageUser(content=task.prompt)],
        message_limit=message_limit,
        metadata={
            "kind": task.kind,
            "arm": task.arm,
            "clock": task.clock,
            "session_date": task.session_date,
            "known_at": task.known_at,
        },
    )
    state.tools = pit_tools(tools)
    state = await solver(state, _generate(model, message_limit))
    text = state.output.completion if state.output is not None else ""
    return Decision(picks=picks_in(text) if task.kind == "trade" else (), text=text)


def from_inspect_solver(
    solver: Solver | Callable[[], Solver],
    model: str,
    *,
    name: str | None = None,
    base_url: str | None = None,
    model_args: dict[str, Any] | None = None,
    message_limit: int = 32,
) -> AgentSpec:
    """An agent that runs ``solver`` with Inspect's ``model`` (``provider/name``, as
    ``inspect eval --model`` takes it; ``base_url`` and ``model_args`` as ``get_model``
    takes them). ``solver`` may also be a factory callable with no arguments (``generate``,
    an ``@solver`` function): then a new solver is made for every cell, as a new model
    always is, in the agent's own process. (A solver instance is reused; in the sandbox
    each cell is a fresh process anyway, so nothing it keeps reaches the next cell.)"""

    class _InspectAgent:
        def __init__(self) -> None:
            from inspect_ai.model import get_model

            made: Any = solver() if _is_factory(solver) else solver  # type: ignore[call-arg]
            self.solver: Solver = made
            self.model = get_model(
                model, base_url=base_url, memoize=False, **dict(model_args or {})
            )

        def decide(self, task: Task, tools: Toolbox) -> Decision:
            return _complete(_decide(self.solver, self.model, task, tools, message_limit))

    label = name or f"inspect:{getattr(solver, '__qualname__', 'solver')}@{model}"
    return AgentSpec(label, _InspectAgent, source=source_file(solver))


def _complete(coroutine: Coroutine[Any, Any, Decision]) -> Decision:
    """The coroutine run to its end from synchronous code: in this thread where no event
    loop runs here (an agent's own process), else in a thread of its own (a run started
    from a notebook, or beside another library's loop), since a loop cannot be nested."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _is_factory(solver: object) -> bool:
    """A solver takes (state, generate); a factory (``generate``, ``chain(...)``'s maker,
    any ``@solver`` function) can be called with nothing."""
    import inspect

    try:
        parameters = inspect.signature(solver).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters
    )
