"""The published JSON Schemas of what the harness writes.

``receipt-body.schema.json``: the body of a receipt, every key ``build_body`` can write
(a test holds the two together). The site validates uploads against this same file.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def receipt_body_schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("receipt-body.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
