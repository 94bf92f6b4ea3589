"""Runs: the runner that walks arms x clocks x sessions (``runner``), re-execution of a
recorded run (``reexecute``), the decision points for other eval tools (``export``) and
the clock report (``reports``). What a run reads and writes (its config, its trajectory,
the probe's scoring) is run data, a floor below: ``harness.rundata``."""
