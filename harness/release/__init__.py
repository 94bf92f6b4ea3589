"""Frozen releases of filings: the bundle's layout and integrity (``bundle``, ``store``),
the three arms (``arms``), row keys (``keys``), EDGAR intake (``edgar``, from
its index files, ``edgar_index``, and filing headers, ``edgar_headers``) and synthetic
releases (``synth``)."""
