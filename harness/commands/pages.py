"""``defects4warp pages``."""

from __future__ import annotations

import sys

import click

from ._common import _load, _releases, _store, console, err_console, jobs_opt, timeout_opt


@click.command()
@click.option("--check", is_flag=True, help="Only compare: exit 1 naming every page that differs from what its "
                                            "committed JSON renders to (nothing is written or measured).")
@click.option("--measure", is_flag=True, help="First validate the corpus on the releases no committed validation "
                                              "covers (result store reused), writing docs/data/validation-<release>.json.")
@click.option("--warp", "warp", default="all", show_default=True, metavar="VERSION[,VERSION...]|all",
              help="With --measure: the releases to fill in.")
@jobs_opt
@timeout_opt
def cmd(check, measure, warp, jobs, timeout_s):
    """Regenerate every generated page of docs/ (version matrix, upgrade audit)
    from the committed JSON under docs/data/, re-measuring only what is missing
    (with --measure). Pages without a committed source are listed."""
    from ..pages import NOT_GENERATED, PAGES, check_pages, measure_missing, missing_releases, write_pages

    if check and measure:
        raise click.UsageError("--check compares only; it cannot be combined with --measure")
    if measure:
        from ..executors import LocalExecutor

        cases, _ = _load(None, "*")
        with LocalExecutor(jobs) as ex:
            done = measure_missing(cases, _releases(warp), jobs=jobs, timeout_s=timeout_s, store=_store(None),
                                   executor=ex, log=err_console.print)
        err_console.print(f"measured {', '.join(done) or 'nothing (every release is covered)'}")
    if check:
        stale = check_pages()
        for p in PAGES:
            console.print(f"{p.path}: {'DIFFERS from' if p.path in stale else 'matches'} {p.sources}")
        for path, why in NOT_GENERATED.items():
            console.print(f"{path}: not checked ({why})")
        left = missing_releases(_releases(warp))
        if left:
            console.print(f"no committed validation for Warp {', '.join(left)} (`defects4warp pages --measure`)")
        sys.exit(1 if stale else 0)
    changed = write_pages()
    for p in PAGES:
        console.print(f"{p.path}: {'rewritten' if p.path in changed else 'unchanged'} (from {p.sources})")
