"""Text a person typed, checked before the site stores it."""

from __future__ import annotations

from pitweb.core.errors import SubmissionError


def readable(value: str, what: str) -> str:
    """A text field the site will store: no NUL byte (no database stores one as text)."""
    if "\x00" in (value or ""):
        raise SubmissionError("unreadable_input", f"{what} holds a NUL byte")
    return value or ""


def require_reason(reason: str) -> str:
    """A staff action's reason, which is published with it: required, trimmed."""
    reason = readable(reason, "reason").strip()
    if not reason:
        raise SubmissionError(
            "reason_required", "staff actions need a reason; it is published with the action"
        )
    return reason
