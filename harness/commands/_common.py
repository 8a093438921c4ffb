"""Helpers and options shared by the verb modules of ``defects4warp`` (one module per verb)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import MutableMapping

import click
from rich.console import Console
from rich.markup import escape

from ..corpus.case import default_corpus, load_corpus
from ..engines import engine_names, get_engine
from ..evidence_table import EvidenceTableError
from ..progress import DEFAULT_EVERY_S, default_jobs
from ..run.scoring import top_class

#: Tables are not cut to 80 columns when the output goes to a file or a pipe. No emoji codes: a site
#: ``file.py:100:2`` printed with rich's default ``emoji=True`` reads ``file.py💯2`` (":100:" is an emoji code).
console = Console(width=None if sys.stdout.isatty() else 200, emoji=False)


class _MessageConsole(Console):
    """The console of messages on standard error: on a terminal they wrap at its width; on a file or
    a pipe (``2> run.log``, CI) each message stays one line, however long (rich would wrap it at
    80 columns, splitting a line a reader greps for)."""

    def print(self, *objects, soft_wrap=None, **kwargs) -> None:
        super().print(*objects, soft_wrap=(not self.is_terminal) if soft_wrap is None else soft_wrap, **kwargs)


err_console = _MessageConsole(stderr=True, emoji=False)


def _progress(total: int, what: str, every_s: float | None = None):
    """Progress on stderr: rich's bar with ETA on a terminal, plain lines at
    most every ``every_s`` seconds (default :data:`defects4warp.progress.DEFAULT_EVERY_S`)
    on a pipe (:func:`defects4warp.progress.progress`)."""
    from ..progress import DEFAULT_EVERY_S, progress

    return progress(what, err_console, DEFAULT_EVERY_S if every_s is None else every_s)


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
    if value.startswith("cmd:"):
        import shlex

        try:
            argv = shlex.split(value[len("cmd:"):])
        except ValueError as exc:
            raise click.BadParameter(f"cannot split the command of {value!r}: {exc}") from None
        if not argv:
            raise click.BadParameter("cmd: needs a command, e.g. cmd:\"python my_engine.py\"")
        return value
    if value in engine_names():
        return value
    raise click.BadParameter(f"unknown engine {value!r}; known: {', '.join(engine_names())}, or cmd:\"<command>\"")


class Terminated(SystemExit):
    """Raised in the main thread when the process gets SIGTERM (:func:`on_sigterm`): it unwinds
    like Ctrl-C, so running measurements are killed and what finished stays on disk; exit status
    143 (128 + SIGTERM's 15, as a shell reports a process it killed). ``reported`` is set by a verb
    that has already said what its interruption left behind."""

    def __init__(self):
        super().__init__(143)
        self.reported = False


def on_sigterm(signum, frame):
    """The SIGTERM handler of the command line: raise :class:`Terminated`."""
    raise Terminated()


#: Exit status of a verb stopped by Ctrl-C (SIGINT): 128 + SIGINT's 2, as a shell reports it.
SIGINT_EXIT = 130

#: ``ctx.meta`` key under which a verb says what an interruption would leave behind (:func:`on_interrupt`).
INTERRUPT_NOTE = "defects4warp.interrupt_note"


def on_interrupt(text: str) -> None:
    """Say what this verb leaves behind if SIGTERM or Ctrl-C stops it from now on (``text``: one clause,
    e.g. ``"nothing was written"``); :class:`MainGroup` prints it after ``interrupted by ...``. The last
    call wins, so a verb updates it as it writes files. Outside a click command it does nothing."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[INTERRUPT_NOTE] = text


def written_at_end(*files) -> str:
    """The :func:`on_interrupt` clause of a verb that writes ``files`` (None for an option not given,
    ``"-"`` for standard output) only when it finishes: ``"nothing was written (a.json is written when it
    finishes)"``, or ``"nothing was written"`` when no file was asked for."""
    named = [str(f) for f in files if f not in (None, "-")]
    return "nothing was written" + (f" ({' and '.join(named)} {'is' if len(named) == 1 else 'are'} written "
                                    "when it finishes)" if named else "")


def interrupted_note(exc: BaseException, *, finished: int, total: int, json_path=None, resumable: bool = True) -> str:
    """What an interrupted run leaves behind, in one line for standard error.

    Parameters
    ----------
    exc : BaseException
        :class:`Terminated` (SIGTERM) or KeyboardInterrupt (Ctrl-C, SIGINT).
    finished, total : int
        Runs finished, and runs planned.
    json_path : str, optional
        The ``--json`` file written after every finished run.
    resumable : bool
        Whether the finished diagnoses are in the result store, so the same command reuses them
        (False for an outside engine, whose diagnoses are never reused).
    """
    why = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C (SIGINT)"
    out = f"interrupted by {why} after {finished} of {total} runs: "
    if json_path:
        out += f"{json_path} is partial: it holds the {finished} that finished (summary.complete is false); "
    out += "the run was not stored in the history"
    if resumable and finished:
        out += "; the finished diagnoses are in the result store, so the same command resumes from them"
    return out


class EngineFailed(click.ClickException):
    """An outside (``cmd:``) engine broke its contract before any work started: exit status 2,
    as for a usage error (docs/engines.md, "Checked before the run starts"), but printed as
    ``Error: ...`` alone, without the usage line and "Try --help": the command line is right,
    the engine is not."""

    exit_code = 2


#: Where the contract of an outside engine is written, quoted under its failure.
CONTRACT_HINT = "(the contract of an outside engine: docs/engines.md, 'Any command')"


def _preflight(engine, items, device, warp_version, python):
    """An outside (``cmd:``) engine diagnoses the first item before a verb's work
    starts (:func:`defects4warp.run.preflight.preflight`); a broken command (not
    found, not executable, non-zero exit, no answer, an answer against the schema)
    stops the verb with :class:`EngineFailed` (exit 2) and the full message.

    Returns
    -------
    dict
        ``{index: record}`` that a run can reuse (empty for other engines).
    """
    from ..engines.command import EngineContractError
    from ..run.preflight import preflight

    try:
        first = preflight(engine, items, device, warp_version, python)
    except EngineContractError as exc:
        raise EngineFailed(f"{exc}\n{CONTRACT_HINT}") from None
    return dict([first]) if first else {}


def _preflight_releases(engine_name, releases, cases, *, device, timeout_s, programs, skip=()):
    """:func:`_preflight` for a verb that runs an engine on several releases (matrix,
    audit): the first item, on the first release of ``releases`` not in ``skip``
    (releases whose engine run is reused). Built-in engines are not checked. The
    checked item's diagnosis is not handed on: the verb measures it again (one
    extra diagnosis, the price of stopping before hours of validation)."""
    if not engine_name.startswith("cmd:"):
        return
    from ..run.runner import plan

    items = plan(cases, programs=programs)
    for rel in releases:
        if rel in skip:
            continue
        python, version = _release(rel)
        _preflight(get_engine(engine_name, timeout_s=timeout_s, python=python), items, device, version, python)
        return


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
    if not path or path == "-":
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
        from ..run.history import run_document

        try:
            return run_document(int(arg), results_path)
        except KeyError as exc:  # str(KeyError) would quote the message
            raise click.UsageError(exc.args[0]) from None
    raise click.UsageError(f"{arg}: neither a run JSON file nor a stored run id")


def _emit(text: str, path=None) -> None:
    """Write ``text`` to ``path`` atomically (and say so), or print it on
    standard output when no path is given or the path is ``-``."""
    if path and path != "-":
        import tempfile

        _check_writable(path)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".part-", dir=d)
        try:
            from ..jsonio import normal_mode

            normal_mode(fd)  # the umask's mode (0644 under 022), not mkstemp's 0600
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        err_console.print(f"wrote {path}")
    else:
        click.echo(text)


def _write_json(doc, path) -> None:
    """Write ``doc`` as JSON to ``path`` atomically and say so (the ``--json FILE`` of every verb);
    ``-`` prints it on stdout."""
    if path == "-":
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    from ..run.runner import write_json_atomic

    write_json_atomic(path, doc)
    err_console.print(f"wrote {path}")


def json_option(help: str, *, bare_prints: bool = False):
    """The ``--json FILE`` option of a verb that produces results (``-``: stdout).

    Parameters
    ----------
    help : str
        What is written.
    bare_prints : bool
        Whether ``--json`` without a value prints the JSON on stdout (default
        False; for verbs whose JSON used to be a flag).
    """
    extra = {"is_flag": False, "flag_value": "-"} if bare_prints else {}
    return click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
                        metavar="FILE", help=f"{help} ('-' prints it).", **extra)


def markdown_option(help: str):
    """The ``--markdown FILE`` option of a verb that renders Markdown (default, or ``-``: print it)."""
    return click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, allow_dash=True),
                        default=None, metavar="FILE", help=f"{help} ('-' or no --markdown: print it).")


def _one_stdout(**paths) -> None:
    """Refuse two output options that would both print on standard output.

    Parameters
    ----------
    **paths : str or None
        Option name (``markdown``, ``json``, ``html``; underscores for
        dashes) to its value; ``-`` means standard output.

    Raises
    ------
    click.UsageError
        When more than one value is ``-``, naming the options.
    """
    dash = [f"--{k.replace('_', '-')} -" for k, v in paths.items() if v == "-"]
    if len(dash) > 1:
        raise click.UsageError(f"{' and '.join(dash)} would both print on standard output: give a file for all "
                               "but one of them")


def _refuse_dash(path, option: str, why: str) -> None:
    """Refuse ``-`` (standard output) for an output option that cannot print.

    Raises
    ------
    click.BadParameter
        When ``path`` is ``-``, saying ``why`` and to give a file.
    """
    if path == "-":
        raise click.BadParameter(f"{why}: give a file, not -", param_hint=f"'{option}'")


#: Why ``--json -`` is refused by the verbs that rewrite their JSON while they measure.
WRITTEN_AS_IT_GOES = "this verb writes its JSON as it goes (a run killed midway keeps what finished)"


def _read_json(path, key: str, what: str) -> dict:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise click.UsageError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or key not in doc:
        raise click.UsageError(f"{path}: not the JSON of {what} (no '{key}' key)")
    return doc


def bundled_program(ref: str):
    """The folder of a bundled corpus variant named ``CASE`` or ``CASE/VARIANT``.

    A case id alone stands for its only variant (``program/``); a case with
    several variants must be given with one.

    Parameters
    ----------
    ref : str
        ``CASE`` or ``CASE/VARIANT`` (ids as ``defects4warp list`` shows them).

    Returns
    -------
    pathlib.Path or None
        The variant folder; None when ``ref`` names no bundled case.

    Raises
    ------
    ValueError
        When the case exists but the variant does not, or several variants
        could be meant (the message names them).
    """
    from pathlib import Path

    from ..corpus.case import CaseFormatError, load_case

    parts = ref.strip("/").split("/")
    if len(parts) > 2 or not parts[0] or any(x in ("", ".", "..") for x in parts):
        return None
    try:
        root = default_corpus()
    except FileNotFoundError:
        return None
    case_dir = Path(root) / parts[0]
    if not (case_dir / "case.yaml").is_file():
        return None
    try:
        names = [v.name for v in load_case(case_dir).variants]
    except CaseFormatError as exc:
        raise ValueError(str(exc)) from None
    if len(parts) == 2:
        if parts[1] not in names:
            raise ValueError(f"bundled case {parts[0]} has no variant '{parts[1]}' (its variants: {', '.join(names)})")
        return case_dir / parts[1]
    if len(names) == 1:
        return case_dir / names[0]
    raise ValueError(f"{parts[0]} is a bundled case with variants {', '.join(names)}: name one, "
                     f"e.g. {parts[0]}/{names[0]}")


class ProgramPath(click.ParamType):
    """A program argument: a path that exists, else a bundled case id
    (``CASE`` or ``CASE/VARIANT``, :func:`bundled_program`), so the corpus
    that ships inside an installed package can be named without its path.
    An existing path wins over a case id of the same name.

    Parameters
    ----------
    file_okay : bool, default True
        Whether a file (a training script) is accepted, or only a folder.
    """

    name = "path"

    def __init__(self, file_okay: bool = True):
        self.file_okay = file_okay

    def convert(self, value, param, ctx):
        from pathlib import Path

        if Path(value).exists():
            if not self.file_okay and not Path(value).is_dir():
                self.fail(f"{value} is a file; give a folder (or a bundled case id)", param, ctx)
            return str(value)
        try:
            folder = bundled_program(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if folder is None:
            self.fail(f"{value}: no such file or folder, and no bundled case of that id "
                      "(`defects4warp list` shows the ids; give CASE/VARIANT)", param, ctx)
        return str(folder)


corpus_opt = click.option("--corpus", type=click.Path(exists=True, file_okay=False), default=None,
                          help="Folder of cases (default: the bundled corpus/).")
def _results_home(ctx, param, value):
    """``--results``: the folder, created if missing; a folder that cannot be
    created or written is a usage error naming it."""
    if value is None:
        return None
    from pathlib import Path

    try:
        Path(value).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.BadParameter(f"cannot create the results home {value}: {exc.strerror or exc}") from None
    if not os.access(value, os.W_OK):
        raise click.BadParameter(f"the results home {value} is not writable")
    return value


results_opt = click.option("--results", "results_path", type=click.Path(file_okay=False), default=None,
                           callback=_results_home,
                           help="Results home holding history.sqlite (default $DEFECTS4WARP_RESULTS, else "
                                "$XDG_DATA_HOME/defects4warp, else ~/.local/share/defects4warp).")
split_opt = click.option("--split", type=click.Choice(["dev", "test"]), default=None,
                         help="Only cases of this split (a case without 'split' in case.yaml is dev); "
                              "default: every split.")
programs_opt = click.option(
    "--programs", "programs", type=click.Choice(["auto", "adapters", "scripts", "all"]), default="auto",
    show_default=True,
    help="Which program of each variant: auto = the adapter (problem.py) where there is one, else the user's "
         "script; adapters = only problem.py variants; scripts = only variants that hold a script, run as the "
         "script (scores script variants alone); all = both, so a converted variant runs twice.")
cases_opt = click.option("--cases", "cases_glob", default="*", show_default=True,
                         help="Glob (or comma-separated globs) over case ids.")
device_opt = click.option("--device", default="cpu", show_default=True, help="Warp device: cpu or cuda:N.")
#: Upper bound of --jobs (the default, the cores available, is clipped to it).
MAX_JOBS = 256
jobs_opt = click.option("--jobs", "-j", default=lambda: min(default_jobs(), MAX_JOBS),
                        show_default="the cores available to this process", type=click.IntRange(1, MAX_JOBS),
                        help="Variants measured in parallel (each in its own process).")
progress_opt = click.option("--progress-every", "progress_every", default=DEFAULT_EVERY_S, show_default=True,
                            type=click.FloatRange(min=0.0), metavar="SECONDS",
                            help="When stderr is not a terminal: at most one progress line per this many seconds "
                                 "(and one at the end).")
WARP_HELP = ("A supported warp-lang release (e.g. 1.16.0; `defects4warp envs list` and docs/version-matrix.md "
             "name them) or the installed one, a comma-separated list of releases, or 'all' (every supported "
             "release); a release other than the installed one runs in an isolated environment created on demand "
             "and cached. Any other release is a usage error (exit 2): nothing is installed.")


def warp_option(*, many: bool = False, required: bool = False, default_help: str = "the installed release"):
    """The ``--warp`` option, with one meaning in every verb.

    Parameters
    ----------
    many : bool
        Whether the verb takes several releases (default False). The value
        is then a list of releases (``all`` expands to every supported
        release); otherwise one release, and a list or ``all`` is a usage
        error that says the verb takes one release.
    required : bool
        Whether ``--warp`` must be given (default False; its value is None
        when absent).
    default_help : str
        What the verb uses when ``--warp`` is absent, for the help text.
    """

    def parse(ctx, param, value):
        if value is None:
            if required:
                raise click.MissingParameter(ctx=ctx, param=param)
            return None
        rels = _checked_releases(value, click.BadParameter)
        if not many and (len(rels) > 1 or value.strip() == "all"):
            verb = ctx.info_name or "this verb"
            raise click.BadParameter(f"`{verb}` takes one release, not {value!r}; "
                                     "`defects4warp audit PATH --warp LIST` measures one program on several, "
                                     "`defects4warp matrix --warp LIST` the corpus")
        return rels if many else rels[0]

    takes = "This verb takes several." if many else "This verb takes one."
    return click.option("--warp", "warp", default=None, required=required, callback=parse,
                        metavar="VERSION[,VERSION...]|all" if many else "VERSION",
                        help=f"{WARP_HELP} {takes}" + ("" if required else f" Default: {default_help}."))


#: ``--warp`` of a verb that measures on one release.
warp_opt = warp_option()
engine_opt = click.option(
    "--engine", "engine_name", default="reference", show_default=True, callback=lambda c, p, v: _engine_name(v),
    help="Diagnostic engine: a name from `defects4warp engines`, or cmd:\"<command>\" for an outside tool.")
timeout_opt = click.option("--timeout", "timeout_s", default=300.0, show_default=True, type=click.FloatRange(min=1.0),
                           help="Seconds one variant may take before it is killed and recorded as an error.")



def _releases(value: str) -> list:
    from ..envs import RELEASES

    return list(RELEASES) if value == "all" else [w.strip() for w in value.split(",") if w.strip()]


def _checked_releases(value: str, error=click.UsageError, prefix: str = "") -> list:
    """``_releases(value)`` with every release checked before anything runs or
    is installed: not a release number, neither supported nor installed
    (:func:`defects4warp.envs.check_supported`, which names the supported
    releases and the nearest one), or an empty list raises ``error(prefix +
    why)`` (a click usage error: exit 2)."""
    from packaging.version import InvalidVersion, Version

    from ..envs import ReleaseEnvError, check_supported

    rels = _releases(value)
    if not rels:
        raise error(prefix + "give a release (e.g. 1.19.0), a comma-separated list, or 'all'")
    for r in rels:
        try:
            Version(r)
        except InvalidVersion:
            raise error(f"{prefix}{r!r} is not a warp-lang release number (e.g. 1.19.0)") from None
        try:
            check_supported(r)
        except ReleaseEnvError as exc:
            raise error(f"{prefix}{exc}") from None
    return rels


def _supported_releases(value: str) -> list:
    """``--warp`` of a verb that reads it itself (pages, audit, envs): the
    releases of ``value`` checked by :func:`_checked_releases`, a bad one a
    usage error (exit 2) that starts with ``--warp:``."""
    return _checked_releases(value, click.UsageError, "--warp: ")



__all__ = ['default_corpus', 'engine_names', 'get_engine', 'load_corpus', 'top_class', '_check_device', '_check_writable', '_emit', '_engine_name', '_fmt', '_load', '_progress', '_read_json', '_release', '_releases', '_run_doc', 'cases_opt', 'console', 'corpus_opt', 'device_opt', 'engine_opt', 'err_console', 'jobs_opt', 'results_opt', 'split_opt', 'timeout_opt', 'warp_opt']


def scale_opts(f):
    """The result-store and executor options shared by run, validate, matrix and audit."""
    opts = [
        click.option("--results", "results_path", type=click.Path(file_okay=False), default=None, callback=_results_home,
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
    from ..run.store import ResultStore, default_root

    return ResultStore(default_root(results_path))


def _executor(kind: str, jobs: int, scheduler, workers):
    """The executor for the CLI options, or a clean usage error."""
    from ..run.executors import make_executor

    try:
        ex = make_executor(kind, jobs, scheduler, workers)
    except (RuntimeError, ValueError, OSError) as exc:
        raise click.UsageError(str(exc)) from None
    if ex.name == "dask":
        where = scheduler or f"an embedded LocalCluster of {workers or 2} workers"
        err_console.print(f"executor dask on {where}")
    return ex


__all__ += ["MOVED_TO_MAINT", "Terminated", "on_sigterm", "interrupted_note", "on_interrupt", "written_at_end", "SIGINT_EXIT", "EngineFailed", "CONTRACT_HINT", "_preflight", "_preflight_releases", "bundled_program", "ProgramPath", "scale_opts", "_store", "_executor", "_write_json", "warp_option", "json_option", "markdown_option", "_one_stdout", "_refuse_dash", "WRITTEN_AS_IT_GOES",
            "WARP_HELP", "progress_opt"]


#: verbs that moved under ``defects4warp maint`` (issue 31): the old top-level spelling is no alias,
#: it fails as a usage error (exit 2) naming the new spelling
MOVED_TO_MAINT = ("builtins", "capture-table", "fit-weights", "index", "mutate", "new-case", "pages")


class LazyCommands(MutableMapping):
    """A group's commands by name, each the click command ``cmd`` of a module of this package
    (:mod:`defects4warp.commands`), imported when the name is first looked up: ``get`` (click's
    ``get_command``), ``[]``, ``items``, ``values``. Names, ``in`` and ``len`` import nothing; a command
    set with ``[]=`` (click's ``add_command``) is kept as given.

    Parameters
    ----------
    modules : dict
        ``{name: module}``, the module's name relative to this package (``{"list": "list_cases"}``).

    Raises
    ------
    KeyError
        On a name it does not hold.
    """

    def __init__(self, modules: dict):
        self._modules = dict(modules)
        self._loaded = {}

    def __getitem__(self, name):
        if name not in self._loaded:
            module = self._modules[name]  # KeyError for an unknown name
            self._loaded[name] = importlib.import_module(f".{module}", __package__).cmd
        return self._loaded[name]

    def __setitem__(self, name, cmd):
        self._modules.setdefault(name, None)
        self._loaded[name] = cmd

    def __delitem__(self, name):
        del self._modules[name]
        self._loaded.pop(name, None)

    def __contains__(self, name):
        return name in self._modules

    def __iter__(self):
        return iter(self._modules)

    def __len__(self):
        return len(self._modules)


class MainGroup(click.Group):
    """The group: a verb interrupted by SIGTERM or Ctrl-C says so on standard error, with what the verb
    said it leaves behind (:func:`on_interrupt`; nothing more when it said nothing), unless the verb has
    already reported it, then exits as a shell reports the signal: 143 for SIGTERM, 130 for SIGINT.

    A maintainers' verb spelt at the top level (:data:`MOVED_TO_MAINT`, e.g. ``defects4warp pages``)
    is a usage error (exit 2) that names its new spelling, ``defects4warp maint pages``; it runs nothing.
    A broken evidence table (:class:`defects4warp.evidence_table.EvidenceTableError`) is one line on
    standard error naming the file and field, and exit status 2."""

    def resolve_command(self, ctx, args):
        name = click.utils.make_str(args[0]) if args else None
        if name in MOVED_TO_MAINT and self.get_command(ctx, name) is None:
            raise click.UsageError(f"No such command '{name}': `{name}` moved: use `defects4warp maint {name}` "
                                   "(maintainers' tools live under `defects4warp maint`).", ctx)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except EvidenceTableError as exc:  # the engine's data is broken: no verb can interpret anything
            click.echo(f"defects4warp: the evidence table is broken: {exc}", err=True)
            raise SystemExit(2) from None
        except (Terminated, KeyboardInterrupt) as exc:
            if not getattr(exc, "reported", False):
                why = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C (SIGINT)"
                verb = ctx.invoked_subcommand or "the command"
                note = ctx.meta.get(INTERRUPT_NOTE)
                click.echo(f"defects4warp {verb}: interrupted by {why} before it finished"
                           + (f"; {note}" if note else ""), err=True)
            if isinstance(exc, KeyboardInterrupt):  # else click prints "Aborted!" and exits 1
                raise SystemExit(SIGINT_EXIT) from None
            raise
