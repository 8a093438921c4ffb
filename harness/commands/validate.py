"""``defects4warp validate``."""

from __future__ import annotations

import sys

import click
from rich.markup import escape
from rich.table import Table

from ._common import (
    WRITTEN_AS_IT_GOES, _refuse_dash, on_interrupt,
    _check_device, _check_writable, _executor, _load, _progress, _store, cases_opt, console,
    corpus_opt, device_opt, err_console, jobs_opt, programs_opt, scale_opts, split_opt, timeout_opt,
    warp_option,
)


@click.command()
@corpus_opt
@cases_opt
@device_opt
@jobs_opt
@timeout_opt
@warp_option(many=True)
@split_opt
@programs_opt
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 10),
              help="Measure each variant this many times; differing outcomes fail (determinism).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Write the per-variant checks of every release here (input of `version-matrix`); written as "
                   "the checks finish (so a file, not -).")
@scale_opts
def cmd(corpus, cases_glob, device, jobs, timeout_s, warp, split, programs, repeat, json_path, results_path, fresh,
        executor_kind, scheduler, workers):
    """Check each case against the independent oracle (docs/oracle.md), without
    any engine: buggy variants really disagree with finite differences (as
    their class says, and differently from their fixed twin), fixed ones agree,
    refused ones are refused. Prints passed / failed / unresolved / skipped
    counts; exits 1 and names each check that failed or stayed unresolved.
    Checks already in the result store (same variant and twin files,
    expectation, release, device, repeat) are reused unless --fresh.
    With --programs scripts, variants that hold a script are validated as the
    script: the capture reads the user's files into a replay record and the
    oracle replays the script with its own instrumentation; a case whose
    script.reference names the gradient it should give (a deliberate surrogate)
    is judged against that reference instead of finite differences."""
    from ..machine import describe
    from ..validate import validate_releases

    _refuse_dash(json_path, "--json", WRITTEN_AS_IT_GOES)
    _check_writable(json_path)
    cases, errors = _load(corpus, cases_glob, split)
    releases = [None] if warp is None else warp
    skip = _uninstallable(releases, device)
    store = _store(results_path)
    on_interrupt(f"the checks that finished are in the result store {store.root}, so the same command reuses "
                 f"them" + (f"; {json_path} is rewritten after each release: it holds those that "
                                         "finished" if json_path else ""))

    import datetime

    meta = {"machine": describe(), "programs": programs, "measured_on": datetime.date.today().isoformat()}
    with _executor(executor_kind, jobs, scheduler, workers) as ex, _progress(0, "validating") as prog:
        task = prog.add_task("", total=None)
        doc = validate_releases(cases, releases, device=device, jobs=jobs, timeout_s=timeout_s, repeat=repeat,
                                store=store, fresh=fresh, executor=ex, json_path=json_path, meta=meta, skip=skip,
                                programs=programs,
                                on_check=lambda rel, c: prog.update(task, advance=1,
                                                                    description=f"{rel} {c.case}/{c.variant}"),
                                on_release=lambda rel, checks: _show(rel, checks, device))
    failed = [str(e) for e in errors] + doc["failures"]
    for rel, r in doc["releases"].items():
        # when the checks taken from the result store were measured (read by `version-matrix`)
        span = store.measured_dates("validation", rel) if r.get("reused") else None
        if span:
            r["reused_measured"] = list(span)
    if json_path and (errors or any("reused_measured" in r for r in doc["releases"].values())):
        from ..run.runner import write_json_atomic

        doc["failures"] = failed
        write_json_atomic(json_path, doc)
    if doc["reused"]:
        err_console.print(f"{doc['reused']} check(s) reused from the result store {store.root} (--fresh to measure again)")
    if failed:
        # the case format errors were printed in full when the corpus was read (as `run` does): counted
        # here, not repeated; the failures of the checks themselves are listed
        if errors:
            console.print(f"[red]{len(errors)} case folder(s) not validated because of case format errors "
                          f"(listed above)[/red]")
        if doc["failures"]:
            console.print(f"[red]{len(doc['failures'])} problem(s):[/red]")
            for f in doc["failures"]:
                console.print(escape(f"  {f}"))
        sys.exit(1)
    console.print(f"no check of the {len(cases)} cases failed or stayed unresolved on Warp {', '.join(doc['releases'])}")


def _uninstallable(releases: list, device: str) -> dict:
    """``{release: why}`` of the ``releases`` that cannot be installed here (their checks are skipped, not
    passed); checks ``device`` on every other one.

    Raises
    ------
    click.UsageError
        When a release that cannot be installed is not a version number at all.
    """
    from packaging.version import InvalidVersion, Version

    from ..envs import ReleaseEnvError, python_for

    skip = {}
    for rel in releases:
        try:
            python, _ = python_for(rel, log=err_console.print)
        except ReleaseEnvError as exc:
            try:
                Version(rel)
            except InvalidVersion:
                raise click.UsageError(str(exc)) from None
            # a release that cannot be installed here: its checks are skipped, not passed
            err_console.print(f"[yellow]Warp {rel} is not installed here ({escape(str(exc))}): skipped[/yellow]")
            skip[rel] = str(exc)
            continue
        _check_device(device, python)
    return skip


#: How each status of a check is shown in the validate table.
STATUS_STYLE = {"passed": "ok", "failed": "[red]FAIL[/red]", "unresolved": "[yellow]unresolved[/yellow]",
                "skipped": "skipped", "unsupported": "unsupported"}


def _show(warp_version, checks, device: str) -> None:
    """Print one release's checks as a table, then its counts."""
    from ..run.matrix import oracle_cell
    from ..validate import counts

    table = Table(title=f"defects4warp validate: Warp {warp_version}, {device} (oracle)")
    for col in ("case", "variant", "expected", "oracle", "rel. error", "resolved", "noise", "pair", "status"):
        table.add_column(col)
    for cc in checks:
        for v in cc.variants:
            exp = v.expected
            o = v.oracle or {}
            pr = v.pair or {}
            table.add_row(cc.case, v.variant + ("" if v.scale == "small" else f"@{v.scale}")
                          + (" (script)" if v.program == "script" else ""),
                          (f"needs {exp['min_warp']}" if exp["verdict"] == "unsupported"
                           else f"{exp['verdict']} {'/'.join(exp['classes'])}") if exp else "-",
                          oracle_cell(v.to_dict()) if o else "-",
                          "-" if v.relative_error is None else f"{float(v.relative_error):.2g}",
                          "-" if o.get("resolved") is None else f"{o['resolved']}/{o['resolved'] + o['unresolved']}",
                          "-" if o.get("noise_relative") is None else f"{float(o['noise_relative']):.1g}",
                          "-" if not pr else ("ok" if pr.get("confirmed") else "no")
                          + ("" if pr.get("ratio_median") is None else f" r={float(pr['ratio_median']):.3g}"),
                          STATUS_STYLE[v.status])
    console.print(table)
    n = counts([v for cc in checks for v in cc.variants])
    console.print(f"Warp {warp_version}: {n['passed']} passed, {n['failed']} failed, {n['unresolved']} unresolved, "
                  f"{n['skipped']} skipped, {n['unsupported']} unsupported")
