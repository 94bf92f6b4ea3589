// A template for an external agent in JavaScript (Node.js, nothing but the interpreter),
// speaking pitweb's own dialect (pit/1) over stdio: one JSON object per line each way.
// The messages and their closed schemas: harness/protocol/published/pit/. The same rule
// as examples/agents/pit_stdio.py: buy the first two 8-Ks that became knowable since the
// last bell; answer the mask probe with "I cannot tell.". Decide from the messages alone:
// a verifier re-executes the run and refuses the first decision that differs.
import { createInterface } from "node:readline";

const lines = createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

async function receive() {
  const next = await lines.next();
  return next.done ? null : JSON.parse(next.value);
}

async function call(tool, args) {
  send({ type: "tool", tool, args });
  const reply = await receive();
  if (reply === null || reply.type !== "result") throw new Error("no answer to a tool call");
  return reply.result;
}

for (let task = await receive(); task !== null; task = await receive()) {
  if (task.kind === "probe") {
    send({ type: "decision", picks: [], text: "I cannot tell." });
    continue;
  }
  const listed = await call("pit_list", { since: "previous_session", form: "8-K", limit: 2 });
  const picks = (listed.rows ?? []).map((row) => row.row_key);
  send({ type: "decision", picks, text: `first ${picks.length} new 8-Ks` });
}
