"""Progress on long work: how the engine reports it, and the bar a terminal shows.

Long work in the engine (building or synthesising a release, a run's cells, re-deriving a
large trajectory, judging a point set) takes an optional ``OnProgress`` callback and calls
it with (done, total) now and then, in units of its own choosing. The command line passes
the callback ``terminal_bar`` yields, or None. The bar is drawn on stderr and only when
both stdout and stderr are terminals, so a command whose output is piped, captured or shown
in the README prints exactly what it printed before, and work run with no callback pays
nothing for it. ``PIT_PROGRESS=0`` turns the bar off on a terminal too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# (done, total): total may grow while the work learns its size; callers report every
# chunk of work, not every row, so a bar costs next to nothing
OnProgress = Callable[[int, int], None]


def wanted() -> bool:
    """Whether a bar may be drawn: both streams are terminals and it was not turned off."""
    if os.environ.get("PIT_PROGRESS", "").strip() in {"0", "false", "no", "off"}:
        return False
    return sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def terminal_bar(label: str, *, unit: str = "") -> Iterator[OnProgress | None]:
    """A bar labelled ``label`` on stderr while the block runs, or None when none is wanted.

    The bar is gone when the block ends (``transient``): what the command prints after the
    work is all that stays on the screen.
    """
    if not wanted():
        yield None
        return
    # imported here: a command that draws no bar does not load rich at all
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def report(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total if total > 0 else None)

        yield report
