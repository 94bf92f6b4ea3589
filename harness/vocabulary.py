"""The words a run is made of, declared once: the release's arms, the clocks, the tools.

Everything else (the runner, the command line, the adapters, the receipt's schema, the
site) takes them from here.
"""

from __future__ import annotations

from typing import Literal, get_args

# The release's three arms: as served, with issuer identity removed, every date +10 years.
Arm = Literal["main", "redacted", "shifted"]
ARMS: tuple[Arm, ...] = get_args(Arm)
# When a row becomes knowable: the filed date at midnight (unreachable), the nightly dump,
# the acceptance stamp.
Clock = Literal["leaky", "dump", "pit"]
CLOCKS: tuple[Clock, ...] = get_args(Clock)
# What a run does on a network egress attempt: fail it and go on, or end the run.
NETWORK_POLICIES = ("fail_closed", "abort")
# The four window tools an agent may call.
ToolName = Literal["pit_list", "pit_search", "pit_read", "pit_coverage"]
TOOL_NAMES: tuple[ToolName, ...] = get_args(ToolName)
