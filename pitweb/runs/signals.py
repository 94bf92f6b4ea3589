"""What runs announce to the apps that build on them, so that runs never import those
apps: a receiver is connected in its own app's ``ready()``."""

from django.dispatch import Signal

# Sent with ``run=`` inside the transaction that proved the run (a verification passed):
# pricing scores it with the release's reference prices.
run_proven = Signal()

# Sent with ``run=`` inside the transaction that stored a new run (intake): the forward
# track marks it forward-tested when the site executed it with an agent package a forward
# run already proved forward.
run_stored = Signal()
