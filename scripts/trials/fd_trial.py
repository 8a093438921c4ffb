"""What the float64 trial checks (``scripts/trials/<case-id>_check.py``) share: the folder of a case, a
variant's ``train.py`` loaded as a module, central differences of a NumPy loss and the relative error
each trial prints.

A trial runs as ``python scripts/trials/<case-id>_check.py`` (this folder is then first on ``sys.path``)
and sets ``sys.dont_write_bytecode`` before importing this module, so no ``__pycache__`` is written
beside it or into a variant folder.
"""
import importlib.util
import os

import numpy as np

#: The repository root (``scripts/trials/`` is two levels below it).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def case_folder(case_id: str) -> str:
    """The folder of case ``case_id`` in ``corpus/`` or, when it is not there, ``corpus-pending/``.

    Raises
    ------
    FileNotFoundError
        When neither holds the case.
    """
    for tree in ("corpus", "corpus-pending"):
        folder = os.path.join(REPO, tree, case_id)
        if os.path.isdir(folder):
            return folder
    raise FileNotFoundError(f"no case {case_id} under corpus/ or corpus-pending/")


def load_variant(folder: str, variant: str, name: str):
    """``folder/variant/train.py`` imported as the module ``<name>_<variant>`` (not run as ``__main__``)."""
    spec = importlib.util.spec_from_file_location(f"{name}_{variant}", os.path.join(folder, variant, "train.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fd_grad(f, p, h=1e-6):
    """Central differences of the scalar function ``f`` at the float64 array ``p`` (any shape), step ``h``
    on each element (default 1e-6: truncation error about h^2 |f'''|, round-off about 1e-16 |f| / h)."""
    g = np.zeros_like(p)
    for k in range(p.size):
        e = np.zeros_like(p)
        e.flat[k] = h
        g.flat[k] = (f(p + e) - f(p - e)) / (2 * h)
    return g


def rel_err(g, ref):
    """``|g - ref| / |ref|`` in the 2-norm (``|ref|`` floored at 1e-30)."""
    return float(np.linalg.norm(g - ref) / max(np.linalg.norm(ref), 1e-30))
