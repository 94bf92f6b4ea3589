"""PITFALL-style judged points: one Markdown file per point, a hidden Ground Truth, a
six-class judge, accuracy beside the error-class distribution (seed 003), under the
honesty rules of seed 004. No Django: the site and the CLI share this code."""

from harness.points.markdown import Point, PointError, load_points, suite_sha256

__all__ = ["Point", "PointError", "load_points", "suite_sha256"]
