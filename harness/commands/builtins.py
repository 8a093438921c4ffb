"""``defects4warp maint builtins``: adjoint conformance of Warp's builtins, release by release."""

from __future__ import annotations

import click

from ._common import _check_writable, _store, _write_json, err_console, results_opt, warp_option


def checkout_root():
    """The source checkout this package runs from (the folder holding ``pyproject.toml``
    and ``docs/builtins.md`` next to ``harness/``), or None for an installed package,
    whose data folder belongs to the installation."""
    from ..paths import PACKAGE_DIR

    root = PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "docs" / "builtins.md").is_file():
        return root
    return None


@click.command()
@warp_option(many=True, default_help="the installed release. `all` measures every supported release "
                                     "(20; each compiles several hundred kernels at about 1 s per kernel on a CPU "
                                     "core: hours), newest first")
@click.option("--device", default="cpu", show_default=True, help="Warp device.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write {release: release document} here ('-' prints it).")
@click.option("--write-package-data", "write_package_data", is_flag=True, default=False,
              help="Maintainers, in a source checkout, before committing: also overwrite the package's committed "
                   "results harness/data/builtins/<release>-<device>.json (what the engine's release probe reads) "
                   "and regenerate docs/builtins.md. Refused for an installed package.")
@click.option("--fresh", is_flag=True, help="Measure again instead of reusing batches from the result store.")
@click.option("--only", "only_spec", default=None, metavar="NAME[,..]",
              help="Measure only these builtins (names as in docs/builtins.md: tile_max, div, [component_add]) "
                   "or overload ids (div(float32,vec4f)); with --write-package-data their cells replace those of the committed "
                   "data of each release, the other cells are kept.")
@results_opt
def cmd(warp, device, json_path, write_package_data, fresh, only_spec, results_path):
    """Compare the tape's adjoint of every float builtin overload with finite
    differences, on each release: agrees, wrong, zero, build_error or absent.
    Releases already in the result store are reused (--fresh to measure again)."""
    from ..builtins import ALL_RELEASES, conformance, merge_data, write_data
    from ..report.builtins_page import write_page
    from ..envs import ReleaseEnvError, python_for
    from ..run.runner import installed_warp_version

    if write_package_data and checkout_root() is None:
        from ..paths import PACKAGE_DIR

        raise click.UsageError(f"--write-package-data overwrites the committed results of a source checkout; "
                               f"{PACKAGE_DIR} is an installed package (its data belongs to the installation). "
                               "Use --json FILE to keep the results")
    if json_path:
        _check_writable(json_path)
    releases = warp or [installed_warp_version()]
    if set(releases) == set(ALL_RELEASES):
        releases = list(ALL_RELEASES)  # newest and most used first, so an interrupted run has the useful ones
    only = None
    if only_spec is not None:
        names = {n.strip() for n in only_spec.split(",") if n.strip()}
        if not names:
            raise click.UsageError("--only: no builtin name or overload id given")

        def only(spec, names=frozenset(names)):
            return spec["builtin"] in names or spec["id"] in names
    store = _store(results_path)
    out = {}
    for rel in releases:
        try:
            py, ver = python_for(rel, log=err_console.print)
        except ReleaseEnvError as exc:
            err_console.print(f"[red]Warp {rel}: no environment ({exc})[/red]")
            continue
        err_console.print(f"Warp {ver} on {device}: measuring builtin adjoints")
        doc = conformance.measure_release(ver, py, device=device, store=store, fresh=fresh, only=only,
                                          log=err_console.print)
        if only is not None and not doc["cells"]:
            err_console.print(f"[yellow]Warp {doc['warp']}: --only {only_spec} matches no overload of this "
                              f"release[/yellow]")
            continue
        states = {}
        for c in doc["cells"].values():
            states[c["state"]] = states.get(c["state"], 0) + 1
        err_console.print(f"Warp {doc['warp']}: {len(doc['cells'])} overloads {states} "
                          f"({doc['reused_batches']}/{doc['batches']} batches reused, {doc['seconds']} s)")
        out[doc["warp"]] = doc
        if write_package_data:
            compact = conformance.compact(doc)
            if only is not None:
                try:
                    compact = merge_data(compact, device)
                except FileNotFoundError as exc:
                    raise click.UsageError(str(exc))
            err_console.print(f"wrote {write_data(compact, device)}")
    if write_package_data:
        err_console.print(f"wrote {write_page()}")
    if json_path:
        _write_json(out, json_path)
