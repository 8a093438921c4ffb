"""``defects4warp history``."""

from __future__ import annotations


import click
from rich.table import Table

from ._common import _fmt, console, results_opt


@click.command()
@results_opt
def cmd(results_path):
    """List the stored runs, newest first."""
    from ..history import list_runs

    t = Table(title="stored runs")
    for col in ("run", "date", "engine", "Warp", "device", "corpus", "commit", "verdict acc.", "class acc.", "FPR"):
        t.add_column(col)
    for r in list_runs(results_path):
        s = r["summary"]
        t.add_row(str(r["id"]), r["created"], f"{r['engine']} {r['engine_version'] or ''}", r["warp_version"], r["device"],
                  r["corpus_digest"][:10], (r["project_commit"] or "-")[:12], _fmt(s.get("verdict_accuracy")),
                  _fmt(s.get("class_accuracy")), _fmt(s.get("false_positive_rate")))
    console.print(t)
