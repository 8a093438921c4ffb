"""``defects4warp list``."""

from __future__ import annotations

import sys

import click
from rich.table import Table

from ..corpus.case import FORMS
from ..corpus.index import bug_releases
from ._common import _load, _write_json, cases_opt, console, corpus_opt, json_option, split_opt


@click.command()
@corpus_opt
@cases_opt
@split_opt
@json_option("Write the corpus listing as JSON here instead of printing a table; --json alone prints it",
             bare_prints=True)
def cmd(corpus, cases_glob, split, json_path):
    """Print the corpus: id, classes, releases, domain, form, provenance; and counts per class and per form
    (adapter: problem.py variants; script: the user's files with a script: block; both: converted).
    "bug on Warp" gives, per variant, the supported releases whose expectation (the first case.yaml row
    that applies) is a bug, or a refusal, as ranges (the same text as corpus/INDEX.md)."""
    cases, errors = _load(corpus, cases_glob, split)
    rows = []
    for c in cases:
        releases = bug_releases(c)
        rows.append({"id": c.id, "classes": c.classes, "bug_on": releases, "domain": c.domain,
                     "variants": [v.name for v in c.variants], "provenance": c.provenance, "form": c.form,
                     "script": c.script.command_line() if c.script else None})
    counts = {}
    forms = {f: 0 for f in FORMS}
    for r in rows:
        forms[r["form"]] += 1
        for k in r["classes"]:
            counts[k] = counts.get(k, 0) + 1
    if json_path:
        _write_json({"cases": rows, "per_class": counts, "per_form": forms}, json_path)
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
