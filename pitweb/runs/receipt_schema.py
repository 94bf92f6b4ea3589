"""The receipt body's JSON Schema: the harness publishes it (``harness/schemas``), and the
site checks every upload against that same file."""

from harness.schemas import receipt_body_schema

RECEIPT_BODY = receipt_body_schema()
