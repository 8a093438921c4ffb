"""Loading and checking cases (``corpus/<id>/case.yaml`` plus variant folders).

The format is documented in docs/case-format.md and formalised in
``harness/schemas/case.schema.json``. Loading validates the YAML against the
schema and then checks what a schema cannot: the id equals the folder name,
every variant entry has a folder with ``problem.py`` (or, for a case with a
``script:`` block, the script's entry file) and vice versa, the script block
fits the files and the ``tags.form``, Warp specifiers parse, and the classes
fit the verdict.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..jsonio import load_yaml
from ..taxonomy import CLASSES

SCALES = ("small", "production")

#: Values of ``tags.form``: ``adapter`` (every variant is a ``problem.py``),
#: ``script`` (the variants are the user's files, run through the ``script:``
#: block, no ``problem.py``), ``both`` (converted: each variant holds the
#: script and an adapter).
FORMS = ("adapter", "script", "both")

#: Which programs a run uses (``--programs``): ``auto`` each variant once, by
#: its adapter where it has one and by its script otherwise; ``adapters`` only
#: variants with a ``problem.py``; ``scripts`` only variants with a script,
#: run as scripts (a run scored on script variants alone); ``all`` every
#: program, so a converted variant runs twice.
PROGRAMS = ("auto", "adapters", "scripts", "all")

#: Largest ``case.yaml`` the loader reads, bytes (the biggest bundled one is
#: under 8 KiB; 1 MiB stops a runaway or hostile file before YAML parses it).
#: Provenance tiers, scored apart by ``run`` (``--tier``; the summary's ``tiers``): ``original`` (written for
#: this corpus, ``provenance: original``), ``mined`` (taken from a real project's fix history, with a
#: ``mined:`` record; docs/mined.md) and ``report`` (restating a public bug report: the provenance is its URL).
TIERS = ("original", "mined", "report")


def provenance_tier(provenance: str) -> str:
    """The tier (:data:`TIERS`) of a case's ``provenance`` value: ``original``, ``mined``, else ``report``
    (the schema admits only those two words or an http(s) URL)."""
    return provenance if provenance in ("original", "mined") else "report"


MAX_CASE_YAML_BYTES = 1 << 20

#: Largest single file of a variant folder, bytes (variants are small
#: programs; every file is copied for each run and hashed for the result store).
MAX_VARIANT_FILE_BYTES = 16 << 20


class CaseFormatError(ValueError):
    """A case folder or its ``case.yaml`` violates the case format.

    Attributes
    ----------
    path : pathlib.Path
        The offending file or folder (of the first problem, when there are several).
    field : str
        Dotted path of the offending field (``""`` for the file as a whole; the first
        problem's, when there are several).
    problems : list[CaseFormatError]
        Every problem found in the case, each naming its own file and field
        (``[self]`` for a single one); see :meth:`collect`.
    """

    def __init__(self, path: Path, field: str, message: str):
        self.path = Path(path)
        self.field = field
        self.problems = [self]
        self.message = message
        where = f"{self.path}" + (f": field '{field}'" if field else "")
        super().__init__(f"{where}: {message}")

    @classmethod
    def collect(cls, problems: list) -> "CaseFormatError":
        """One error standing for several: its text lists each problem on its own
        line (file and field), its ``path``/``field`` are the first one's.

        Parameters
        ----------
        problems : list[CaseFormatError]
            At least one; a single one is returned as it is.
        """
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        err = cls.__new__(cls)
        err.path, err.field, err.problems = first.path, first.field, list(problems)
        err.message = f"{len(problems)} problems"

        def line(e):
            if e.path != first.path:
                return str(e)
            return (f"field '{e.field}': " if e.field else "") + e.message

        ValueError.__init__(err, f"{len(problems)} problems in {first.path}:\n"
                            + "\n".join(f"  - {line(e)}" for e in problems))
        return err


@dataclass(frozen=True)
class Expectation:
    """What a variant is on the releases and scales it applies to.

    Attributes
    ----------
    verdict : str
        ``bug``, ``no_bug`` or ``refused`` (this release refuses to build or run the program).
    classes : tuple[str, ...]
        Class ids; any of them is a correct top-1 diagnosis.
    warp : SpecifierSet
        Releases this entry applies to (empty = every release).
    scale : str or None
        ``small``, ``production`` or None for both.
    objectives_differ : str or None
        Why this variant's ``objective()`` differs from its fixed twin's at
        the same point (the oracle's pair check then does not require equal
        objectives); None: they must agree.
    """

    verdict: str
    classes: tuple
    warp: SpecifierSet = field(default_factory=SpecifierSet)
    scale: str | None = None
    objectives_differ: str | None = None

    def applies(self, warp_version: str, scale: str) -> bool:
        """True when this entry covers ``warp_version`` at ``scale``."""
        in_release = self.warp.contains(Version(warp_version), prereleases=True) if str(self.warp) else True
        return in_release and (self.scale is None or self.scale == scale)

    def to_dict(self) -> dict:
        d = {"verdict": self.verdict, "classes": list(self.classes)}
        if str(self.warp):
            d["warp"] = str(self.warp)
        if self.scale:
            d["scale"] = self.scale
        if self.objectives_differ:
            d["objectives_differ"] = self.objectives_differ
        return d


@dataclass(frozen=True)
class ScriptBlock:
    """The ``script:`` block of a ``case.yaml``: how a script variant runs.

    Attributes
    ----------
    entry : str
        File run as ``__main__``, relative to the variant folder.
    args : tuple[str, ...]
        Command-line arguments given to it.
    iteration : int
        The k-th ``Tape.backward()`` defines the Problem (>= 1).
    params : tuple[str, ...] or None
        Override of the captured parameters (allocation sites
        ``file.py:LINE[:OCCURRENCE]``); None lets the capture choose.
    reference : pathlib.Path or None
        For the oracle only (never in :meth:`to_json` or :meth:`spec`, so no
        engine sees it): the case folder's file defining
        ``reference_gradient(params) -> {name: ndarray}``, the exact gradient the
        update should consume (a deliberate surrogate's analytic gradient).
    """

    entry: str
    args: tuple = ()
    iteration: int = 1
    params: tuple | None = None
    reference: Path | None = None

    def to_json(self) -> dict:
        """The block as a JSON-able dict (the fields of ``defects4warp.capture.ScriptSpec``; the oracle's
        ``reference`` is left out)."""
        return {"entry": self.entry, "args": list(self.args), "iteration": self.iteration,
                "params": None if self.params is None else list(self.params)}

    def spec(self):
        """This block as a ``defects4warp.capture.ScriptSpec`` (what an engine is given)."""
        from ..capture import ScriptSpec

        return ScriptSpec(entry=self.entry, args=list(self.args), iteration=self.iteration,
                          params=None if self.params is None else list(self.params))

    def command_line(self) -> str:
        """How a user runs it: ``python ENTRY ARGS...`` (shell-quoted)."""
        import shlex

        return " ".join(shlex.quote(x) for x in ["python", self.entry, *self.args])


@dataclass(frozen=True)
class Variant:
    """One program of a case: a folder holding ``problem.py`` (an adapter),
    the case's script entry file, or both.

    Attributes
    ----------
    script : ScriptBlock or None
        The case's ``script:`` block when this folder holds its entry file.
    adapter : bool
        True when the folder holds ``problem.py``.
    min_warp : str or None
        The oldest release the program builds on (it uses an API newer than
        the releases before it): below it the variant is *unsupported*,
        neither scored nor a failure (None: every release).
    """

    name: str
    path: Path
    expectations: tuple
    script: ScriptBlock | None = None
    adapter: bool = True

    @property
    def form(self) -> str:
        """``adapter``, ``script`` or ``both`` (what this folder holds)."""
        if self.script is None:
            return "adapter"
        return "both" if self.adapter else "script"

    def programs(self, which: str = "auto") -> list:
        """The programs of this variant a run with ``--programs which`` uses:
        a list of ``"adapter"`` / ``"script"`` (see :data:`PROGRAMS`)."""
        if which not in PROGRAMS:
            raise ValueError(f"programs must be one of {PROGRAMS}, not {which!r}")
        have = (["adapter"] if self.adapter else []) + (["script"] if self.script is not None else [])
        if which == "auto":
            return have[:1]
        if which == "adapters":
            return [p for p in have if p == "adapter"]
        if which == "scripts":
            return [p for p in have if p == "script"]
        return have
    min_warp: str | None = None

    def supports(self, warp_version: str) -> bool:
        """False when ``warp_version`` is older than :attr:`min_warp`."""
        return self.min_warp is None or Version(warp_version) >= Version(self.min_warp)

    def expectation_for(self, warp_version: str, scale: str) -> Expectation | None:
        """The first expectation that applies, or None (the variant is
        unscored there, or unsupported: see :meth:`supports`)."""
        if not self.supports(warp_version):
            return None
        for e in self.expectations:
            if e.applies(warp_version, scale):
                return e
        return None


@dataclass(frozen=True)
class Case:
    """A loaded, checked case."""

    id: str
    path: Path
    title: str
    summary: str
    explanation: str
    provenance: str
    domain: str
    features: tuple
    split: str
    variants: tuple
    requires: tuple = ()
    objectives_differ: str | None = None
    form: str = "adapter"
    script: ScriptBlock | None = None
    #: ``tags.builtins``: Warp builtins whose own adjoint defect the buggy program hits (names as in
    #: the builtins conformance data); read by the builtin -> case table of docs/builtins.md.
    builtins: tuple = ()
    #: ``mined:``: the provenance record of a mined case (repository, commits, files taken,
    #: releases, triggering check; schema ``mined`` in case.schema.json), else None.
    mined: dict | None = field(default=None, hash=False, compare=False)

    @property
    def tier(self) -> str:
        """The provenance tier (:func:`provenance_tier`): ``original``, ``mined`` or ``report``."""
        return provenance_tier(self.provenance)

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(f"case {self.id} has no variant {name!r}")

    @property
    def classes(self) -> list:
        """Every class id named by any expectation, in first-seen order."""
        seen = []
        for v in self.variants:
            for e in v.expectations:
                for c in e.classes:
                    if c not in seen:
                        seen.append(c)
        return seen


@lru_cache(maxsize=1)
def case_schema() -> dict:
    """The JSON Schema of ``case.yaml`` (``harness/schemas/case.schema.json``), with an
    expectation's ``classes`` limited to the taxonomy's classes
    (:data:`defects4warp.taxonomy.CLASSES`, sorted): the file leaves the enum open so that the
    classes are written once, in ``harness/taxonomy.py``."""
    text = resources.files(__name__.split(".")[0]).joinpath("schemas/case.schema.json").read_text()
    schema = json.loads(text)
    schema["$defs"]["expectation"]["properties"]["classes"]["items"]["enum"] = sorted(CLASSES)
    return schema


def _field_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path)


def load_case(case_dir: str | Path) -> Case:
    """Load and check ``case_dir/case.yaml`` and its variant folders.

    Raises
    ------
    CaseFormatError
        Naming the file and the field, on any violation of the format.
    """
    case_dir = Path(case_dir)
    yml, data = _read_case_yaml(case_dir)

    # every problem is collected and shown, each with its field: the schema's first,
    # then (when the schema holds, so the fields have their types) the checks across fields
    validator = jsonschema.Draft202012Validator(case_schema())
    schema = [CaseFormatError(yml, _field_path(e), e.message) for e in
              sorted(validator.iter_errors(data), key=lambda e: ([str(p) for p in e.absolute_path], e.message))]
    problems = []
    if isinstance(data.get("id"), str) and data["id"] != case_dir.name:
        problems.append(CaseFormatError(yml, "id", f"'{data['id']}' differs from the folder name '{case_dir.name}'"))
    if schema:
        raise CaseFormatError.collect(schema + problems)

    def check(fn, *args):
        try:
            return fn(*args)
        except CaseFormatError as exc:
            problems.append(exc)
            return None

    script = _script_of(yml, data.get("script"), problems)
    entry = script.entry if script else None

    def holds(p: Path) -> list:
        return [f for f in ("problem.py", entry) if f and (p / f).is_file()]

    on_disk = sorted(p.name for p in case_dir.iterdir() if p.is_dir() and holds(p))
    declared = sorted(data["variants"])
    what = "a problem.py" + (f" or the script entry {entry}" if entry else "")
    for name in declared:
        if name not in on_disk:
            problems.append(CaseFormatError(yml, f"variants.{name}", f"no folder {name}/ with {what} next to case.yaml"))
    for name in on_disk:
        if name not in declared:
            has = holds(case_dir / name)
            what_ = " and ".join(("a problem.py" if f == "problem.py" else f"the script entry {f}") for f in has)
            problems.append(CaseFormatError(yml, "variants", f"folder {name}/ holds {what_} but has no entry under variants"))
    for name in declared:
        if name in on_disk:
            check(_check_variant_files, case_dir / name, case_dir, f"variants.{name}")
    form = check(_check_form, yml, data, script, {n: holds(case_dir / n) for n in declared if n in on_disk}) \
        if script is not None or data.get("script") is None else None

    min_warp = check(_min_warp, data.get("min_warp"), declared, yml) or {}
    variants = []
    for name in declared:
        has = holds(case_dir / name)
        variants.append(_variant(yml, case_dir, name, data["variants"][name], script if entry in has else None, has,
                                 min_warp.get(name), problems))

    if problems:
        raise CaseFormatError.collect(problems)
    tags = data["tags"]
    return Case(
        id=data["id"],
        path=case_dir,
        title=data["title"].strip(),
        summary=data["summary"].strip(),
        explanation=data["explanation"].strip(),
        provenance=data["provenance"],
        domain=tags["domain"],
        features=tuple(tags.get("features", ())),
        split=data.get("split", "dev"),
        variants=tuple(variants),
        requires=tuple(data.get("requires", ())),
        objectives_differ=data.get("objectives_differ"),
        form=form,
        script=script,
        builtins=tuple(tags.get("builtins", ())),
        mined=data.get("mined"),
    )


def _read_case_yaml(case_dir: Path) -> tuple:
    """``(path, mapping)`` of ``case_dir/case.yaml``, read as YAML within the size limit.

    Raises
    ------
    CaseFormatError
        When the file is missing, outside the case folder, too large, not UTF-8, not YAML or not a mapping.
    """
    yml = case_dir / "case.yaml"
    if not yml.is_file():
        raise CaseFormatError(case_dir, "", "no case.yaml in this folder")
    _check_inside(yml, case_dir, "")
    try:
        size = yml.stat().st_size
        if size > MAX_CASE_YAML_BYTES:
            raise CaseFormatError(yml, "", f"{size} bytes, over the limit of {MAX_CASE_YAML_BYTES} bytes")
        data = load_yaml(yml.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise CaseFormatError(yml, "", f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise CaseFormatError(yml, "", f"not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    except (OSError, RecursionError, ValueError) as exc:
        if isinstance(exc, CaseFormatError):
            raise
        raise CaseFormatError(yml, "", f"cannot be read as YAML: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise CaseFormatError(yml, "", "top level must be a mapping")
    return yml, data


def _variant(yml: Path, case_dir: Path, name: str, rows: list, script, has: list, min_warp, problems: list) -> Variant:
    """Variant ``name`` of the case with its expectations (``rows``: its entries under ``variants``), the
    script block when its folder holds the script entry (``has``: the program files its folder holds), and
    its ``min_warp``; a specifier or class that does not fit is added to ``problems``."""
    exps = []
    for i, raw in enumerate(rows):
        where = f"variants.{name}.{i}"
        try:
            spec = SpecifierSet(raw.get("warp", ""))
        except InvalidSpecifier:
            problems.append(CaseFormatError(yml, f"{where}.warp", f"'{raw['warp']}' is not a PEP 440 specifier"))
            spec = SpecifierSet()
        for c in raw["classes"]:
            if (raw["verdict"] in ("bug", "refused")) != CLASSES[c].is_bug:
                problems.append(CaseFormatError(
                    yml, f"{where}.classes", f"class '{c}' does not fit verdict '{raw['verdict']}'"
                ))
        exps.append(Expectation(raw["verdict"], tuple(raw["classes"]), spec, raw.get("scale"),
                                raw.get("objectives_differ")))
    return Variant(name, case_dir / name, tuple(exps), script, "problem.py" in has, min_warp)


def check_script_block(case_dir: str | Path, variant: str | None = None) -> ScriptBlock | None:
    """Check only the ``script:`` block of ``case_dir/case.yaml`` (its schema, a path inside the variant folder
    and, with ``variant``, that ``variant/<entry>`` exists): what ``diagnose CASE/VARIANT`` (or a folder with a
    ``case.yaml`` holding only a ``script:`` block) runs, without requiring the rest of a corpus case (a variant
    folder holding an adapter, ``problem.py``, needs no entry).

    Returns
    -------
    ScriptBlock or None
        None when the file has no ``script:`` block.

    Raises
    ------
    CaseFormatError
        Naming the file and the field (``script.args``, ``script.entry``, ...).
    """
    case_dir = Path(case_dir)
    yml, data = _read_case_yaml(case_dir)
    raw = data.get("script") if isinstance(data, dict) else None
    if raw is None:
        return None
    full = case_schema()
    sub = {**full["properties"]["script"], "$defs": full.get("$defs", {})}
    errors = sorted(jsonschema.Draft202012Validator(sub).iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise CaseFormatError.collect([CaseFormatError(yml, ".".join(["script", *map(str, e.absolute_path)]), e.message)
                                       for e in errors])
    block = _script_block(yml, raw)
    if variant is not None and not (case_dir / variant / block.entry).is_file() \
            and not (case_dir / variant / "problem.py").is_file():
        raise CaseFormatError(yml, "script.entry", f"'{block.entry}' is not a file of the variant folder {variant}/")
    return block


def _script_block(yml: Path, raw) -> ScriptBlock | None:
    """The checked ``script:`` block (the schema has checked the types)."""
    if raw is None:
        return None
    entry = raw["entry"]
    parts = Path(entry).parts
    if Path(entry).is_absolute() or ".." in parts:
        raise CaseFormatError(yml, "script.entry", f"'{entry}' must be a path inside the variant folder "
                              "(relative, no '..')")
    params = raw.get("params")
    if params is not None:
        for i, site in enumerate(params):
            if ".." in Path(site.rsplit(":", 2)[0]).parts or site.startswith("/"):
                raise CaseFormatError(yml, f"script.params.{i}", f"'{site}' must name a file inside the variant folder")
    return ScriptBlock(entry, tuple(raw.get("args", ())), int(raw.get("iteration", 1)),
                       None if params is None else tuple(params))


def _script_of(yml: Path, raw, problems: list) -> ScriptBlock | None:
    """The checked ``script:`` block with its ``reference`` (None without a block), each problem appended to
    ``problems``: a broken reference is one problem, and the block (so the variants holding the entry) still
    loads."""
    script = reference = None
    try:
        script = _script_block(yml, raw)
        reference = _script_reference(yml, raw)
    except CaseFormatError as exc:
        problems.append(exc)
    return dataclasses.replace(script, reference=reference) if script is not None and reference else script


def _script_reference(yml: Path, raw) -> Path | None:
    """The absolute path of ``script.reference`` (checked apart from the rest of the block, so a broken
    reference is one problem and the variants still load), or None without one."""
    reference = (raw or {}).get("reference")
    if reference is None:
        return None
    if Path(reference).name != reference or not reference.endswith(".py"):
        raise CaseFormatError(yml, "script.reference", f"'{reference}' must be the name of a .py file beside "
                              "case.yaml (no folder: the reference lives outside every variant folder)")
    ref = yml.parent / reference
    if not ref.is_file():
        raise CaseFormatError(yml, "script.reference", f"'{reference}' is not a file beside case.yaml (the "
                              "reference gradient lives in the case folder, outside every variant folder)")
    return ref.resolve()


def _check_form(yml: Path, data: dict, script: ScriptBlock | None, holds: dict) -> str:
    """Check that ``tags.form``, the ``script:`` block and what each variant
    folder holds agree; return the form (inferred from the folders when the
    tag is absent: ``both`` when every variant holds both programs, else ``script``)."""
    form = data["tags"].get("form")
    if script is None:
        if form in ("script", "both"):
            raise CaseFormatError(yml, "script", f"tags.form is '{form}' but there is no script: block "
                                  "(entry, args, iteration) saying how to run the variants")
        return "adapter"
    for name, has in holds.items():
        if script.entry not in has:
            raise CaseFormatError(yml, "script.entry", f"variant folder {name}/ has no file {script.entry}: "
                                  "every variant of a case with a script: block holds the entry file")
        for i, site in enumerate(script.params or ()):
            f = site.rsplit(":", 2)[0] if site.count(":") == 2 else site.rsplit(":", 1)[0]
            if not (yml.parent / name / f).is_file():
                raise CaseFormatError(yml, f"script.params.{i}", f"'{site}' names {f}, which variant folder "
                                      f"{name}/ does not hold")
    all_both = all("problem.py" in has for has in holds.values())
    if form is None:
        return "both" if all_both else "script"
    if form == "adapter":
        raise CaseFormatError(yml, "tags.form", "is 'adapter' but the case has a script: block (tag it "
                              "'script', or 'both' when every variant also holds a problem.py)")
    if form == "both" and not all_both:
        missing = sorted(n for n, has in holds.items() if "problem.py" not in has)
        raise CaseFormatError(yml, "tags.form", f"is 'both' but variant folder(s) {', '.join(m + '/' for m in missing)} "
                              "hold no problem.py (tag it 'script', or add the adapter)")
    if form == "script":
        extra = sorted(n for n, has in holds.items() if "problem.py" in has)
        if extra:
            raise CaseFormatError(yml, "tags.form", f"is 'script' but variant folder(s) "
                                  f"{', '.join(m + '/' for m in extra)} hold a problem.py (tag it 'both')")
    return form


def _min_warp(raw, declared: list, yml: Path) -> dict:
    """``{variant: release}`` from the case-level ``min_warp`` field: one
    release for every variant, or a mapping from variant name to release.

    Raises
    ------
    CaseFormatError
        On a name that is not a declared variant or a value that is not an exact release.
    """
    if raw is None:
        return {}
    pairs = {n: raw for n in declared} if isinstance(raw, str) else dict(raw)
    out = {}
    for name, rel in pairs.items():
        where = "min_warp" if isinstance(raw, str) else f"min_warp.{name}"
        if name not in declared:
            raise CaseFormatError(yml, where, f"'{name}' is not a variant of this case (variants: {', '.join(declared)})")
        try:
            Version(str(rel))
        except InvalidVersion:
            raise CaseFormatError(yml, where, f"'{rel}' is not a release number (e.g. 1.10.0)") from None
        out[name] = str(rel)
    return out


def _check_inside(path: Path, root: Path, field_: str) -> None:
    """Raise :class:`CaseFormatError` when ``path`` resolves (through symlinks)
    outside ``root``: a case may not pull files from elsewhere on the machine."""
    try:
        real, base = path.resolve(strict=True), root.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise CaseFormatError(path, field_, f"cannot be resolved ({type(exc).__name__}: {exc})") from None
    if real != base and base not in real.parents:
        raise CaseFormatError(path, field_, f"is a symbolic link to {real}, outside the case folder {base}")


def _check_variant_files(folder: Path, case_dir: Path, field_: str) -> None:
    """Every entry of a variant folder stays inside the case folder, is a
    regular file or folder, and no file is over :data:`MAX_VARIANT_FILE_BYTES`."""
    _check_inside(folder, case_dir, field_)
    for p in sorted(folder.rglob("*")):
        if "__pycache__" in p.parts:
            continue
        if p.is_symlink():
            _check_inside(p, case_dir, field_)
        try:
            st = p.stat()
        except OSError as exc:
            raise CaseFormatError(p, field_, f"cannot be read ({exc.strerror or exc})") from None
        if p.is_file() and st.st_size > MAX_VARIANT_FILE_BYTES:
            raise CaseFormatError(p, field_, f"{st.st_size} bytes, over the limit of {MAX_VARIANT_FILE_BYTES} "
                                  "bytes for one file of a variant")
        if not (p.is_file() or p.is_dir()):
            raise CaseFormatError(p, field_, "is neither a regular file nor a folder")


def _is_script_folder(folder: Path) -> bool:
    """True when ``folder`` holds a Python file with ``if __name__ == "__main__"``."""
    for f in folder.glob("*.py"):
        try:
            if "__main__" in f.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def default_corpus() -> Path:
    """The bundled corpus: ``defects4warp/_corpus`` in an installed package,
    ``corpus/`` at the repository root in a checkout (:func:`defects4warp.paths.bundled`).

    Raises
    ------
    FileNotFoundError
        When neither exists (a broken install); the message says where it looked.
    """
    from ..paths import bundled

    root = bundled("corpus")
    if not root.is_dir():
        raise FileNotFoundError(f"bundled corpus not found at {root}; reinstall defects4warp or pass --corpus DIR")
    return root


def discover(corpus: str | Path, pattern: str = "*") -> list:
    """Case folders under ``corpus`` whose name matches the glob ``pattern``.

    Returns sorted paths; folders without ``case.yaml`` are ignored. Several
    patterns may be given separated by commas.
    """
    corpus = Path(corpus)
    if not corpus.is_dir():
        raise FileNotFoundError(f"corpus folder {corpus} does not exist")
    pats = [p.strip() for p in pattern.split(",") if p.strip()] or ["*"]
    return sorted(
        p for p in corpus.iterdir() if p.is_dir() and (p / "case.yaml").is_file() and any(fnmatch.fnmatch(p.name, q) for q in pats)
    )


def load_corpus(corpus: str | Path, pattern: str = "*") -> tuple:
    """Load every matching case.

    Returns
    -------
    (cases, errors) : tuple[list[Case], list[CaseFormatError]]
        Broken cases are returned as errors rather than raised, so one bad
        case.yaml does not stop a run.
    """
    cases, errors = [], []
    for d in discover(corpus, pattern):
        try:
            _check_inside(d, Path(corpus), "")
            cases.append(load_case(d))
        except CaseFormatError as exc:
            errors.append(exc)
    pats = [p.strip() for p in pattern.split(",") if p.strip()] or ["*"]
    for d in sorted(Path(corpus).iterdir()):
        if (d.is_dir() and not (d / "case.yaml").is_file() and any(fnmatch.fnmatch(d.name, q) for q in pats)
                and any((v / "problem.py").is_file() or _is_script_folder(v) for v in d.iterdir() if v.is_dir())):
            errors.append(CaseFormatError(d, "", "holds variant folders but no case.yaml"))
    return cases, errors
