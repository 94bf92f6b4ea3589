"""Run data: what a run is asked to do and what it leaves, below every floor that uses it.

The run's configuration (``config``) and the model endpoints it declares (``endpoints``),
the trajectory it writes (``trajectory``) and the pure scoring of the mask probe's answers
(``probe_scoring``). The runner (``harness.runs``), the sandbox and its drivers
(``harness.isolation``), the tools (``harness.tools``) and the receipt (``harness.receipt``)
all read these; nothing here imports any of them (an import-linter contract says so).
"""
