"""Frozen releases of filings: the bundle's layout and integrity (``bundle``, ``store``),
the three arms (``arms``), row keys (``keys``), EDGAR intake (``edgar``) and synthetic
releases (``synth``)."""
