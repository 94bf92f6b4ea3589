"""A template for an external agent speaking pitweb's own dialect (pit/1) over stdio.

The harness starts this program afresh in every cell and writes one JSON object per line
to its stdin; the program answers one JSON object per line on its stdout (print with
flush). Messages (the schemas: harness/protocol/published/pit/):

  harness -> agent  {"type": "task", "kind": "trade" | "probe", "prompt": ..., "arm": ...,
                     "clock": ..., "session_date": ..., "known_at": ..., "newly_knowable": N}
  agent -> harness  {"type": "tool", "tool": "pit_list", "args": {...}}   (any number)
  harness -> agent  {"type": "result", "result": {...}}                   (one per call)
  agent -> harness  {"type": "decision", "picks": ["<row_key>", ...], "text": "..."}

Every object is closed: a field the schema does not name ends the cell as the agent's
protocol fault. Decide from what the messages say alone (no clock, no randomness, no
state kept outside the process): a verifier re-executes the run and refuses the first
decision that differs.

This one reads the filings that became knowable since the last bell and buys the first
two 8-Ks among them (oldest first). Only the standard library is used.
"""

import json
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def receive() -> dict | None:
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def call(tool: str, **args: object) -> dict:
    send({"type": "tool", "tool": tool, "args": args})
    reply = receive()
    if reply is None or reply.get("type") != "result":
        raise SystemExit("the harness did not answer a tool call")
    return reply["result"]


def main() -> None:
    while (task := receive()) is not None:
        if task["kind"] == "probe":
            # the mask probe: say the filing's real date and issuer, if you can
            send({"type": "decision", "picks": [], "text": "I cannot tell."})
            continue
        listed = call("pit_list", since="previous_session", form="8-K", limit=2)
        picks = [row["row_key"] for row in listed.get("rows", [])]
        send({"type": "decision", "picks": picks, "text": f"first {len(picks)} new 8-Ks"})


if __name__ == "__main__":
    main()
