"""Certificates: the site's signed verdict over one run (an in-toto Statement in a DSSE
envelope, ``harness.attest.certificate``), the published keys and the signed revocation
list at their well-known addresses."""
