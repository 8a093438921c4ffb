"""``defects4warp engines``."""

from __future__ import annotations


import click
from rich.table import Table

from ._common import _write_json, console, engine_names, get_engine, json_option


@click.command()
@json_option("Write the engines as JSON here ({\"engines\": [{name, version, source, entry_point, distribution}]}) "
             "instead of printing a table")
def cmd(json_path):
    """List the engines: built in, and those installed packages register
    through the `defects4warp.engines` entry-point group. An outside command
    is used as --engine cmd:"COMMAND" (docs/engines.md, 'Any command')."""
    from ..engines import ENGINES, plugin_engines

    rows = []
    for name in engine_names():
        if name in ENGINES:
            rows.append({"name": name, "version": get_engine(name).version, "source": "built in",
                         "entry_point": None, "distribution": None})
        else:
            ep = plugin_engines()[name]
            dist = getattr(ep, "dist", None)
            rows.append({"name": name, "version": getattr(dist, "version", None), "source": "plugin",
                         "entry_point": ep.value, "distribution": getattr(dist, "name", None)})
    if json_path:
        _write_json({"engines": rows}, json_path)
        return
    t = Table(title="engines")
    for col in ("name", "version", "source"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["name"], str(r["version"] or "?"), r["source"] if r["entry_point"] is None
                  else f"{r['entry_point']} ({r['distribution'] or '?'})")
    console.print(t)
