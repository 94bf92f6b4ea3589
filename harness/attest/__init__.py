"""Signed statements the site makes, checked offline.

The site says things a receipt cannot: that a run was verified, re-executed, priced with
the release's reference prices, that its mask held, what its reasoning audit found,
whether it was forward-tested; that a board stood as a snapshot shows it; that the
commitment log had a given head. Each is an in-toto Statement (``statement.py``) in a
DSSE envelope (``dsse.py``) signed with an Ed25519 key whose public half, id and validity
dates the site publishes (``keys.py``); certificates can be revoked by a signed list
(``revocations.py``). ``certificate.py``, ``snapshots.py`` and ``heads.py`` read each kind;
``pit-harness certificate verify``, ``snapshot verify`` and ``commitments verify`` run them
with nothing but the files a reader holds.

Pure functions over plain data: no Django, no network.
"""
