"""``defects4warp maint new-case``."""

from __future__ import annotations

import sys

import click

from ._common import console, default_corpus, err_console


@click.command()
@click.argument("name")
@click.option("--corpus", type=click.Path(file_okay=False), default=None, help="Corpus folder (default: the bundled one).")
def cmd(name, corpus):
    """Scaffold corpus/NAME/ with case.yaml and buggy/ and fixed/ variants
    that run as they are (a small correct fit to edit)."""
    from ..paths import installed_copy
    from ..corpus.scaffold import scaffold

    if corpus is None and installed_copy(default_corpus()):
        raise click.UsageError("the bundled corpus is part of the installed package; scaffold the case in a "
                               "corpus folder of yours: defects4warp maint new-case NAME --corpus DIR")
    try:
        path = scaffold(corpus or default_corpus(), name)
    except (ValueError, FileExistsError) as exc:
        err_console.print(f"[red]{exc}[/red]")
        sys.exit(2)
    where = f" --corpus {corpus}" if corpus else ""
    console.print(f"created {path}; edit it, then run: defects4warp validate{where} --cases {name}")
