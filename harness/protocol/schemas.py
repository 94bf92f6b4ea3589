"""The published JSON Schemas of each dialect, generated from its types (never written by
hand): ``python -m harness.protocol.schemas`` writes them into ``published/<dialect>/``, and
a test holds the files, the types and sharpebench's own published schemas together."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from harness.protocol import pit, sharpebench

HERE = Path(__file__).resolve().parent / "published"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
# (dialect, file name, root type, title, what it is)
PUBLISHED: tuple[tuple[str, str, Any, str, str], ...] = (
    ("sharpebench", "observation.schema.json", sharpebench.MarketObservation,
     "MarketObservation",
     "What the harness sends an agent at one decision step (sharpebench's contract)."),
    ("sharpebench", "decision.schema.json", sharpebench.Decision, "Decision",
     "What an agent returns at one decision step (sharpebench's contract); closed: an "
     "unknown key is refused and scored as the agent's protocol fault."),
    ("pit", "to-agent.schema.json", pit.ToAgent, "ToAgent",
     f"{pit.VERSION}: what the harness sends an agent in one cell (a task, a tool's "
     "result), one compact JSON object per line; closed."),
    ("pit", "from-agent.schema.json", pit.FromAgent, "FromAgent",
     f"{pit.VERSION}: what an agent sends the harness in one cell (a tool call, the "
     "task's decision), one compact JSON object per line; closed: an unknown key is "
     "refused and scored as the agent's protocol fault."),
    ("pit", "step.schema.json", pit.Step, "Step",
     f"{pit.VERSION} over HTTP: the body of each POST /step (a cell's session, the step's "
     "number, the harness's message); the answer is one FromAgent message; closed."),
)  # fmt: skip


def wire_schema(root: Any, title: str, description: str) -> dict[str, Any]:
    """The root type's schema at the top (a message, or a choice of messages by their
    ``type``), the types it uses under ``$defs``."""
    generated = msgspec.json.schema(root)
    defs = generated.pop("$defs", {})
    top = defs.pop(generated["$ref"].rsplit("/", 1)[1]) if "$ref" in generated else generated
    schema: dict[str, Any] = {"$schema": DRAFT, **top, "title": title, "description": description}
    if defs:
        schema["$defs"] = defs
    return schema


def generate(into: Path = HERE) -> list[Path]:
    written = []
    for dialect, name, root, title, description in PUBLISHED:
        path = into / dialect / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(wire_schema(root, title, description), indent=2) + "\n")
        written.append(path)
    operations = into / "pit" / "operations.json"
    operations.write_text(json.dumps({"version": pit.VERSION, **pit.OPERATIONS}, indent=2) + "\n")
    written.append(operations)
    return written


def load(dialect: str, name: str) -> dict[str, Any]:
    return json.loads((HERE / dialect / name).read_text())  # type: ignore[no-any-return]


if __name__ == "__main__":
    for path in generate(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(path)
