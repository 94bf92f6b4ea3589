"""A template for an external agent written for sharpebench's contract, run unchanged.

The harness writes one MarketObservation per session (a compact JSON object on one line)
and reads one Decision back (the schemas: harness/protocol/published/sharpebench/). How
pitweb maps it: ``symbols`` are the filings that became knowable at this bell (symbol =
row key, news = form and title) plus the ones held; ``portfolio`` holds one unit of each
held filing; there are no prices and cash is constant. A ``buy`` with a positive
``target_weight`` of a new symbol opens a fixed-hold long; every other order is recorded
and counted as ignored. ``confidence`` is optional (absent stays absent; null is refused).
Decide from the observation alone: a verifier re-executes the run and refuses the first
decision that differs (orders and cost; never reasoning or rationale).

This one buys the first two new 8-Ks and says hold for what it holds.
"""

import json
import sys


def decide(observation: dict) -> dict:
    held = {p["symbol"] for p in observation["portfolio"]}
    orders, bought = [], 0
    for snapshot in observation["symbols"]:
        symbol = snapshot["symbol"]
        if symbol in held:
            orders.append({"symbol": symbol, "action": "hold", "target_weight": 0.0})
        elif bought < 2 and any(item.startswith("8-K") for item in snapshot["news"]):
            bought += 1
            orders.append(
                {
                    "symbol": symbol,
                    "action": "buy",
                    "target_weight": 0.1,
                    "confidence": 0.5,
                    "rationale": "a new 8-K",
                }
            )
    return {"orders": orders, "reasoning": f"{len(observation['symbols'])} symbols seen"}


def main() -> None:
    for line in sys.stdin:
        sys.stdout.write(json.dumps(decide(json.loads(line)), separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
