"""A ranked row's key in the ranking order, and the pagination built from keys: a board
is paged by key (``?after=`` / ``?before=`` a row's cursor), so a page is an indexed read
wherever it starts, and a link stays on the row it names while the board changes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from pitweb.core.errors import SubmissionError


@dataclass(frozen=True, order=True)
class Cursor:
    """A ranked row's place in the ranking order (every key ascending)."""

    neg_return: float
    run_code: str
    pk: int

    def text(self) -> str:
        return f"{self.neg_return!r}~{self.pk}~{self.run_code}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        parts = text.split("~", 2)
        try:
            neg_return, pk = float(parts[0]), int(parts[1])
            code = parts[2]
        except (ValueError, IndexError):
            raise SubmissionError(
                "invalid_cursor", f"{text[:80]!r} is not a board cursor"
            ) from None
        if not math.isfinite(neg_return) or not 0 < pk < 2**63 or not 0 < len(code) <= 16:
            raise SubmissionError("invalid_cursor", f"{text[:80]!r} is not a board cursor")
        return cls(neg_return, code, pk)

    def after(self) -> Q:
        """Entries after this cursor in the ranking order."""
        return self._beyond("gt")

    def before(self) -> Q:
        """Entries before this cursor in the ranking order."""
        return self._beyond("lt")

    def _beyond(self, op: str) -> Q:
        a, c, p = self.neg_return, self.run_code, self.pk
        return (
            Q(**{f"neg_return__{op}": a})
            | Q(neg_return=a, **{f"run_code__{op}": c})
            | Q(neg_return=a, run_code=c, **{f"run_id__{op}": p})
        )


def pages_around(keys: list[Cursor], first: int, total: int, per_page: int) -> dict[str, Any]:
    """The pagination of a page of ranked rows (their cursors ``keys``) whose first is at
    position ``first``: ``next`` and ``previous`` are the cursors to ask with (``?after=``,
    ``?before=``)."""
    return {
        "page": (first - 1) // per_page + 1,
        "pages": max(1, -(-total // per_page)),
        "per_page": per_page,
        "ranked_total": total,
        "next": keys[-1].text() if keys and first - 1 + len(keys) < total else None,
        "previous": keys[0].text() if keys and first > 1 else None,
    }
