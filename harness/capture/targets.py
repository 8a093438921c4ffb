"""What ``defects4warp diagnose PATH`` points at: a ``problem.py`` folder or a script.

Imports neither Warp nor the engines (the parent process resolves the target;
the capture runs in the worker).
"""

from __future__ import annotations

import ast
from pathlib import Path

from .spec import ScriptSpec, is_param_name


class TargetError(ValueError):
    """PATH is neither a problem.py folder nor a script (the message lists what was found)."""


def is_main_script(path) -> bool:
    """Whether the Python file has a top-level ``if __name__ == "__main__":`` block."""
    try:
        tree = ast.parse(Path(path).read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [node.test.left] + list(node.test.comparators)
            if any(isinstance(n, ast.Name) and n.id == "__name__" for n in names) and any(
                    isinstance(n, ast.Constant) and n.value == "__main__" for n in names):
                return True
    return False


def _case_script(folder: Path):
    """The ``script:`` block of ``folder/case.yaml`` (dict) or None."""
    f = folder / "case.yaml"
    if not f.is_file():
        return None
    import yaml

    try:
        doc = yaml.safe_load(f.read_text()) or {}
    except yaml.YAMLError as exc:
        raise TargetError(f"{f}: not valid YAML: {exc}") from None
    block = doc.get("script") if isinstance(doc, dict) else None
    if block is None:
        return None
    if not isinstance(block, dict) or not block.get("entry"):
        raise TargetError(f"{f}: script: needs an entry (the file run as __main__)")
    return block


def _check_param_file(want: str, folder: Path) -> None:
    """Raise :class:`TargetError` when the file of the ``--param`` site ``want`` is not one of
    the program's files (before the script runs, so a missing file is told apart from a
    site where no array was allocated). As :func:`defects4warp.capture.spec.site_matches`,
    the file is a path relative to ``folder``, an absolute path, or a base name."""
    from ..paths import program_files
    from .spec import parse_site

    if is_param_name(want):
        return  # a variable name: matched against the iteration's arrays after the discovery run
    f = parse_site(want)[0]
    path = Path(f)
    if (path.is_absolute() and path.is_file()) or (folder / f).is_file():
        return
    if "/" not in f and any(p.name == f for p in program_files(folder)):
        return
    raise TargetError(f"--param {want}: there is no file {f} in {folder} (FILE is relative to the script's "
                      f"folder; its Python files: {', '.join(p.relative_to(folder).as_posix() for p in program_files(folder)[:12]) or 'none'})")


def module_file(folder, name: str):
    """The file ``python -m NAME`` runs from ``folder`` (``pkg/train.py`` or ``pkg/train/__main__.py``), or None."""
    base = Path(folder).joinpath(*str(name).split("."))
    for f in (base.with_suffix(".py"), base / "__main__.py"):
        if f.is_file():
            return f
    return None


def resolve_module(name: str, args=(), iteration: int | None = None, params=None, folder=".") -> tuple:
    """``(folder, ScriptSpec, assumptions)`` for ``defects4warp diagnose -m pkg.train [-- ARGS]``: the module
    is run as ``python -m pkg.train`` would run it from ``folder`` (the current directory by default).

    Raises
    ------
    TargetError
        When ``folder`` holds no such module (names what was looked for).
    """
    folder = Path(folder).resolve()
    if not name or any(not part.isidentifier() for part in str(name).split(".")):
        raise TargetError(f"-m {name!r}: not a dotted module name (e.g. -m pkg.train)")
    f = module_file(folder, name)
    if f is None:
        rel = "/".join(str(name).split("."))
        raise TargetError(f"-m {name}: there is no {rel}.py or {rel}/__main__.py under {folder}; run defects4warp "
                          f"from the folder that holds the package (as you would run python -m {name})")
    spec = ScriptSpec(entry=str(name), args=list(args or []), iteration=iteration or 1,
                      params=list(params) if params else None, module=True)
    for want in spec.params or ():
        _check_param_file(want, folder)
    assumed = [f"module {name} run as `python -m {name}` from {folder} ({f.relative_to(folder).as_posix()})"]
    if not args:
        assumed.append("the script runs with no arguments (give them after --)")
    return folder, spec, assumed


def resolve_target(path, args=(), iteration: int | None = None, params=None) -> tuple:
    """``(folder, ScriptSpec or None, assumptions)`` for ``defects4warp diagnose PATH [-- ARGS]``.

    Parameters
    ----------
    path : path-like
        A ``.py`` file (run as ``__main__``), or a folder holding ``problem.py``
        (an adapter: the spec is None unless script options are given), a
        ``case.yaml`` with a ``script:`` block, or exactly one ``.py`` file with
        ``if __name__ == "__main__":``.
    args : sequence of str
        Arguments for the script (after ``--``); they replace case.yaml's.
    iteration : int, optional
        ``--iteration``; overrides case.yaml's.
    params : list of str, optional
        ``--param`` sites; override case.yaml's.

    Returns
    -------
    tuple
        ``(folder: Path, spec: ScriptSpec | None, assumptions: list[str])``.

    Raises
    ------
    TargetError
        When no entry point can be told (names the candidates found).
    """
    p = Path(path).resolve()
    assumed = []
    block = {}
    if p.is_file():
        if p.suffix != ".py":
            raise TargetError(f"{p}: not a Python file; give a training script (.py) or a folder")
        folder, entry = p.parent, p.name
        if not is_main_script(p):
            assumed.append(f"{entry} has no `if __name__ == \"__main__\":` block; it is run as __main__ all the same")
    elif p.is_dir():
        folder = p
        block, entry = _folder_entry(folder, args, iteration, params, assumed)
        if entry is None:
            return folder, None, ["problem.py found: its make_problem adapter is used"]
    else:
        raise TargetError(f"{p}: no such file or folder")
    spec = ScriptSpec(entry=entry,
                      args=list(args) if args else list(block.get("args") or []),
                      iteration=iteration or int(block.get("iteration") or 1),
                      params=list(params) if params else (list(block.get("params") or []) or None))
    for want in spec.params or ():
        _check_param_file(want, folder)
    if not args and not block.get("args"):
        assumed.append("the script runs with no arguments (give them after --)")
    if (iteration or block.get("iteration") or 1) == 1:
        assumed.append("the problem is the script's first optimisation iteration, checked against later ones of "
                       "its own loop (--iteration K for another)")
    return folder, spec, assumed


def _folder_entry(folder, args, iteration, params, assumed) -> tuple:
    """``(script: block or {}, entry file name)`` of a folder target; the entry is None for an adapter's problem.py."""
    block = _case_script(folder) or {}
    if block and not (folder / str(block["entry"])).is_file():
        holders = sorted(d.name for d in folder.iterdir() if (d / str(block["entry"])).is_file())
        raise TargetError(f"{folder} is a case folder: its variants ({', '.join(h + '/' for h in holders) or 'none'}) "
                          f"hold {block['entry']}; diagnose one of them, e.g. defects4warp diagnose "
                          f"{folder / (holders[0] if holders else 'VARIANT')}")
    if not block and not (folder / "case.yaml").is_file():
        # a variant folder of a case: the case's script: block says how to run it
        up = _case_script(folder.parent) or {}
        if up and (folder / str(up["entry"])).is_file():
            block = up
    if block:
        entry = str(block["entry"])
        assumed.append(f"entry point {entry} from case.yaml's script: block"
                       + (f" (arguments {' '.join(block.get('args') or [])})" if block.get("args") else ""))
    elif (folder / "problem.py").is_file():
        if args or iteration or params:
            raise TargetError(f"{folder} holds problem.py (an adapter): script options (--param, --iteration, "
                              f"arguments after --) apply to a training script; name the script file instead")
        return block, None
    else:
        mains = sorted(f.name for f in folder.glob("*.py") if is_main_script(f))
        if len(mains) != 1:
            raise TargetError(f"{folder}: no problem.py and " + (
                f"{len(mains)} files with `if __name__ == \"__main__\":` ({', '.join(mains)}); name the entry "
                f"point: defects4warp diagnose {folder}/FILE.py" if mains else
                "no .py file with `if __name__ == \"__main__\":`; name the training script: "
                f"defects4warp diagnose {folder}/FILE.py"))
        entry = mains[0]
        assumed.append(f"entry point {entry}: the only file in {folder.name}/ with `if __name__ == \"__main__\":`")
    return block, entry
