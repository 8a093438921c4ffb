"""A tiny outside engine for `defects4warp run --engine cmd:"python examples/cmd_engine.py"`.

It is called as `cmd_engine.py PATH DEVICE SCALE` and writes one JSON
diagnosis to the file named by $DEFECTS4WARP_ANSWER. It never runs the
program: it reads the variant's Python files and says "bug" when a kernel line
updates an array element with `*=` or `/=` (the inplace_math class), "no_bug"
otherwise. Any language works the same way: read the folder, write the JSON.
For an engine that runs the program with Warp, see fd_check_engine.py.
"""

import json
import os
import pathlib
import re
import sys

path = pathlib.Path(sys.argv[1])
hits = [f"{py.name}:{n}" for py in sorted(path.glob("*.py"))
        for n, line in enumerate(py.read_text().splitlines(), 1) if re.search(r"\]\s*[*/]=", line)]
answer = {
    "verdict": "bug" if hits else "no_bug",
    "classes": [{"id": "inplace_math" if hits else "correct", "score": 1.0}],
    "signature": None,
    "evidence": [{"probe": "grep", "clean": not hits, "finding": ", ".join(hits) or "no in-place update", "data": None}],
    "cost": {"objective_evals": 0, "gradient_evals": 0, "device": sys.argv[2]},
}
with open(os.environ["DEFECTS4WARP_ANSWER"], "w") as f:
    json.dump(answer, f)
print(f"grep engine: {answer['verdict']}")  # stdout is free for logs
