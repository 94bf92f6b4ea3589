"""An Inspect solver run by the harness: nine cells, a receipt, ``pit-harness verify``.

``pit-harness run --config examples/inspect/run.json`` with this folder on PYTHONPATH
(README: "Inspect"). The solver is Inspect's own ``generate``; at every session it gets the
task's prompt and the four window tools (``pit_tools``), inside the agent's sandbox. The
model is Inspect's mock model (``mockllm``) scripted to read and pick: it lists what the
bell made knowable, then answers with the first three row keys, so the run needs no network
and no key. Every output carries its usage: without it Inspect counts tokens with a
tokenizer it downloads, which a sandbox with no network (or a CI machine) cannot do.

For a real provider, name it instead (``from_inspect_solver(generate, "openai/gpt-4o-mini")``),
declare its endpoint in the run's ``model_endpoints`` and pass its key with ``pass_env``:
its calls then go through the run's recording proxy, into the trajectory.

This file is the agent's whole code: a sandboxed run shows the agent its module's file
alone, so it imports nothing from beside it.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from harness.agents.adapters.inspect import from_inspect_solver

MODEL = "mockllm/model"
USAGE = ModelUsage(input_tokens=120, output_tokens=30, total_tokens=150)


def reply(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
    """One turn of the scripted model: a ``pit_list`` call, then a final answer naming the
    first three rows listed (with no tools to call, a sentence)."""
    last = messages[-1]
    if last.role == "tool" and last.error is None:
        rows = json.loads(last.text)["rows"]
        output = ModelOutput.from_content(
            MODEL, json.dumps({"picks": [row["row_key"] for row in rows[:3]]})
        )
    elif last.role == "tool":
        output = ModelOutput.from_content(MODEL, json.dumps({"picks": []}))
    elif tools:
        output = ModelOutput.for_tool_call(MODEL, "pit_list", {"limit": 20})
    else:
        output = ModelOutput.from_content(MODEL, "I cannot tell the date or the issuer.")
    output.usage = USAGE
    return output


def mock_model() -> Model:
    """A fresh scripted mock model (no state is shared between cells or samples)."""
    return get_model(MODEL, custom_outputs=reply, memoize=False)


agent = from_inspect_solver(generate, MODEL, model_args={"custom_outputs": reply})
