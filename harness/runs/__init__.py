"""Runs: the runner that walks arms x clocks x sessions (``runner``: ``run``, ``run_cell``,
``assemble``) and its rooms: what a run reads (``inputs``), the cell loop (``cells``), what
an agent is shown at each step (``observe``, the observation seam), the mask probe
(``probe``), retries (``retries``), cell records (``records``), a run's checkpoint and its
resumption (``checkpoint``), the scoring and the receipt (``finish``) and what they share
(``state``); then re-execution of a recorded run (``reexecute``), the decision points for
other eval tools (``export``) and the clock report (``reports``). What a run reads and
writes (its config, its trajectory, the probe's scoring) is run data, a floor below:
``harness.rundata``."""
