"""A template for an external agent speaking pitweb's own dialect (pit/1) over HTTP.

Run it (``python3 pit_http.py 8765``), then ``pit-harness run --config run.json
--agent-http http://127.0.0.1:8765``. The harness sends every message as ``POST /step``
with the body ``{"session": ..., "step": N, "message": {...}}`` and reads the agent's next
message from the answer (the schemas: harness/protocol/published/pit/, step.schema.json
for the body). A session is one cell's agent: keep what a cell needs under its session id,
and nothing across sessions (a verifier re-executes the run against a fresh start and
refuses the first decision that differs). The harness may send a step again after a
transport error: answer it as the first time (kept below by step number).

Same rule as pit_stdio.py: buy the first two 8-Ks that became knowable since the last bell.
Only the standard library is used.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSIONS: dict[str, dict[int, dict]] = {}  # session -> step -> the answer given


def answer(message: dict) -> dict:
    if message["type"] == "task":
        if message["kind"] == "probe":
            return {"type": "decision", "picks": [], "text": "I cannot tell."}
        args = {"since": "previous_session", "form": "8-K", "limit": 2}
        return {"type": "tool", "tool": "pit_list", "args": args}
    picks = [row["row_key"] for row in message["result"].get("rows", [])]
    return {"type": "decision", "picks": picks, "text": f"first {len(picks)} new 8-Ks"}


class Agent(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep the harness's connection open for the cell
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms stalls)

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/step":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        given = SESSIONS.setdefault(body["session"], {})
        reply = given.setdefault(body["step"], answer(body["message"]))
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    ThreadingHTTPServer(("127.0.0.1", port), Agent).serve_forever()
