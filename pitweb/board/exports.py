"""The board as CSV: every section's rows under one header (``leaderboard_csv``), and a
snapshot's rows with their row digests (``snapshot_csv``)."""

from __future__ import annotations

import csv
import io
from typing import Any

from harness import snapshot as snapshots
from pitweb.board.query import SECTIONS
from pitweb.core.tables import csv_safe

LEADERBOARD_COLUMNS = [
    "rank",
    "rank_low",
    "rank_high",
    "run_id",
    # the benchmark the run is ranked in: a rank is never across two
    "benchmark",
    "benchmark_name",
    "release",
    "forms",
    "window",
    "agent",
    "model_version",
    # where the window lies against the model's declared training cutoff (post_cutoff:
    # wholly after it, a holdout for that model; crossing; pre_cutoff; empty: none
    # declared), and whether the site executed a forward-tested package
    "training_cutoff",
    "cutoff_relation",
    "forward_tested",
    "baseline",
    # uploads of the run's family (submitter, agent) on this release and window; a
    # ranked row is the family's best, ranked on ranked_interval at ranked_confidence
    "attempts",
    "ranked_interval_low",
    "ranked_interval_high",
    "ranked_confidence",
    # platform figures: re-derived from the trajectory, priced with the release's
    # reference prices (fractions: 0.01 = 1%)
    "platform_status",
    "platform_shifted_pit",
    "platform_shifted_pit_low",
    "platform_shifted_pit_high",
    "platform_shifted_pit_priced",
    "platform_main_pit",
    "platform_main_pit_low",
    "platform_main_pit_high",
    "platform_delta_shifted_pit",
    "platform_delta_shifted_pit_low",
    "platform_delta_shifted_pit_high",
    "platform_delta_redacted_pit",
    "platform_delta_redacted_pit_low",
    "platform_delta_redacted_pit_high",
    # the ranked cell net of the site's stated cost level (basis points a side), and
    # against the prices version's market index: excess return over each hold, beta
    "platform_cost_bps",
    "platform_shifted_pit_after_costs",
    "index_symbol",
    "platform_shifted_pit_excess",
    "platform_shifted_pit_beta",
    # the memory verdict (harness.receipt.memory): score_from_memory when the shifted
    # delta's interval lies above zero while the mask holds
    "memory_verdict",
    "memory_words",
    "prices_version",
    "prices_source",
    "prices_pulled_at",
    "prices_sha256",
    "prices_basis",
    # the receipt's own figures, checked, priced with the submitter's prices
    "self_reported_main_leaky",
    "self_reported_main_dump",
    "self_reported_main_pit",
    "self_reported_delta_shifted_leaky",
    "self_reported_delta_shifted_dump",
    "self_reported_delta_shifted_pit",
    "self_reported_delta_redacted_leaky",
    "self_reported_delta_redacted_dump",
    "self_reported_delta_redacted_pit",
    "mask_verdict",
    "probe_recovered",
    "error_cells",
    "why_apart",
    "verification",
    "verification_level",
    "verification_level_words",
    "isolation",
    "could_read_future_data",
    "valid",
    "protocol_complete",
    "protocol_gaps",
    "flag",
    "numbers",
    "withheld_because",
    "failed_check",
    "body_sha256",
    "submitted_at",
]


def leaderboard_csv(board: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=["section", *LEADERBOARD_COLUMNS], extrasaction="ignore"
    )
    writer.writeheader()
    for section in SECTIONS:
        for row in board[section]:
            low, high = row.get("ranked_interval") or (None, None)
            flat = {"section": section, **row, "ranked_interval_low": low}
            flat["ranked_interval_high"] = high
            writer.writerow({k: csv_safe(v) for k, v in flat.items()})
    return buffer.getvalue()


SNAPSHOT_COLUMNS = ["section", "removed_after_snapshot", "row_digest", *LEADERBOARD_COLUMNS]


def snapshot_csv(board: dict[str, Any]) -> str:
    """A snapshot's rows as CSV, each with its row digest (``harness.snapshot``); a row
    removed after the snapshot has its section and row digest only."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SNAPSHOT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for section in SECTIONS:
        for row in board.get(section, []):
            if snapshots.is_removed(row):
                writer.writerow({"section": section, **row})
                continue
            low, high = row.get("ranked_interval") or (None, None)
            flat = {"section": section, **row, "ranked_interval_low": low}
            flat |= {"ranked_interval_high": high, "removed_after_snapshot": False}
            flat["row_digest"] = snapshots.row_digest(row)
            writer.writerow({k: csv_safe(v) for k, v in flat.items()})
    return buffer.getvalue()
