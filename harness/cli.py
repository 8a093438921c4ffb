"""The ``defects4warp`` command line: the group, and one module per verb
under :mod:`defects4warp.commands` (each defines a click command ``cmd`` over core
functions of the harness that return data), registered at the end of this file (:data:`VERBS`).

To add a verb, put it in ``harness/commands/<verb>.py`` and name it in
:data:`VERBS` here (imported when it is used); a verb for maintainers of
the corpus (pages, measurements, scaffolding) goes under ``defects4warp maint``
instead, registered in :mod:`defects4warp.commands.maint`.
"""

from __future__ import annotations

import signal

import click

from . import __version__
from .commands._common import LazyCommands, MainGroup, on_sigterm


@click.group(cls=MainGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="defects4warp")
def main():
    """defects4warp: a verified corpus of gradient bugs in NVIDIA Warp programs,
    and a harness that scores diagnostic engines on it.

    Exit status: 0 success; 1 a validation failure, a case format error
    (the run still measures every valid case), or a run in which no variant
    got a verdict (every one that ran ended in an error); 2 a usage error or
    an outside engine that breaks its contract on the first variant; 130
    stopped by Ctrl-C (SIGINT), 143 terminated by SIGTERM (what finished
    stays on disk, and it says what it wrote)."""
    # SIGTERM unwinds like Ctrl-C, so running measurements are killed and
    # partial results stay on disk
    signal.signal(signal.SIGTERM, on_sigterm)


#: The verbs: each is the click command ``cmd`` of its module under :mod:`defects4warp.commands`, imported
#: when the verb is looked up (:class:`defects4warp.commands._common.LazyCommands`), so a ``diagnose`` does not
#: import the other verbs' modules (0.09 of the parent process's 0.50 CPU-s, measured 2026-12-05).
VERBS = {"run": "run", "validate": "validate", "version-matrix": "version_matrix", "report": "report",
         "diagnose": "diagnose", "engines": "engines", "history": "history", "compare": "compare",
         "leaderboard": "leaderboard", "matrix": "matrix", "audit": "audit", "list": "list_cases", "diff": "diff",
         "export": "export", "envs": "envs", "maint": "maint"}
main.commands = LazyCommands(VERBS)
