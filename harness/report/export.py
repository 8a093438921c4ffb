"""Export the corpus as tasks for evaluating an LLM agent's debugging skill.

Skill evaluations in this field are a JSON list of tasks: a prompt in the
user's words, the files it names, the expected output, and assertions a
grader checks. :func:`export_skill_evals` writes, for every buggy, no_bug or
refused variant (its expectation on one Warp release):

``DIR/evals.json``
    ``{"format": "defects4warp-skill-evals", "version": 1, "warp": release,
    "evals": [...]}``; each eval: ``id`` (neutral: the case id and a short
    digest of the variant name, never the variant name itself), ``prompt``
    (true of every variant of the case, and the same for all of them: the
    user's goal, the first sentence of the case summary; a neutral
    observation, :data:`OBSERVATION`; the files to read; the question, never
    the buggy variant's symptom), ``files`` (paths
    relative to DIR), ``expected_output`` (the verdict, the class and the
    case's explanation), ``assertions`` (strings a grader checks, generated
    from the labels: the verdict, the class, the standard fix, the release
    caveat when the label depends on the release; for no_bug variants "does
    not claim a gradient bug" and, for a not-a-bug class other than
    ``correct``, what makes the gradient misleading), ``expected`` (machine-readable: verdict,
    classes), ``case`` and ``split``.
``DIR/files/<eval id>/...``
    the variant's sources exactly as in the corpus (``problem.py`` and its
    sibling modules; ``__pycache__`` left out).

A variant exported as its script (``programs="scripts"``, or ``auto`` for a
variant with no ``problem.py``) ships only the user's files (no
``problem.py``, never ``case.yaml``); its prompt names the command that runs
it (``python train.py --iters 3``, from the ``script:`` block) and its eval
has ``run: {"entry", "args", "command"}`` and ``program: "script"``.

Nothing inside ``files/`` carries a label: the folder names are neutral and
the sources are the blinded variant sources (:func:`defects4warp.blind.hint_findings`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..jsonio import normal_mode
from ..taxonomy import CLASSES, class_guide

FORMAT = "defects4warp-skill-evals"

#: What the user observes, stated so that it is true of every variant (buggy, fixed, not a bug, refused).
OBSERVATION = ("Before we trust what the optimisation gives us, we want to know whether the gradient that Warp "
               "computes for this objective is right.")

QUESTION = ("Is the gradient that Warp computes for this program correct? If it is wrong, say which class of "
            "gradient bug it is (the root cause), show the evidence you measured, and give the minimal fix; if it "
            "is correct, say so, and say whether anything else about the objective would mislead a gradient-based "
            "optimiser.")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")


def summary_sentences(summary: str) -> list:
    """The sentences of a case summary (whitespace collapsed)."""
    return [s for s in _SENTENCE_END.split(" ".join(summary.split())) if s]


def goal_sentence(summary: str) -> str:
    """The user's goal: the first sentence of the case summary, which states
    what the program is for. The later sentences tell the buggy variant's
    symptom and are not true of its fixed or not-a-bug siblings, so no
    exported prompt carries them."""
    return summary_sentences(summary)[0]


def task_prompt(case, eid: str, listing: str, warp_version: str, script=None) -> str:
    """The prompt of one exported task: the user's goal, the neutral
    observation, where the files are (and, for a script, the command that
    runs it), and the question. It depends on the case and the program only,
    never on the variant, so it is true of every variant and does not tell
    the buggy one from the others."""
    where = f"The program is in files/{eid}/ ({listing})"
    if script is None:
        how = (f"{where}; `problem.py` wraps our gradient step as make_problem(device, scale). "
               f"We run warp-lang {warp_version} on the CPU.")
    else:
        later = ("" if script.iteration == 1 else f" The gradient in question is the one of its iteration "
                 f"{script.iteration} (its {script.iteration}-th Tape.backward()).")
        how = (f"{where}; we run it from that folder as `{script.command_line()}`, with warp-lang "
               f"{warp_version} on the CPU.{later}")
    return f"{goal_sentence(case.summary)} {OBSERVATION}\n\n{how}\n\n{QUESTION}"


def eval_id(case_id: str, variant: str, program: str = "adapter") -> str:
    """``<case id>-<6 hex>``: stable, unique per variant and program, and free of the variant's name."""
    key = f"{case_id}/{variant}" + ("" if program == "adapter" else f"#{program}")
    return f"{case_id}-{hashlib.sha1(key.encode()).hexdigest()[:6]}"


_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _simplify(clauses: list) -> str | None:
    """``[(op, version)]`` of ``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=`` as one specifier
    text: the tightest lower and upper bound, then the ``!=`` exclusions that lie inside
    them (``""`` for no bound); ``==v`` when an ``==`` clause pins the release; None when
    the clauses exclude every release."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    exact = sorted({v for op, v in clauses if op == "=="}, key=Version)
    rest = [(op, v) for op, v in clauses if op not in ("==", "!=")]
    excluded = sorted({v for op, v in clauses if op == "!="}, key=Version)
    if exact:
        v = exact[0]
        ok = len(exact) == 1 and v not in excluded and Version(v) in SpecifierSet(",".join(f"{o}{w}" for o, w in rest))
        return f"=={v}" if ok else None
    bounds = _bounds(rest)
    if bounds is None:
        return None
    inside = [v for v in excluded if not bounds or Version(v) in SpecifierSet(bounds)]
    return ",".join([b for b in (bounds,) if b] + [f"!={v}" for v in inside])


def _bounds(clauses: list) -> str | None:
    """``[(op, version)]`` of ``<``, ``<=``, ``>``, ``>=`` as the tightest lower and upper
    bound (``""`` for none); None when they exclude every release."""
    from packaging.version import Version

    lo = hi = None
    for op, v in clauses:
        key = Version(v)
        if op in (">", ">="):
            if lo is None or key > Version(lo[1]) or (key == Version(lo[1]) and op == ">"):
                lo = (op, v)
        elif hi is None or key < Version(hi[1]) or (key == Version(hi[1]) and op == "<"):
            hi = (op, v)
    if lo and hi and (Version(lo[1]) > Version(hi[1]) or (lo[1] == hi[1] and (lo[0], hi[0]) != (">=", "<="))):
        return None
    return ",".join(f"{b[0]}{b[1]}" for b in (lo, hi) if b)


def effective_releases(exps, i: int) -> tuple:
    """The releases and scales where expectation ``exps[i]`` of a variant is the one that
    applies (the first matching row wins, :meth:`defects4warp.corpus.case.Variant.expectation_for`).

    A row without ``warp:`` after bounded rows applies only where they do not:
    ``[<1.17 bug, (any) no_bug]`` makes the second ``>=1.17``.

    Returns
    -------
    (warp, scales) : tuple[str | None, tuple[str, ...]]
        ``warp`` a specifier text (``""``: every release; None when no release
        is left); ``scales`` the scales where the row applies.
    """
    from ..corpus.case import SCALES

    e = exps[i]
    scales = [s for s in ((e.scale,) if e.scale else SCALES)
              if not any(not str(p.warp) and p.scale in (None, s) for p in exps[:i])]
    earlier = [p for p in exps[:i] if str(p.warp) and (p.scale is None or p.scale in scales)]
    own = [(c.operator, c.version) for c in e.warp]
    negated = [(_NEGATE.get(c.operator), c.version) for p in earlier for c in p.warp]
    if any(len(p.warp) != 1 for p in earlier) or any(op is None for op, _ in negated) \
            or any(op not in _NEGATE for op, _ in own):
        return str(e.warp), tuple(scales)  # a form not reduced here: the row's own text
    return _simplify(own + negated), tuple(scales)


def _caveat(case, variant) -> str | None:
    from ..corpus.case import SCALES

    exps = variant.expectations
    if len({(e.verdict, e.classes) for e in exps}) < 2:
        return None
    parts, dims = [], []
    for i, e in enumerate(exps):
        warp, scales = effective_releases(exps, i)
        if warp is None or not scales:
            continue  # shadowed by the rows above
        parts.append(f"{e.verdict} ({', '.join(e.classes)}) on " + (f"Warp {warp}" if warp else "every Warp release")
                     + (f" at scale {scales[0]}" if len(scales) < len(SCALES) else ""))
        dims += (["the Warp release"] if warp else []) + (["the scale"] if len(scales) < len(SCALES) else [])
    dims = list(dict.fromkeys(dims)) or ["the Warp release"]
    return f"Notes that the answer depends on {' and '.join(dims)}: " + "; ".join(parts)


def _assertions(exp, caveat) -> list:
    out = []
    if exp.verdict == "bug":
        out.append("Says the gradient is wrong (there is a gradient bug)")
        names = " or ".join(f"{c} ({CLASSES[c].summary})" for c in exp.classes)
        out.append(f"Names the root cause as {names}")
        out.append("Proposes the standard fix: " + class_guide(exp.classes[0]))
    elif exp.verdict == "refused":
        out.append("Says that this Warp release refuses to build or run the program as written")
        out.append("Names the construct the release refuses and the defect it guards against: "
                   + ", ".join(f"{c} ({CLASSES[c].summary})" for c in exp.classes))
    else:
        out.append("Does not claim a gradient bug: the gradient is correct for the program as written")
        other = [c for c in exp.classes if c != "correct"]
        if other:
            out.append("Says what makes the correct gradient misleading to an optimiser: "
                       + " or ".join(f"{c} ({CLASSES[c].summary})" for c in other))
    if caveat:
        out.append(caveat)
    return out


def _expected_output(case, exp) -> str:
    if exp.verdict == "bug":
        head = f"Gradient bug: {exp.classes[0]}."
    elif exp.verdict == "refused":
        head = "This Warp release refuses to build or run the program."
    else:
        head = "No gradient bug" + (f" ({', '.join(c for c in exp.classes if c != 'correct')})." if
                                    any(c != "correct" for c in exp.classes) else ".")
    return f"{head} {case.explanation}" if exp.verdict != "no_bug" or exp.classes != ("correct",) else head


def export_skill_evals(cases: list, out_dir, warp_version: str, *, scale: str = "small",
                       programs: str = "auto") -> dict:
    """Write ``evals.json`` and ``files/`` for ``cases`` under ``out_dir``.

    Parameters
    ----------
    cases : list[defects4warp.corpus.case.Case]
    out_dir : path-like
        Created if missing; replaced atomically (written beside, then renamed).
    warp_version : str
        The release whose expectations are exported.
    scale : str
        ``small`` or ``production``.
    programs : str, default "auto"
        Which program of each variant becomes a task (:data:`defects4warp.corpus.case.PROGRAMS`):
        ``auto`` the adapter where there is one, else the script; ``scripts``
        only script variants, as the user's files alone.

    Returns
    -------
    dict
        The ``evals.json`` document.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=out_dir.parent))
    normal_mode(tmp, directory=True)  # the umask's mode (0755 under 022), not mkdtemp's 0700
    evals = []
    for case in sorted(cases, key=lambda c: c.id):
        for v in case.variants:
            exp = v.expectation_for(warp_version, scale)
            if exp is None:
                continue
            for program in v.programs(programs):
                script = v.script if program == "script" else None
                eid = eval_id(case.id, v.name, program)
                dest = tmp / "files" / eid
                shutil.copytree(v.path, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
                if script is not None and (dest / "problem.py").is_file():
                    (dest / "problem.py").unlink()  # the adapter of a converted variant: not the user's file
                files = sorted(p.relative_to(tmp).as_posix() for p in dest.rglob("*") if p.is_file())
                listing = ", ".join(f.split("/", 2)[2] for f in files)
                ev = {
                    "id": eid, "case": case.id, "split": case.split,
                    "prompt": task_prompt(case, eid, listing, warp_version, script), "files": files,
                    "expected_output": _expected_output(case, exp),
                    "assertions": _assertions(exp, _caveat(case, v)),
                    "expected": {"verdict": exp.verdict, "classes": list(exp.classes), "warp": warp_version,
                                 "scale": scale},
                    "program": program,
                }
                if script is not None:
                    ev["run"] = {"entry": script.entry, "args": list(script.args), "iteration": script.iteration,
                                 "command": script.command_line()}
                evals.append(ev)
    doc = {"format": FORMAT, "version": 1, "warp": warp_version, "scale": scale, "evals": evals}
    (tmp / "evals.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if out_dir.exists():
        old = out_dir.with_name(out_dir.name + ".old-export")
        os.replace(out_dir, old)
        os.replace(tmp, out_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out_dir)
    return doc
