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
@click.option("--data/--no-data", "write_data", default=False, show_default=True,
              help="Also write the compact result of each release to harness/data/builtins/<release>-<device>.json "
                   "and regenerate docs/builtins.md (maintainers, before committing).")
@click.option("--fresh", is_flag=True, help="Measure again instead of reusing batches from the result store.")
@results_opt
def cmd(warp_spec, device, json_path, write_data, fresh, results_path):
    """Compare the tape's adjoint of every float builtin overload with finite
    differences, on each release: agrees, wrong, zero, build_error or absent.
    Releases already in the result store are reused (--fresh to measure again)."""
    from ..builtins import conformance, write_data, write_page
    from ..envs import ReleaseEnvError, python_for
    from ..runner import write_json_atomic

    store = _store(results_path)
    out = {}
    for rel in _releases(warp_spec):
        try:
            py, ver = python_for(rel, log=err_console.print)
        except ReleaseEnvError as exc:
            err_console.print(f"[red]Warp {rel}: no environment ({exc})[/red]")
            continue
        err_console.print(f"Warp {ver} on {device}: measuring builtin adjoints")
        doc = conformance.measure_release(ver, py, device=device, store=store, fresh=fresh, log=err_console.print)
        states = {}
        for c in doc["cells"].values():
            states[c["state"]] = states.get(c["state"], 0) + 1
        err_console.print(f"Warp {doc['warp']}: {len(doc['cells'])} overloads {states} "
                          f"({doc['reused_batches']}/{doc['batches']} batches reused, {doc['seconds']} s)")
        out[doc["warp"]] = doc
        if write_data:
            err_console.print(f"wrote {write_data(conformance.compact(doc), device)}")
    if write_data:
        err_console.print(f"wrote {write_page()}")
    if json_path:
        write_json_atomic(json_path, out)
