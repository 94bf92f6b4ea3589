"""``pit-harness cost``: a receipt's measured model usage, cell by cell and for the run,
priced with a rate card (``harness.receipt.ratecard``); what the agent said its decisions
cost beside it, as said."""

from __future__ import annotations

import argparse
import json
from typing import Any

from harness.cli.common import UsageError
from harness.outcomes import EXIT_MISMATCH, EXIT_OK
from harness.receipt.model import BodyError, body_from_dict
from harness.receipt.ratecard import (
    SCHEMA_VERSION,
    LoadedCard,
    Priced,
    RateCardError,
    dollars,
    price_usage,
    read_rate_card,
)
from harness.receipt.verify import check_receipt

_SAID = ("decisions", "cost_nanodollars", "tokens_in", "tokens_out", "reasoning_tokens")


def cmd_cost(args: argparse.Namespace) -> int:
    try:
        loaded = read_rate_card(args.rate_card)
    except RateCardError as exc:
        raise UsageError(f"--rate-card {exc}") from None
    report, body = check_receipt(args.receipt)
    if not report.ok:
        for line in report.lines:
            print(line)
        return EXIT_MISMATCH
    try:  # typed: a count the harness could not have written is refused, not priced
        body_from_dict(body)
    except BodyError as exc:
        print(f"body MISMATCH  {args.receipt}: {exc}")
        return EXIT_MISMATCH
    cells = [c for c in body.get("cells") or [] if "usage" in c]
    if not cells:
        if args.json:
            print(json.dumps({"usage": None, "rate_card": _card(loaded)}, indent=2))
        else:
            print("no model usage: the run declared no model endpoints, so none was measured")
        return EXIT_OK
    try:
        priced = [(f"{c['arm']}/{c['clock']}", price_usage(c["usage"], loaded.card)) for c in cells]
    except RateCardError as exc:
        raise UsageError(f"{args.receipt}: {exc}") from None
    run = Priced()
    for _, each in priced:
        run.add(each)
    said = _self_reported(cells)
    if args.json:
        document = {
            "rate_card": _card(loaded),
            "cells": {label: each.to_json() for label, each in priced},
            "run": run.to_json(),
            "self_reported": said,
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    _print(loaded, priced, run, said)
    return EXIT_OK


def _card(loaded: LoadedCard) -> dict[str, Any]:
    card = loaded.card
    return {
        "schema_version": SCHEMA_VERSION,
        "sha256": loaded.sha256,
        "source": card.source if isinstance(card.source, str) else None,
        "as_of": card.as_of if isinstance(card.as_of, str) else None,
    }


def _self_reported(cells: list[dict[str, Any]]) -> dict[str, int] | None:
    """What the agent's decisions said they cost, over the run (None if none said)."""
    reports = [c["usage"]["self_reported"] for c in cells if "self_reported" in c["usage"]]
    if not reports:
        return None
    return {key: sum(int(r[key]) for r in reports) for key in _SAID}


def _line(label: str, priced: Priced) -> str:
    tokens = priced.tokens
    figure = dollars(priced.nanodollars)
    if not priced.whole:
        missing = []
        if priced.unknown_exchanges:
            missing.append(f"{priced.unknown_exchanges} exchange(s) of unknown usage")
        if priced.unpriced:
            missing.append("unpriced: " + ", ".join(sorted(priced.unpriced)))
        figure = f"at least {figure} ({'; '.join(missing)})"
    return (
        f"{label:<16} exchanges {priced.exchanges:>5}  in {tokens['input_tokens']} "
        f"(cached {tokens['cached_input_tokens']})  out {tokens['output_tokens']} "
        f"(reasoning {tokens['reasoning_tokens']})  cost {figure}"
    )


def _print(
    loaded: LoadedCard,
    priced: list[tuple[str, Priced]],
    run: Priced,
    said: dict[str, int] | None,
) -> None:
    print(f"rate card {loaded.sha256}  ({SCHEMA_VERSION})")
    for label, each in priced:
        print(_line(f"cell {label}", each))
    print(_line("run", run))
    if said is not None:
        print(
            f"self-reported (as the agent said, not measured): {said['decisions']} decision(s), "
            f"{dollars(said['cost_nanodollars'])}, tokens in {said['tokens_in']}, out "
            f"{said['tokens_out']}, reasoning {said['reasoning_tokens']}"
        )
    print(
        "measured from the receipt; `pit-harness verify --trajectory ... --bundle ...` reads "
        "every figure again from the recorded exchanges"
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "cost",
        help="a receipt's measured model tokens, priced with a rate card",
        description="Print each cell's and the run's measured model usage (a run that declared "
        "model endpoints) priced with a rate card "
        f"({SCHEMA_VERSION}: integer nanodollars per token and model). A model the card does "
        "not list is named as unpriced and an exchange of unknown usage is counted: the figure "
        "is then a floor, and says so. Exit 0; 1 if the receipt's hash fails; 2 if the card "
        "is refused.",
    )
    parser.add_argument("receipt", metavar="RECEIPT", help="the run's receipt.json")
    parser.add_argument(
        "--rate-card", required=True, metavar="FILE", help=f"a {SCHEMA_VERSION} card (JSON)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead")
    parser.set_defaults(func=cmd_cost)
