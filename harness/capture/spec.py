"""The script target: :class:`ScriptSpec` and allocation sites.

A script variant is a folder holding the user's files as they are and no
``problem.py``; what to run is a :class:`ScriptSpec` (the ``script:`` block of
``case.yaml``, or the command line of ``defects4warp diagnose``). This module
imports neither Warp nor the engines: the parent harness process uses it to
pass a spec to the measurement worker as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


class CaptureError(RuntimeError):
    """A script could not be turned into a Problem. The message says what was
    missing (no backward, a non-scalar loss without seeds, graph capture,
    several processes, torch/JAX owning the loop, no parameter found ...) and
    how to proceed (``--param``, ``--iteration`` or a ``make_problem``
    adapter)."""


@dataclass(frozen=True)
class ScriptSpec:
    """What to run of a script variant (docs: the ``script:`` block of case.yaml).

    Parameters
    ----------
    entry : str
        The file run as ``__main__``, relative to the variant folder (or absolute).
    args : list of str, default []
        Command-line arguments given to it (``sys.argv[1:]``).
    iteration : int, default 1
        The script's k-th optimisation iteration defines the Problem (k >= 1): from
        the update that wrote the params (their allocation for k = 1) to the next
        update that consumes their gradient, with every backward in between.
    params : list of str or None, default None
        Override of the captured parameters: allocation sites ``"file.py:LINE"``
        or ``"file.py:LINE:OCCURRENCE"`` (occurrence counted from 1 among the
        arrays allocated at that line in one run), or variable names (``"w"``:
        the arrays of the iteration that the allocating line, or its caller's,
        assigns to that name; ``self.`` is ignored). None: found by the capture.
    module : bool, default False
        ``entry`` is a dotted module name run as ``python -m ENTRY`` from the
        folder (a script inside a package: ``pkg.train``, whose imports
        ``from pkg.model import X`` or ``from .model import X`` need the package).

    Raises
    ------
    ValueError
        On an empty entry, an iteration below 1 or a malformed site.
    """

    entry: str
    args: list = field(default_factory=list)
    iteration: int = 1
    params: list | None = None
    module: bool = False

    def __post_init__(self):
        if not isinstance(self.entry, str) or not self.entry:
            raise ValueError("ScriptSpec.entry: a file name is required (e.g. train.py)")
        object.__setattr__(self, "args", [str(a) for a in (self.args or [])])
        try:
            k = int(self.iteration)
        except (TypeError, ValueError):
            raise ValueError(f"ScriptSpec.iteration: {self.iteration!r} is not an integer") from None
        if k < 1:
            raise ValueError(f"ScriptSpec.iteration: {k} (the first optimisation iteration is 1)")
        object.__setattr__(self, "iteration", k)
        if self.params is not None:
            ps = [str(p) for p in self.params]
            for p in ps:
                if not is_param_name(p):
                    parse_site(p)
            object.__setattr__(self, "params", ps or None)

    def __hash__(self):
        return hash(self.to_json())

    def to_dict(self) -> dict:
        """``{"entry", "args", "iteration", "params"}`` (JSON-able), with ``"module": true`` for a module."""
        d = {"entry": self.entry, "args": list(self.args), "iteration": self.iteration,
             "params": list(self.params) if self.params is not None else None}
        if self.module:
            d["module"] = True
        return d

    def to_json(self) -> str:
        """The spec as one JSON object (keys sorted)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text) -> "ScriptSpec":
        """A spec from :meth:`to_json` output (a str) or an already-parsed dict.

        Raises
        ------
        ValueError
            If the JSON is malformed or has unknown keys.
        """
        d = json.loads(text) if isinstance(text, (str, bytes)) else dict(text)
        unknown = set(d) - {"entry", "args", "iteration", "params", "module"}
        if unknown:
            raise ValueError(f"ScriptSpec: unknown key(s) {sorted(unknown)}")
        return cls(entry=d.get("entry"), args=d.get("args") or [], iteration=d.get("iteration", 1),
                   params=d.get("params"), module=bool(d.get("module", False)))


def is_param_name(text: str) -> bool:
    """Whether a ``--param`` value is a variable name (``w``, ``self.mass``: the name the allocating line, or
    its caller's, assigns) rather than an allocation site ``FILE.py:LINE[:N]``."""
    t = str(text)
    return ":" not in t and not t.endswith(".py") and all(part.isidentifier() for part in t.split("."))


def parse_site(text: str) -> tuple:
    """``"file.py:LINE[:OCCURRENCE]"`` -> ``(file, line, occurrence or None)``.

    Raises
    ------
    ValueError
        When the text is not of that form (line and occurrence positive integers).
    """
    parts = str(text).rsplit(":", 2)
    try:
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            f, line, occ = parts[0], int(parts[1]), int(parts[2])
        else:
            f, line = str(text).rsplit(":", 1)
            line, occ = int(line), None
    except ValueError:
        raise ValueError(f"allocation site {text!r}: expected FILE.py:LINE or FILE.py:LINE:OCCURRENCE "
                         f"(e.g. train.py:42 or train.py:42:2)") from None
    if not f or line < 1 or (occ is not None and occ < 1):
        raise ValueError(f"allocation site {text!r}: expected FILE.py:LINE or FILE.py:LINE:OCCURRENCE")
    return f, line, occ


def format_site(file: str, line: int, occurrence: int | None = None) -> str:
    """The text form of a site (the occurrence is written only when it is not the first)."""
    return f"{file}:{line}" + (f":{occurrence}" if occurrence and occurrence > 1 else "")


def site_matches(spec_site: str, file: str, line: int, occurrence: int) -> bool:
    """Whether the override ``spec_site`` names the allocation at ``file:line``
    (its ``occurrence``-th there). A site without occurrence means the first;
    the file matches on the path relative to the variant folder or its base name."""
    f, ln, occ = parse_site(spec_site)
    if ln != line or (occ or 1) != occurrence:
        return False
    import os

    return f == file or os.path.basename(f) == os.path.basename(file) and ("/" not in f or file.endswith(f))
