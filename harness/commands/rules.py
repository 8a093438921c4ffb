"""``defects4warp maint rules``."""

from __future__ import annotations

import click


@click.command()
@click.option("--write", "write_path", metavar="PATH", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Replace the generated table in PATH (between <!-- rules-table --> and <!-- /rules-table -->; "
                   "docs/engines.md holds it) instead of printing it.")
def cmd(write_path):
    """Print the source-rule registry (the engine's static rules) as a Markdown
    table, or rewrite it in a file. `maint pages` rewrites docs/engines.md's
    table too; a test checks the committed one."""
    from ..rules import registry_table, write_registry_table

    if not write_path:
        click.echo(registry_table())
        return
    try:
        write_registry_table(write_path)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote the rule table in {write_path}", err=True)
