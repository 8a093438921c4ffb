"""``defects4warp history``."""

from __future__ import annotations


import click
from rich.table import Table

from ._common import _fmt, _write_json, console, json_option, results_opt


@click.command()
@json_option("Also write the stored runs (with their summaries) as JSON here")
@results_opt
def cmd(json_path, results_path):
    """List the stored runs, newest first, with the corpus each ran on
    (``bundled`` or the corpus folder, the case count, and the --cases or
    --split selection when a run covered part of it)."""
    from ..run.history import bundled_digest, corpus_label, list_runs

    runs = list_runs(results_path)
    bundled = bundled_digest() if runs else None
    t = Table(title="stored runs")
    for col in ("run", "date", "engine", "Warp", "device", "corpus", "digest", "commit", "verdict acc.", "class acc.",
                "FPR"):
        t.add_column(col)
    for r in runs:
        s = r["summary"]
        t.add_row(str(r["id"]), r["created"], f"{r['engine']} {r['engine_version'] or ''}", r["warp_version"], r["device"],
                  corpus_label(r, bundled), r["corpus_digest"][:10], (r["project_commit"] or "-")[:12],
                  _fmt(s.get("verdict_accuracy")), _fmt(s.get("class_accuracy")), _fmt(s.get("false_positive_rate")))
    if json_path != "-":  # with --json - stdout carries the JSON alone
        console.print(t)
    if json_path:
        _write_json([{**r, "corpus": corpus_label(r, bundled)} for r in runs], json_path)
