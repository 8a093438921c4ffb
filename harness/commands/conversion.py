"""``defects4warp maint conversion``."""

from __future__ import annotations

import sys

import click

from ._common import device_opt


@click.command()
@click.argument("targets", nargs=-1, type=click.Path(exists=True, file_okay=False))
@device_opt
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write {case: {variant: result}} here, rewritten after each case "
                   "(the committed one is docs/data/conversions.json).")
def cmd(targets, device, json_path):
    """Check the converted cases (tags.form: both): the Problem captured from each
    variant's script must equal the one its problem.py adapter builds (params,
    objective, gradient; tolerances in harness/corpus/conversion.py). TARGETS are case
    folders (default: every converted case of the bundled corpus). Each variant
    runs twice in its own subprocess: about 20 minutes for the corpus on 2 busy
    CPU cores. Exit 1 when a variant disagrees."""
    from ..corpus.conversion import check_corpus

    def say(case_id, variant, r):
        click.echo(f"{case_id}/{variant}: " + ("agrees" if r["agrees"] else "DISAGREES: " + "; ".join(r["reasons"])))

    _doc, bad = check_corpus(targets, device=device, json_path=json_path, on_result=say)
    sys.exit(1 if bad else 0)
