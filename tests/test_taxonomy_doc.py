"""docs/taxonomy.md states the same classes, families and signatures as harness/taxonomy.py."""

import re
from pathlib import Path

from defects4warp.taxonomy import CLASSES

DOC = Path(__file__).resolve().parent.parent / "docs" / "taxonomy.md"


def test_summary_table_matches_the_code():
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\| `([a-z_]+)` \| (\w+) \| (bug|no_bug) \| ([a-z_, ]+) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3), {x.strip() for x in m.group(4).split(",")})
    assert set(rows) == set(CLASSES)
    for cid, c in CLASSES.items():
        assert rows[cid] == (c.family, "bug" if c.is_bug else "no_bug", set(c.signatures)), cid


def test_every_class_has_a_section():
    text = DOC.read_text()
    for cid in CLASSES:
        assert f"### {cid}\n" in text, cid


def test_every_class_has_a_standard_fix_naming_warp_docs():
    from defects4warp.taxonomy import BUG_CLASSES, class_guide

    for cid in CLASSES:
        guide = class_guide(cid)
        assert guide and guide != CLASSES[cid].summary, cid
        # no heading of the next part is pulled in (the last class before "## Kernel limits" once was)
        assert not re.search(r"^#", guide, re.M), (cid, guide[-80:])
    assert all(re.search(r"Warp\s+doc|changelog", class_guide(c)) for c in BUG_CLASSES)
