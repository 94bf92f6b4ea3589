"""Adapters that turn existing agent code into an AgentSpec."""
