"""Keeping an agent to its window: how it is driven (``drivers``), the socket guard
(``guard``), the recording proxy to declared model endpoints (``egress``) and the
bubblewrap sandbox (``sandbox``). The sandbox's inside imports this package: keep it
empty."""
