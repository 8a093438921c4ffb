"""Runs that survive and scale out: the result store, resume after SIGKILL,
two runs at once, the Dask executor (equal results, a lost worker), and
variants that crash, fork, fill the disk or eat memory.

The slow tests run real commands in subprocesses on a three-case corpus built
from tests/programs (:mod:`tiny_corpus`); each measurement takes a few seconds."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from tiny_corpus import TINY, make_tiny_corpus  # noqa: E402

from defects4warp.corpus.case import load_corpus  # noqa: E402
from defects4warp.engines import get_engine  # noqa: E402
from defects4warp.run.runner import plan, run, without_timing  # noqa: E402
from defects4warp.run.store import ResultStore, diagnosis_fields, make_key, tree_digest  # noqa: E402

PROGRAMS = Path(__file__).parent / "programs"


def cli(*args, env=None, **kw):
    return subprocess.Popen([sys.executable, "-m", "defects4warp", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kw)


def results_of(path):
    return without_timing(json.loads(Path(path).read_text())["results"])


class CountingEngine:
    """A fake engine outside the harness (so its key holds no code digest)."""

    name = "counting"

    def __init__(self, version="1", options=None):
        self.version = version
        self.options = options or {}
        self.calls = 0

    def diagnose(self, path, device, scale):
        self.calls += 1
        return get_engine("always-bug").diagnose(path, device, scale)


# --- the store, no Warp ------------------------------------------------------

def test_store_reuses_and_misses_on_a_changed_file_version_or_option(tmp_path):
    corpus = make_tiny_corpus(tmp_path / "c", ["tiny-cubic", "tiny-growth"])
    cases, _ = load_corpus(corpus)
    store = ResultStore(tmp_path / "store")
    e = CountingEngine()
    first = run(plan(cases), e, warp_version="1.19.0", store=store)
    assert e.calls == 2 and first["summary"]["reused"] == 0 and len(store) == 2
    again = run(plan(cases), e, warp_version="1.19.0", store=store)
    assert e.calls == 2 and again["summary"]["reused"] == 2
    assert without_timing(again["results"]) == without_timing(first["results"])
    # --fresh measures again
    run(plan(cases), e, warp_version="1.19.0", store=store, fresh=True)
    assert e.calls == 4
    # a changed source file misses for that variant only
    p = corpus / "tiny-cubic" / "main" / "problem.py"
    p.write_text(p.read_text() + "\n# edited\n")
    cases, _ = load_corpus(corpus)
    doc = run(plan(cases), e, warp_version="1.19.0", store=store)
    assert e.calls == 5 and doc["summary"]["reused"] == 1
    # another engine version, option, release, device or scale: all miss
    for other in (CountingEngine(version="2"), CountingEngine(options={"dirs": 3})):
        doc = run(plan(cases), other, warp_version="1.19.0", store=store)
        assert other.calls == 2 and doc["summary"]["reused"] == 0
    v = cases[0].variants[0].path
    keys = {make_key(diagnosis_fields(v, e, w, d, s)) for w, d, s in
            [("1.19.0", "cpu", "small"), ("1.18.0", "cpu", "small"), ("1.19.0", "cuda:0", "small"),
             ("1.19.0", "cpu", "production")]}
    assert len(keys) == 4


def test_builtin_engine_keys_hold_version_options_and_code(tmp_path):
    from defects4warp.engines.reference import ReferenceEngine
    from defects4warp.run.store import code_digest, engine_identity

    ident = engine_identity(ReferenceEngine())
    assert ident["name"] == "reference" and ident["code"] == code_digest() and len(ident["code"]) == 64
    assert ident["options"] == ReferenceEngine().options
    assert engine_identity(get_engine('cmd:"true"')) is None  # outside tools are never reused


def test_tree_digest_ignores_caches_and_sees_content(tmp_path):
    (tmp_path / "problem.py").write_text("a = 1\n")
    d0 = tree_digest(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert tree_digest(tmp_path) == d0
    (tmp_path / "problem.py").write_text("a = 2\n")
    assert tree_digest(tmp_path) != d0


def test_timeouts_and_lost_workers_are_not_stored(tmp_path):
    from defects4warp.run.store import transient

    assert transient("timeout: the variant did not finish in time")
    assert transient("worker lost: the executor worker running this item died")
    assert not transient("load failed: RuntimeError: cannot build the scene")
    assert not transient(None)


def test_history_lives_in_one_documented_place(tmp_path, monkeypatch):
    from defects4warp.run.history import results_dir

    monkeypatch.delenv("DEFECTS4WARP_RESULTS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert results_dir() == tmp_path / "xdg" / "defects4warp"
    monkeypatch.setenv("DEFECTS4WARP_RESULTS", str(tmp_path / "env"))
    assert results_dir() == tmp_path / "env"
    assert results_dir(str(tmp_path / "flag")) == tmp_path / "flag"


def test_a_run_where_no_case_loads_still_writes_its_json(tmp_path):
    from click.testing import CliRunner

    from defects4warp.cli import main

    (tmp_path / "c" / "bad").mkdir(parents=True)
    (tmp_path / "c" / "bad" / "case.yaml").write_text("id: [\n")
    out = tmp_path / "out.json"
    res = CliRunner().invoke(main, ["run", "--corpus", str(tmp_path / "c"), "--engine", "always-bug",
                                    "--json", str(out)])
    assert res.exit_code == 1
    doc = json.loads(out.read_text())
    assert doc["results"] == [] and len(doc["summary"]["case_format_errors"]) == 1


# --- real runs ---------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny corpus and one uninterrupted reference-engine run of it (the
    results every other way of running must reproduce)."""
    root = tmp_path_factory.mktemp("tiny")
    corpus = make_tiny_corpus(root / "corpus")
    env = dict(os.environ, DEFECTS4WARP_RESULTS=str(root / "results-ref"))
    p = cli("run", "--corpus", str(corpus), "--json", str(root / "ref.json"), env=env)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return {"corpus": corpus, "root": root, "ref": results_of(root / "ref.json")}


def _has_env(needle: str) -> list:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                if needle.encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    out.append(pid)
            except OSError:
                continue
    return out


@pytest.mark.slow
def test_reference_run_of_the_tiny_corpus_is_right(tiny):
    assert [(r["case"], r["diagnosis"]["verdict"], r["correct"]["class"]) for r in tiny["ref"]] == [
        ("tiny-cubic", "no_bug", True), ("tiny-factor-two", "bug", True), ("tiny-growth", "bug", True)]


@pytest.mark.slow
def test_sigkill_mid_run_then_the_same_command_finishes_only_what_was_missing(tiny, tmp_path):
    env = dict(os.environ, DEFECTS4WARP_RESULTS=str(tmp_path / "results"))
    out = tmp_path / "out.json"
    # One variant at a time: the two left after the first take >= 1 s each
    # even with a warm kernel cache (with -j 2 the last one could finish
    # before the kill, as it did once in CI).
    args = ("run", "-j", "1", "--corpus", str(tiny["corpus"]), "--json", str(out))
    p = cli(*args, env=env)
    deadline = time.time() + 120
    while time.time() < deadline:  # wait until the first variant is finished
        if out.exists() and json.loads(out.read_text())["results"]:
            break
        time.sleep(0.05)
    time.sleep(0.3)  # into the second variant's measurement
    p.send_signal(signal.SIGKILL)
    p.communicate()
    assert p.returncode == -signal.SIGKILL
    partial = json.loads(out.read_text())
    assert not partial["summary"]["complete"] and 1 <= len(partial["results"]) < len(TINY)
    time.sleep(0.5)
    assert _has_env(f"DEFECTS4WARP_RESULTS={tmp_path / 'results'}") == []  # no orphaned measurement
    p = cli(*args, env=env)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    doc = json.loads(out.read_text())
    assert doc["summary"]["complete"]
    assert 1 <= doc["summary"]["reused"] < len(TINY)
    assert f"{doc['summary']['reused']} of {len(TINY)} diagnoses reused" in err.replace("\n", " ")
    assert results_of(out) == tiny["ref"]


@pytest.mark.slow
def test_two_runs_at_once_share_store_history_and_kernel_cache(tiny, tmp_path):
    env = dict(os.environ, DEFECTS4WARP_RESULTS=str(tmp_path / "results"),
               WARP_CACHE_PATH=str(tmp_path / "warp-cache"))  # one cold kernel cache both compile into
    two = ["tiny-cubic", "tiny-growth"]
    procs = [cli("run", "--corpus", str(tiny["corpus"]), "--cases", ",".join(two), "--json",
                 str(tmp_path / f"{k}.json"), env=env) for k in ("a", "b")]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    want = [r for r in tiny["ref"] if r["case"] in two]
    assert results_of(tmp_path / "a.json") == want
    assert results_of(tmp_path / "b.json") == want
    from defects4warp.run.history import list_runs

    assert len(list_runs(str(tmp_path / "results"))) == 2
    assert len(ResultStore(tmp_path / "results" / "store")) == len(two)
    assert not list((tmp_path / "results" / "store").rglob(".part-*"))


@pytest.mark.slow
def test_dask_localcluster_matrix_equals_the_local_executor(tiny, tmp_path):
    pytest.importorskip("distributed")
    from defects4warp.run.executors import DaskExecutor, LocalExecutor
    from defects4warp.run.matrix import measure_releases

    two = ["tiny-cubic", "tiny-growth"]
    cases, _ = load_corpus(tiny["corpus"], ",".join(two))
    factory = lambda py: get_engine("reference", python=py)  # noqa: E731
    with LocalExecutor(1) as ex:
        local = measure_releases([None], cases, factory, executor=ex)
    with DaskExecutor(workers=2) as ex:
        dask = measure_releases([None], cases, factory, executor=ex)
    assert list(local) == list(dask)
    (rel,) = local
    assert without_timing(dask[rel]["validation"]) == without_timing(local[rel]["validation"])
    assert all(c["ok"] for c in dask[rel]["validation"])
    assert without_timing(dask[rel]["run"]["results"]) == without_timing(local[rel]["run"]["results"]) == \
        [r for r in tiny["ref"] if r["case"] in two]
    assert dask[rel]["run"]["summary"]["executor"] == "dask"


@pytest.mark.slow
def test_a_lost_dask_worker_is_retried_once_then_recorded_and_the_run_goes_on(tmp_path):
    pytest.importorskip("distributed")
    from defects4warp.run.executors import DaskExecutor

    corpus = make_tiny_corpus(tmp_path / "c", ["tiny-cubic"])
    killer = corpus / "tiny-kills-worker"
    (killer / "main").mkdir(parents=True)
    (killer / "main" / "problem.py").write_text(
        "import os, signal\n\n\ndef make_problem(device, scale='small'):\n"
        "    os.kill(os.getppid(), signal.SIGKILL)  # the process that started the measurement\n")
    (killer / "case.yaml").write_text((corpus / "tiny-cubic" / "case.yaml").read_text()
                                      .replace("id: tiny-cubic", "id: tiny-kills-worker"))
    cases, errors = load_corpus(corpus)
    assert not errors
    store = ResultStore(tmp_path / "store")
    with DaskExecutor(workers=2) as ex:
        doc = run(plan(cases), get_engine("reference"), executor=ex, store=store)
    by = {r["case"]: r["diagnosis"] for r in doc["results"]}
    assert by["tiny-cubic"]["verdict"] == "no_bug"
    assert by["tiny-kills-worker"]["verdict"] == "error"
    assert by["tiny-kills-worker"]["error"].startswith("worker lost")
    assert "KilledWorker" in by["tiny-kills-worker"]["error"]
    assert "on 2 different workers" in by["tiny-kills-worker"]["error"]  # retried once elsewhere
    assert len(store) == 1  # the lost item is not stored: a rerun measures it again


@pytest.mark.slow
@pytest.mark.parametrize("program, cause, kw", [
    ("segfaults", "SIGSEGV", {}),
    ("hangs", "timeout", {"timeout_s": 3}),
    ("forks", "the scene needs a server", {}),
    ("fills_disk", "filled the disk or wrote past the file size limit", {"file_bytes": 32 << 20}),
    ("eats_memory", "allocation past the memory cap", {"memory_bytes": 4 << 30}),
    ("detaches", "timeout", {"timeout_s": 3}),
])
def test_faulty_variants_are_recorded_with_their_cause_and_leave_no_process(program, cause, kw, monkeypatch):
    from defects4warp.isolation import run_worker

    # every process the program starts inherits this mark (other sessions on the
    # machine may run the same programs, so command lines are not enough)
    mark = f"D4W_TEST_MARK={os.urandom(8).hex()}"
    monkeypatch.setenv(*mark.split("="))
    res = run_worker(PROGRAMS / program, options={"tracker": False}, **kw)
    assert cause in res.failure
    if program in ("forks", "detaches"):
        assert res.leftovers >= 1
    time.sleep(0.2)
    assert _has_env(mark) == []


def test_diagnose_takes_warp_like_run(programs):
    from click.testing import CliRunner

    from defects4warp.cli import main

    res = CliRunner().invoke(main, ["diagnose", str(programs / "cubic"), "--warp", "not-a-release"])
    assert res.exit_code == 2
    assert "'--warp'" in res.output and "'not-a-release' is not a warp-lang release number" in res.output


def test_cli_is_one_module_per_verb():
    import defects4warp.cli as cli_mod
    from defects4warp.cli import main

    assert len(main.commands) >= 13
    for name, cmd in main.commands.items():
        assert cmd.callback.__module__.startswith("defects4warp.commands."), name
    assert len(Path(cli_mod.__file__).read_text().splitlines()) < 80
    import defects4warp.envs

    assert "runner" not in Path(defects4warp.envs.__file__).read_text()  # no envs <-> runner cycle


@pytest.mark.slow
def test_gpu_cost_script_refuses_a_missing_device():
    script = Path(__file__).parent.parent / "scripts" / "gpu_cost.py"
    res = subprocess.run([sys.executable, str(script), "--device", "cuda:99"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 2
    assert "device 'cuda:99' is not available" in res.stderr


@pytest.mark.slow
def test_validate_reuses_stored_checks_and_fresh_measures_again(tiny, tmp_path):
    from click.testing import CliRunner

    from defects4warp.cli import main

    args = ["validate", "--corpus", str(tiny["corpus"]), "--cases", "tiny-cubic", "--results", str(tmp_path)]
    r = CliRunner()
    first = r.invoke(main, args + ["--json", str(tmp_path / "v1.json")])
    assert first.exit_code == 0, first.output
    again = r.invoke(main, args + ["--json", str(tmp_path / "v2.json")])
    assert again.exit_code == 0 and "1 check(s) reused from the result store" in again.output.replace("\n", " ")
    v1, v2 = (json.loads((tmp_path / f).read_text()) for f in ("v1.json", "v2.json"))
    assert v1["reused"] == 0 and v2["reused"] == 1
    assert without_timing(v1["releases"]) == without_timing(v2["releases"])
    fresh = r.invoke(main, args + ["--fresh", "--json", str(tmp_path / "v3.json")])
    assert fresh.exit_code == 0 and json.loads((tmp_path / "v3.json").read_text())["reused"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("program, kw", [("forks", {}), ("detaches", {"timeout_s": 3})])
def test_the_oracle_runner_leaves_no_process_either(program, kw, monkeypatch):
    from defects4warp.oracle.runner import run_worker as oracle_worker

    mark = f"D4W_TEST_MARK={os.urandom(8).hex()}"
    monkeypatch.setenv(*mark.split("="))
    t0 = time.perf_counter()
    doc, _ = oracle_worker(PROGRAMS / program, **kw)
    assert doc["verdict"] in ("error", "refused") and time.perf_counter() - t0 < 60
    time.sleep(0.2)
    assert _has_env(mark) == []
