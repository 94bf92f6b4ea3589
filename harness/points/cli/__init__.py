"""``pit-harness points``: validate, list, render and show judged points; import PITFALL's
judged artifact; answer, judge, verify and export; verify PITFALL's sealed-suite artifacts; serve
the demo model. One module per command
group; each adds its own verbs, in the order ``--help`` lists them."""

from __future__ import annotations

import argparse

from harness.points.cli import (
    answer,
    baseline,
    demo,
    export,
    files,
    judge,
    pitfall_suite,
    verify,
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    points = sub.add_parser(
        "points",
        help="judged points: one Markdown file per point (PITFALL's format)",
        description="Point files: '# <id>', then exactly '## Question', '## Ground Truth' "
        "and '## Provenance', the last two inside <details> blocks. Exit 2 names the file "
        "and the rule a broken point breaks.",
    )
    verbs = points.add_subparsers(dest="points_command", required=True)
    for group in (files, baseline, answer, judge, verify, export, pitfall_suite, demo):
        group.add_verbs(verbs)
