"""The command line's layout (issue 31): the top-level help lists the user
verbs and one maintainers' group, ``maint``; a maintainers' verb spelt at the
top level is a usage error naming its new spelling; no option or command is
hidden."""

import click
import pytest
from click.testing import CliRunner

from defects4warp.cli import main
from defects4warp.commands._common import MOVED_TO_MAINT

USER_VERBS = {"audit", "compare", "diagnose", "diff", "engines", "envs", "export", "history", "leaderboard", "list",
              "matrix", "report", "run", "validate", "version-matrix"}
MAINT_VERBS = {"builtins", "capture-table", "conversion", "fit-weights", "index", "mutate", "new-case", "pages",
               "rules"}


def _listed(help_text: str) -> set:
    """The command names of a click help page's Commands: section."""
    lines = help_text.split("Commands:\n", 1)[1].splitlines()
    return {ln.split()[0] for ln in lines if ln.startswith("  ") and not ln.startswith("   ")}


def test_top_level_help_lists_the_user_verbs_and_maint_only():
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0, r.output
    assert _listed(r.output) == USER_VERBS | {"maint"}
    assert set(main.commands) == USER_VERBS | {"maint"}


def test_maint_holds_the_maintainers_tools():
    r = CliRunner().invoke(main, ["maint", "--help"])
    assert r.exit_code == 0, r.output
    assert _listed(r.output) == MAINT_VERBS
    assert "maintainers of the corpus" in r.output and "not for users diagnosing" in " ".join(r.output.split())
    assert set(MOVED_TO_MAINT) == MAINT_VERBS - {"conversion", "rules"}


@pytest.mark.parametrize("verb", sorted(MAINT_VERBS))
def test_each_maintainers_verb_answers_under_maint(verb):
    r = CliRunner().invoke(main, ["maint", verb, "--help"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith(f"Usage: main maint {verb} ")  # CliRunner names the program after the function


@pytest.mark.parametrize("verb", sorted(MOVED_TO_MAINT))
def test_old_top_level_spelling_fails_naming_the_new_one(verb):
    r = CliRunner().invoke(main, [verb, "--help"])
    assert r.exit_code == 2
    assert f"No such command '{verb}'" in r.output and f"use `defects4warp maint {verb}`" in r.output
    # an unknown verb stays click's plain error
    r = CliRunner().invoke(main, ["no-such-verb"])
    assert r.exit_code == 2 and "No such command 'no-such-verb'." in r.output and "maint" not in r.output


def _walk(cmd: click.Command, path=()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _walk(sub, path + (name,))


def test_nothing_is_hidden():
    """Every command and option shows in its help: no hidden aliases or deprecated flags."""
    hidden = [" ".join(p) for p, c in _walk(main) if c.hidden]
    hidden += [f"{' '.join(p)} {o.opts[0]}" for p, c in _walk(main) for o in c.params
               if isinstance(o, click.Option) and o.hidden]
    assert hidden == []
    assert len(list(_walk(main))) > len(USER_VERBS) + len(MAINT_VERBS)  # the walk reached the subcommands


def test_audit_from_to_are_documented_as_the_same_as_warp():
    r = CliRunner().invoke(main, ["audit", "--help"])
    out = " ".join(r.output.split())
    assert r.exit_code == 0
    assert "--from FROM With --to: same as --warp FROM,TO" in out and "--to TO With --from: same as --warp FROM,TO" in out


def test_a_verb_imports_no_other_verbs_module():
    """Looking a verb up imports its own module only (defects4warp.cli.VERBS): ``diagnose`` does not pay for
    ``audit``'s or ``matrix``'s imports; every verb is still listed and found."""
    import subprocess
    import sys

    code = ("import sys; from defects4warp.cli import main; main.get_command(None, 'diagnose'); "
            "print(len(main.commands), ' '.join(sorted(m for m in sys.modules if m.startswith('defects4warp.commands.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    n, mods = out.split(" ", 1)
    assert int(n) == len(USER_VERBS | {"maint"})
    assert "defects4warp.commands.diagnose" in mods.split()
    for other in ("audit", "matrix", "run", "validate", "maint", "pages", "mutate"):
        assert f"defects4warp.commands.{other}" not in mods.split(), other
    assert all(main.commands[v].name for v in USER_VERBS | {"maint"})
