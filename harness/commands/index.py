"""``defects4warp maint index``: write or check corpus/INDEX.md (see :mod:`defects4warp.corpus.index`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..corpus.case import default_corpus, load_corpus
from ..corpus.index import IndexError_, build


@click.command()
@click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder of cases (default: the bundled corpus/).")
@click.option("--check", is_flag=True, help="Exit 1 when INDEX.md is not what the cases give (CI).")
def cmd(corpus, check):
    """Write the corpus index (one row per case, retired ids kept), or check it is current."""
    root = Path(corpus) if corpus else default_corpus()
    from ..paths import installed_copy

    if not check and installed_copy(root):
        raise click.UsageError(f"{root} is the bundled corpus of the installed package: it is not rewritten "
                               "(`maint index --check` reads it; `maint index --corpus DIR` writes a corpus of yours)")
    cases, errors = load_corpus(root)
    for e in errors:
        click.echo(f"case format error {e}", err=True)
    try:
        text = build(root, cases)
    except IndexError_ as exc:
        click.echo(str(exc), err=True)
        sys.exit(1)
    path = root / "INDEX.md"
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != text:
            click.echo(f"{path} is out of date: run `defects4warp maint index`", err=True)
            sys.exit(1)
        click.echo(f"{path}: up to date ({len(cases)} cases)")
        sys.exit(1 if errors else 0)
    tmp = path.with_suffix(".md.part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    click.echo(f"wrote {path} ({len(cases)} cases)")
    sys.exit(1 if errors else 0)
