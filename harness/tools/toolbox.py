"""The four window tools, bound to one session's opening bell.

Knowability always comes from the main arm's clock (control arms are joined on
``row_key``); what the agent reads comes from its own arm, and on the shifted arm
every instant and date in an answer is shifted too, so the harness never leaks the
real date itself. Rows are kept sorted by ``known_at``: what is knowable at a bell is
a prefix found by bisection, so a call costs the same however large the release is.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness import outcomes
from harness.market.clocks import iso_utc, knowable_count, known_at
from harness.release.arms import shift_iso
from harness.rundata.trajectory import served_row_text
from harness.tools.table import TOOL_SCHEMA, TOOLS, ToolError

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True)
class ClockIndex:
    """Main-arm rows of one clock, ordered by when they became knowable."""

    clock: str
    order: tuple[int, ...]  # row positions sorted by (known_at, row_key)
    known: tuple[float, ...]  # known_at of order[i]
    known_iso: tuple[str, ...]  # by row position
    source: tuple[str, ...]  # by row position: the field known_at came from
    rank: tuple[int, ...]  # by row position: its place in ``order``

    @classmethod
    def build(cls, main_rows: list[dict[str, Any]], clock: str) -> ClockIndex:
        stamps = [known_at(row, clock) for row in main_rows]
        order = sorted(range(len(main_rows)), key=lambda i: (stamps[i][0], main_rows[i]["row_key"]))
        return cls(
            clock=clock,
            order=tuple(order),
            known=tuple(stamps[i][0] for i in order),
            known_iso=tuple(iso_utc(s[0]) for s in stamps),
            source=tuple(s[1] for s in stamps),
            rank=tuple(rank for rank, _ in sorted(enumerate(order), key=lambda pair: pair[1])),
        )

    def knowable(self, bell: float) -> int:
        """How many rows became knowable strictly before ``bell``."""
        return knowable_count(self.known, bell)


def knowable_test(
    index: ClockIndex, positions: dict[str, int], bell: float
) -> Callable[[str], bool]:
    """A fast ``row_key -> knowable at this bell`` for checking many picks, from the
    runner's own state (never from anything the agent holds)."""
    rank, count = index.rank, index.knowable(bell)

    def test(row_key: str) -> bool:
        position = positions.get(row_key)
        return position is not None and rank[position] < count

    return test


class ArmRows:
    """One arm's rows of the window, by position (the same order in every arm).

    ``parsed`` holds the rows as dicts when the caller could afford them; otherwise a
    row is parsed from its stored line each time it is served, which bounds memory on
    a whole-release run at the price of parsing again. ``forms`` comes from the main
    arm (a form is the same in every arm) so filters never need the parsed row.
    """

    def __init__(
        self, texts: list[str], parsed: list[dict[str, Any]] | None, forms: list[str]
    ) -> None:
        self.texts = texts
        self._parsed = parsed
        self._forms = forms

    def __len__(self) -> int:
        return len(self.texts)

    def form(self, position: int) -> str:
        return self._forms[position]

    def view(self, position: int) -> dict[str, Any]:
        """The row, not to be handed out (it may be shared)."""
        if self._parsed is not None:
            return self._parsed[position]
        row: dict[str, Any] = json.loads(self.texts[position])
        return row

    def copy(self, position: int) -> dict[str, Any]:
        """A row the agent may keep and change."""
        if self._parsed is not None:
            return dict(self._parsed[position])
        row: dict[str, Any] = json.loads(self.texts[position])
        return row

    @classmethod
    def of(cls, rows: list[dict[str, Any]]) -> ArmRows:
        """From parsed rows alone (tests, small tools): texts rebuilt canonically."""
        from harness import canonical

        return cls([canonical.line(r) for r in rows], rows, [r["form"] for r in rows])


class Toolbox:
    """What an agent may call during one session of one cell."""

    def __init__(
        self,
        *,
        arm: str,
        index: ClockIndex,
        rows: ArmRows | list[dict[str, Any]],
        positions: dict[str, int],
        bell: float,
        previous_bell: float | None,
        session_date: str,
        record: Callable[[str, dict[str, Any], dict[str, Any], list[str] | None], None],
        served: Callable[[int], None] | None = None,
    ) -> None:
        self.arm = arm
        self.clock = index.clock
        self._index = index
        self._rows = rows if isinstance(rows, ArmRows) else ArmRows.of(rows)
        self._positions = positions
        self._count = index.knowable(bell)
        self._new_from = 0 if previous_bell is None else index.knowable(previous_bell)
        self._shift = arm == "shifted"
        self.session_date = shift_iso(session_date) if self._shift else session_date
        bell_iso = iso_utc(bell)
        self.known_at = shift_iso(bell_iso) if self._shift else bell_iso
        self._record = record
        self._served = served
        self._texts = self._rows.texts
        # the served rows' canonical text of the last call, for a transport to reuse
        self.last_served: list[str] | None = None
        self._fault: outcomes.AgentFault | None = None

    # -- helpers -------------------------------------------------------------
    def _envelope(self, tool: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "tool": tool,
            "arm": self.arm,
            "clock": self.clock,
            "session_date": self.session_date,
            "known_at": self.known_at,
            **payload,
        }

    def _stamp(self, position: int) -> str:
        stamp = self._index.known_iso[position]
        return shift_iso(stamp) if self._shift else stamp

    def _row(self, position: int, stamp: str) -> dict[str, Any]:
        out = self._rows.copy(position)
        out["known_at"] = stamp
        out["known_at_source"] = self._index.source[position]
        if self._served is not None:
            self._served(position)
        return out

    def _serve(self, positions: list[int]) -> tuple[list[dict[str, Any]], list[str] | None]:
        """Rows for the agent (copies), and their canonical text for the trajectory."""
        # one loop with locals: this is the hot path of a run that reads every row
        known_iso, source, texts_in = self._index.known_iso, self._index.source, self._texts
        copy, shift, served = self._rows.copy, self._shift, self._served
        rows: list[dict[str, Any]] = []
        texts: list[str] = []
        for p in positions:
            stamp = shift_iso(known_iso[p]) if shift else known_iso[p]
            row = copy(p)
            row["known_at"] = stamp
            row["known_at_source"] = source[p]
            rows.append(row)
            texts.append(served_row_text(texts_in[p], stamp, source[p]))
            if served is not None:
                served(p)
        return rows, texts

    def _call(
        self,
        tool: str,
        args: dict[str, Any],
        payload: dict[str, Any],
        texts: list[str] | None = None,
    ) -> dict[str, Any]:
        result = self._envelope(tool, payload)
        self._record(tool, args, result, texts)
        self.last_served = texts
        return result

    def _refused(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """A call with an argument of the wrong JSON type: answered with the diagnostic
        alone (the value is never echoed into an answer) and held as the agent's protocol
        fault, which the runner takes after the decision (held, not raised: an agent in the
        harness's process could catch an exception). None when every type is right."""
        problem = TOOLS[tool].type_problem(args)
        if problem is None:
            return None
        if self._fault is None:
            self._fault = outcomes.AgentFault(
                outcomes.PROTOCOL_VIOLATION, f"a tool argument of the wrong type: {problem}"
            )
        # recorded as sent where it is JSON data (an in-process agent may pass anything)
        sent = {
            k: v if outcomes.json_data_problem(v) is None else repr(v)[:80] for k, v in args.items()
        }
        return self._call(tool, sent, {"error": problem})

    def take_fault(self) -> outcomes.AgentFault | None:
        """The protocol fault a call since the last take made (the first), once."""
        fault, self._fault = self._fault, None
        return fault

    # -- the four tools ------------------------------------------------------
    def pit_list(
        self,
        limit: int | None = 100,
        offset: int = 0,
        since: str = "previous_session",
        form: str | None = None,
    ) -> dict[str, Any]:
        """Rows knowable at this bell: by default those that became knowable since
        the previous session's bell (``since="window_start"`` lists all of them),
        oldest first."""
        args = {"limit": limit, "offset": offset, "since": since, "form": form}
        refused = self._refused("pit_list", args)
        if refused is not None:
            return refused
        try:
            checked = TOOLS["pit_list"].check(args)
        except ToolError as exc:
            return self._call("pit_list", args, {"error": str(exc)})
        cap, offset = checked["limit"], checked["offset"]
        lo = self._new_from if checked["since"] == "previous_session" else 0
        picked = list(self._index.order[lo : self._count])
        if form is not None:
            picked = [p for p in picked if self._rows.form(p) == form]
        total = len(picked)
        window = picked[offset:] if cap is None else picked[offset : offset + cap]
        rows, texts = self._serve(window)
        return self._call(
            "pit_list",
            args,
            {"rows": rows, "total": total, "truncated": offset + len(rows) < total},
            texts,
        )

    def pit_search(self, query: str, limit: int = 20, form: str | None = None) -> dict[str, Any]:
        """Case-insensitive substring search over the text fields of knowable rows."""
        args = {"query": query, "limit": limit, "form": form}
        refused = self._refused("pit_search", args)
        if refused is not None:
            return refused
        try:
            cap = TOOLS["pit_search"].check(args)["limit"]
        except ToolError as exc:
            return self._call("pit_search", args, {"error": str(exc)})
        needle = query.strip().lower()
        hits = []
        for p in self._index.order[: self._count]:
            if form is not None and self._rows.form(p) != form:
                continue
            row = self._rows.view(p)
            text = " ".join(
                str(row.get(k) or "") for k in ("title", "issuer", "ticker", "form", "accession")
            ).lower()
            if needle in text:
                hits.append(p)
        shown = hits if cap is None else hits[:cap]
        rows, texts = self._serve(shown)
        return self._call(
            "pit_search",
            args,
            {
                "rows": rows,
                "total": len(hits),
                "truncated": len(shown) < len(hits),
            },
            texts,
        )

    def pit_read(self, row_key: str) -> dict[str, Any]:
        """One row by key; a row whose clock has not passed gives only its key."""
        args = {"row_key": row_key}
        refused = self._refused("pit_read", args)
        if refused is not None:
            return refused
        position = self._positions.get(row_key)
        if position is None:
            return self._call("pit_read", args, {"status": "not_in_window", "row_key": row_key})
        if not self._is_knowable(position):
            return self._call("pit_read", args, {"status": "not_yet_knowable", "row_key": row_key})
        return self._call(
            "pit_read", args, {"status": "ok", "row": self._row(position, self._stamp(position))}
        )

    def pit_coverage(self) -> dict[str, Any]:
        """What is knowable so far: counts by form and how many rows fell back."""
        knowable = self._index.order[: self._count]
        forms = Counter(self._rows.form(p) for p in knowable)
        stamped = sum(1 for p in knowable if self._index.source[p] == "acceptance_at")
        return self._call(
            "pit_coverage",
            {},
            {
                "knowable_rows": len(knowable),
                "new_since_previous_session": self._count - self._new_from,
                "by_form": dict(sorted(forms.items())),
                "acceptance_stamped": stamped,
                "known_at_fallbacks": (
                    sum(1 for p in knowable if self._index.source[p] == "published_at")
                    if self.clock == "pit"
                    else 0
                ),
            },
        )

    # -- for the runner ------------------------------------------------------
    def _is_knowable(self, position: int) -> bool:
        return self._index.rank[position] < self._count

    def is_knowable(self, row_key: str) -> bool:
        position = self._positions.get(row_key)
        return position is not None and self._is_knowable(position)

    def newly_knowable(self) -> int:
        return self._count - self._new_from

    def newly_positions(self) -> list[int]:
        """The rows that became knowable at this bell, oldest first (for a dialect that
        shows them to the agent unasked)."""
        return list(self._index.order[self._new_from : self._count])

    def position(self, row_key: str) -> int:
        return self._positions[row_key]

    def schema(self) -> list[dict[str, Any]]:
        """The tools as OpenAI-style function specs (for tool-loop adapters)."""
        return TOOL_SCHEMA
