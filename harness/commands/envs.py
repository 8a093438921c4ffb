"""``defects4warp envs``: the per-release environments (list, prepare, remove)."""

from __future__ import annotations

import datetime

import click
from rich.markup import escape
from rich.table import Table

from ._common import _supported_releases, console, err_console


def _size(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n < 1e9 else f"{n / 1e9:.2f} GB"


@click.group()
def cmd():
    """Per-release environments (one warp-lang each, NumPy shared per major,
    the installed release reused; docs/version-matrix.md): where they are, what
    they cost on disk, and removing them. Cache: $DEFECTS4WARP_ENVS or
    ~/.cache/defects4warp/envs."""


@cmd.command("list")
def list_cmd():
    """Each environment: release, kind, size on disk, last used, path."""
    from ..envs import cache_root, installed_warp_version, list_envs

    envs = list_envs()
    table = Table(title=f"defects4warp envs in {cache_root()}")
    for col in ("release", "kind", "size", "last used", "ready", "path"):
        table.add_column(col)
    table.add_row(installed_warp_version(), "installed (no environment)", "-", "-", "yes", "this interpreter")
    for e in envs:
        used = "-" if e["last_used"] is None else datetime.datetime.fromtimestamp(e["last_used"]).strftime("%Y-%m-%d %H:%M")
        table.add_row(e["release"] or e["name"], e["kind"], _size(e["bytes"]), used, "yes" if e["ready"] else "no",
                      escape(e["path"]))
    console.print(table)
    console.print(f"{len([e for e in envs if e['release']])} release environment(s), "
                  f"{_size(sum(e['bytes'] for e in envs))} in all")


@cmd.command("prepare")
@click.option("--warp", "warp", required=True, metavar="VERSION[,VERSION...]|all",
              help="Releases to install ('all': every supported release); any other release is a usage error "
                   "and nothing is installed.")
def prepare_cmd(warp):
    """Create the environments of these releases now (they are otherwise created on first use)."""
    from ..envs import ReleaseEnvError, disk_bytes, ensure_env

    bad = []
    for rel in _supported_releases(warp):
        try:
            py = ensure_env(rel, log=err_console.print)
        except ReleaseEnvError as exc:
            bad.append(str(exc))
            err_console.print(f"[red]{escape(str(exc))}[/red]")
            continue
        root = py.parent.parent
        size = "installed release, no environment" if "warp-" not in root.name else _size(disk_bytes(root))
        console.print(f"{rel}: {py} ({size})")
    if bad:
        raise SystemExit(1)


@cmd.command("remove")
@click.argument("release", required=False)
@click.option("--all", "everything", is_flag=True, help="Remove every environment and shared base.")
def remove_cmd(release, everything):
    """Remove the environment of RELEASE (or all of them with --all); a shared
    NumPy base no remaining environment uses goes too."""
    from ..envs import ReleaseEnvError, remove_env

    if bool(release) == everything:
        raise click.UsageError("give a RELEASE or --all (not both)")
    try:
        removed = remove_env(release, everything=everything)
    except ReleaseEnvError as exc:
        raise click.UsageError(str(exc)) from None
    for p in removed:
        console.print(f"removed {p}")
