"""The ``defects4warp`` command line (a thin layer over the harness modules)."""

from __future__ import annotations

import json
import os
import sys

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__
from .case import default_corpus, load_corpus
from .engines import engine_names, get_engine
from .scoring import top_class

#: Tables are not cut to 80 columns when the output goes to a file or a pipe.
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True)


def _progress(total: int, what: str):
    return Progress(
        TextColumn(f"[bold]{what}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), console=err_console, transient=True,
        disable=not err_console.is_terminal,
    )


def _load(corpus, cases_glob, split=None):
    corpus = corpus or default_corpus()
    cases, errors = load_corpus(corpus, cases_glob)
    if split:
        cases = [c for c in cases if c.split == split]
        if not cases and not errors:
            err_console.print(f"[red]no case of split '{split}' in {corpus} matches '{cases_glob}'[/red]")
            sys.exit(2)
    for e in errors:
        err_console.print(f"[red]case format error[/red] {escape(str(e))}")
    if not cases and not errors:
        err_console.print(f"[red]no case in {corpus} matches '{cases_glob}'[/red]")
        sys.exit(2)
    return cases, errors


def _fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="defects4warp")
def main():
    """defects4warp: a verified corpus of gradient bugs in NVIDIA Warp programs,
    and a harness that scores diagnostic engines on it.

    Exit status: 0 success; 1 a validation failure or a case format error
    (the run still measures every valid case); 2 a usage error."""
    import signal

    # SIGTERM unwinds like Ctrl-C, so running measurements are killed and
    # partial results stay on disk
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _engine_name(value: str) -> str:
    if value.startswith("cmd:") or value in engine_names():
        return value
    raise click.BadParameter(f"unknown engine {value!r}; known: {', '.join(engine_names())}, or cmd:\"<command>\"")


def _release(warp):
    """(python, warp_version) for --warp, or a clean usage error."""
    from .envs import ReleaseEnvError, python_for

    try:
        return python_for(warp, log=err_console.print)
    except ReleaseEnvError as exc:
        raise click.UsageError(str(exc)) from None


def _check_device(device: str, python: str) -> None:
    """Fail before measuring when a non-CPU device does not exist."""
    if device == "cpu":
        return
    import subprocess

    code = ("import warp as wp; wp.config.quiet = True; wp.init(); "
            f"import sys; sys.exit(0 if wp.is_device_available(wp.get_device({device!r})) else 1)")
    res = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if res.returncode != 0:
        raise click.UsageError(f"device {device!r} is not available to Warp on this machine")


def _check_writable(path) -> None:
    """Fail before measuring when the --json path cannot be written."""
    if not path:
        return
    from pathlib import Path

    parent = Path(path).resolve().parent
    if parent.exists() and not parent.is_dir():
        raise click.UsageError(f"cannot write {path}: {parent} is not a folder")
    if parent.is_dir() and not os.access(parent, os.W_OK):
        raise click.UsageError(f"cannot write {path}: {parent} is not writable")


def _run_doc(arg: str, results_path=None) -> dict:
    """A run document from a JSON file, or from a stored run id."""
    if os.path.isfile(arg):
        return _read_json(arg, "summary", "`defects4warp run --json`")
    if arg.isdigit():
        from .history import get_run

        try:
            run = get_run(int(arg), results_path)
        except KeyError as exc:
            raise click.UsageError(str(exc)) from None
        results = []
        for o in run["outcomes"]:
            exp = {"verdict": o["expected_verdict"], "classes": json.loads(o["expected_classes"])} if o["expected_verdict"] else None
            results.append({"case": o["case_id"], "variant": o["variant"], "scale": o["scale"], "expected": exp,
                            "diagnosis": {"verdict": o["verdict"],
                                          "classes": [{"id": o["top_class"], "score": 1.0}] if o["top_class"] else [],
                                          "cost": {"wall_s": o["wall_s"], "objective_evals": o["objective_evals"]}},
                            "correct": None if o["correct_verdict"] is None else
                            {"verdict": bool(o["correct_verdict"]), "class": bool(o["correct_class"])}})
        return {"summary": run["summary"], "results": results}
    raise click.UsageError(f"{arg}: neither a run JSON file nor a stored run id")


def _emit(text: str, path=None) -> None:
    """Write ``text`` to ``path`` (and say so), or print it when no path is given."""
    if path:
        from pathlib import Path

        Path(path).write_text(text)
        err_console.print(f"wrote {path}")
    else:
        click.echo(text)


def _read_json(path, key: str, what: str) -> dict:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise click.UsageError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or key not in doc:
        raise click.UsageError(f"{path}: not the JSON of {what} (no '{key}' key)")
    return doc


corpus_opt = click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
                          help="Folder of cases (default: the bundled corpus/).")
results_opt = click.option("--results", "results_path", type=click.Path(file_okay=False), default=None,
                           help="Results folder holding history.sqlite (default $DEFECTS4WARP_RESULTS or ./results).")
split_opt = click.option("--split", type=click.Choice(["dev", "test"]), default=None,
                         help="Only cases of this split (case.yaml 'split', default dev).")
cases_opt = click.option("--cases", "cases_glob", default="*", show_default=True,
                         help="Glob (or comma-separated globs) over case ids.")
device_opt = click.option("--device", default="cpu", show_default=True, help="Warp device: cpu or cuda:N.")
jobs_opt = click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(1, 64),
                        help="Variants measured in parallel.")
warp_opt = click.option("--warp", "warp", default=None, metavar="VERSION",
                        help="Measure with this warp-lang release, in an isolated environment created on demand "
                             "and cached (default: the installed release).")
engine_opt = click.option(
    "--engine", "engine_name", default="reference", show_default=True, callback=lambda c, p, v: _engine_name(v),
    help="Diagnostic engine: a name from `defects4warp engines`, or cmd:\"<command>\" for an outside tool.")
timeout_opt = click.option("--timeout", "timeout_s", default=300.0, show_default=True, type=click.FloatRange(min=1.0),
                           help="Seconds one variant may take before it is killed and recorded as an error.")


@main.command()
@corpus_opt
@cases_opt
@engine_opt
@device_opt
@jobs_opt
@timeout_opt
@warp_opt
@split_opt
@click.option("--group-by", "group_by", type=click.Choice(["domain", "split", "family"]), default=None,
              help="Also report the metrics per domain tag, per split, or per family of the expected class.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write {summary, results} here (rewritten atomically after every variant).")
@click.option("--results", "results_path", type=click.Path(file_okay=False), default=None,
              help="Results folder holding history.sqlite (default $DEFECTS4WARP_RESULTS or ./results).")
@click.option("--no-store", is_flag=True, help="Do not store the run in the results history.")
@click.option("--with-summary", is_flag=True,
              help="cmd: engines only: pass the case's summary (the user's words) as a fourth argument.")
def run(corpus, cases_glob, engine_name, device, jobs, timeout_s, warp, split, group_by, json_path, results_path,
        no_store, with_summary):
    """Diagnose every case x variant with an engine and score it against the
    expectation for the installed Warp release."""
    import datetime as _dt

    from .machine import describe
    from .runner import plan
    from .runner import run as run_items

    _check_writable(json_path)
    cases, errors = _load(corpus, cases_glob, split)
    python, warp_version = _release(warp)
    _check_device(device, python)
    engine = get_engine(engine_name, timeout_s=timeout_s, python=python, with_summary=with_summary)
    items = plan(cases)
    err_console.print(f"engine {engine.name} {engine.version} | Warp {warp_version} | device {device} | "
                      f"{len(cases)} cases, {len(items)} runs")
    with _progress(len(items), "diagnosing") as prog:
        task = prog.add_task("", total=len(items))

        def tick(rec):
            prog.update(task, advance=1, description=f"{rec['case']}/{rec['variant']}")

        meta = {"case_format_errors": [str(e) for e in errors], "machine": describe(), "jobs": jobs,
                "cases_not_run": len(errors), "split": split, "group_by": group_by,
                "date": _dt.date.today().isoformat()}
        doc = run_items(items, engine, device=device, jobs=jobs, warp_version=warp_version, on_result=tick,
                        json_path=json_path, meta=meta, python=python)

    table = Table(title=f"defects4warp run: engine {engine.name}, Warp {warp_version}, {device}")
    for col in ("case", "variant", "expected", "diagnosed", "correct", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    for r in doc["results"]:
        exp = r["expected"]
        d = r["diagnosis"]
        exp_s = f"{exp['verdict']} {'/'.join(exp['classes'])}" if exp else ("(skipped)" if r.get("skipped") else "(unscored)")
        diag_s = d["verdict"] + (f" {top_class(d)}" if top_class(d) else "")
        if d["verdict"] == "error":
            err = d.get("error", "")
            diag_s += escape(f" ({err if len(err) <= 80 else err[:77] + '...'})")
        c = r["correct"]
        ok = "-" if c is None else ("yes" if c["class"] else ("verdict only" if c["verdict"] else "NO"))
        variant = r["variant"] + ("" if r["scale"] == "small" else f"@{r['scale']}")
        table.add_row(r["case"], variant, exp_s, diag_s, ok, f"{r['seconds']:.1f}")
    console.print(table)
    s = doc["summary"]
    if errors:
        console.print(f"[red]{len(errors)} case folder(s) not run because of case format errors (listed above)[/red]")
    console.print(
        f"cases {s['cases']}  variants {s['variants']}  runs {s.get('runs', 0)} (scored {s.get('scored', 0)}, "
        f"errors {s.get('errors', 0)}, inconclusive {s.get('inconclusive', 0)})\n"
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
    if json_path:
        err_console.print(f"wrote {json_path}")
    if not no_store and doc["summary"].get("complete"):
        from .history import corpus_digest, results_dir, store

        run_id = store(doc, corpus_digest(cases), results_path)
        err_console.print(f"stored as run {run_id} in {results_dir(results_path) / 'history.sqlite'}")
    sys.exit(1 if errors else 0)


@main.command()
@corpus_opt
@cases_opt
@device_opt
@jobs_opt
@timeout_opt
@click.option("--warp", "warp", default=None, metavar="VERSION[,VERSION...]",
              help="Validate on these warp-lang releases, each in an isolated environment created on demand "
                   "and cached (default: the installed release). 'all' means every release in RELEASES.")
@split_opt
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 10),
              help="Measure each variant this many times; differing outcomes fail (determinism).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write the per-variant checks of every release here (input of `version-matrix`).")
def validate(corpus, cases_glob, device, jobs, timeout_s, warp, split, repeat, json_path):
    """Check each case against the independent oracle (docs/oracle.md), without
    any engine: buggy variants really disagree with finite differences (as
    their class says, and differently from their fixed twin), fixed ones agree,
    refused ones are refused. Prints passed / failed / unresolved / skipped
    counts; exits 1 and names each check that failed or stayed unresolved."""
    import time as _time

    from .envs import RELEASES
    from .machine import describe
    from .runner import write_json_atomic
    from packaging.version import InvalidVersion, Version

    from .envs import ReleaseEnvError, python_for
    from .matrix import oracle_cell
    from .validate import counts, skipped_release, validate_cases

    _check_writable(json_path)
    cases, errors = _load(corpus, cases_glob, split)
    releases = [None] if warp is None else (list(RELEASES) if warp == "all" else [w.strip() for w in warp.split(",") if w.strip()])
    failed = [str(e) for e in errors]
    doc = {"device": device, "machine": describe(), "repeat": repeat, "releases": {}, "failures": failed}
    t_all = _time.perf_counter()
    for rel in releases:
        t0 = _time.perf_counter()
        try:
            python, warp_version = python_for(rel, log=err_console.print)
        except ReleaseEnvError as exc:
            try:
                Version(rel)
            except InvalidVersion:
                raise click.UsageError(str(exc)) from None
            # a release that cannot be installed here: its checks are skipped, not passed
            err_console.print(f"[yellow]Warp {rel} is not installed here ({escape(str(exc))}): skipped[/yellow]")
            warp_version, checks = rel, skipped_release(cases, rel, str(exc))
        else:
            _check_device(device, python)
            with _progress(0, f"validating on Warp {warp_version}") as prog:
                task = prog.add_task("", total=None)
                checks = validate_cases(cases, device=device, jobs=jobs, timeout_s=timeout_s, warp=rel, repeat=repeat,
                                        on_check=lambda c, t=task: prog.update(t, advance=1,
                                                                               description=f"{c.case}/{c.variant}"))
        table = Table(title=f"defects4warp validate: Warp {warp_version}, {device} (oracle)")
        for col in ("case", "variant", "expected", "oracle", "rel. error", "resolved", "noise", "pair", "status"):
            table.add_column(col)
        style = {"passed": "ok", "failed": "[red]FAIL[/red]", "unresolved": "[yellow]unresolved[/yellow]",
                 "skipped": "skipped"}
        for cc in checks:
            for v in cc.variants:
                exp = v.expected
                o = v.oracle or {}
                pr = v.pair or {}
                table.add_row(cc.case, v.variant + ("" if v.scale == "small" else f"@{v.scale}"),
                              f"{exp['verdict']} {'/'.join(exp['classes'])}" if exp else "-",
                              oracle_cell(v.to_dict()) if o else "-",
                              "-" if v.relative_error is None else f"{float(v.relative_error):.2g}",
                              "-" if o.get("resolved") is None else f"{o['resolved']}/{o['resolved'] + o['unresolved']}",
                              "-" if o.get("noise_relative") is None else f"{float(o['noise_relative']):.1g}",
                              "-" if not pr else ("ok" if pr.get("confirmed") else "no")
                              + ("" if pr.get("ratio_median") is None else f" r={float(pr['ratio_median']):.3g}"),
                              style[v.status])
                if v.status in ("failed", "unresolved"):
                    failed.append(f"Warp {warp_version}: {cc.case}/{v.variant}@{v.scale}: {v.status}: {v.message}")
            failed += [f"{cc.case}: {p}" for p in cc.problems]
        console.print(table)
        n = counts([v for cc in checks for v in cc.variants])
        console.print(f"Warp {warp_version}: {n['passed']} passed, {n['failed']} failed, {n['unresolved']} unresolved, "
                      f"{n['skipped']} skipped ({_time.perf_counter() - t0:.0f} s)")
        doc["releases"][warp_version] = {"wall_s": _time.perf_counter() - t0, "counts": n,
                                         "checks": [v.to_dict() for cc in checks for v in cc.variants]}
        doc["wall_s"] = _time.perf_counter() - t_all
        if json_path:
            write_json_atomic(json_path, doc)
    if failed:
        console.print(f"[red]{len(failed)} problem(s):[/red]")
        for f in failed:
            console.print(escape(f"  {f}"))
        sys.exit(1)
    console.print(f"no check of the {len(cases)} cases failed or stayed unresolved on Warp {', '.join(doc['releases'])}")


@main.command(name="version-matrix")
@click.argument("validation_json", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the Markdown here (default: print it).")
@click.option("--determinism", "determinism_json", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSON of a `validate --repeat N --json` run, summarised as a determinism line.")
def version_matrix(validation_json, output, determinism_json):
    """Render a case x release matrix (wrong/right with the measured relative
    error) from the JSON of `validate --warp ... --json` (several files, e.g.
    runs over parts of the corpus, are merged)."""
    from .report import merge_validations, version_matrix_markdown

    docs = [_read_json(p, "releases", "`defects4warp validate --json`") for p in validation_json]
    det = _read_json(determinism_json, "releases", "`defects4warp validate --json`") if determinism_json else None
    text = version_matrix_markdown(merge_validations(docs), det)
    _emit(text, output)


@main.command()
@click.argument("runs", nargs=-1, required=True)
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), default=None,
              help="Write the Markdown here (default: print it, unless --html is given).")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="Write a self-contained HTML page with figures here.")
@click.option("--title", default="Results", show_default=True, help="Page title.")
@click.option("--table-only", is_flag=True, help="Only the comparison table of all runs (e.g. an engine ablation).")
@results_opt
def report(runs, markdown_path, html_path, title, table_only, results_path):
    """Render runs (JSON files from `run --json`, or stored run ids from
    `defects4warp history`) as Markdown and/or HTML: a results page for the
    first run, followed by a comparison of all runs when several are given
    (other engines, other Warp releases)."""
    from .report import comparison_markdown, run_markdown

    docs = [_run_doc(r, results_path) for r in runs]
    if html_path:
        from .html_report import html_report

        _emit(html_report(docs[0], docs[1:], title), html_path)
        if not markdown_path:
            return
    if table_only:
        text = comparison_markdown(docs)
    else:
        text = run_markdown(docs[0], title)
        if len(docs) > 1:
            text += "\n## Comparison\n\n" + comparison_markdown(docs)
    _emit(text, markdown_path)


@main.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@engine_opt
@device_opt
@click.option("--scale", default="small", show_default=True, type=click.Choice(["small", "production"]))
@timeout_opt
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Also write the diagnosis here.")
def diagnose(path, engine_name, device, scale, timeout_s, json_path):
    """Diagnose one program: a folder with a problem.py defining make_problem
    (docs/case-format.md). Prints the verdict, the ranked classes with their
    evidence, and the standard fix for the top class."""
    from .runner import write_json_atomic
    from .taxonomy import CLASSES, class_guide

    _check_device(device, sys.executable)
    engine = get_engine(engine_name, timeout_s=timeout_s)
    with _progress(0, f"diagnosing with {engine.name}") as prog:
        prog.add_task("", total=None)
        d = engine.diagnose(str(path), device, scale)
    console.print(f"[bold]verdict[/bold] {d['verdict']}" + (f"  signature {d['signature']}" if d.get("signature") else "")
                  + (f"  ({d['error']})" if d.get("error") else ""))
    if d["classes"]:
        t = Table(title="classes, best first")
        for col in ("class", "score", "what it means"):
            t.add_column(col)
        for c in d["classes"][:5]:
            t.add_row(c["id"], f"{c['score']:.2f}", CLASSES[c["id"]].summary)
        console.print(t)
    console.print("[bold]evidence[/bold]")
    for e in sorted(d["evidence"], key=lambda e: e["clean"]):
        console.print(escape(f"  {'ok ' if e['clean'] else '!! '} [{e['probe']}] {e['finding']}"))
    c = d["classes"][0]["id"] if d["classes"] else None
    if c:
        console.print(f"[bold]standard fix for {c}[/bold]")
        console.print(escape(class_guide(c)))
    if json_path:
        write_json_atomic(json_path, d)
    sys.exit(0 if d["verdict"] in ("bug", "no_bug") else 1)


@main.command()
def engines():
    """List the engines: built in, and those installed packages register
    through the `defects4warp.engines` entry-point group."""
    from .engines import ENGINES, plugin_engines

    t = Table(title="engines")
    for col in ("name", "version", "source"):
        t.add_column(col)
    for name in engine_names():
        if name in ENGINES:
            t.add_row(name, get_engine(name).version, "built in")
        else:
            ep = plugin_engines()[name]
            dist = getattr(ep, "dist", None)
            t.add_row(name, getattr(dist, "version", "?"), f"{ep.value} ({getattr(dist, 'name', '?')})")
    console.print(t)


@main.command()
@results_opt
def history(results_path):
    """List the stored runs, newest first."""
    from .history import list_runs

    t = Table(title="stored runs")
    for col in ("run", "date", "engine", "Warp", "device", "corpus", "commit", "verdict acc.", "class acc.", "FPR"):
        t.add_column(col)
    for r in list_runs(results_path):
        s = r["summary"]
        t.add_row(str(r["id"]), r["created"], f"{r['engine']} {r['engine_version'] or ''}", r["warp_version"], r["device"],
                  r["corpus_digest"][:10], (r["project_commit"] or "-")[:12], _fmt(s.get("verdict_accuracy")),
                  _fmt(s.get("class_accuracy")), _fmt(s.get("false_positive_rate")))
    console.print(t)


@main.command(name="compare")
@click.argument("run_a", type=int)
@click.argument("run_b", type=int)
@results_opt
def compare_runs(run_a, run_b, results_path):
    """Per-metric change from stored run A to run B, and the variants whose
    verdict or top class flipped."""
    from .history import compare

    try:
        c = compare(run_a, run_b, results_path)
    except KeyError as exc:
        raise click.UsageError(str(exc)) from None
    if not c["comparable"]:
        console.print("[yellow]the runs differ in corpus digest or Warp release[/yellow]")
    t = Table(title=f"run {run_a} -> run {run_b}")
    for col in ("metric", f"run {run_a}", f"run {run_b}", "change"):
        t.add_column(col)
    for m, v in c["metrics"].items():
        t.add_row(m, _fmt(v["a"]), _fmt(v["b"]), "n/a" if v["change"] is None else f"{v['change']:+.3f}")
    console.print(t)
    console.print(f"{len(c['flipped'])} variant run(s) flipped")
    for f in c["flipped"]:
        mark = "" if f["now_correct"] is None else (" (now right)" if f["now_correct"] else " (now wrong)")
        console.print(escape(f"  {f['case']}/{f['variant']}@{f['scale']}: {f['a']} -> {f['b']}{mark}"))


@main.command()
@click.option("--corpus-digest", "digest", default=None, help="Prefix of a corpus digest (default: the newest run's).")
@click.option("--warp", default=None, help="Warp release (default: the newest run's).")
@results_opt
def leaderboard(digest, warp, results_path):
    """Rank engines on one corpus digest and Warp release (newest run of each)."""
    from .history import leaderboard as board

    digest, warp, rows = board(digest, warp, results_path)
    t = Table(title=f"leaderboard: corpus {str(digest)[:10]}, Warp {warp}")
    for col in ("rank", "engine", "run", "class acc.", "verdict acc.", "detection", "FPR", "median s"):
        t.add_column(col)
    for i, r in enumerate(rows, 1):
        s = r["summary"]
        t.add_row(str(i), f"{r['engine']} {r['engine_version'] or ''}", str(r["id"]), _fmt(s.get("class_accuracy")),
                  _fmt(s.get("verdict_accuracy")), _fmt(s.get("detection_rate")), _fmt(s.get("false_positive_rate")),
                  _fmt(s.get("median_wall_s_per_run"), 2))
    console.print(t)


def _releases(value: str) -> list:
    from .envs import RELEASES

    return list(RELEASES) if value == "all" else [w.strip() for w in value.split(",") if w.strip()]


@main.command()
@corpus_opt
@cases_opt
@click.option("--warp", "warp", required=True, metavar="VERSION[,VERSION...]|all",
              help="Releases, each measured in its own cached environment.")
@engine_opt
@device_opt
@jobs_opt
@timeout_opt
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write the matrix (ground truth and engine run per release) here; rewritten after every release.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), default=None, help="Write the table here.")
@click.option("--validation", "validation_json", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Reuse ground truth from `validate --warp ... --json` files (merged) instead of validating again.")
@click.option("--reuse-run", "reuse_runs", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Reuse a `run --json` file for the release it was measured on.")
def matrix(corpus, cases_glob, warp, engine_name, device, jobs, timeout_s, json_path, markdown_path, validation_json,
           reuse_runs):
    """Run the corpus on several Warp releases, one after another: per release
    the ground truth (validate) and the engine's verdict and class."""
    from .machine import describe
    from .matrix import matrix_markdown, measure_release
    from .runner import write_json_atomic

    _check_writable(json_path)
    cases, errors = _load(corpus, cases_glob)
    doc = {"engine": engine_name, "device": device, "machine": describe(), "releases": {}}
    from .report import merge_validations

    truth = merge_validations([_read_json(p, "releases", "`validate --json`") for p in validation_json]) \
        if validation_json else {"releases": {}}
    reused = {}
    for p in reuse_runs:
        rd = _read_json(p, "summary", "`defects4warp run --json`")
        reused[rd["summary"]["warp_version"]] = rd
    for rel in _releases(warp):
        _release(rel)
        err_console.print(f"Warp {rel}: " + ("ground truth reused" if rel in truth["releases"] else "validating")
                          + ", " + (f"{engine_name} run reused" if rel in reused else f"running {engine_name}"))
        r = measure_release(rel, cases, lambda py: get_engine(engine_name, timeout_s=timeout_s, python=py),
                            device=device, jobs=jobs, timeout_s=timeout_s,
                            validation=truth["releases"].get(rel, {}).get("checks"), run_doc=reused.get(rel))
        doc["releases"][r["warp_version"]] = r
        doc["wall_s"] = sum(x["wall_s"] for x in doc["releases"].values())
        if json_path:
            write_json_atomic(json_path, doc)
    text = matrix_markdown(doc)
    _emit(text, markdown_path)
    sys.exit(1 if errors else 0)


@main.command()
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
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), default=None, help="Write the audit here.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Write the audit as JSON here.")
def audit(from_, to, matrix_json, corpus, cases_glob, engine_name, device, jobs, timeout_s, markdown_path, json_path):
    """What changes, case by case, when moving from one Warp release to another:
    bugs that appear or disappear, engine verdicts that flip, tracker warnings
    that change, cost beyond noise. Exits 1 when a case's ground truth
    contradicts its tags on either release."""
    from .matrix import audit as compare_releases
    from .matrix import audit_markdown, measure_release
    from .runner import write_json_atomic

    if matrix_json:
        doc = _read_json(matrix_json, "releases", "`defects4warp matrix --json`")
        missing = [r for r in (from_, to) if r not in doc["releases"]]
        if missing:
            raise click.UsageError(f"{matrix_json} holds no release {', '.join(missing)}")
    else:
        cases, _ = _load(corpus, cases_glob)
        doc = {"releases": {}}
        for rel in (from_, to):
            _release(rel)
            doc["releases"][rel] = measure_release(rel, cases, lambda py: get_engine(engine_name, timeout_s=timeout_s,
                                                                                     python=py),
                                                   device=device, jobs=jobs, timeout_s=timeout_s)
    rep = compare_releases(doc, from_, to)
    text = audit_markdown(rep)
    _emit(text, markdown_path)
    if json_path:
        write_json_atomic(json_path, rep)
    sys.exit(1 if rep["contradictions"] else 0)


@main.command(name="new-case")
@click.argument("name")
@click.option("--corpus", type=click.Path(file_okay=False), default=None, help="Corpus folder (default: the bundled one).")
def new_case(name, corpus):
    """Scaffold corpus/NAME/ with case.yaml and buggy/ and fixed/ variants
    that run as they are (a small correct fit to edit)."""
    from .scaffold import scaffold

    try:
        path = scaffold(corpus or default_corpus(), name)
    except (ValueError, FileExistsError) as exc:
        err_console.print(f"[red]{exc}[/red]")
        sys.exit(2)
    where = f" --corpus {corpus}" if corpus else ""
    console.print(f"created {path}; edit it, then run: defects4warp validate{where} --cases {name}")


@main.command(name="list")
@corpus_opt
@cases_opt
@split_opt
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cases(corpus, cases_glob, split, as_json):
    """Print the corpus: id, classes, releases, domain, provenance; and counts per class."""
    cases, errors = _load(corpus, cases_glob, split)
    rows = []
    for c in cases:
        releases = []
        for v in c.variants:
            for e in v.expectations:
                if e.verdict == "bug":
                    where = f"{v.name}: {str(e.warp) or 'all releases'}" + (f" @{e.scale}" if e.scale else "")
                    if where not in releases:
                        releases.append(where)
        rows.append({"id": c.id, "classes": c.classes, "bug_on": releases, "domain": c.domain,
                     "variants": [v.name for v in c.variants], "provenance": c.provenance})
    counts = {}
    for r in rows:
        for k in r["classes"]:
            counts[k] = counts.get(k, 0) + 1
    if as_json:
        click.echo(json.dumps({"cases": rows, "per_class": counts}, indent=2))
    else:
        t = Table(title=f"{len(rows)} case{'s' if len(rows) != 1 else ''}")
        for col in ("id", "classes", "bug on Warp", "domain", "provenance"):
            t.add_column(col)
        for r in rows:
            t.add_row(r["id"], ", ".join(r["classes"]), "; ".join(r["bug_on"]) or "-", r["domain"], r["provenance"])
        console.print(t)
        console.print("per class: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sys.exit(1 if errors else 0)


from .commands.mutate import cmd as _cmd_mutate  # noqa: E402
main.add_command(_cmd_mutate, name="mutate")
from .commands.index import cmd as _cmd_index  # noqa: E402
main.add_command(_cmd_index, name="index")
from .commands.diff import cmd as _cmd_diff  # noqa: E402
main.add_command(_cmd_diff, name="diff")
from .commands.export import cmd as _cmd_export  # noqa: E402
main.add_command(_cmd_export, name="export")


if __name__ == "__main__":
    main()
