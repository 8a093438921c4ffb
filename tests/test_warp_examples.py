"""docs/warp-examples.md shows what docs/data/warp-examples.json holds (no re-measurement)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("d4w_warp_examples", ROOT / "scripts" / "warp_examples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_page_table_is_rendered_from_the_committed_json():
    mod = _script()
    doc = json.loads((ROOT / "docs" / "data" / "warp-examples.json").read_text())
    page = (ROOT / "docs" / "warp-examples.md").read_text()
    table = page.split("<!-- table: python scripts/warp_examples.py --render -->\n")[1].split("\n<!-- end table -->")[0]
    assert table.strip() == mod.render(doc).strip()


def test_no_example_is_called_a_bug_and_every_listed_example_was_measured():
    mod = _script()
    doc = json.loads((ROOT / "docs" / "data" / "warp-examples.json").read_text())
    assert [(r["release"], r["example"]) for r in doc["runs"]] == [(r, s) for r, s, _ in mod.EXAMPLES]
    assert {r["verdict"] for r in doc["runs"]} == {"no_bug"}
    assert not set(mod.CANNOT_RUN) & {(r, s) for r, s, _ in mod.EXAMPLES}
