"""The one place that replaces attributes of Warp's API and puts them back.

The runtime trace (:mod:`defects4warp.measure.recorder`) and the script capture
(:mod:`defects4warp.capture.hooks`) both wrap Warp's public API (``wp.launch``,
``Tape.backward``, ``wp.array`` construction, ...). Each builds its wrappers, but
installs them through a :class:`Patches` and restores them with
:meth:`Patches.restore`, so that the two layers nest (a traced call inside a
capture run wraps what is installed at that moment) and undo in reverse order.

State is passed explicitly: each layer's wrappers are closures over the state
object of the install that made them (the recorder's ``_Recorder``, the
capture's ``_Run``), never a module global of the layer. The one thing a layer
needs to learn from outside is the state of *another* layer installed around
it (the capture run labels arrays with the trace that is recording it): a
:class:`Patches` made with a ``layer`` name and its ``state`` is in force from
its making until :meth:`Patches.restore`, and :func:`active` answers which
state of a layer is in force, innermost first. This module is the only place
that keeps that table. Imports only the standard library.
"""

from __future__ import annotations


#: ``[(layer, state)]`` of the :class:`Patches` in force with a layer name, outermost first.
_IN_FORCE: list = []


def active(layer: str):
    """The ``state`` of the innermost :class:`Patches` of ``layer`` in force (``"trace"``: the
    recorder's ``_Recorder``; ``"capture"``: the capture's ``_Run``), or None when none is."""
    for name, state in reversed(_IN_FORCE):
        if name == layer:
            return state
    return None


class Patches:
    """Attribute replacements made on Warp objects, in order, with what they replaced.

    ``patch(owner, name, new)`` records ``(owner, name, original, had_attribute)``
    and sets ``new``; the original is read from the class ``__dict__`` for a class
    (not an inherited attribute), else with ``getattr``. ``saved`` is that list,
    newest last; :meth:`restore` undoes it newest first.

    Parameters
    ----------
    layer : str, optional
        The instrumentation layer these patches belong to (``"trace"``, ``"capture"``). With a
        layer, ``state`` is what :func:`active` returns for it from now until :meth:`restore`.
    state : object, optional
        The layer's state object for this install (its wrappers close over the same object).
    """

    def __init__(self, layer: str | None = None, state=None):
        self.saved = []
        self.layer = layer
        self._entry = None
        if layer is not None:
            self._entry = (layer, state)
            _IN_FORCE.append(self._entry)

    def patch(self, owner, name: str, new) -> None:
        """Replace ``owner.name`` with ``new``, remembering the original."""
        had = name in owner.__dict__ if isinstance(owner, type) else hasattr(owner, name)
        orig = (owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)) if had else None
        self.saved.append((owner, name, orig, had))
        setattr(owner, name, new)

    def restore(self) -> None:
        """Undo every patch, newest first (:func:`restore_patches`), forget them, and take the layer's
        state out of force (:func:`active` no longer returns it)."""
        try:
            restore_patches(self.saved)
        finally:
            self.saved = []
            if self._entry is not None:
                for i in range(len(_IN_FORCE) - 1, -1, -1):
                    if _IN_FORCE[i] is self._entry:
                        del _IN_FORCE[i]
                        break
                self._entry = None


def restore_patches(saved) -> None:
    """Undo attribute patches recorded as ``(owner, name, original, had_attribute)``
    tuples, newest first: the original is set back, or the attribute removed
    where the owner had none (shared with :mod:`defects4warp.capture`)."""
    for owner, name, orig, had in reversed(saved):
        if had:
            setattr(owner, name, orig)
        else:
            try:
                delattr(owner, name)
            except AttributeError:
                pass
            if name == "__new__" and isinstance(owner, type):
                _reinherit_new(owner)


def _reinherit_new(cls) -> None:
    """Make ``cls(...)`` construct again after a patched ``__new__`` was deleted from a class that had none.

    CPython leaves the deleted slot calling ``object.__new__`` with the constructor's arguments,
    which raises "object.__new__() takes exactly one argument" for every later ``cls(x)`` (seen
    with ``wp.array`` on Warp 1.0.2, which defines no ``__new__``: every ``wp.array(data)`` after
    a capture run failed). The inherited ``__new__`` is set back explicitly: the next one in the
    MRO, called without the arguments when it is ``object.__new__``.
    """
    base_new = next((k.__dict__["__new__"] for k in cls.__mro__[1:] if "__new__" in k.__dict__), object.__new__)
    if base_new is object.__new__:
        def __new__(c, *args, **kwargs):
            return object.__new__(c)
    else:
        fn = base_new.__func__ if isinstance(base_new, staticmethod) else base_new

        def __new__(c, *args, **kwargs):
            return fn(c, *args, **kwargs)
    cls.__new__ = staticmethod(__new__)
