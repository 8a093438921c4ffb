"""``defects4warp leaderboard``."""

from __future__ import annotations


import click
from rich.table import Table

from ._common import _fmt, console, results_opt


@click.command()
@click.option("--corpus-digest", "digest", default=None, help="Prefix of a corpus digest (default: the newest run's).")
@click.option("--warp", default=None, help="Warp release (default: the newest run's).")
@results_opt
def cmd(digest, warp, results_path):
    """Rank engines on one corpus digest and Warp release (newest run of each)."""
    from ..history import leaderboard as board

    digest, warp, rows = board(digest, warp, results_path)
    t = Table(title=f"leaderboard: corpus {str(digest)[:10]}, Warp {warp}")
    for col in ("rank", "engine", "run", "class acc.", "verdict acc.", "detection", "FPR", "median s"):
        t.add_column(col)
    for i, r in enumerate(rows, 1):
        s = r["summary"]
        t.add_row(str(i), f"{r['engine']} {r['engine_version'] or ''}", str(r["id"]), _fmt(s.get("class_accuracy")),
                  _fmt(s.get("verdict_accuracy")), _fmt(s.get("detection_rate")), _fmt(s.get("false_positive_rate")),
                  _fmt(s.get("median_wall_s_per_run"), 2))
    console.print(t)
