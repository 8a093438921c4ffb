"""``defects4warp validate``."""

from __future__ import annotations

import json
import os
import sys

import click
from rich.markup import escape
from rich.table import Table

from ._common import *  # noqa: F401,F403
from ._common import console, err_console  # noqa: F401


@click.command()
@corpus_opt
@cases_opt
@device_opt
@jobs_opt
@timeout_opt
@click.option("--warp", "warp", default=None, metavar="VERSION[,VERSION...]",
              help="Validate on these warp-lang releases, each in an isolated environment created on demand "
                   "and cached (default: the installed release). 'all' means every release in RELEASES.")
@split_opt
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 10),
              help="Measure each variant this many times; differing outcomes fail (determinism).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write the per-variant checks of every release here (input of `version-matrix`).")
def cmd(corpus, cases_glob, device, jobs, timeout_s, warp, split, repeat, json_path):
    """Check each case against Warp without any engine: buggy variants really
    disagree with finite differences (as their class says), fixed ones agree.
    Exits 1 and names each case that does not."""
    import time as _time

    from ..envs import RELEASES
    from ..machine import describe
    from ..runner import write_json_atomic
    from ..validate import validate_cases

    _check_writable(json_path)
    cases, errors = _load(corpus, cases_glob, split)
    releases = [None] if warp is None else (list(RELEASES) if warp == "all" else [w.strip() for w in warp.split(",") if w.strip()])
    failed = [str(e) for e in errors]
    doc = {"device": device, "machine": describe(), "repeat": repeat, "releases": {}, "failures": failed}
    t_all = _time.perf_counter()
    for rel in releases:
        python, warp_version = _release(rel)
        _check_device(device, python)
        t0 = _time.perf_counter()
        with _progress(0, f"validating on Warp {warp_version}") as prog:
            task = prog.add_task("", total=None)
            checks = validate_cases(cases, device=device, jobs=jobs, timeout_s=timeout_s, warp=rel, repeat=repeat,
                                    on_check=lambda c, t=task: prog.update(t, advance=1, description=f"{c.case}/{c.variant}"))
        table = Table(title=f"defects4warp validate: Warp {warp_version}, {device}")
        for col in ("case", "variant", "expected", "measured", "rel. error", "ok"):
            table.add_column(col)
        for cc in checks:
            for v in cc.variants:
                exp = v.expected
                table.add_row(cc.case, v.variant + ("" if v.scale == "small" else f"@{v.scale}"),
                              f"{exp['verdict']} {'/'.join(exp['classes'])}" if exp else "-",
                              v.signature or ("skipped" if v.message.startswith("skipped") else "-"),
                              "-" if v.relative_error is None else f"{v.relative_error:.2g}",
                              "ok" if v.ok else "[red]FAIL[/red]")
                if not v.ok:
                    failed.append(f"Warp {warp_version}: {cc.case}/{v.variant}@{v.scale}: {v.message}")
            failed += [f"{cc.case}: {p}" for p in cc.problems]
        console.print(table)
        doc["releases"][warp_version] = {"wall_s": _time.perf_counter() - t0,
                                         "checks": [v.to_dict() for cc in checks for v in cc.variants]}
        doc["wall_s"] = _time.perf_counter() - t_all
        if json_path:
            write_json_atomic(json_path, doc)
    if failed:
        console.print(f"[red]{len(failed)} problem(s):[/red]")
        for f in failed:
            console.print(escape(f"  {f}"))
        sys.exit(1)
    console.print(f"all {len(cases)} cases valid on Warp {', '.join(doc['releases'])}")
