"""The fixed vocabulary of bug classes and gradient signatures.

Every class id used in a ``case.yaml`` or returned by an engine comes from
:data:`CLASSES`. docs/taxonomy.md explains each class in prose (disguises,
signature, how to confirm it, the standard fix); this module holds the part the
code needs: the family, whether the class is a defect, and the gradient
signatures a measurement of that class may show.

Signatures (see :mod:`defects4warp.measure.compare` for how each is measured):

``agrees``
    autodiff matches the truth (finite differences or the reference gradient)
    on every checked element, on every call.
``zero``
    autodiff is exactly zero on elements where the truth is not.
``nan_inf``
    autodiff contains NaN or inf while the objective is finite.
``growth``
    call *k* of ``gradient()`` at the same point returns *k* times call 1.
``iteration``
    a later call of ``gradient()`` at the same point differs from the first
    (but not by exact growth): state carried between iterations.
``exact_factor``
    autodiff equals the truth times one constant factor (not 1).
``sparse``
    most elements agree; a few disagree.
``subtly_wrong``
    disagreement with no simpler pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

SIGNATURES = (
    "agrees",
    "zero",
    "nan_inf",
    "growth",
    "iteration",
    "exact_factor",
    "sparse",
    "subtly_wrong",
)

#: Signatures of a gradient that disagrees with the truth in a generic way.
_WRONG = frozenset({"zero", "exact_factor", "sparse", "subtly_wrong"})


@dataclass(frozen=True)
class BugClass:
    """One class of the taxonomy.

    Attributes
    ----------
    id : str
        The class id used in case.yaml and diagnoses.
    family : str
        ``taping``, ``kernel``, ``custom``, ``warp`` or ``not_a_bug``.
    is_bug : bool
        False for the ``not_a_bug`` family (verdict ``no_bug``).
    signatures : frozenset[str]
        The signatures a measurement of this class may show (used by
        ``defects4warp validate`` to check that a buggy variant is wrong "in the
        way its class says").
    summary : str
        One line for tables and ``diagnose`` output.
    """

    id: str
    family: str
    is_bug: bool
    signatures: frozenset
    summary: str


def _c(id, family, signatures, summary):
    return BugClass(id, family, family != "not_a_bug", frozenset(signatures), summary)


_ALL = [
    # taping pattern
    _c("overwrite", "taping", _WRONG | {"nan_inf"}, "an array read on the tape is written later (write-after-read or write-after-write)"),
    _c("struct_overwrite", "taping", _WRONG | {"nan_inf"}, "an array held in a wp.struct is overwritten after it was read on the tape"),
    _c("offtape_mutation", "taping", _WRONG | {"nan_inf"}, "an array the tape read is changed outside the tape before backward()"),
    _c("tape_scope", "taping", _WRONG, "part of the forward pass runs outside the `with tape:` block"),
    _c("missing_requires_grad", "taping", _WRONG, "an array on the gradient path was allocated without requires_grad"),
    _c("backward_disabled", "taping", _WRONG, "a kernel or module on the gradient path is compiled with enable_backward=False"),
    _c("missing_tape_zero", "taping", {"growth", "iteration"}, "gradients accumulate across iterations because nothing zeroes them"),
    _c("stale_gradient_read", "taping", {"iteration", "zero", "subtly_wrong"}, "a gradient or seed buffer from an earlier iteration is read again"),
    _c("double_count", "taping", _WRONG | {"growth"}, "one contribution enters the backward pass twice"),
    _c("seed_mismatch", "taping", _WRONG | {"growth"}, "the backward seed does not match the reported objective (ones over a per-element loss backpropagates the sum: N x the mean's gradient)"),
    _c("rng_replay", "taping", _WRONG, "the backward pass (replay) sees other random numbers than the forward pass"),
    _c("truncation", "taping", _WRONG, "per-window tapes drop the gradient through the carried state"),
    # kernel limits
    _c("inplace_math", "kernel", _WRONG | {"nan_inf"}, "`*=` or `/=` on an array element inside a kernel"),
    _c("component_reassign", "kernel", _WRONG | {"nan_inf"}, "a local vector/matrix component assigned more than once"),
    _c("dynamic_loop", "kernel", _WRONG, "a runtime-bound loop whose carried value the adjoint does not replay"),
    _c("nonsmooth_nan", "kernel", {"nan_inf"}, "NaN/inf adjoint of sqrt, pow, log or atan2 at a singular point (length/normalize are guarded)"),
    _c("where_nan", "kernel", {"nan_inf"}, "NaN/inf from the unselected operand of wp.where (or a select/ternary on older releases)"),
    # custom gradients
    _c("custom_adjoint_error", "custom", _WRONG, "a @wp.func_grad adjoint assigns instead of accumulating, or is wrong"),
    _c("replay_side_effect", "custom", _WRONG, "a side effect (atomic counter) is replayed wrongly in the backward pass"),
    _c("native_no_adjoint", "custom", {"zero", "sparse", "subtly_wrong"}, "a @wp.func_native without an adjoint snippet"),
    # inside Warp, release-dependent
    _c("copy_adjoint", "warp", _WRONG, "wp.copy/wp.clone adjoints that do not accumulate (before Warp 1.17)"),
    _c("warp_adjoint_bug", "warp", _WRONG | {"nan_inf"}, "an adjoint Warp itself computes wrongly on some releases"),
    # not a gradient bug
    _c("correct", "not_a_bug", {"agrees"}, "the gradient is correct"),
    _c("piecewise_constant", "not_a_bug", {"agrees"}, "a zero gradient through round/floor/sign is correct"),
    _c("stochastic_forward", "not_a_bug", {"agrees"}, "the forward resamples noise; with the seed pinned the gradient is correct"),
    _c("nonsmooth_tie", "not_a_bug", {"agrees"}, "at a kink or tie the one-sided derivative Warp picks is valid"),
    _c("fd_precision", "not_a_bug", {"agrees"}, "finite differences fail in float32 cancellation; the gradient is correct"),
    _c("chaotic_horizon", "not_a_bug", {"agrees"}, "over a long chaotic horizon the true gradient is huge and useless"),
    _c("surrogate_gradient", "not_a_bug", {"agrees"}, "a deliberate surrogate (straight-through) gradient"),
]

#: All classes by id.
CLASSES: dict[str, BugClass] = {c.id: c for c in _ALL}

BUG_CLASSES = frozenset(c.id for c in _ALL if c.is_bug)
NO_BUG_CLASSES = frozenset(c.id for c in _ALL if not c.is_bug)
FAMILIES = ("taping", "kernel", "custom", "warp", "not_a_bug")
#: Expectation verdicts of a case.yaml entry. ``refused``: this Warp release
#: refuses to build or run the program as written (e.g. 1.18.0 refuses
#: ``dst[0].x *= s`` with backward enabled, and with it every kernel of the
#: module); its classes name the defect the refusal guards against.
VERDICTS = ("bug", "no_bug", "refused")
#: Verdicts an engine may return.
DIAGNOSIS_VERDICTS = ("bug", "no_bug", "refused", "inconclusive", "error")




def class_guide(class_id: str) -> str:
    """The "Standard fix" paragraph of ``class_id`` from docs/taxonomy.md
    (which names the Warp documentation section), or the class summary when
    the docs are not next to the package (a non-editable install).

    Raises
    ------
    KeyError
        If ``class_id`` is not in the taxonomy.
    """
    import re
    from pathlib import Path

    summary = CLASSES[class_id].summary
    from .paths import bundled

    doc = bundled("docs") / "taxonomy.md"
    if not doc.is_file():
        return summary
    text = doc.read_text(encoding="utf-8")
    # the class's section ends at the next heading of any level (a "## " part heading follows the last class)
    m = re.search(rf"^### {re.escape(class_id)}\n(.*?)(?=^#{{1,3}} |\Z)", text, re.S | re.M)
    if not m:
        return summary
    fix = re.search(r"\*\*Standard fix[^*]*\*\*\s*(.*?)(?=\n\n\*\*|\Z)", m.group(1), re.S)
    return fix.group(1).strip() if fix else summary
