"""``defects4warp diagnose``."""

from __future__ import annotations

import sys

import click
from rich.markup import escape
from rich.table import Table

from ._common import (
    _check_writable,
    _check_device, _progress, _release, console, device_opt, engine_opt, err_console, get_engine, timeout_opt,
    warp_opt,
)


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@engine_opt
@device_opt
@click.option("--scale", default="small", show_default=True, type=click.Choice(["small", "production"]))
@timeout_opt
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Also write the diagnosis here.")
@warp_opt
def cmd(path, engine_name, device, scale, timeout_s, json_path, warp):
    """Diagnose one program: a folder with a problem.py defining make_problem
    (docs/case-format.md). Prints the verdict, the ranked classes with their
    evidence, and the standard fix for the top class. --warp VERSION measures
    it on another release (a cached per-release environment), as for `run`."""
    _check_writable(json_path)
    from ..runner import write_json_atomic
    from ..taxonomy import CLASSES, class_guide

    python, warp_version = _release(warp)
    _check_device(device, python)
    engine = get_engine(engine_name, timeout_s=timeout_s, python=python)
    err_console.print(f"engine {engine.name} {engine.version} | Warp {warp_version} | device {device}")
    with _progress(0, f"diagnosing with {engine.name}") as prog:
        prog.add_task("", total=None)
        d = engine.diagnose(str(path), device, scale)
    console.print(f"[bold]verdict[/bold] {d['verdict']}" + (f"  signature {d['signature']}" if d.get("signature") else "")
                  + (f"  ({d['error']})" if d.get("error") else ""))
    if d["classes"]:
        t = Table(title="classes, best first")
        for col in ("class", "score", "what it means"):
            t.add_column(col)
        for c in d["classes"][:5]:
            t.add_row(c["id"], f"{c['score']:.2f}", CLASSES[c["id"]].summary)
        console.print(t)
    console.print("[bold]evidence[/bold]")
    for e in sorted(d["evidence"], key=lambda e: e["clean"]):
        console.print(escape(f"  {'ok ' if e['clean'] else '!! '} [{e['probe']}] {e['finding']}"))
    c = d["classes"][0]["id"] if d["classes"] else None
    if c:
        console.print(f"[bold]standard fix for {c}[/bold]")
        console.print(escape(class_guide(c)))
    if json_path:
        write_json_atomic(json_path, d)
    sys.exit(0 if d["verdict"] in ("bug", "no_bug") else 1)
