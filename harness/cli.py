"""The ``defects4warp`` command line: the group, and one module per verb
under :mod:`defects4warp.commands` (each defines a click command ``cmd`` over core
functions of the harness that return data), registered at the end of this file.

To add a verb, put it in ``harness/commands/<verb>.py`` and register it here
with two lines (the import and ``main.add_command``); a verb for maintainers of
the corpus (pages, measurements, scaffolding) goes under ``defects4warp maint``
instead, registered in :mod:`defects4warp.commands.maint`.
"""

from __future__ import annotations

import signal

import click

from . import __version__
from .commands._common import MainGroup, on_sigterm


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


from .commands.run import cmd as _cmd_run  # noqa: E402
main.add_command(_cmd_run, name="run")
from .commands.validate import cmd as _cmd_validate  # noqa: E402
main.add_command(_cmd_validate, name="validate")
from .commands.version_matrix import cmd as _cmd_version_matrix  # noqa: E402
main.add_command(_cmd_version_matrix, name="version-matrix")
from .commands.report import cmd as _cmd_report  # noqa: E402
main.add_command(_cmd_report, name="report")
from .commands.diagnose import cmd as _cmd_diagnose  # noqa: E402
main.add_command(_cmd_diagnose, name="diagnose")
from .commands.engines import cmd as _cmd_engines  # noqa: E402
main.add_command(_cmd_engines, name="engines")
from .commands.history import cmd as _cmd_history  # noqa: E402
main.add_command(_cmd_history, name="history")
from .commands.compare import cmd as _cmd_compare  # noqa: E402
main.add_command(_cmd_compare, name="compare")
from .commands.leaderboard import cmd as _cmd_leaderboard  # noqa: E402
main.add_command(_cmd_leaderboard, name="leaderboard")
from .commands.matrix import cmd as _cmd_matrix  # noqa: E402
main.add_command(_cmd_matrix, name="matrix")
from .commands.audit import cmd as _cmd_audit  # noqa: E402
main.add_command(_cmd_audit, name="audit")
from .commands.list_cases import cmd as _cmd_list_cases  # noqa: E402
main.add_command(_cmd_list_cases, name="list")
from .commands.diff import cmd as _cmd_diff  # noqa: E402
main.add_command(_cmd_diff, name="diff")
from .commands.export import cmd as _cmd_export  # noqa: E402
main.add_command(_cmd_export, name="export")
from .commands.envs import cmd as _cmd_envs  # noqa: E402
main.add_command(_cmd_envs, name="envs")
from .commands.maint import cmd as _cmd_maint  # noqa: E402
main.add_command(_cmd_maint, name="maint")
