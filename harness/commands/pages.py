"""``defects4warp maint pages``."""

from __future__ import annotations

import sys

import click

from ._common import (
    _check_device, _executor, _load, _release, _store, _supported_releases, cases_opt, console, corpus_opt, device_opt,
    err_console, jobs_opt, scale_opts, timeout_opt,
)


@click.command()
@click.option("--check", is_flag=True, help="Only compare: exit 1 naming every page that differs from what its "
                                            "committed data renders to, with the first differing lines of each as a unified "
                                            "diff (at most 20 lines a page; nothing is written or measured).")
@click.option("--measure", is_flag=True,
              help="First fill in what is missing for the --warp releases, one release at a time: the ground truth "
                   "(docs/data/validation-<release>.json) where no committed validation covers the release, then the "
                   "engine's answers (docs/data/engine-<release>.json) where the file is missing or stale (another "
                   "engine version or code, device or corpus). The result store is reused, so a killed run resumes; "
                   "each file is written when its release is complete.")
@click.option("--warp", "warp", default="all", show_default=True, metavar="VERSION[,VERSION...]|all",
              help="With --measure: the releases to fill in, in this order ('all': 1.12.1 ... 1.19.0 first, "
                   "then the older ones newest first); with --check: the releases to report as not measured.")
@click.option("--no-validate", "no_validate", is_flag=True,
              help="With --measure: run the engine only; releases without a committed validation stay "
                   "'not validated' in the pages.")
@click.option("--baselines", is_flag=True,
              help="With --measure: measure the baseline engines that docs/engines.md compares the reference engine "
                   "with (warp-gradcheck, fd-only, tracker-only, static-only, always-bug, always-no-bug) on the "
                   "release it compares on (1.19.0) into docs/data/baselines/<engine>-<release>.json, where a file is "
                   "missing or stale, instead of the reference engine on the --warp releases (so not with --warp).")
@click.option("--rescore", is_flag=True,
              help="Interpret the committed measurements again with this checkout's engine code, no Warp run: every "
                   "--warp release (and every baseline's file) with a measurement bundle beside its engine file "
                   "(engine-<release>.measurements.jsonl.gz) whose runs are all current gets its engine file "
                   "rewritten; a release with runs that need a measurement first (variant or measuring code changed) "
                   "is listed with them and left as it is (`--measure` measures only those), and the exit status is 1.")
@click.option("--neutral-check", "neutral", type=int, default=None, metavar="N",
              help="After a change to measuring code meant to be neutral: for each --warp release with a "
                   "measurement bundle, measure N of its now-stale runs again and compare the documents with the "
                   "committed ones; when all agree, re-stamp the stale records with this code (no other run is "
                   "measured), else say where they differ and write nothing.")
@click.option("--programs", type=click.Choice(["auto", "adapters", "scripts"]), default="auto", show_default=True,
              help="With --neutral-check: which runs' measurements are checked and re-stamped (e.g. adapters "
                   "alone after a change meant to move script measurements only).")
@click.option("--rtol", "rtol", type=click.FloatRange(min=0.0, max=1e-3), default=1e-9, show_default=True,
              help="With --neutral-check: relative tolerance of the comparison. The default holds for a bundle "
                   "measured on this kind of machine; a bundle measured on another CPU differs by its rounding in "
                   "the compiled kernels (Warp 1.0.2: finite differences 1.1e-9 apart, measured 2026-12-04), for "
                   "which 1e-8 is the documented setting (docs/scale-out.md).")
@click.option("--root", "root", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder holding docs/ and docs/data/ (default: this checkout); for trial measurements "
                   "outside the repository.")
@corpus_opt
@cases_opt
@device_opt
@jobs_opt
@timeout_opt
@scale_opts
def cmd(check, measure, warp, no_validate, baselines, rescore, neutral, programs, rtol, root, corpus, cases_glob, device, jobs, timeout_s,
        results_path, fresh, executor_kind, scheduler, workers):
    """Regenerate every generated page of docs/ (version matrix, release
    matrix, upgrade audits, results, the generated parts of engines.md and
    builtins.md, old releases) from the committed data under docs/data/,
    re-measuring only what is missing (with --measure; the engine of the
    pages is the reference engine). Parts of pages without a committed
    source are listed."""
    from pathlib import Path

    from ..report.pages.sources import BASELINE_RELEASE, ROOT

    root = Path(root) if root else ROOT
    if check and measure:
        raise click.UsageError("--check compares only; it cannot be combined with --measure")
    if (cases_glob != "*" or corpus) and not (measure or rescore or neutral is not None):
        raise click.UsageError("--cases and --corpus choose what --measure, --rescore or --neutral-check read; give one")
    if baselines and not measure:
        raise click.UsageError("--baselines chooses what --measure measures; give --measure too")
    if baselines and (warp != "all" or no_validate):
        raise click.UsageError(f"--baselines measures the baseline engines on {BASELINE_RELEASE} only; --warp and "
                               "--no-validate are for the reference engine's releases")
    releases = _supported_releases(warp)
    if neutral is not None:
        if check or measure or rescore:
            raise click.UsageError("--neutral-check runs alone (then --rescore or the pages)")
        _neutral(root, releases, corpus, cases_glob, neutral, timeout_s, programs, rtol=rtol)
        return
    if rescore:
        if check or measure:
            raise click.UsageError("--rescore re-interprets committed measurements; it cannot be combined with "
                                   "--check or --measure")
        _rescore(root, releases, corpus, cases_glob, jobs)
    if measure:
        releases = _measure(root, releases, warp, baselines, no_validate, corpus, cases_glob, device, jobs,
                            timeout_s, results_path, fresh, executor_kind, scheduler, workers)
    _write_or_check(root, releases, check)


def _measure(root, releases, warp, baselines, no_validate, corpus, cases_glob, device, jobs, timeout_s, results_path,
             fresh, executor_kind, scheduler, workers) -> list:
    """``pages --measure``: fill in the validation and engine files ``releases`` lack (or, with
    ``baselines``, the baseline engines' files), with a progress bar per release; returns the releases
    measured, in the order taken (the ones the pages' report then names)."""
    from ..report.pages.measuring import measure as measure_pages, measure_baselines, measure_order
    from ..report.pages.prose import PageSourceError
    from ..report.pages.sources import BASELINE_RELEASE

    if warp == "all":
        releases = measure_order(releases)
    if baselines:
        releases = [BASELINE_RELEASE]
    for rel in releases:
        python, _ = _release(rel)
        _check_device(device, python)
    cases, errors = _load(corpus, cases_glob)
    if errors:
        raise click.UsageError(f"{len(errors)} case folder(s) have format errors; fix them before measuring "
                               "(a page would silently leave them out)")
    from ..progress import progress

    store = _store(results_path)
    with _executor(executor_kind, jobs, scheduler, workers) as ex, \
            progress("diagnosing", err_console) as prog:
        state = {}

        def start(rel, total):
            state["task"], state["rel"] = prog.add_task(f"Warp {rel}", total=total), rel

        def tick(rec):
            v = rec["variant"] + ("" if rec["scale"] == "small" else f"@{rec['scale']}")
            prog.update(state["task"], advance=1,
                        description=f"Warp {state['rel']} {rec['case']}/{v} {rec['diagnosis']['verdict']}")

        try:
            if baselines:
                done = [(releases[0], f"baseline {e}") for e in measure_baselines(
                    cases, root, release=releases[0], device=device, jobs=jobs, timeout_s=timeout_s, store=store,
                    fresh=fresh, executor=ex, selection=cases_glob, on_result=tick, on_start=start,
                    log=err_console.print)]
            else:
                done = measure_pages(cases, releases, root, engine_name="reference", device=device, jobs=jobs,
                                     timeout_s=timeout_s, store=store, fresh=fresh, executor=ex,
                                     validate=not no_validate, selection=cases_glob, on_result=tick,
                                     on_start=start, log=err_console.print)
        except PageSourceError as exc:
            raise click.ClickException(str(exc)) from None
    err_console.print("measured: " + (", ".join(f"{w} {r}" for r, w in done) or "nothing (every file is current)"))
    return releases


def _write_or_check(root, releases, check: bool) -> None:
    """Write every page (or, with ``check``, compare each and exit 1 when one differs); then list what is
    not generated and the releases without a validation or a current engine file."""
    from ..report.pages.measuring import missing_releases, older_engine_releases, unmeasured_releases
    from ..report.pages.prose import PageSourceError
    from ..report.pages.registry import NOT_GENERATED, PAGES, check_pages, write_pages

    try:
        if check:
            diffs = {}
            stale = check_pages(root, diffs=diffs)
        else:
            changed = write_pages(root)
    except PageSourceError as exc:
        raise click.ClickException(str(exc)) from None
    if check:
        for p in PAGES:
            console.print(f"{p.path}: {'DIFFERS from' if p.path in stale else 'matches'} {p.sources}")
            for line in diffs.get(p.path, []):  # the first differing lines, committed (-) vs generated (+)
                click.echo(f"    {line}")
    else:
        for p in PAGES:
            console.print(f"{p.path}: {'rewritten' if p.path in changed else 'unchanged'} (from {p.sources})")
    for path, why in NOT_GENERATED.items():
        console.print(f"{path}: not generated ({why})")
    left = missing_releases(releases, root)
    if left:
        console.print(f"no committed validation for Warp {', '.join(left)} (`defects4warp maint pages --measure`)")
    left = unmeasured_releases(releases, root)
    if left:
        console.print(f"no engine file for Warp {', '.join(left)} "
                      f"(`defects4warp maint pages --measure --warp {','.join(left)}`)")
    old = older_engine_releases(releases, root)
    if old:
        console.print(f"engine file from an older engine code for Warp {', '.join(old)} "
                      f"(`defects4warp maint pages --measure --no-validate --warp {','.join(old)}`)")
    if check:
        sys.exit(1 if stale else 0)


def _rescore(root, releases, corpus, cases_glob, jobs) -> None:
    """``pages --rescore``: re-interpret every engine file of ``releases`` (and
    the baselines' files) that has a measurement bundle; print what each needs."""
    import time

    from ..report.engine_matrix import EngineFileError, bundle_path, data_path, rescore_release, write
    from ..report.pages.sources import baseline_path, BASELINE_ENGINES, BASELINE_RELEASE

    cases, errors = _load(corpus, cases_glob)
    if errors:
        raise click.UsageError(f"{len(errors)} case folder(s) have format errors; fix them before re-scoring")
    files = [(data_path(root, r), "reference") for r in releases]
    files += [(baseline_path(root, e, BASELINE_RELEASE), e) for e in BASELINE_ENGINES]
    t0, written, blocked = time.perf_counter(), 0, 0
    for path, engine in files:
        if not path.is_file() or not bundle_path(path).is_file():
            if path.is_file():
                err_console.print(f"{path.name}: no measurement bundle; not re-scored")
            continue
        try:
            doc, needs = rescore_release(path, cases, engine_name=engine, jobs=jobs)
        except EngineFileError as exc:
            raise click.ClickException(str(exc)) from None
        if doc is None:
            blocked += 1
            err_console.print(f"{path.name}: {len(needs)} run(s) need a measurement first; file kept: "
                              + "; ".join(f"{lbl} ({why})" for lbl, why in needs[:5]) + (" ..." if len(needs) > 5 else ""))
            continue
        write(path, doc)
        written += 1
        err_console.print(f"{path.name}: {len(doc['runs'])} runs re-interpreted in {doc['interpreted']['wall_s']} s")
    err_console.print(f"re-scored {written} engine file(s) in {time.perf_counter() - t0:.1f} s"
                      + (f"; {blocked} need measurements first" if blocked else ""))
    if blocked:  # the pages below would render files this code did not interpret: say so in the status
        err_console.print("`defects4warp maint pages --neutral-check N` (a change meant to move no measurement) or "
                          "`defects4warp maint pages --measure --no-validate --warp RELEASE` first", style="red")
        sys.exit(1)


def _neutral(root, releases, corpus, cases_glob, sample, timeout_s, programs, rtol: float = 1e-9) -> None:
    """``pages --neutral-check N``: see the option's help."""
    from ..report.engine_matrix import bundle_path, data_path, neutral_check

    cases, errors = _load(corpus, cases_glob)
    if errors:
        raise click.UsageError(f"{len(errors)} case folder(s) have format errors; fix them first")
    moved = False
    for rel in releases:
        path = data_path(root, rel)
        if not bundle_path(path).is_file():
            continue
        python, _ = _release(rel)
        res = neutral_check(path, cases, sample=sample, timeout_s=timeout_s, python=python, programs=programs,
                            rtol=rtol, log=lambda m, r=rel: err_console.print(f"Warp {r}: {m}"))
        if not res["candidates"]:
            err_console.print(f"Warp {rel}: no stale measurement")
        elif res["neutral"]:
            err_console.print(f"Warp {rel}: {len(res['sampled'])} of {res['candidates']} stale runs measured again, "
                              f"all the same: {res['restamped']} re-stamped for {', '.join(res['changed_modules'])}")
        else:
            moved = True
            err_console.print(f"Warp {rel}: the change moved measurements; nothing re-stamped "
                              "(`defects4warp maint pages --measure --warp " + rel + "` measures the stale runs)")
    if moved:
        sys.exit(1)
