"""An agent that asks a real model: any OpenAI-compatible chat-completions endpoint, reached
with the ``openai`` client, reading the filings with the four window tools by the model's
own tool calls.

Run it with the run config beside it (``model_agent.json``), from a folder that holds the
release it names, with this folder on the Python path::

    export OPENAI_API_KEY=sk-...
    export OPENAI_BASE_URL=https://api.openai.com/v1 PIT_MODEL=gpt-4o-mini-2024-07-18
    PYTHONPATH=. pit-harness run --config model_agent.json

What it reads from its environment, inside the agent's sandbox, where only what the run
config hands over exists:

- ``OPENAI_API_KEY``: the key, handed over by ``pass_env``; never written anywhere.
- ``OPENAI_BASE_URL`` and ``PIT_MODEL``: the endpoint and the model, handed over by
  ``agent_env``, which the receipt records. The endpoint's host must be declared in
  ``model_endpoints``: the run's recording proxy refuses any other, and the refusal makes
  the run invalid.

At each session the tool-loop adapter (``from_tool_loop``) gives the model the session's
prompt and the four tools (``pit_list``, ``pit_search``, ``pit_read``, ``pit_coverage``),
runs every tool call the model makes and hands back the answers, until the model answers
without a call; the row keys in that answer (a JSON ``{"picks": [...]}`` or free text) are
the picks. The mask probe's question (the real date and issuer behind a row of the shifted
arm) goes to the model the same way, and its text is the answer.

Every call asks for temperature 0 and a fixed seed, so a model that honours them answers
alike; re-execution (``pit-harness verify --reexecute``) replays the recorded answers, so
the agent's own code is checked exactly whatever the model does.

This file is the agent's whole code: a sandboxed run shows the agent its module's file
alone, so it imports nothing from beside it (the ``openai`` client comes from the
environment the harness runs in).
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from harness.agents.adapters.plain import from_tool_loop

SEED = 7
# how long one model call may take; a provider's busy answers (429, 5xx) are retried by
# the client, and each try is recorded
TIMEOUT_SECONDS = 120.0
MAX_RETRIES = 2


def _setting(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise RuntimeError(
            f"{name} is not set in the agent's environment: list it in the run's "
            "agent_env (a setting, recorded) or pass_env (a key, never written)"
        )
    return value


@cache
def client() -> Any:
    """One client for the agent's process (each cell is a process of its own)."""
    from openai import OpenAI

    return OpenAI(
        base_url=_setting("OPENAI_BASE_URL"),
        api_key=_setting("OPENAI_API_KEY"),
        timeout=TIMEOUT_SECONDS,
        max_retries=MAX_RETRIES,
    )


def step(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """One turn of the model: the conversation so far and the four tools in, the
    assistant's message out (its text, and the tool calls it asks for, if any)."""
    reply = client().chat.completions.create(
        model=_setting("PIT_MODEL"),
        messages=messages,
        tools=tools,
        temperature=0,
        seed=SEED,
    )
    message = reply.choices[0].message
    answer: dict[str, Any] = {"content": message.content}
    calls = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.function.name, "arguments": call.function.arguments},
        }
        for call in message.tool_calls or []
        if call.type == "function"
    ]
    if calls:
        answer["tool_calls"] = calls
    return answer


agent = from_tool_loop(step, name="model_agent")
