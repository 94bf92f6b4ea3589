"""Vendored schemas of the formats the harness exports to (see each ``*.SOURCE.md``)."""
