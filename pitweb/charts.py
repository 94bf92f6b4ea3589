"""DataFrame -> Plotly figure, pure functions. Pages embed ``figure.to_json()``."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from harness.vocabulary import ARMS, CLOCKS

CLOCK_ORDER = list(CLOCKS)
ARM_ORDER = list(ARMS)
_LAYOUT = {
    "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
    "height": 320,
    "template": "plotly_white",
}


def cells_frame(cells: list[dict[str, object]]) -> pd.DataFrame:
    """One row per cell: arm, clock, total_return (as percent; NaN for n/a)."""
    frame = pd.DataFrame(cells, columns=["arm", "clock", "total_return"])
    frame["percent"] = pd.to_numeric(frame["total_return"], errors="coerce") * 100
    return frame


def returns_by_clock(frame: pd.DataFrame, title: str = "Return per clock, by arm") -> go.Figure:
    figure = go.Figure()
    for arm in ARM_ORDER:
        part = frame[frame["arm"] == arm].set_index("clock").reindex(CLOCK_ORDER)
        figure.add_bar(name=arm, x=CLOCK_ORDER, y=part["percent"].tolist())
    figure.update_layout(title=title, barmode="group", yaxis_title="total return, %", **_LAYOUT)
    return figure


def arm_deltas(frame: pd.DataFrame) -> go.Figure:
    """Per clock: main minus shifted and main minus redacted (the contamination delta)."""
    wide = frame.pivot_table(
        index="clock", columns="arm", values="percent", aggfunc="first"
    ).reindex(CLOCK_ORDER)
    figure = go.Figure()
    for control in ("shifted", "redacted"):
        if "main" in wide and control in wide:
            figure.add_bar(
                name=f"main - {control}", x=CLOCK_ORDER, y=(wide["main"] - wide[control]).tolist()
            )
    figure.update_layout(
        title="Contamination delta per clock",
        barmode="group",
        yaxis_title="percentage points",
        **_LAYOUT,
    )
    return figure


def compare_runs(frames: dict[str, pd.DataFrame]) -> go.Figure:
    """Several runs' main-arm returns per clock, overlaid."""
    figure = go.Figure()
    for label, frame in frames.items():
        main = frame[frame["arm"] == "main"].set_index("clock").reindex(CLOCK_ORDER)
        figure.add_bar(name=label, x=CLOCK_ORDER, y=main["percent"].tolist())
    figure.update_layout(
        title="Main-arm return per clock", barmode="group", yaxis_title="total return, %", **_LAYOUT
    )
    return figure


def rows_per_day(frame: pd.DataFrame) -> go.Figure:
    """Rows per partition date, stacked by form (from a release's index)."""
    figure = go.Figure()
    for form, part in frame.groupby("form"):
        figure.add_bar(name=str(form), x=part["date"].tolist(), y=part["rows"].tolist())
    figure.update_layout(
        title="Rows per day by form", barmode="stack", yaxis_title="rows", **_LAYOUT
    )
    return figure
