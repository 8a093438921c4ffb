"""Print the source-rule registry as a Markdown table, or rewrite it in a file.

Usage::

    python -m defects4warp.rules                            # print the table
    python -m defects4warp.rules --write docs/engines.md    # replace the table between
                                                       # <!-- rules-table --> and <!-- /rules-table -->
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import registry_table

BEGIN, END = "<!-- rules-table -->", "<!-- /rules-table -->"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m defects4warp.rules", description=__doc__.splitlines()[0])
    p.add_argument("--write", metavar="PATH", help="replace the generated table in PATH (between the markers)")
    a = p.parse_args(argv)
    table = registry_table()
    if not a.write:
        print(table)
        return 0
    path = Path(a.write)
    text = path.read_text(encoding="utf-8")
    pat = re.compile(re.escape(BEGIN) + r"\n(?:.*?\n)?" + re.escape(END), re.S)
    if not pat.search(text):
        print(f"{path}: no {BEGIN} ... {END} markers", file=sys.stderr)
        return 1
    path.write_text(pat.sub(lambda _m: f"{BEGIN}\n{table}\n{END}", text, count=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
