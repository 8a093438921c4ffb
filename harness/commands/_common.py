"""Helpers and options shared by the verb modules of ``defects4warp`` (one module per verb)."""

from __future__ import annotations

import json
import os
import sys

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..case import default_corpus, load_corpus
from ..engines import engine_names, get_engine
from ..scoring import top_class

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


def _engine_name(value: str) -> str:
    if value.startswith("cmd:") or value in engine_names():
        return value
    raise click.BadParameter(f"unknown engine {value!r}; known: {', '.join(engine_names())}, or cmd:\"<command>\"")


def _release(warp):
    """(python, warp_version) for --warp, or a clean usage error."""
    from ..envs import ReleaseEnvError, python_for

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

    import tempfile

    parent = Path(path).resolve().parent
    if parent.exists() and not parent.is_dir():
        raise click.UsageError(f"cannot write {path}: {parent} is not a folder")
    if not parent.exists():
        raise click.UsageError(f"cannot write {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise click.UsageError(f"cannot write {path}: {parent} is not writable")
    try:  # the result is written through a temporary file in the same folder
        with tempfile.NamedTemporaryFile(prefix=".part-", dir=parent):
            pass
    except OSError as exc:
        raise click.UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _run_doc(arg: str, results_path=None) -> dict:
    """A run document from a JSON file, or from a stored run id."""
    if os.path.isfile(arg):
        return _read_json(arg, "summary", "`defects4warp run --json`")
    if arg.isdigit():
        from ..history import run_document

        try:
            return run_document(int(arg), results_path)
        except KeyError as exc:
            raise click.UsageError(str(exc)) from None
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
                           help="Results home holding history.sqlite (default $DEFECTS4WARP_RESULTS, else "
                                "$XDG_DATA_HOME/defects4warp, else ~/.local/share/defects4warp).")
split_opt = click.option("--split", type=click.Choice(["dev", "test"]), default=None,
                         help="Only cases of this split (case.yaml 'split', default dev).")
programs_opt = click.option(
    "--programs", "programs", type=click.Choice(["auto", "adapters", "scripts", "all"]), default="auto",
    show_default=True,
    help="Which program of each variant: auto = the adapter (problem.py) where there is one, else the user's "
         "script; adapters = only problem.py variants; scripts = only variants that hold a script, run as the "
         "script (scores script variants alone); all = both, so a converted variant runs twice.")
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



def _releases(value: str) -> list:
    from ..envs import RELEASES

    return list(RELEASES) if value == "all" else [w.strip() for w in value.split(",") if w.strip()]



__all__ = ['default_corpus', 'engine_names', 'get_engine', 'load_corpus', 'top_class', '_check_device', '_check_writable', '_emit', '_engine_name', '_fmt', '_load', '_progress', '_read_json', '_release', '_releases', '_run_doc', 'cases_opt', 'console', 'corpus_opt', 'device_opt', 'engine_opt', 'err_console', 'jobs_opt', 'results_opt', 'split_opt', 'timeout_opt', 'warp_opt']


def scale_opts(f):
    """The result-store and executor options shared by run, validate, matrix and audit."""
    opts = [
        click.option("--results", "results_path", type=click.Path(file_okay=False), default=None,
                     help="Results home holding history.sqlite and the result store (default $DEFECTS4WARP_RESULTS, "
                          "else $XDG_DATA_HOME/defects4warp, else ~/.local/share/defects4warp)."),
        click.option("--fresh", is_flag=True, help="Measure everything again instead of reusing stored results."),
        click.option("--executor", "executor_kind", type=click.Choice(["local", "dask"]), default="local",
                     show_default=True, help="Where work items run: this process's thread pool, or a Dask cluster."),
        click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Address of an existing Dask scheduler (implies --executor dask), e.g. tcp://host:8786."),
        click.option("--workers", default=None, type=click.IntRange(1, 256),
                     help="Worker processes of the embedded Dask LocalCluster (default 2)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _store(results_path):
    """The result store of the results home ``results_path``."""
    from ..store import ResultStore, default_root

    return ResultStore(default_root(results_path))


def _executor(kind: str, jobs: int, scheduler, workers):
    """The executor for the CLI options, or a clean usage error."""
    from ..executors import make_executor

    try:
        ex = make_executor(kind, jobs, scheduler, workers)
    except (RuntimeError, ValueError, OSError) as exc:
        raise click.UsageError(str(exc)) from None
    if ex.name == "dask":
        where = scheduler or f"an embedded LocalCluster of {workers or 2} workers"
        err_console.print(f"executor dask on {where}")
    return ex


__all__ += ["scale_opts", "_store", "_executor"]
