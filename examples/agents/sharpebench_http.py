"""A template for an agent written for sharpebench's HTTP contract, run unchanged.

Run it (``python3 sharpebench_http.py 8766``), then ``pit-harness run --config run.json
--agent-http http://127.0.0.1:8766 --dialect sharpebench``. Each session is one ``POST
/decide``: a MarketObservation in, a Decision out (the schemas:
harness/protocol/published/sharpebench/; how pitweb maps them: sharpebench_stdio.py and
the README). Decide from the observation alone: a verifier re-executes the run and
refuses the first decision that differs.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sharpebench_stdio import decide


class Agent(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep the harness's connection open for the cell
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms stalls)

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/decide":
            self.send_error(404)
            return
        observation = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps(decide(observation)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8766
    ThreadingHTTPServer(("127.0.0.1", port), Agent).serve_forever()
