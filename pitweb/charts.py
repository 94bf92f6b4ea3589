"""DataFrame -> Plotly figure, pure functions. Pages embed ``figure.to_json()``.

One unit everywhere: percent (returns) and percentage points (differences). Each chart
answers one question, and a page draws none when there is nothing to draw.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Iterable
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from harness.vocabulary import ARMS, CLOCKS

CLOCK_ORDER = list(CLOCKS)
ARM_ORDER = list(ARMS)
ARM_COLOURS = {"main": "#1f5fa8", "redacted": "#8a6bbf", "shifted": "#d08a1e"}
# a qualitative palette with enough distinct colours for the top forms, plus grey for "other"
FORM_PALETTE = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#bcbd22", "#393b79", "#637939", "#843c39",
]  # fmt: skip
OTHER_COLOUR = "#9a9a9a"
# a category's tick label: lines of at most this many characters (the hover has it whole)
TICK_CHARS = 18
TICK_LINES = 3


def _house_template() -> go.layout.Template:
    """Plotly's white template, its page layout only: the full one is validated and
    copied into every figure (20 ms and 6 kB each); the trace defaults it adds are not
    used here."""
    import plotly.io as pio

    white = pio.templates["plotly_white"].layout
    names = (
        "paper_bgcolor", "plot_bgcolor", "colorway", "font", "hovermode", "hoverlabel",
        "xaxis", "yaxis", "title", "polar",
    )  # fmt: skip
    return go.layout.Template(layout={name: white[name] for name in names})


_TEMPLATE = _house_template()
_LAYOUT: dict[str, Any] = {
    "margin": {"l": 55, "r": 45, "t": 70, "b": 40},  # r: room for the vertical mode bar
    "height": 320,
    "template": _TEMPLATE,
    "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},
}


# a mask verdict as the pages say it
VERDICT_WORDS = {
    "mask_holds": "mask holds",
    "mask_leaks": "mask leaks",
    "not_run": "mask not probed",
}


def verdict_words(verdict: object) -> str:
    return VERDICT_WORDS.get(str(verdict), str(verdict).replace("_", " "))


def literal(value: object) -> str:
    """A string of someone else's (an agent name, a run id, a form) as Plotly text that
    shows as written. Plotly reads a subset of HTML in every text it draws (tick labels,
    hover, titles, legends): ``<a href>`` becomes a link, ``<span style>`` restyles,
    ``<br>`` breaks a line. With ``&``, ``<`` and ``>`` escaped no tag is left to read,
    and Plotly's one pass of entity decoding gives back the characters as written."""
    return html.escape(str(value), quote=False)


def tick_label(label: str) -> str:
    """A long label as a tick that leaves the plot its room, never cut inside a word (two
    names that differ by a letter stay two names): wrapped at spaces and hyphens into
    lines of about TICK_CHARS, and past TICK_LINES lines its first line, an ellipsis and
    its last words, so its start and its end stay (an agent's name, a run id). The
    figure's hover says it whole."""
    lines = _wrapped(label)
    if len(lines) > TICK_LINES:
        words = label.split()
        tail = [words.pop()]
        while len(words) > 1 and len(" ".join([words[-1], *tail])) <= TICK_CHARS:
            tail.insert(0, words.pop())
        # one hyphenated word: its parts are the words
        lines = (
            [_wrapped(" ".join(words))[0], "…", " ".join(tail)]
            if words
            else [lines[0], "…", lines[-1]]
        )
    return "<br>".join(literal(line) for line in lines)


def _wrapped(label: str) -> list[str]:
    return textwrap.wrap(label, TICK_CHARS, break_long_words=False) or [label]


def platform_frame(cells: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per cell of a platform score: arm, clock, percent, low, high, priced."""
    rows = []
    for cell in cells:
        interval = cell.get("interval_95") or [None, None]
        rows.append(
            {
                "arm": cell["arm"],
                "clock": cell["clock"],
                "total_return": cell.get("total_return"),
                "low": interval[0],
                "high": interval[1],
                "priced_trades": cell.get("priced_trades", 0),
            }
        )
    frame = pd.DataFrame(
        rows, columns=["arm", "clock", "total_return", "low", "high", "priced_trades"]
    )
    for column in ("total_return", "low", "high"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce") * 100
    return frame.rename(columns={"total_return": "percent"})


def has_numbers(frame: pd.DataFrame) -> bool:
    return bool(frame["percent"].notna().any()) if "percent" in frame else False


def _whiskers(
    values: Iterable[float | None],
    lows: Iterable[float | None],
    highs: Iterable[float | None],
    scale: float = 1,
    **style: Any,
) -> dict[str, Any]:
    """A Plotly error-bar dict (``error_x`` or ``error_y``) reaching from each value to its
    low and high, the differences times ``scale``; None where a number is missing."""
    up: list[float | None] = []
    down: list[float | None] = []
    for value, low, high in zip(values, lows, highs, strict=True):
        missing = pd.isna(value)  # None, or a frame's NaN
        up.append(None if missing or pd.isna(high) else (high - value) * scale)  # type: ignore[operator]
        down.append(None if missing or pd.isna(low) else (value - low) * scale)  # type: ignore[operator]
    return {"type": "data", "symmetric": False, "array": up, "arrayminus": down, **style}


def returns_by_clock(frame: pd.DataFrame) -> go.Figure:
    """Platform return per clock and arm, each bar with its 95% interval."""
    figure = go.Figure()
    for arm in ARM_ORDER:
        part = frame[frame["arm"] == arm].set_index("clock").reindex(CLOCK_ORDER)
        if part["percent"].notna().any():
            figure.add_bar(
                name=arm,
                x=CLOCK_ORDER,
                y=part["percent"].tolist(),
                marker_color=ARM_COLOURS[arm],
                error_y=_whiskers(part["percent"], part["low"], part["high"]),
                hovertemplate="%{x} " + arm + ": %{y:.2f}%<extra></extra>",
            )
    figure.update_layout(
        title="Platform return per clock, by arm (95% interval)",
        barmode="group",
        yaxis_title="mean return per trade, %",
        **_LAYOUT,
    )
    return figure


def contamination(
    deltas: dict[str, dict[str, float | None]],
    verdict: str,
    intervals: dict[str, dict[str, list[float] | None]] | None = None,
) -> go.Figure | None:
    """The harness's contamination deltas per clock (main minus each control), in
    percentage points, with their 95% intervals where the figures carry them (paired
    block bootstrap), titled with the mask verdict that qualifies the shifted one. None
    when no delta has a value."""
    figure = go.Figure()
    drawn = False
    for control in ("shifted", "redacted"):
        key = f"main_minus_{control}"
        values = [(deltas.get(clock) or {}).get(key) for clock in CLOCK_ORDER]
        if not any(v is not None for v in values):
            continue
        drawn = True
        bounds = [((intervals or {}).get(clock) or {}).get(key) for clock in CLOCK_ORDER]
        whiskers: dict[str, Any] = {}
        if any(b is not None for b in bounds):
            whiskers["error_y"] = _whiskers(
                values,
                [None if b is None else b[0] for b in bounds],
                [None if b is None else b[1] for b in bounds],
                scale=100,
            )
        figure.add_bar(
            name=f"main − {control}",
            x=CLOCK_ORDER,
            y=[None if v is None else v * 100 for v in values],
            marker_color=ARM_COLOURS[control],
            hovertemplate="%{x}: %{y:+.2f} pp<extra></extra>",
            **whiskers,
        )
    if not drawn:
        return None
    figure.update_layout(
        title=f"Contamination delta per clock, 95% interval ({literal(verdict_words(verdict))})",
        barmode="group",
        yaxis_title="percentage points",
        **_LAYOUT,
    )
    return figure


PLACEBO_SIDES = {
    "before": ("before the cutoff", "#1f5fa8"),
    "after": ("after the cutoff", "#9a9a9a"),
}


def placebo_split(split: dict[str, Any]) -> go.Figure | None:
    """The placebo split (``harness.receipt.placebo``): per clock, main minus shifted
    before and after the declared training cutoff, in percentage points, each a point
    with its 95% interval, and the zero line memory's delta is read against (a delta
    before, none after). None when no side has a delta."""
    clocks = [c for c in CLOCK_ORDER if c in (split.get("clocks") or {})]
    figure = go.Figure()
    drawn = False
    for side, (label, colour) in PLACEBO_SIDES.items():
        parts = [split["clocks"][clock][side] for clock in clocks]
        values = [p.get("main_minus_shifted") for p in parts]
        if not any(v is not None for v in values):
            continue
        drawn = True
        bounds = [p.get("main_minus_shifted_interval_95") or [None, None] for p in parts]
        figure.add_scatter(
            name=label,
            mode="markers",
            x=clocks,
            y=[None if v is None else v * 100 for v in values],
            marker={"color": colour, "size": 10},
            error_y=_whiskers(values, [b[0] for b in bounds], [b[1] for b in bounds], scale=100),
            customdata=[p.get("main_trades", 0) for p in parts],
            hovertemplate="%{x} " + label + ": %{y:+.2f} pp (%{customdata} main-arm trades)"
            "<extra></extra>",
        )
    if not drawn:
        return None
    figure.add_hline(y=0, line={"color": "#555", "width": 1})
    figure.update_layout(
        title=f"Main − shifted around the cutoff {literal(split['cutoff'])} (95% interval)",
        scattermode="group",
        yaxis_title="percentage points",
        **_LAYOUT,
    )
    return figure


def compare_runs(runs: dict[str, pd.DataFrame]) -> go.Figure | None:
    """Several runs' platform pit-clock returns, shifted and main arm, with intervals.
    ``runs`` is keyed by each run's label (the submitter's words, drawn as text). The bars
    lie down, one row per run: a run's name reads across, never rotated, however long,
    and the legend sits below the plot, clear of the title."""
    figure = go.Figure()
    drawn = False
    shown: dict[str, str] = {}
    for arm in ("main", "shifted"):  # drawn bottom up: shifted, the ranked one, on top
        labels, values, lows, highs = [], [], [], []
        for label, frame in runs.items():
            row = frame[(frame["arm"] == arm) & (frame["clock"] == "pit")]
            if row.empty or pd.isna(row["percent"].iloc[0]):
                continue
            labels.append(literal(label))
            shown[labels[-1]] = tick_label(label)
            values.append(float(row["percent"].iloc[0]))
            lows.append(float(row["low"].iloc[0]))
            highs.append(float(row["high"].iloc[0]))
        if values:
            drawn = True
            figure.add_bar(
                name=f"{arm} arm",
                orientation="h",
                y=labels,
                x=values,
                marker_color=ARM_COLOURS[arm],
                error_x=_whiskers(values, lows, highs),
                customdata=labels,  # the hover names the run whole, its tick may be short
                hovertemplate="%{customdata}<br>" + arm + " arm: %{x:.2f}%<extra></extra>",
            )
    if not drawn:
        return None
    layout = {**_LAYOUT, "legend": {**_BELOW, "y": -0.25, "traceorder": "reversed"}}
    layout["height"] = max(320, 140 + 70 * len(shown))
    layout["margin"] = {**_LAYOUT["margin"], "b": 90}
    figure.update_layout(
        title="Platform pit-clock return: shifted (ranked) and main arm, 95% interval",
        barmode="group",
        xaxis_title="mean return per trade, %",
        yaxis={
            "tickmode": "array",
            "tickvals": list(shown),
            "ticktext": list(shown.values()),
            "automargin": True,
        },
        **layout,
    )
    return figure


def rows_per_day(frame: pd.DataFrame, top: int = len(FORM_PALETTE) - 1) -> go.Figure:
    """Rows per partition date, stacked by form: the ``top`` largest forms in their own
    colours, the rest as "other" (so no two forms share a colour)."""
    totals = frame.groupby("form")["rows"].sum().sort_values(ascending=False)
    keep = list(totals.index[:top]) if len(totals) > top + 1 else list(totals.index)
    relabelled = frame.assign(form=frame["form"].where(frame["form"].isin(keep), "other"))
    folded = relabelled.groupby(["form", "date"], as_index=False)["rows"].sum()
    figure = go.Figure()
    for n, form in enumerate([*keep, *(["other"] if len(keep) < len(totals) else [])]):
        part = folded[folded["form"] == form]
        colour = OTHER_COLOUR if form == "other" else FORM_PALETTE[n % len(FORM_PALETTE)]
        figure.add_bar(
            name=literal(form),
            x=part["date"].tolist(),
            y=part["rows"].tolist(),
            marker_color=colour,
        )
    figure.update_layout(
        title="Rows per day by form", barmode="stack", yaxis_title="rows", **_LAYOUT
    )
    return figure


# -- judged points ---------------------------------------------------------------------

# a legend under the plot: a phone's width leaves no room beside the title for six classes
_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0}

CLASS_COLOURS = {
    "completely_correct": "#2e8b57",
    "numeric_factual_error": "#c0392b",
    "non_numeric_factual_error": "#e67e22",
    "analysis_assumption_error": "#8e44ad",
    "analysis_logic_error": "#2c6fbb",
    "other_error": "#7f8c8d",
}


def class_radar(frame: pd.DataFrame) -> go.Figure:
    """The results radar: one trace per judged set, its share of each of the six classes."""
    figure = go.Figure()
    # each spoke's name in lines short enough for a phone's width
    axes = ["<br>".join(textwrap.wrap(c.replace("_", " "), 12)) for c in CLASS_COLOURS]
    for label in dict.fromkeys(frame["label"]):
        part = frame[frame["label"] == label].set_index("class").reindex(list(CLASS_COLOURS))
        shares = (part["share"].fillna(0) * 100).tolist()
        figure.add_scatterpolar(
            r=[*shares, shares[0]],
            theta=[*axes, axes[0]],
            name=literal(label),
            fill="toself",
            opacity=0.6,
            hovertemplate="%{theta}: %{r:.1f}%<extra>" + literal(label) + "</extra>",
        )
    figure.update_layout(
        title="Results radar (rings every 25%)",
        # completely correct at the top; the rings' numbers are left off, as they would be
        # drawn across the traces (the hover and the table beside the chart say them);
        # the spokes' names kept clear of the title
        polar={
            "domain": {"y": [0.0, 0.9]},
            "radialaxis": {
                "range": [0, 100],
                "tickvals": [25, 50, 75, 100],
                "showticklabels": False,
                "layer": "below traces",
            },
            "angularaxis": {"rotation": 90, "direction": "clockwise", "layer": "below traces"},
        },
        **{
            **_LAYOUT,
            "height": 500,
            "legend": _BELOW,
            "margin": {"l": 60, "r": 60, "t": 60, "b": 110},
        },
    )
    return figure


def class_shares(rows: list[dict[str, Any]], labels: list[str]) -> go.Figure | None:
    """The primary class chart: for each of the six classes, in the classes' order, one
    bar per row (a model's pooled results), its share of the row's judged answers with
    the share's 95% interval. Bars, not a polygon: a radar's area means nothing, a bar's
    length is the share. ``rows``: each with ``class_intervals`` ({class: {share, low,
    high}} or None), ``labels`` the legend's name for each."""
    drawn = [(r, label) for r, label in zip(rows, labels, strict=True) if r["judged"]]
    if not drawn:
        return None
    figure = go.Figure()
    names = [c.replace("_", " ") for c in CLASS_COLOURS]
    ticks = ["<br>".join(textwrap.wrap(n, 14)) for n in names]
    for n, (row, label) in enumerate(drawn):
        parts = [row["class_intervals"][c] for c in CLASS_COLOURS]
        shares = [p["share"] * 100 for p in parts]
        figure.add_bar(
            name=literal(label),
            x=ticks,
            y=shares,
            marker_color=FORM_PALETTE[n % len(FORM_PALETTE)],
            error_y=_whiskers(
                shares, [p["low"] * 100 for p in parts], [p["high"] * 100 for p in parts],
                color="#333", thickness=1.2, width=3,
            ),
            customdata=[[p["low"] * 100, p["high"] * 100, row[c]] for p, c in
                        zip(parts, CLASS_COLOURS, strict=True)],
            hovertemplate="%{x}: %{y:.1f}% [%{customdata[0]:.1f}, %{customdata[1]:.1f}] "
            "(%{customdata[2]})<extra>" + literal(label) + "</extra>",
        )  # fmt: skip
    figure.update_layout(
        title="Each class's share of the judged answers, with its 95% interval",
        barmode="group",
        yaxis={"title": "% of judged answers", "range": [0, 100]},
        **{**_LAYOUT, "height": 480, "legend": _BELOW, "margin": {**_LAYOUT["margin"], "b": 150}},
    )
    return figure


def suite_accuracy(frame: pd.DataFrame) -> go.Figure | None:
    """Accuracy per suite (a set's folders), one bar per judged set and suite with its 95%
    Wilson interval as computed by the harness (``accuracy_low``, ``accuracy_high``);
    the bars lie down so a suite's name reads across. None when no suite has a judged
    answer."""
    if frame.empty or not frame["accuracy"].notna().any():
        return None
    suites = list(dict.fromkeys(frame["suite"]))
    figure = go.Figure()
    for label in dict.fromkeys(frame["label"]):
        part = frame[frame["label"] == label].set_index("suite").reindex(suites)
        values = (part["accuracy"] * 100).tolist()
        figure.add_bar(
            name=literal(label),
            orientation="h",
            y=[literal(suite) for suite in suites],
            x=values,
            error_x=_whiskers(values, part["accuracy_low"] * 100, part["accuracy_high"] * 100),
            hovertemplate="%{y}: %{x:.1f}%<extra>" + literal(label) + "</extra>",
        )
    figure.update_layout(
        title="Accuracy per suite (95% Wilson interval)",
        barmode="group",
        xaxis={"title": "accuracy, % of judged answers", "range": [0, 100]},
        yaxis={
            "tickmode": "array",
            "tickvals": [literal(suite) for suite in suites],
            "ticktext": [tick_label(suite) for suite in suites],
            "automargin": True,
            "autorange": "reversed",
        },
        **{
            **_LAYOUT,
            "height": max(320, 160 + 28 * len(suites) * frame["label"].nunique()),
            "legend": {**_BELOW, "y": -0.25},
            "margin": {**_LAYOUT["margin"], "b": 110},
        },
    )
    return figure


MASK_COLOURS = {"mask_holds": "#2a8a3e", "mask_leaks": "#c0392b"}
# a board chart draws at most this many runs (the first ones, in the board's order)
BOARD_POINTS = 500


def _diagonal(figure: go.Figure, name: str, low: float, high: float) -> None:
    """The dotted line on which a scatter's two figures are equal, from ``low`` to ``high``."""
    figure.add_scatter(
        name=name,
        mode="lines",
        x=[float(low), float(high)],
        y=[float(low), float(high)],
        line={"color": "#888", "dash": "dot", "width": 1},
        hoverinfo="skip",
    )


def board_points(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The board rows ``board_scatter`` draws (those with both figures, at most
    BOARD_POINTS) and a note when not every run could be drawn; cheap, for a page that
    says what its chart will show before the chart is drawn."""
    points = [
        r
        for r in rows
        if r.get("platform_main_pit") is not None and r.get("platform_shifted_pit") is not None
    ]
    if len(points) <= BOARD_POINTS:
        return points, ""
    note = f"The chart draws the first {BOARD_POINTS} of these {len(points)} runs, in the board's order."
    return points[:BOARD_POINTS], note


def board_scatter(rows: list[dict[str, Any]]) -> tuple[go.Figure | None, str]:
    """The board drawn: each run's platform pit-clock return, main arm against shifted arm,
    with both 95% intervals as whiskers, coloured by mask verdict, and the diagonal on
    which the edge survived the mask unchanged. ``rows`` are board rows (fractions);
    each point carries its run page's address (a click opens it). Returns the figure
    (None when no row has both figures) and a note when not every run could be drawn."""
    points, note = board_points(rows)
    if not points:
        return None, ""
    wanted = ("body_sha256", "submission", "run_id", "agent", "mask_verdict")
    numbers = [f"platform_{c}" for c in ("main_pit", "main_pit_low", "main_pit_high")] + [
        f"platform_{c}" for c in ("shifted_pit", "shifted_pit_low", "shifted_pit_high")
    ]
    # only the columns drawn: a board row carries some sixty
    frame = pd.DataFrame([{k: r.get(k) for k in (*wanted, *numbers)} for r in points])
    for column in (
        "main_pit",
        "main_pit_low",
        "main_pit_high",
        "shifted_pit",
        "shifted_pit_low",
        "shifted_pit_high",
    ):
        frame[column] = pd.to_numeric(frame[f"platform_{column}"], errors="coerce") * 100
    frame["url"] = [
        f"/runs/{sha.removeprefix('sha256:')}/?submission={pk}"
        for sha, pk in zip(frame["body_sha256"], frame["submission"], strict=True)
    ]
    frame["label"] = [
        literal(f"{run} · {agent}")
        for run, agent in zip(frame["run_id"], frame["agent"], strict=True)
    ]
    figure = go.Figure()
    for verdict, group in frame.groupby(frame["mask_verdict"].fillna("not_run"), sort=True):
        figure.add_scatter(
            name=literal(verdict_words(verdict)),
            mode="markers",
            x=group["main_pit"].tolist(),
            y=group["shifted_pit"].tolist(),
            error_x=_whiskers(
                group["main_pit"],
                group["main_pit_low"],
                group["main_pit_high"],
                thickness=1,
                width=0,
            ),
            error_y=_whiskers(
                group["shifted_pit"],
                group["shifted_pit_low"],
                group["shifted_pit_high"],
                thickness=1,
                width=0,
            ),
            marker={"color": MASK_COLOURS.get(str(verdict), OTHER_COLOUR), "size": 8},
            customdata=group["url"].tolist(),
            text=group["label"].tolist(),
            hovertemplate="%{text}<br>main %{x:.2f}% · shifted %{y:.2f}%<extra></extra>",
        )
    values = pd.concat(
        [frame[c] for c in ("main_pit_low", "main_pit_high", "shifted_pit_low", "shifted_pit_high")]
    )
    _diagonal(figure, "shifted = main", float(values.min()), float(values.max()))
    figure.update_layout(
        title="Main against shifted arm, pit clock (95% intervals)",
        xaxis_title="main arm, % per trade",
        yaxis_title="shifted arm, % per trade",
        **{**_LAYOUT, "height": 380},
    )
    return figure, note


def _agent_colours(labels: Iterable[str]) -> dict[str, str]:
    """One colour per committed agent, the same in every forward chart (by its label)."""
    return {
        label: FORM_PALETTE[i % len(FORM_PALETTE)] for i, label in enumerate(sorted(set(labels)))
    }


def forward_decay(rows: list[dict[str, Any]]) -> go.Figure | None:
    """The forward board drawn: each committed agent's backtest return against its forward
    return (the same number of sessions just before and after its commitment), both 95%
    intervals as whiskers, and the diagonal on which nothing changed when the future was
    truly unknown: a point below it lost its edge. ``rows`` are forward board rows
    (fractions). None when no row has both figures."""
    points = [
        r
        for r in rows
        if r.get("backtest_return") is not None and r.get("forward_return") is not None
    ]
    if not points:
        return None
    frame = pd.DataFrame(
        {
            "label": [literal(f"{r['agent']} (#{r['seq']})") for r in points],
            "x": [r["backtest_return"] * 100 for r in points],
            "y": [r["forward_return"] * 100 for r in points],
            "x_low": [(r["backtest_interval_95"] or [None])[0] for r in points],
            "x_high": [(r["backtest_interval_95"] or [None, None])[1] for r in points],
            "y_low": [(r["forward_interval_95"] or [None])[0] for r in points],
            "y_high": [(r["forward_interval_95"] or [None, None])[1] for r in points],
        }
    )
    for column in ("x_low", "x_high", "y_low", "y_high"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce") * 100
    colours = _agent_colours(frame["label"])
    figure = go.Figure()
    for _, row in frame.iterrows():
        figure.add_scatter(
            name=row["label"],
            mode="markers",
            x=[row["x"]],
            y=[row["y"]],
            error_x=_whiskers([row["x"]], [row["x_low"]], [row["x_high"]], thickness=1, width=0),
            error_y=_whiskers([row["y"]], [row["y_low"]], [row["y_high"]], thickness=1, width=0),
            marker={"color": colours[row["label"]], "size": 10},
            hovertemplate=row["label"]
            + "<br>backtest %{x:.2f}% · forward %{y:.2f}%<extra></extra>",
        )
    values = pd.concat(
        [frame[c] for c in ("x", "y", "x_low", "x_high", "y_low", "y_high")]
    ).dropna()
    _diagonal(figure, "forward = backtest", min(values.min(), 0.0), max(values.max(), 0.0))
    figure.update_layout(
        title="Backtest against forward return, main arm (95% intervals)",
        xaxis_title="backtest: sessions before the commitment, % per trade",
        yaxis_title="forward: sessions after it, % per trade",
        **{**_LAYOUT, "height": 400},
    )
    return figure


def forward_curves(curves: dict[str, list[dict[str, Any]]]) -> go.Figure | None:
    """Each committed agent's forward return as it stood day by day since its commitment
    (the mean of the priced trades entered so far; the last point is its board figure).
    None when no agent has a point."""
    drawn = {name: points for name, points in curves.items() if points}
    if not drawn:
        return None
    colours = _agent_colours([literal(name) for name in drawn])
    figure = go.Figure()
    for name, points in sorted(drawn.items()):
        figure.add_scatter(
            name=literal(name),
            mode="lines+markers",
            x=[p["days"] for p in points],
            y=[p["forward_return"] * 100 for p in points],
            customdata=[[p["date"], p["trades"]] for p in points],
            line={"color": colours[literal(name)]},
            hovertemplate=literal(name)
            + "<br>day %{x} (%{customdata[0]}): %{y:.2f}% over %{customdata[1]} trades<extra></extra>",
        )
    figure.add_hline(y=0, line={"color": "#888", "width": 1})
    figure.update_layout(
        title="Forward return so far, by days since the commitment",
        xaxis_title="calendar days since the commitment (entry session)",
        yaxis_title="mean return per trade so far, %",
        **_LAYOUT,
    )
    return figure


def cumulative_against_index(cells: list[dict[str, Any]], symbol: str) -> go.Figure | None:
    """The pit clock's cumulative daily returns (main and shifted arms) beside the
    market index's over the same sessions: each series compounded session by session,
    as the scoring worker stored it (``harness.market.index.daily_series``). None when
    no cell holds a series."""
    figure = go.Figure()
    drawn = False
    index_drawn = False
    for cell in cells:
        series = cell.get("series")
        if not series or not series["sessions"]:
            continue
        frame = pd.DataFrame(series)
        frame["cell"] = (1 + frame["returns"]).cumprod() - 1
        frame["market"] = (1 + frame["index"]).cumprod() - 1
        figure.add_scatter(
            x=frame["sessions"], y=frame["cell"], mode="lines",
            name=f"{cell['arm']} arm, pit clock",
            line={"color": ARM_COLOURS.get(cell["arm"], OTHER_COLOUR)},
            hovertemplate="%{x}: %{y:.2%}<extra>" + cell["arm"] + "</extra>",
        )  # fmt: skip
        if not index_drawn:
            figure.add_scatter(
                x=frame["sessions"], y=frame["market"], mode="lines", name=f"index {symbol}",
                line={"color": "#6b6b6b"},
                hovertemplate="%{x}: %{y:.2%}<extra>" + symbol + "</extra>",
            )  # fmt: skip
            index_drawn = True
        drawn = True
    if not drawn:
        return None
    figure.update_layout(
        title=f"Cumulative return, session by session, beside {symbol}",
        yaxis={"tickformat": ".1%", "title": "cumulative return"},
        **_LAYOUT,
    )
    return figure
