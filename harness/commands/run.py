"""``defects4warp run``."""

from __future__ import annotations

import os
import sys
import time

import click
from rich.markup import escape
from rich.table import Table

from ._common import (
    WRITTEN_AS_IT_GOES, Terminated, _refuse_dash, interrupted_note,
    _preflight,
    _check_device, _check_writable, _executor, _fmt, default_corpus, _load, _progress, _release, _store, cases_opt, console,
    corpus_opt, device_opt, engine_opt, err_console, get_engine, jobs_opt, programs_opt, progress_opt, scale_opts, split_opt, timeout_opt,
    top_class, warp_opt,
)
from ..corpus.case import TIERS
from ..run.scoring import is_skipped, nothing_measured


#: CPU-seconds one reference diagnosis of a bundled variant costs, on average, on a 2-core x86 CPU with
#: Warp's kernel cache filled as it goes: Warp 1.16.0, 459 runs in 2,097 CPU-s (4.57 s a run) and 1.18.0,
#: 451 runs in 2,009 CPU-s (4.45 s), measured 2026-12-04 (docs/scale-out.md, README "How long it takes").
CPU_S_PER_RUN = 4.6


def cost_note(to_measure: int, done: int, jobs: int, reference: bool = True,
              cpu_s_per_run: float = CPU_S_PER_RUN, cores: int | None = None) -> str:
    """One line, printed before a run's first diagnosis, saying what the run will cost.

    Parameters
    ----------
    to_measure : int
        Runs that must be diagnosed (not in the result store, not skipped).
    done : int
        Runs finished without a diagnosis (reused from the store, skipped by ``requires``, prefilled).
    jobs : int
        Runs diagnosed at once (``--jobs``, >= 1).
    reference : bool
        Whether the engine is the reference engine, whose cost per run is known
        (``cpu_s_per_run``); for any other engine only the counts are given.
    cpu_s_per_run : float
        Average CPU-seconds of one reference diagnosis (default :data:`CPU_S_PER_RUN`, measured).
    cores : int, optional
        Cores this process may use (default ``len(os.sched_getaffinity(0))``): the wall-time estimate
        divides by ``min(jobs, cores)``.

    Returns
    -------
    str
        e.g. ``"459 of 459 run(s) to measure: about 35 min of CPU time, some 18 min at --jobs 2 (a
        second run reuses them; --cases GLOB or --split dev|test runs a part)"``.
    """
    head = f"{to_measure} of {to_measure + done} run(s) to measure" + (
        " (the others reused from the store, skipped, or run by the engine's preflight)" if done else "")
    if to_measure == 0:
        return head + ": nothing to measure"
    if not reference:
        return head
    cpu_s = to_measure * cpu_s_per_run
    cores = cores or len(os.sched_getaffinity(0))
    wall_s = cpu_s / max(1, min(jobs, cores))
    hint = " (a second run reuses them; --cases GLOB or --split dev|test runs a part)" if wall_s >= 120 else ""
    return f"{head}: about {_duration(cpu_s)} of CPU time, some {_duration(wall_s)} at --jobs {jobs}" + hint


def _duration(seconds: float) -> str:
    """``"40 s"`` under two minutes, else ``"18 min"`` (rounded)."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60.0:.0f} min"


def tier_table(tiers: dict) -> Table:
    """The per-tier table of a run (``summary["tiers"]``, :func:`defects4warp.run.scoring.summarize_tiers`):
    detection rate over the tier's bug runs, false-positive rate over its no_bug runs, class accuracy over
    its scored runs, each with its denominator."""
    t = Table(title="per provenance tier")
    for col in ("tier", "runs scored", "detection rate", "false-positive rate", "class accuracy"):
        t.add_column(col)
    for name, m in tiers.items():
        t.add_row(name, str(m["scored"]), f"{_fmt(m['detection_rate'])} of {m['bug_runs']}",
                  f"{_fmt(m['false_positive_rate'])} of {m['no_bug_runs']}",
                  f"{_fmt(m['class_accuracy'])} of {m['scored']}")
    return t


@click.command()
@corpus_opt
@cases_opt
@engine_opt
@device_opt
@jobs_opt
@timeout_opt
@warp_opt
@split_opt
@programs_opt
@click.option("--tier", type=click.Choice(["all", *TIERS]), default="all", show_default=True,
              help="Only cases of this provenance tier: original (written for this corpus), mined (taken from "
                   "Warp's own fix history, docs/mined.md) or report (restating a public bug report). With more "
                   "than one tier in the run, the summary scores each apart.")
@click.option("--group-by", "group_by", type=click.Choice(["domain", "split", "family", "program"]), default=None,
              help="Also report the metrics per domain tag, per split, per family of the expected class, or per "
                   "program (adapter or script).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write {summary, results} here (rewritten atomically after every variant).")
@scale_opts
@click.option("--no-store", is_flag=True, help="Do not store the run in the results history (results of single "
              "variants still go to the result store, so a rerun resumes).")
@click.option("--with-summary", is_flag=True,
              help="cmd: engines only: pass the case's summary (the user's words) as a fourth argument.")
@progress_opt
def cmd(corpus, cases_glob, engine_name, device, jobs, timeout_s, warp, split, programs, tier, group_by, json_path,
        results_path,
        fresh, executor_kind, scheduler, workers, no_store, with_summary, progress_every):
    """Diagnose every case x variant with an engine and score it against the
    expectation for the installed Warp release. Diagnoses already in the result
    store (same variant files, engine name/version/options, release, device,
    scale) are reused unless --fresh, so a killed run resumes."""
    import datetime as _dt

    from ..run.history import corpus_info
    from ..machine import describe
    from ..run.runner import plan
    from ..run.runner import run as run_items

    _refuse_dash(json_path, "--json", WRITTEN_AS_IT_GOES)
    _check_writable(json_path)
    cases, errors = _load(corpus, cases_glob, split)
    if tier != "all":
        cases = [c for c in cases if c.tier == tier]
        if not cases and not errors:
            err_console.print(f"[red]no case of tier '{tier}' in {corpus or default_corpus()} matches "
                              f"'{cases_glob}'" + (f" in split '{split}'" if split else "") + "[/red]")
            sys.exit(2)
    python, warp_version = _release(warp)
    _check_device(device, python)
    engine = get_engine(engine_name, timeout_s=timeout_s, python=python, with_summary=with_summary)
    items = plan(cases, programs=programs)
    if cases and not items:
        err_console.print(f"[red]no variant of the {len(cases)} selected case(s) has a program chosen by "
                          f"--programs {programs}[/red]")
        sys.exit(2)
    n_script = sum(it.program == "script" for it in items)
    err_console.print(f"engine {engine.name} {engine.version} | Warp {warp_version} | device {device} | "
                      f"{len(cases)} cases, {len(items)} runs ({n_script} of them scripts) | {jobs} jobs")
    started = time.perf_counter()  # the summary's wall time counts the preflight's diagnosis
    prefilled = _preflight(engine, items, device, warp_version, python)  # before any work: a broken cmd: exits 2
    finished = []
    with _progress(len(items), "diagnosing", every_s=progress_every) as prog:
        task = prog.add_task("", total=len(items))

        def tick(rec):
            finished.append(1)
            variant = rec["variant"] + ("" if rec["scale"] == "small" else f"@{rec['scale']}")
            prog.update(task, advance=1, description=f"{rec['case']}/{variant} {rec['diagnosis']['verdict']}")

        meta = {"case_format_errors": [str(e) for e in errors], "machine": describe(), "jobs": jobs,
                "cases_not_run": len(errors), "split": split, "tier": tier, "group_by": group_by, "programs": programs,
                "date": _dt.date.today().isoformat(),
                "corpus": corpus_info(corpus or default_corpus(), cases, cases_glob, split)}
        store = _store(results_path)
        try:
            with _executor(executor_kind, jobs, scheduler, workers) as ex:
                doc = run_items(items, engine, device=device, jobs=jobs, warp_version=warp_version, on_result=tick,
                                json_path=json_path, meta=meta, python=python, store=store, fresh=fresh, executor=ex,
                                release=warp, prefilled=prefilled, started=started,
                                on_plan=lambda todo, done: err_console.print(
                                    escape(cost_note(todo, done, jobs, reference=engine.name == "reference"))))
        except (Terminated, KeyboardInterrupt) as exc:
            err_console.print(escape(interrupted_note(exc, finished=len(finished), total=len(items),
                                                      json_path=json_path if finished else None,
                                                      resumable=getattr(engine, "cacheable", True))))
            exc.reported = True
            raise

    console.print(_results_table(doc, engine, warp_version, device))
    _print_summary(doc["summary"], errors, group_by)
    _report_end(doc, items, cases, errors, store, json_path, results_path, no_store)


def _results_table(doc: dict, engine, warp_version: str, device: str) -> Table:
    """The run's results, one row per run: expected, diagnosed, whether it is correct, seconds."""
    table = Table(title=f"defects4warp run: engine {engine.name}, Warp {warp_version}, {device}")
    for col in ("case", "variant", "expected", "diagnosed", "correct", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    for r in doc["results"]:
        exp = r["expected"]
        d = r["diagnosis"]
        exp_s = f"{exp['verdict']} {'/'.join(exp['classes'])}" if exp else ("-" if is_skipped(r) else "(unscored)")
        diag_s = d["verdict"] + (f" {top_class(d)}" if top_class(d) else "")
        if is_skipped(r):
            diag_s = escape(f"skipped ({r.get('skipped') or 'not run'})")
        elif d["verdict"] == "error":
            # the first line in full (the table wraps it); the output tails are in the --json file
            err = (d.get("error") or "").splitlines()
            diag_s += escape(f" ({err[0]}{' ...' if len(err) > 1 else ''})" if err else "")
        c = r["correct"]
        ok = "-" if c is None else ("yes" if c["class"] else ("verdict only" if c["verdict"] else "NO"))
        variant = (r["variant"] + ("" if r["scale"] == "small" else f"@{r['scale']}")
                   + (" (script)" if r.get("program") == "script" else ""))
        table.add_row(r["case"], variant, exp_s, diag_s, ok, f"{r['seconds']:.1f}")
    return table


def _print_summary(s: dict, errors: list, group_by) -> None:
    """Print the run's scores (``s``: its summary), per group and per tier when it has them."""
    if errors:
        console.print(f"[red]{len(errors)} case folder(s) not run because of case format errors (listed above)[/red]")
    console.print(
        f"cases {s['cases']}  variants {s['variants']}  runs {s.get('runs', 0)} (scored {s.get('scored', 0)}, "
        f"errors {s.get('errors', 0)}, inconclusive {s.get('inconclusive', 0)}, skipped {s.get('skipped', 0)})\n"
        f"verdict accuracy {_fmt(s.get('verdict_accuracy'))}  class accuracy {_fmt(s.get('class_accuracy'))}  "
        f"detection rate {_fmt(s.get('detection_rate'))}  false-positive rate {_fmt(s.get('false_positive_rate'))}"
        + (f"  refusals recognised {_fmt(s.get('refusal_accuracy'))} of {s['refused_runs']}" if s.get("refused_runs") else "")
        + "\n"
        f"median seconds per run {_fmt(s.get('median_wall_s_per_run'), 2)}  median objective evals "
        f"{_fmt(s.get('median_objective_evals'), 0)}  wall {s['wall_s']:.1f} s"
    )
    if s.get("groups"):
        g = Table(title=f"per {group_by}")
        for col in ("group", "runs", "verdict acc.", "class acc.", "detection", "false pos."):
            g.add_column(col)
        for name, m in s["groups"].items():
            g.add_row(name, str(m["scored"]), _fmt(m["verdict_accuracy"]), _fmt(m["class_accuracy"]),
                      _fmt(m["detection_rate"]), _fmt(m["false_positive_rate"]))
        console.print(g)
    if s.get("tiers"):
        console.print(tier_table(s["tiers"]))


def _report_end(doc: dict, items: list, cases: list, errors: list, store, json_path, results_path, no_store) -> None:
    """Say what was reused and written, store a complete run in the history, and exit: 1 when no run got a
    verdict or a case folder has format errors, else 0."""
    s = doc["summary"]
    if s.get("reused"):
        err_console.print(f"{s['reused']} of {len(items)} diagnoses reused from the result store {store.root}, their "
                          "stored measurements interpreted by this engine code (--fresh to measure again)")
    if getattr(store, "stale", 0):
        err_console.print(f"{store.stale} stored measurement(s) measured again: code that took them changed since")
    if json_path:
        err_console.print(f"wrote {json_path}")
    if not no_store and doc["summary"].get("complete") and doc["results"]:
        from ..run.history import corpus_digest, results_dir
        from ..run.history import store as store_run

        run_id = store_run(doc, corpus_digest(cases), results_path)
        err_console.print(f"stored as run {run_id} in {results_dir(results_path) / 'history.sqlite'}")
    if nothing_measured(s):
        first = next((r["diagnosis"].get("error") or "" for r in doc["results"] if r["diagnosis"]["verdict"] == "error"), "")
        err_console.print(escape(f"no run got a verdict: all {s['errors']} that ran ended in an error, so nothing was "
                                 f"measured (the first: {first.splitlines()[0] if first else '?'})"), style="red")
        sys.exit(1)
    sys.exit(1 if errors else 0)
