"""Agents that call a loopback model through the real ``openai`` client.

A run binds its agent's source file by its sha256, and a golden receipt
(tests/golden/egress-loopback.body.json) holds that digest: editing this file changes it.
"""

from __future__ import annotations

from typing import Any


def openai_agent(base_url: str, elsewhere: str | None = None, prefix: str = "") -> Any:
    """An agent that asks the model with the real ``openai`` client (``prefix`` before the
    task's prompt: another prompt, as an agent changed since its run would send)."""

    def agent(prompt: str, tools: Any) -> dict[str, Any]:
        import os

        from openai import APIConnectionError, OpenAI

        client = OpenAI(
            base_url=base_url, api_key=os.environ["PIT_TEST_MODEL_KEY"], max_retries=0, timeout=30
        )
        rows = tools.pit_list(limit=2)["rows"]
        reply = client.chat.completions.create(
            model="loopback-1", messages=[{"role": "user", "content": prefix + prompt}]
        )
        text = reply.choices[0].message.content or ""
        if elsewhere:
            try:
                OpenAI(base_url=elsewhere, api_key="x", max_retries=0, timeout=10).models.list()
                text += " | elsewhere answered"
            except APIConnectionError as exc:
                text += f" | elsewhere refused: {type(exc).__name__}"
        return {"picks": [r["row_key"] for r in rows][:1], "text": text}

    return agent
