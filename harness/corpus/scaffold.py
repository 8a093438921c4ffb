"""``defects4warp maint new-case``: a runnable starting point for a new case."""

from __future__ import annotations

import re
from pathlib import Path

CASE_YAML = """\
id: {name}
title: One line a user would put in a bug report
summary: >
  The symptom in the user's words (the fit stalls, the loss goes to NaN, it
  works on the small config but not in production). Never name the class.
explanation: >
  Root cause, the minimal fix (the diff between buggy/ and fixed/), and the
  Warp documentation section that covers the pattern.
provenance: original
tags:
  domain: fitting
  features: [tape, kernel]
variants:
  buggy:
    - verdict: no_bug
      classes: [correct]
  fixed:
    - verdict: no_bug
      classes: [correct]
"""

PROBLEM = '''\
import numpy as np
import warp as wp


@wp.kernel
def residual(
    x: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = x[i] * x[i] - target[i]
    wp.atomic_add(loss, 0, r * r)


class Problem:
    def __init__(self, device, n):
        self.device = device
        self.x = wp.array(np.linspace(0.5, 1.5, n), dtype=wp.float64, requires_grad=True, device=device)
        self.target = wp.array(np.linspace(1.0, 2.0, n), dtype=wp.float64, device=device)
        self.params = {"x": self.x}

    def forward(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(residual, dim=self.x.shape[0], inputs=[self.x, self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads


def make_problem(device, scale="small"):
    return Problem(device, 64 if scale == "production" else 8)
'''


def scaffold(corpus: str | Path, name: str) -> Path:
    """Create ``corpus/name`` with case.yaml, buggy/problem.py and fixed/problem.py.

    Raises
    ------
    ValueError
        If ``name`` is not a valid case id (``^[a-z0-9][a-z0-9-]*$``).
    FileExistsError
        If the folder exists.
    """
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise ValueError(f"'{name}' is not a valid case id: use lowercase letters, digits and hyphens")
    root = Path(corpus) / name
    if root.exists():
        raise FileExistsError(f"{root} already exists")
    for v in ("buggy", "fixed"):
        (root / v).mkdir(parents=True)
        (root / v / "problem.py").write_text(PROBLEM)
    (root / "case.yaml").write_text(CASE_YAML.format(name=name))
    return root
