"""``demo-model``: the demo model served on loopback, for trying the commands."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from harness.points.cli.args import whole_number
from harness.points.demo import DEMO_MODEL, READERS, base_url, demo_server
from harness.points.markdown import load_points


def cmd_demo_model(args: argparse.Namespace) -> int:
    """Serve the demo model on loopback until stopped (Ctrl-C, or kill its process)."""

    points = load_points(args.points) if args.points else None
    server = demo_server(args.port, points)
    url = base_url(server)
    if args.url_file:
        tmp = Path(f"{args.url_file}.tmp")
        tmp.write_text(url + "\n", encoding="utf-8")
        os.replace(tmp, args.url_file)  # whole or absent: a reader never sees half a URL
    # the line last: whoever reads it may read the file at once
    print(
        f"{DEMO_MODEL} at {url}: a demo, not a model (a fixed string rule plays the "
        "answering model and the judge); its judged sets say judge_pinned=False, and "
        "nothing should rank them"
        + (
            f"; the demo readers {', '.join(READERS)} answer the {len(points)} point(s) "
            f"of {args.points} by a fixed rule over their Ground Truth (not models either)"
            if points is not None
            else ""
        ),
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    demo = verbs.add_parser(
        "demo-model",
        help="serve a demo model on 127.0.0.1 for trying answer and judge (not a model)",
        description="Serve an OpenAI-compatible chat-completions endpoint on 127.0.0.1 that "
        "answers only the model 'demo-judge-not-a-model': every question gets one fixed "
        "text, and a judge prompt a class by string comparison with the Ground Truth. No key, "
        "no network. Its judged sets say judge_pinned=False and describe that rule, not a "
        "model: never rank them. Serves until stopped.",
    )
    demo.add_argument("--port", type=whole_number(0), default=0, help="port (default: a free one)")
    demo.add_argument("--url-file", help="write the base URL here once it listens")
    demo.add_argument(
        "--points",
        help="a points folder: the demo readers (two answering models of different "
        "quality, not models either) answer its points by a fixed rule",
    )
    demo.set_defaults(func=cmd_demo_model)
