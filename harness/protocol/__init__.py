"""The wire protocol external agents speak: closed message types per dialect, their
published JSON Schemas, and the one entry point that reads an agent's decision
(``decision_from_wire``), refusing an unknown field by name. Only the schemas and their
types live here; transports and re-execution build on them."""

from harness.protocol.wire import (
    DIALECTS,
    AgentProtocolFault,
    decision_from_wire,
    message_from_wire,
    observation_from_wire,
    validate_for,
)

__all__ = [
    "DIALECTS",
    "AgentProtocolFault",
    "decision_from_wire",
    "message_from_wire",
    "observation_from_wire",
    "validate_for",
]
