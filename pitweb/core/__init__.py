"""What every app of the site shares: the error envelope and the site-wide error
handlers (``errors``), the checks on text a person typed (``inputs``), and the audit log
of staff actions (``audit``).

Imports go one way: every app may import ``core``; ``core`` imports no other ``pitweb``
app (the audit event names its run by the string ``"runs.Run"``, not by import).
"""
