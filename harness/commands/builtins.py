"""``defects4warp builtins``: adjoint conformance of Warp's builtins, release by release."""

from __future__ import annotations

import click

from ._common import _store, err_console, results_opt


def _releases(spec: str) -> list:
    from ..builtins import ALL_RELEASES

    if spec == "all":
        return list(ALL_RELEASES)
    return [r.strip() for r in spec.split(",") if r.strip()]


@click.command()
@click.option("--warp", "warp_spec", default="all", show_default=True, metavar="all|X.Y.Z[,..]",
              help="Releases to measure (all: defects4warp.builtins.ALL_RELEASES, newest first).")
@click.option("--device", default="cpu", show_default=True, help="Warp device.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write {release: release document} here.")
@click.option("--data/--no-data", "data_flag", default=False, show_default=True,
              help="Also write the compact result of each release to harness/data/builtins/<release>-<device>.json "
                   "and regenerate docs/builtins.md (maintainers, before committing).")
@click.option("--fresh", is_flag=True, help="Measure again instead of reusing batches from the result store.")
@click.option("--only", "only_spec", default=None, metavar="NAME[,..]",
              help="Measure only these builtins (names as in docs/builtins.md: tile_max, div, [component_add]) "
                   "or overload ids (div(float32,vec4f)); with --data their cells replace those of the committed "
                   "data of each release, the other cells are kept.")
@results_opt
def cmd(warp_spec, device, json_path, data_flag, fresh, only_spec, results_path):
    """Compare the tape's adjoint of every float builtin overload with finite
    differences, on each release: agrees, wrong, zero, build_error or absent.
    Releases already in the result store are reused (--fresh to measure again)."""
    from ..builtins import conformance, merge_data, write_data, write_page
    from ..envs import ReleaseEnvError, python_for
    from ..runner import write_json_atomic

    only = None
    if only_spec is not None:
        names = {n.strip() for n in only_spec.split(",") if n.strip()}
        if not names:
            raise click.UsageError("--only: no builtin name or overload id given")

        def only(spec, names=frozenset(names)):
            return spec["builtin"] in names or spec["id"] in names
    store = _store(results_path)
    out = {}
    for rel in _releases(warp_spec):
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
        if data_flag:
            compact = conformance.compact(doc)
            if only is not None:
                try:
                    compact = merge_data(compact, device)
                except FileNotFoundError as exc:
                    raise click.UsageError(str(exc))
            err_console.print(f"wrote {write_data(compact, device)}")
    if data_flag:
        err_console.print(f"wrote {write_page()}")
    if json_path:
        write_json_atomic(json_path, out)
