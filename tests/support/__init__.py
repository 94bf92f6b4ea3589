"""Helpers the tests share: data, the sandbox, loopback servers and agents, golden files,
the docs' blocks. Fixtures stay in the conftest files; what they build comes from here."""
