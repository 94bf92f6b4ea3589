"""Agents: what the runner calls once per session of every cell."""

from harness.agents.base import Agent, AgentSpec, Decision, Task, load_agent
from harness.agents.stub import stub

__all__ = ["Agent", "AgentSpec", "Decision", "Task", "load_agent", "stub"]
