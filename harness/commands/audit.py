"""``defects4warp audit``: a corpus, or one program, across Warp releases."""

from __future__ import annotations

import sys

import click
from rich.markup import escape

from ..capture.targets import TargetError, resolve_module, resolve_target
from ..program_audit import audit_program
from ..report.program_audit_report import audit_program_markdown
from ..run.scoring import nothing_measured
from ._common import (
    ProgramPath, _preflight_releases,
    _check_device, _check_writable, _emit, _executor, _one_stdout, _write_json, _load, _read_json, _release, _store,
    _supported_releases, cases_opt, corpus_opt, device_opt, engine_opt,
    err_console, get_engine, jobs_opt, markdown_option, on_interrupt, programs_opt, scale_opts, timeout_opt,
    warp_option, written_at_end,
)
from .diagnose import _bundled_copy


def _alias(ctx, param, value):
    """``--from``/``--to``: checked like ``--warp`` (a bad release is a usage error, nothing installed)."""
    if value is None:
        return None
    return _supported_releases(value)[0]


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("path", required=False, default=None)
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("-m", "--module", "module", default=None, metavar="PKG.MODULE",
              help="Program audit of a module of a package, run as `python -m PKG.MODULE` would run it from the "
                   "current folder (a training script inside a package that imports it), as for `diagnose -m`.")
@warp_option(many=True, default_help="none: give --warp FROM,TO (or --from and --to)")
@click.option("--from", "from_", default=None, metavar="FROM", callback=_alias,
              help="With --to: same as --warp FROM,TO (the release you upgrade from).")
@click.option("--to", "to", default=None, metavar="TO", callback=_alias,
              help="With --from: same as --warp FROM,TO (the release you upgrade to).")
@click.option("--bisect", type=click.Choice(["all", "prepared", "none"]), default="all", show_default=True,
              help="Program audit: where the gradient changes between two releases with supported releases in "
                   "between, bisect over all of them (environments created on demand), over those already "
                   "prepared, or not at all.")
@click.option("--no-engine", "no_engine", is_flag=True,
              help="Program audit: measure the loss and gradient only, without the engine's diagnosis.")
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
def cmd(path, script_args, module, warp, from_, to, bisect, no_engine, matrix_json, corpus, cases_glob, engine_name,
        device, jobs, timeout_s, programs, markdown_path, json_path, error_factor, results_path, fresh, executor_kind,
        scheduler, workers):
    """What changes when you upgrade Warp: `audit --warp FROM,TO` on the bundled
    corpus (or --corpus, --cases), or `audit PATH --warp A,B[,C...]|all [-- ARGS]`
    on your own program (a training script run as it is, a folder, or a bundled
    case CASE/VARIANT; `audit -m pkg.train --warp A,B [-- ARGS]` for a script
    inside a package, from the folder that holds it).

    On a corpus, case by case: bugs that appear or disappear, bugs on both
    releases whose gradient error changes size, engine verdicts or classes that
    change (right or wrong on each release), tracker warnings that change, cost
    beyond noise, builtin adjoints that change. Exits 1 when a case's ground
    truth contradicts its tags on either release.

    On a program, release by release: whether it runs (build errors and
    refusals quoted), the loss, the gradient per param (relative change against
    the first release), the engine's verdict and class, the cost (wall,
    compile, CPU); where the gradient changes, the first release that changes
    it (bisected over the supported releases in between), the builtins and
    access patterns its kernels use whose measured adjoint changed there, the
    changelog entries, and one line for an upgrade ticket. A release that fails
    does not stop the others; exits 1 when the program ran on no release.
    `--from FROM --to TO` is the same as `--warp FROM,TO`."""
    if module is not None:
        # `audit -m pkg.train --warp A,B -- --iters 3`: after `--` click gives the first word to PATH
        script_args = ((path,) if path is not None else ()) + tuple(script_args)
    elif path is not None:
        path = ProgramPath().convert(path, None, click.get_current_context())
    _one_stdout(markdown=markdown_path, json=json_path)
    _check_writable(markdown_path)
    _check_writable(json_path)
    on_interrupt(written_at_end(markdown_path, json_path))
    if (from_ or to) and warp:
        raise click.UsageError("give --warp FROM,TO, or its alias --from FROM --to TO, not both")
    if from_ or to:
        if not (from_ and to):
            raise click.UsageError("--from and --to go together (or give --warp FROM,TO)")
        warp = [from_, to]
    if not warp:
        raise click.UsageError("give the releases to compare: --warp FROM,TO (a program takes several, or 'all')")
    if path is not None or module is not None:
        if matrix_json or corpus or cases_glob != "*":
            raise click.UsageError("--matrix, --corpus and --cases audit a corpus; a program PATH takes none of them")
        _audit_program(path, script_args, warp, module=module, bisect=bisect, engine=not no_engine,
                       engine_name=engine_name, device=device, timeout_s=timeout_s, markdown_path=markdown_path,
                       json_path=json_path)
        return
    if script_args:
        raise click.UsageError(f"arguments {' '.join(script_args)!r} given without a program PATH")
    if len(warp) != 2:
        raise click.UsageError(f"the corpus audit compares two releases (--warp FROM,TO), not {len(warp)}; "
                               "`defects4warp matrix --warp LIST` measures several")
    from_, to = warp
    if matrix_json:
        doc = _read_json(matrix_json, "releases", "`defects4warp matrix --json`")
        missing = [r for r in (from_, to) if r not in doc["releases"]]
        if missing:
            raise click.UsageError(f"{matrix_json} holds no release {', '.join(missing)}")
    else:
        doc = _measure_corpus(from_, to, corpus, cases_glob, engine_name, device, jobs, timeout_s, programs,
                              results_path, fresh, executor_kind, scheduler, workers, markdown_path, json_path)
    _report_corpus(doc, from_, to, device, error_factor, matrix_json, markdown_path, json_path)


def _measure_corpus(from_, to, corpus, cases_glob, engine_name, device, jobs, timeout_s, programs, results_path,
                    fresh, executor_kind, scheduler, workers, markdown_path, json_path) -> dict:
    """The corpus audit's measurement: every case with the engine on ``from_`` and ``to``
    (:func:`defects4warp.run.matrix.measure_releases`), reusing the result store; ``{"releases": ...}``."""
    from ..run.matrix import measure_releases

    cases, _ = _load(corpus, cases_glob)
    for rel in (from_, to):
        _release(rel)
    _preflight_releases(engine_name, [from_, to], cases, device=device, timeout_s=timeout_s, programs=programs)
    store = _store(results_path)
    on_interrupt(f"the diagnoses that finished are in the result store {store.root}, so the same command "
                 f"reuses them; " + written_at_end(markdown_path, json_path))
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
    return doc


def _report_corpus(doc: dict, from_, to, device, error_factor, matrix_json, markdown_path, json_path) -> None:
    """Compare the two releases of ``doc``, print or write the audit (Markdown, JSON) and exit: 1 when a
    case's ground truth contradicts its tags on either release, else 0.

    Raises
    ------
    click.ClickException
        When no run got a verdict on one of the releases (nothing to compare).
    """
    from ..run.matrix import ERROR_SIZE_FACTOR, audit_markdown
    from ..run.matrix import audit as compare_releases

    empty = [r for r in (from_, to) if nothing_measured(((doc["releases"].get(r) or {}).get("run") or {}).get("summary") or {})]
    if empty:  # every variant that ran on a release ended in an error: there is nothing to compare
        raise click.ClickException(f"no run got a verdict on Warp {', '.join(empty)}: every variant that ran there "
                                   "ended in an error, so the two releases cannot be compared")
    rep = compare_releases(doc, from_, to, error_factor=ERROR_SIZE_FACTOR if error_factor is None else error_factor)
    from ..report.builtins_page import audit_section

    rep["builtins"], extra = audit_section(from_, to, device)
    text = audit_markdown(rep) + extra
    rep["device"], rep["cpu_only"] = device, not str(device).startswith("cuda")
    if rep["cpu_only"] and not matrix_json:
        text += ("\nMeasured on the CPU only (device cpu): no GPU was measured; `--device cuda:0` measures on a GPU "
                 "where Warp finds one.\n")
    if markdown_path or json_path != "-":  # with --json - stdout carries the JSON alone
        _emit(text, markdown_path)
    if json_path:
        _write_json(rep, json_path)
    sys.exit(1 if rep["contradictions"] else 0)


def _audit_program(path, script_args, releases, *, module=None, bisect, engine, engine_name, device, timeout_s,
                   markdown_path, json_path):
    """The program audit verb (:func:`defects4warp.program_audit.audit_program`): resolve PATH (or the
    module ``-m PKG.MODULE``, from the current folder) as ``diagnose`` does, measure each release (progress
    on stderr), print or write the Markdown and JSON."""
    try:
        if module is not None:
            folder, spec, assumed = resolve_module(module, script_args, None, None)
            path = f"-m {module}"
        else:
            folder, spec, assumed = resolve_target(path, script_args, None, None)
    except (TargetError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    if device != "cpu":
        python, _ = _release(releases[-1])
        _check_device(device, python)
    err_console.print(f"program audit of {path} on Warp {', '.join(releases)} | device {device}"
                      + ("" if engine else " | no engine")
                      + (f" | script {spec.entry}" if spec is not None else ""))

    with _bundled_copy(folder, spec) as (where, spec2):
        def progress(row):
            e = row.get("engine") or {}
            what = ((f"loss {row['loss']}" + (f", engine {e.get('verdict')} {e.get('class') or ''}".rstrip() if e
                                               else "")) if row["runs"]
                    else f"did not run: {str(row['error']).replace(str(where), str(folder))}")
            err_console.print(escape(f"  {row['release']}: {what} ({row['cost'].get('wall_s')} s)"))

        doc = audit_program(where, spec2, releases, engine_name=engine_name, device=device, timeout_s=timeout_s,
                            bisect=bisect, engine=engine, log=err_console.print, on_row=progress, target=str(path),
                            assumed=assumed)
        for r in doc["rows"]:  # name the user's files, not the neutral copy's
            for d in (r, r.get("engine") or {}):
                if d.get("error"):
                    d["error"] = d["error"].replace(str(where), str(folder))
    text = audit_program_markdown(doc)
    if markdown_path or json_path != "-":
        _emit(text, markdown_path)
    if json_path:
        _write_json(doc, json_path)
    sys.exit(0 if any(r["runs"] for r in doc["rows"]) else 1)
