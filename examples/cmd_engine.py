"""A tiny outside engine for `defects4warp run --engine cmd:"python examples/cmd_engine.py"`.

It is called as `cmd_engine.py PATH DEVICE SCALE` and prints one JSON
diagnosis. It never runs the program: it reads the variant's Python files and
says "bug" when a kernel line updates an array element with `*=` or `/=`
(the inplace_math class), "no_bug" otherwise. Any language works the same
way: read the folder, print the JSON.
"""

import json
import pathlib
import re
import sys

path = pathlib.Path(sys.argv[1])
hits = [f"{py.name}:{n}" for py in sorted(path.glob("*.py"))
        for n, line in enumerate(py.read_text().splitlines(), 1) if re.search(r"\]\s*[*/]=", line)]
print(json.dumps({
    "verdict": "bug" if hits else "no_bug",
    "classes": [{"id": "inplace_math" if hits else "correct", "score": 1.0}],
    "signature": None,
    "evidence": [{"probe": "grep", "clean": not hits, "finding": ", ".join(hits) or "no in-place update", "data": None}],
    "cost": {"objective_evals": 0, "gradient_evals": 0, "device": sys.argv[2]},
}))
