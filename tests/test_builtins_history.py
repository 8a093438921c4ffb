"""The builtins suite's recall against Warp's changelog (scripts/builtins_history.py), on synthetic
suite data: an entry is caught only when a cell is flagged before the fix and all agree after."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("builtins_history", ROOT / "scripts" / "builtins_history.py")
bh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bh)

TABLE = {"entries": [{"id": "1.8.1-x", "release": "1.8.1", "text": "Fix div"},
                     {"id": "after-1.16.0-y", "release": "after-1.16.0", "text": "Fix ternary"},
                     {"id": "1.4.0-z", "release": "1.4.0", "text": "Fix in-place"}]}


def cells(**states):
    return {k: {"state": v} for k, v in states.items()}


DATA = {"1.7.2": cells(a="wrong", t="agrees"), "1.8.1": cells(a="agrees", t="agrees"),
        "1.16.0": cells(a="agrees", t="zero"), "1.17.0": cells(a="agrees", t="agrees")}


def test_caught_needs_a_flag_before_and_agreement_after():
    m = {"entries": [{"id": "1.8.1-x", "cells": ["a"]}, {"id": "after-1.16.0-y", "fixed": "1.17.0", "cells": ["t"]},
                     {"id": "1.4.0-z", "miss": "no cell"}]}
    res = bh.recall(m, TABLE, DATA)
    by = {r["id"]: r for r in res["rows"]}
    assert by["1.8.1-x"]["caught"] and by["1.8.1-x"]["before"] == "1.7.2" and by["1.8.1-x"]["after"] == "1.8.1"
    assert by["after-1.16.0-y"]["caught"] and by["after-1.16.0-y"]["flagged_on"] == ["1.16.0"]
    assert not by["1.4.0-z"]["caught"] and res["caught"] == 2 and res["recall"] == pytest.approx(0.667, abs=1e-3)
    # still flagged after the fix: not caught
    late = dict(DATA, **{"1.17.0": cells(a="agrees", t="zero")})
    assert not {r["id"]: r for r in bh.recall(m, TABLE, late)["rows"]}["after-1.16.0-y"]["caught"]


def test_unknown_ids_cells_and_releases_name_the_file():
    with pytest.raises(SystemExit, match="not in"):
        bh.recall({"entries": [{"id": "nope", "cells": ["a"]}]}, TABLE, DATA)
    with pytest.raises(SystemExit, match="in no release"):
        bh.recall({"entries": [{"id": "1.8.1-x", "cells": ["zz"]}]}, TABLE, DATA)
    with pytest.raises(SystemExit, match="give `fixed:`"):
        bh.recall({"entries": [{"id": "after-1.16.0-y", "cells": ["t"]}]}, TABLE, DATA)


def test_the_committed_page_and_data_are_current():
    assert bh.main(["--check"]) == 0
