"""``defects4warp audit``."""

from __future__ import annotations

import sys

import click

from ._common import (
    _preflight_releases,
    _check_writable, _emit, _executor, _one_stdout, _write_json, _load, _read_json, _release, _store, _supported_releases, cases_opt, corpus_opt, device_opt, engine_opt,
    err_console, get_engine, jobs_opt, markdown_option, programs_opt, scale_opts, timeout_opt,
)


@click.command()
@click.option("--from", "from_", required=True, metavar="VERSION", help="The release you are on.")
@click.option("--to", "to", required=True, metavar="VERSION", help="The release you are moving to.")
@click.option("--matrix", "matrix_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Reuse a `defects4warp matrix --json` file holding both releases instead of measuring.")
@corpus_opt
@cases_opt
@engine_opt
@device_opt
@jobs_opt
@timeout_opt
@programs_opt
@markdown_option("Write the audit here")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the audit as JSON here ('-' prints it, and then the Markdown only with --markdown FILE).")
@click.option("--error-factor", type=click.FloatRange(min=1.0, min_open=True), default=None, metavar="X",
              help="List a bug present on both releases when its measured relative error or growth ratio changes "
                   "by more than X times [default: 10, one order of magnitude].")
@scale_opts
def cmd(from_, to, matrix_json, corpus, cases_glob, engine_name, device, jobs, timeout_s, programs, markdown_path,
        json_path, error_factor, results_path, fresh, executor_kind, scheduler, workers):
    """What changes, case by case, when moving from one Warp release to another:
    bugs that appear or disappear, bugs on both releases whose gradient error
    changes size, engine verdicts or classes that change (right or wrong on
    each release), tracker warnings that change, cost beyond noise, builtin
    adjoints that change. Exits 1 when a case's ground truth
    contradicts its tags on either release."""
    from ..matrix import ERROR_SIZE_FACTOR, audit_markdown, measure_releases
    from ..matrix import audit as compare_releases
    _one_stdout(markdown=markdown_path, json=json_path)
    _check_writable(markdown_path)
    _check_writable(json_path)
    if matrix_json:
        doc = _read_json(matrix_json, "releases", "`defects4warp matrix --json`")
        missing = [r for r in (from_, to) if r not in doc["releases"]]
        if missing:
            raise click.UsageError(f"{matrix_json} holds no release {', '.join(missing)}")
    else:
        for rel in (from_, to):
            _supported_releases(rel)  # both refused before either is installed
        cases, _ = _load(corpus, cases_glob)
        for rel in (from_, to):
            _release(rel)
        _preflight_releases(engine_name, [from_, to], cases, device=device, timeout_s=timeout_s, programs=programs)
        store = _store(results_path)
        with _executor(executor_kind, jobs, scheduler, workers) as ex:
            releases = measure_releases([from_, to], cases,
                                        lambda py: get_engine(engine_name, timeout_s=timeout_s, python=py),
                                        device=device, jobs=jobs, timeout_s=timeout_s, store=store, fresh=fresh,
                                        executor=ex, programs=programs)
        doc = {"releases": releases}
        n_reused = sum(r.get("reused", 0) for r in releases.values())
        if n_reused:
            err_console.print(f"{n_reused} result(s) reused from the result store {store.root} "
                              "(--fresh to measure again)")
    rep = compare_releases(doc, from_, to, error_factor=ERROR_SIZE_FACTOR if error_factor is None else error_factor)
    from ..builtins.page import audit_section

    rep["builtins"], extra = audit_section(from_, to, device)
    text = audit_markdown(rep) + extra
    if markdown_path or json_path != "-":  # with --json - stdout carries the JSON alone
        _emit(text, markdown_path)
    if json_path:
        _write_json(rep, json_path)
    sys.exit(1 if rep["contradictions"] else 0)
