"""What runs announce to the apps that build on them, so that runs never import those
apps: a receiver is connected in its own app's ``ready()``."""

from django.dispatch import Signal

# Sent with ``run=`` inside the transaction that proved the run (a verification passed):
# pricing scores it with the release's reference prices.
run_proven = Signal()

# Sent with ``run=`` and ``reason=`` inside the transaction that took a run down (withdrawn
# by its submitter, hidden by staff, refuted by a verification): whatever the site signed
# about it is revoked.
run_taken_down = Signal()
