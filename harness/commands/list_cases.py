"""``defects4warp list``."""

from __future__ import annotations

import json
import sys

import click
from rich.table import Table

from ..case import FORMS
from ._common import _load, cases_opt, console, corpus_opt, split_opt


@click.command()
@corpus_opt
@cases_opt
@split_opt
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def cmd(corpus, cases_glob, split, as_json):
    """Print the corpus: id, classes, releases, domain, form, provenance; and counts per class and per form
    (adapter: problem.py variants; script: the user's files with a script: block; both: converted)."""
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
                     "variants": [v.name for v in c.variants], "provenance": c.provenance, "form": c.form,
                     "script": c.script.command_line() if c.script else None})
    counts = {}
    forms = {f: 0 for f in FORMS}
    for r in rows:
        forms[r["form"]] += 1
        for k in r["classes"]:
            counts[k] = counts.get(k, 0) + 1
    if as_json:
        click.echo(json.dumps({"cases": rows, "per_class": counts, "per_form": forms}, indent=2))
    else:
        t = Table(title=f"{len(rows)} case{'s' if len(rows) != 1 else ''}")
        for col in ("id", "classes", "bug on Warp", "domain", "form", "provenance"):
            t.add_column(col)
        for r in rows:
            t.add_row(r["id"], ", ".join(r["classes"]), "; ".join(r["bug_on"]) or "-", r["domain"], r["form"],
                      r["provenance"])
        console.print(t)
        console.print("per class: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        console.print("per form: " + ", ".join(f"{k} {v}" for k, v in forms.items())
                      + " (script and both: run as scripts with `run --programs scripts`)")
    sys.exit(1 if errors else 0)
