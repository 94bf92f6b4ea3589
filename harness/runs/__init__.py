"""Runs: its configuration (``config``), the runner that walks arms x clocks x sessions
(``runner``), the mask probe (``probe``), the trajectory it writes (``trajectory``), the
decision points for other eval tools (``export``) and the clock report (``reports``)."""
