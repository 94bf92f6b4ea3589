"""API tokens for submitters. Imports no other ``pitweb`` app."""
