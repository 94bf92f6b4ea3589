"""The parts of a receipt body the site relies on, as a JSON Schema (checked on upload)."""

from harness.version import RECEIPT_VERSION

NUMBER_OR_NULL = {"type": ["number", "null"]}

CELL = {
    "type": "object",
    "required": [
        "arm",
        "clock",
        "reachable",
        "status",
        "trades",
        "priced_trades",
        "total_return",
        "trades_sha256",
    ],
    "properties": {
        "arm": {"enum": ["main", "redacted", "shifted"]},
        "clock": {"enum": ["leaky", "dump", "pit"]},
        "reachable": {"type": "boolean"},
        "status": {"type": "string"},
        "trades": {"type": "integer", "minimum": 0},
        "priced_trades": {"type": "integer", "minimum": 0},
        "total_return": NUMBER_OR_NULL,
        "trades_sha256": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    },
}

PROBE_ITEM = {
    "type": "object",
    "required": ["item", "row_key", "answer", "score"],
    "properties": {
        "item": {"type": "integer", "minimum": 0},
        "row_key": {"type": "string", "maxLength": 40},
        "answer": {"type": "string"},
        "score": {
            "type": "object",
            "required": ["date_recovered", "year_recovered", "issuer_recovered"],
            "properties": {
                "date_recovered": {"type": "boolean"},
                "year_recovered": {"type": "boolean"},
                "issuer_recovered": {"type": "boolean"},
                "matched": {"type": "array", "items": {"type": "string"}},
            },
        },
        "answer_key": {"type": "object"},
    },
}

DELTAS = {
    "type": "object",
    "properties": {"main_minus_shifted": NUMBER_OR_NULL, "main_minus_redacted": NUMBER_OR_NULL},
}

RECEIPT_BODY = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": [
        "receipt_version",
        "run_id",
        "valid",
        "binding",
        "config",
        "cells",
        "probe",
        "protocol_complete",
        "protocol_gaps",
        "network",
        "release",
    ],
    "properties": {
        "receipt_version": {"const": RECEIPT_VERSION},
        "run_id": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
        "valid": {"type": "boolean"},
        "binding": {
            "type": "object",
            "required": ["bundle_content_digest", "config_sha256", "trajectory_sha256"],
            "properties": {
                k: {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}
                for k in ("bundle_content_digest", "config_sha256", "trajectory_sha256")
            },
        },
        "config": {
            "type": "object",
            "required": ["forms", "start", "end", "agent", "model_version"],
            "properties": {
                "forms": {"type": "array", "items": {"type": "string"}},
                "start": {"type": "string", "format": "date"},
                "end": {"type": "string", "format": "date"},
                "agent": {"type": "string", "maxLength": 200},
                "model_version": {"type": "string", "maxLength": 200},
            },
        },
        "cells": {"type": "array", "items": CELL, "minItems": 1, "maxItems": 9},
        "probe": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": PROBE_ITEM, "maxItems": 1000},
                "verdict": {"type": "string"},
                "recovered": {"type": "integer"},
                "total": {"type": "integer"},
            },
        },
        "contamination": {"type": "object", "additionalProperties": DELTAS},
        "protocol_complete": {"type": "boolean"},
        "protocol_gaps": {"type": "array", "items": {"type": "string"}},
        "network": {"type": "object"},
        "release": {"type": "object"},
        "invalidated_by": {"type": "array", "items": {"type": "string"}},
        "protocol": {"type": "object"},
    },
}
