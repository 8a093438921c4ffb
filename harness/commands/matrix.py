"""``defects4warp matrix``."""

from __future__ import annotations

import sys

import click

from ..run.scoring import nothing_measured
from ._common import (
    _preflight_releases,
    WRITTEN_AS_IT_GOES, _refuse_dash, on_interrupt,
    _check_writable, _emit, _executor, _load, _read_json, _release, _store, cases_opt, corpus_opt,
    device_opt, engine_opt, err_console, get_engine, jobs_opt, programs_opt, scale_opts, timeout_opt,
    markdown_option, warp_option,
)


@click.command()
@corpus_opt
@cases_opt
@warp_option(many=True, required=True)
@engine_opt
@device_opt
@jobs_opt
@timeout_opt
@programs_opt
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the matrix (ground truth and engine run per release) here; rewritten after every release "
                   "(so a file, not -).")
@markdown_option("Write the table here")
@click.option("--validation", "validation_json", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Reuse ground truth from `validate --warp ... --json` files (merged) instead of validating again.")
@click.option("--reuse-run", "reuse_runs", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Reuse a `run --json` file for the release it was measured on.")
@scale_opts
def cmd(corpus, cases_glob, warp, engine_name, device, jobs, timeout_s, programs, json_path, markdown_path,
        validation_json, reuse_runs, results_path, fresh, executor_kind, scheduler, workers):
    """Run the corpus on several Warp releases: per release the ground truth
    (validate) and the engine's verdict and class. All releases' work items go
    to the executor at once (with --executor dask they fan out over the
    cluster); results in the result store are reused unless --fresh."""
    from ..machine import describe
    from ..run.matrix import matrix_markdown, measure_releases
    from ..run.runner import write_json_atomic

    _refuse_dash(json_path, "--json", WRITTEN_AS_IT_GOES)
    _check_writable(json_path)
    _check_writable(markdown_path)
    cases, errors = _load(corpus, cases_glob)
    doc = {"engine": engine_name, "device": device, "machine": describe(), "releases": {}}
    from ..report.markdown import merge_validations

    truth = merge_validations([_read_json(p, "releases", "`validate --json`") for p in validation_json]) \
        if validation_json else {"releases": {}}
    reused = {}
    for p in reuse_runs:
        rd = _read_json(p, "summary", "`defects4warp run --json`")
        reused[rd["summary"]["warp_version"]] = rd
    releases = warp
    for rel in releases:
        _release(rel)
        err_console.print(f"Warp {rel}: " + ("ground truth reused" if rel in truth["releases"] else "validating")
                          + ", " + (f"{engine_name} run reused" if rel in reused else f"running {engine_name}"))

    def done(r):
        doc["releases"][r["warp_version"]] = r
        doc["wall_s"] = max(x["wall_s"] for x in doc["releases"].values())
        if json_path:
            write_json_atomic(json_path, doc)

    _preflight_releases(engine_name, releases, cases, device=device, timeout_s=timeout_s, programs=programs,
                        skip=reused)
    store = _store(results_path)
    on_interrupt(f"the diagnoses and checks that finished are in the result store {store.root}, so the same "
                 f"command reuses them" + (f"; {json_path} is rewritten after each release: it holds those that "
                                         "finished" if json_path else "")
                 + (f"; {markdown_path} was not written" if markdown_path not in (None, "-") else ""))
    with _executor(executor_kind, jobs, scheduler, workers) as ex:
        by_release = measure_releases(
            releases, cases, lambda py: get_engine(engine_name, timeout_s=timeout_s, python=py), device=device,
            jobs=jobs, timeout_s=timeout_s, truth={k: v.get("checks") for k, v in truth["releases"].items()},
            runs=reused, store=store, fresh=fresh, executor=ex, on_release=done, programs=programs)
    doc["releases"] = by_release  # release order, not finishing order
    if json_path:
        write_json_atomic(json_path, doc)
    n_reused = sum(r.get("reused", 0) for r in by_release.values())
    if n_reused:
        err_console.print(f"{n_reused} result(s) reused from the result store {store.root} (--fresh to measure again)")
    text = matrix_markdown(doc)
    _emit(text, markdown_path)
    empty = [r for r, d in by_release.items() if nothing_measured((d.get("run") or {}).get("summary") or {})]
    if empty:  # the engine got no verdict on a release: every item that ran there ended in an error
        err_console.print(f"no run got a verdict on Warp {', '.join(empty)}: every variant that ran there ended in "
                          "an error, so nothing was measured", style="red")
        sys.exit(1)
    sys.exit(1 if errors else 0)
