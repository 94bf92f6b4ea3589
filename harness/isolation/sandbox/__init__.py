"""The agent's sandbox: its own process under bubblewrap, talking to the harness over a
pipe. ``outside`` is the harness's side; ``inside`` and ``shim`` run in the sandbox."""
