"""The engine protocol every diagnostic engine implements.

An engine is any object with

``name``     str, unique in the registry (``reference``, ``always-bug`` ...)
``version``  str
``diagnose(path, device, scale) -> dict``
             ``path`` is a neutral copy of one variant folder (it holds
             ``problem.py``); the engine loads it itself, in its own
             subprocess if it runs the program. It never receives case.yaml,
             the case id or the variant name.

The returned diagnosis follows ``harness/schemas/diagnosis.schema.json``:

``verdict``    ``bug`` | ``no_bug`` | ``inconclusive`` | ``error``
``classes``    ranked ``[{"id": class id, "score": float >= 0}]``, best first
``signature``  the gradient signature (``harness.taxonomy.SIGNATURES``) or None
``evidence``   ``[{"probe", "clean": bool, "finding": str, "data": any}]``,
               including checks that came up clean
``cost``       ``{"wall_s", "objective_evals", "gradient_evals", "device", ...}``
``error``      (only with verdict ``error``) one line saying what failed
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Protocol, runtime_checkable

import jsonschema


@runtime_checkable
class Engine(Protocol):
    """Structural type of a diagnostic engine (see module docstring)."""

    name: str
    version: str

    def diagnose(self, path: str, device: str, scale: str) -> dict: ...


@lru_cache(maxsize=1)
def diagnosis_schema() -> dict:
    """The JSON Schema of a diagnosis (``harness/schemas/diagnosis.schema.json``)."""
    return json.loads(resources.files("harness").joinpath("schemas/diagnosis.schema.json").read_text())


def check_diagnosis(diag) -> str | None:
    """Return None when ``diag`` satisfies the schema, else the first violation as text."""
    v = jsonschema.Draft202012Validator(diagnosis_schema())
    for err in sorted(v.iter_errors(diag), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        return f"{where}: {err.message}"
    return None


def error_diagnosis(message: str, wall_s: float = 0.0, device: str | None = None, evidence=None) -> dict:
    """A diagnosis with verdict ``error`` (the variant could not be judged)."""
    return {
        "verdict": "error",
        "classes": [],
        "signature": None,
        "evidence": list(evidence or []),
        "cost": {"wall_s": float(wall_s), "objective_evals": None, "gradient_evals": None, "device": device},
        "error": message,
    }
