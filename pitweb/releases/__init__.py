"""Releases the server holds, and their reference-price versions (the rows; pricing
registers and uses them). Imports ``pitweb.core`` and the harness, never an app built on
releases (runs, pricing)."""
