"""Source evidence: patterns in a variant's Python and kernel code.

Compatibility layer over :mod:`defects4warp.rules`, where every rule is a small
registered function declaring its classes, specificity, release gate and
whether the runtime trace observes it (docs/engines.md, "Source rules",
lists the registry). The names other modules import stay here:

``RULES``                rule -> classes it points at (the evidence table's rows ``rule:<name>``)
``SPECIFICITY``          rule -> weight (0..1) a finding adds to its classes
``DEFAULT_SPECIFICITY``  the weight of a rule that declares none
``Finding``              one finding (rule, file, line, detail, classes, scope)
``scan(folder)``         every finding of a variant folder, sorted by file, line
``kernel_access``        (params, read, written) of a kernel AST
``kernel_access_detail`` the same plus the params assigned with plain ``=``
"""

from __future__ import annotations

from ..rules import (DEFAULT_SPECIFICITY, REGISTRY, Finding, classes_of, kernel_access,  # noqa: F401
                     kernel_access_detail, scan, specificities)


def __getattr__(name):
    """``RULES``: rule -> tuple of the classes it points at, read from the evidence table on
    access (not at import: the measurement worker imports this module without the table's reader)."""
    if name == "RULES":
        return classes_of()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: rule -> specificity in [0, 1] (every rule; from the registry).
SPECIFICITY = specificities()

__all__ = ["RULES", "SPECIFICITY", "DEFAULT_SPECIFICITY", "Finding", "scan", "kernel_access",
           "kernel_access_detail", "REGISTRY"]
