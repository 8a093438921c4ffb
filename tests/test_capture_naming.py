"""User-facing text of the capture names arrays as the script wrote them (harness/capture/naming.py):
never a trace label (``A12``), and ``--param`` candidates ranked with the likely params first."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from defects4warp.capture.naming import array_words, ranked_candidates

ARRAYS = {"A0": {"grad_of": None, "dtype": "float32", "shape": [3]},
          "A1": {"grad_of": "A0", "dtype": "float32", "shape": [3]},
          "A2": {"grad_of": None, "dtype": "float64", "shape": [4, 2]}}
SITES = {"A0": ("train.py", 18, 1), "A1": None, "A2": None}


def test_array_words_uses_variable_site_owner_or_shape_never_the_label():
    names = {("train.py", 18, 1): "x"}
    assert array_words("A0", ARRAYS, SITES, names.get) == "x (train.py:18)"
    assert array_words("A0", ARRAYS, SITES) == "the array allocated at train.py:18"
    assert array_words("A1", ARRAYS, SITES, names.get) == "the .grad of x (train.py:18)"
    assert array_words("A2", ARRAYS, SITES) == "an array the script did not allocate (float64, shape (4, 2))"


def test_ranked_candidates_put_the_params_before_loop_temporaries_and_cap_the_list():
    rg = SimpleNamespace(requires_grad=True)
    objs = {f"A{i}": rg for i in range(30)}
    objs["A29"] = SimpleNamespace(requires_grad=False)
    # A0..A19: a loop's temporaries at line 5 (A0 read, never written; the others written); A20 the param,
    # allocated later in the file (line 40); A21..A28 one array per line; A29 no requires_grad
    site_of = {f"A{i}": ("t.py", 5, i + 1) for i in range(20)}
    site_of["A20"] = ("t.py", 40, 1)
    site_of.update({f"A{i}": ("t.py", 50 + i, 1) for i in range(21, 30)})
    cands = [{"label": "A0", "why_not": "its .grad is not used after the backward"},
             {"label": "A20", "why_not": None},
             {"label": "A21", "why_not": "the loss does not depend on it"}]
    names = {("t.py", 40): "vel", ("t.py", 5): "xs"}  # the variable a line assigns, whatever the occurrence

    def name_of(site):
        return names.get(site[:2])

    out = ranked_candidates(cands, list(objs), objs, site_of, name_of, limit=4)
    assert out == ["vel (t.py:40): the capture's choice",
                   "xs (t.py:5) x20 (20 arrays allocated at that line): its .grad is not used after the backward",
                   "t.py:71: the loss does not depend on it",
                   "t.py:72: written by a launch its tapes recorded (an intermediate)",
                   "and 6 more line(s)"]
    assert not any("t.py:79" in line for line in ranked_candidates(cands, list(objs), objs, site_of, limit=50))


COPY_GRAD = """import numpy as np
import warp as wp


@wp.kernel
def sq(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def total(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i])


def main():
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    log = wp.zeros(3, dtype=float)
    for it in range(2):
        ys = [wp.zeros(3, dtype=float, requires_grad=True) for _ in range(3)]
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=3, inputs=[x, ys[0]])
            wp.copy(log, x.grad)
            wp.launch(total, dim=3, inputs=[ys[0], loss])
        tape.backward(loss)
        x.assign(x.numpy() - 0.1 * x.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_capture_text_names_the_scripts_arrays(tmp_path):
    from defects4warp.capture import CaptureError, ScriptSpec
    from defects4warp.capture.core import capture_problem

    (tmp_path / "train.py").write_text(COPY_GRAD)
    s = capture_problem(tmp_path, ScriptSpec("train.py"), "cpu", timeout_s=60).capture_summary()
    copy = [a for a in s["assumptions"] if a.startswith("wp.copy")]
    assert copy and copy[0].startswith("wp.copy of the .grad of x (train.py:18) ran inside the tape block")
    assert not [a for a in s["assumptions"] if re.search(r"\bA\d+\b", a)]
    with pytest.raises(CaptureError) as err:
        capture_problem(tmp_path, ScriptSpec("train.py", params=["nosuch"]), "cpu", timeout_s=60)
    listed = str(err.value).split("most likely params first: ")[1]
    assert listed.startswith("x (train.py:18): the capture's choice; ys (train.py:21): written by a launch its "
                             "tapes recorded (an intermediate); loss (train.py:22)")
