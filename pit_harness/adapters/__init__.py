"""Adapters from the shapes agents already have (see ``harness.agents.adapters``)."""
