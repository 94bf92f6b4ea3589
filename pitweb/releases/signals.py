"""What the releases app tells other apps.

``release_version_registered`` is sent once per newly registered release, after the
transaction that stored it commits, with ``release`` (the new ``Release``), ``parent``
(the ``Release`` it grew from, or None for a release no version grew from) and
``sessions_added`` (the partition dates, ISO strings, the version added; empty for a
first version). The forward track listens to it to schedule runs over the new sessions.
"""

from __future__ import annotations

from django.dispatch import Signal

release_version_registered = Signal()
