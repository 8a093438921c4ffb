"""The debug-mode run of mined admission (scripts/mined_trigger.py --debug,
scripts/mined.py verify / verify-debug): a program that indexes an array out
of bounds is caught, an in-bounds one passes, and a case is admitted only with
every variant's debug run passed. Runs Warp (the installed release) on CPU.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRIGGER = ROOT / "scripts" / "mined_trigger.py"

PROGRAM = '''
import numpy as np
import warp as wp


@wp.kernel
def energy(x: wp.array(dtype=float), w: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, w[i + SHIFT] * x[i] * x[i])


class P:
    def __init__(self, device):
        self.device = device
        self.params = {"x": wp.array(np.arange(1.0, 4.0, dtype=np.float32), requires_grad=True, device=device)}
        self.w = wp.array(np.arange(1.0, 5.0, dtype=np.float32), device=device)

    def objective(self):
        out = wp.zeros(1, dtype=float, device=self.device)
        wp.launch(energy, 3, inputs=[self.params["x"], self.w, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        out = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(energy, 3, inputs=[x, self.w, out], device=self.device)
        tape.backward(out)
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return P(device)
'''


def _variant(tmp_path, name, shift):
    d = tmp_path / name
    d.mkdir()
    (d / "problem.py").write_text(PROGRAM.replace("SHIFT", str(shift)))
    return d


def _debug_run(variant):
    res = subprocess.run([sys.executable, str(TRIGGER), "--debug", str(variant)], capture_output=True, text=True,
                         timeout=600)
    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
    return res.returncode, (json.loads(lines[-1]) if lines else None)


def test_debug_run_catches_an_out_of_bounds_read(tmp_path):
    pytest.importorskip("warp")
    # launched over 3 threads, w[i + 2] reads w[4] of the 4-element weights in the last thread (a read only:
    # an out-of-bounds write could crash the process instead)
    code, doc = _debug_run(_variant(tmp_path, "oob", 2))
    if doc is None:
        # releases from about 1.10 trap on a failed assertion: SIGILL (measured on 1.19.0), no record
        assert code in (-4, -6), code
    else:
        # older ones print the assertion and go on (measured on 1.7.2): the run reads it from its stderr
        assert code == 1 and doc["passed"] is False and doc["mode"] == "debug"
        assert any("arr.shape[0]" in a for a in doc["assertions"]), doc
    code, doc = _debug_run(_variant(tmp_path, "inside", 1))  # reads w[1..3]: in bounds
    assert code == 0 and doc["passed"] is True and doc["assertions"] == [] and doc["finite"] is True


def test_admission_needs_every_debug_run_passed():
    spec = importlib.util.spec_from_file_location("mined_script", ROOT / "scripts" / "mined.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    side = {"1.19.0": {"runs": 3, "as_expected": 3}}
    rec = {"before": side, "after": side}
    assert not mod.case_ok(rec)  # no debug runs recorded
    rec["debug"] = {"buggy": {"passed": True}, "fixed": {"passed": True}}
    assert mod.case_ok(rec)
    rec["debug"]["fixed"]["passed"] = False
    assert not mod.case_ok(rec)
    rec["debug"]["fixed"]["passed"] = True
    rec["after"] = {"1.19.0": {"runs": 3, "as_expected": 2}}
    assert not mod.case_ok(rec)
    assert mod.debug_release({"before": ["1.7.2", "1.19.0"], "after": ["1.8.1", "1.10.1"]}) == "1.19.0"
