"""``defects4warp maint``: the maintainers' group.

Its verbs keep the corpus and its committed pages: they render docs/ and
corpus/INDEX.md, fit the engine's weights, measure the builtins and the capture
table, scaffold and mutate cases, and check converted cases and the rule table.
A user diagnosing a program needs none of them. The old top-level spellings
(``defects4warp pages``) are usage errors naming the new one
(:class:`~defects4warp.commands._common.MainGroup`)."""

from __future__ import annotations

import click

from .builtins import cmd as _builtins
from .capture_table import cmd as _capture_table
from .conversion import cmd as _conversion
from .fit_weights import cmd as _fit_weights
from .index import cmd as _index
from .mutate import cmd as _mutate
from .new_case import cmd as _new_case
from .pages import cmd as _pages
from .rules import cmd as _rules


@click.group()
def cmd():
    """Tools for maintainers of the corpus (rendering its pages, fitting the
    engine's weights, measuring builtins, scaffolding and mutating cases), not
    for users diagnosing their programs."""


for _name, _cmd in (("builtins", _builtins), ("capture-table", _capture_table), ("conversion", _conversion),
                    ("fit-weights", _fit_weights), ("index", _index), ("mutate", _mutate), ("new-case", _new_case),
                    ("pages", _pages), ("rules", _rules)):
    cmd.add_command(_cmd, name=_name)
