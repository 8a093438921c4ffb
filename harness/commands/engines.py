"""``defects4warp engines``."""

from __future__ import annotations


import click
from rich.table import Table

from ._common import console, engine_names, get_engine


@click.command()
def cmd():
    """List the engines: built in, and those installed packages register
    through the `defects4warp.engines` entry-point group."""
    from ..engines import ENGINES, plugin_engines

    t = Table(title="engines")
    for col in ("name", "version", "source"):
        t.add_column(col)
    for name in engine_names():
        if name in ENGINES:
            t.add_row(name, get_engine(name).version, "built in")
        else:
            ep = plugin_engines()[name]
            dist = getattr(ep, "dist", None)
            t.add_row(name, getattr(dist, "version", "?"), f"{ep.value} ({getattr(dist, 'name', '?')})")
    console.print(t)
