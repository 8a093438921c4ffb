"""``defects4warp export --format skill-evals DIR``: tasks for agent-skill evaluations (:mod:`defects4warp.report.export`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..corpus.case import default_corpus, load_corpus
from ._common import programs_opt, warp_option


@click.command()
@click.argument("out_dir", type=click.Path(file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["skill-evals"]), default="skill-evals", show_default=True)
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of cases (default: the bundled corpus/).")
@click.option("--cases", "cases_glob", default="*", show_default=True, help="Glob (or comma-separated globs) over case ids.")
@click.option("--split", type=click.Choice(["dev", "test"]), default=None, help="Only cases of this split.")
@warp_option(default_help="the installed release; its expectations are exported")
@click.option("--scale", type=click.Choice(["small", "production"]), default="small", show_default=True)
@programs_opt
def cmd(out_dir, fmt, corpus, cases_glob, split, warp, scale, programs):
    """Write the corpus as skill-evaluation tasks: OUT_DIR/evals.json and OUT_DIR/files/.
    With --programs scripts, only variants that hold a script, each as the user's files alone (no problem.py)
    with the command that runs it in the prompt."""
    from ..report.export import export_skill_evals
    from ..run.runner import installed_warp_version

    root = Path(corpus) if corpus else default_corpus()
    cases, errors = load_corpus(root, cases_glob)
    for e in errors:
        click.echo(f"case format error {e}", err=True)
    if split:
        cases = [c for c in cases if c.split == split]
    doc = export_skill_evals(cases, out_dir, warp or installed_warp_version(), scale=scale, programs=programs)
    click.echo(f"wrote {Path(out_dir) / 'evals.json'}: {len(doc['evals'])} tasks from {len(cases)} cases")
    sys.exit(1 if errors else 0)
