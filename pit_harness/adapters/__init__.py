"""Adapters from the shapes agents already have (see ``harness.adapters``)."""
