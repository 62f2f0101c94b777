"""README.md's commands, the way README.md shows them: a README that drifts from the CLI fails here.

- The Commands table lists every command `omcm --help` lists, and each row's
  syntax (subcommands, options, their choices) is what omcm's parser knows.
- Every `omcm ...` line in a code block (and in memory-rotation's command list)
  is known to the parser too; the install block's `omcm` lines run in a
  temporary HOME and do what their comments say.
- The install blocks run line by line, from a copy of this checkout, with real
  pipx, uv and venv (slow), and end in a hook command that answers.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from omcm_core._cli import extensions
from omcm_core._cli.invocation import Invocation
from omcm_core._cli.main import CORE_COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")  # QUERY, NAME, PATH, N: any value goes


def code_blocks(text: str) -> list[str]:
    return [m.group(1) for m in FENCE.finditer(text)]


def shell_lines(block: str) -> list[str]:
    """The block's lines as a shell reads them: continuations joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line for line in (re.sub(r"\s+#.*$", "", raw).strip() for raw in joined.splitlines()) if line]


def omcm_argv(line: str) -> list[str] | None:
    """The arguments of an `omcm` (or `.../bin/omcm`) command line; None for any other line."""
    try:
        words = shlex.split(line)
    except ValueError:  # prose or output with an apostrophe
        return None
    return words[1:] if words and (words[0] == "omcm" or words[0].endswith("/omcm")) else None


def unknown_words(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """What in ``argv`` the parser does not know: options, subcommands, choices, words too many."""
    positionals = [a for a in parser._actions if not a.option_strings]
    problems, i = [], 0
    while i < len(argv):
        word, i = argv[i], i + 1
        if word.startswith("-"):
            action = parser._option_string_actions.get(word)
            if action is None:
                problems.append(f"{parser.prog}: no option {word}")
            elif action.nargs != 0:
                value, i = (argv[i] if i < len(argv) else None), i + 1
                if value is None or (action.choices and not PLACEHOLDER.match(value) and value not in action.choices):
                    problems.append(f"{parser.prog} {word}: {value!r} is not one of {action.choices}")
            continue
        if not positionals:
            problems.append(f"{parser.prog}: unexpected {word!r}")
            continue
        action = positionals[0]
        if isinstance(action, argparse._SubParsersAction):
            if word not in action.choices:
                return [*problems, f"{parser.prog}: no command {word!r}"]
            return problems + unknown_words(action.choices[word], argv[i:])
        if action.choices and not PLACEHOLDER.match(word) and word not in action.choices:
            problems.append(f"{parser.prog}: {word!r} is not one of {list(action.choices)}")
        if action.nargs not in ("*", "+"):
            positionals.pop(0)
    return problems


def spelled_out(syntax: str) -> list[list[str]]:
    """``omcm daemon status|stop`` -> [[daemon, status], [daemon, stop]]; [optional] parts once with, once without."""
    variants = []
    for form in (syntax.replace("[", "").replace("]", ""), re.sub(r"\s*\[[^\]]*\]", "", syntax)):
        choices = [word.split("|") for word in form.split()[1:]]
        longest = max((len(c) for c in choices), default=1)
        variants += [[c[min(n, len(c) - 1)] for c in choices] for n in range(longest)]
    return variants


def table_rows() -> list[tuple[list[str], str]]:
    """(syntaxes, description) for each row of the Commands table."""
    section = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first, description = re.split(r"(?<!\\)\|", line.strip("|"))[:2]
        spans = [s.replace("\\|", "|") for s in re.findall(r"`([^`]+)`", first)]
        options = " ".join(s for s in spans if not s.startswith("omcm "))
        rows.append(([f"{s} {options}".strip() for s in spans if s.startswith("omcm ")], description.strip()))
    return rows


@pytest.fixture(scope="module")
def parser(tmp_path_factory):
    """omcm's parser with the commands of every plugin installed here, as `omcm --help` builds it."""
    p, sub = build_parser()
    home = tmp_path_factory.mktemp("home")
    extensions.register(sub, Invocation({"OMCM_HOME": str(home)}), reserved=CORE_COMMANDS)
    return p


def commands_of(p: argparse.ArgumentParser) -> set[str]:
    (sub,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def test_the_table_lists_every_command_and_only_real_ones(parser):
    rows = [(syntax.split()[1], description) for syntaxes, description in table_rows() for syntax in syntaxes]
    installed = {e.name for e in entry_points(group="omcm")}
    # A plugin's row starts "plugin-name: ..."; without that plugin (tox's core-alone cell) its command is absent.
    absent = {word for word, d in rows if (m := re.match(r"([a-z][a-z-]+):", d)) and m.group(1) not in installed}
    listed = {word for word, _ in rows}
    assert commands_of(parser) - listed == set(), "commands missing from README's Commands table"
    assert listed - commands_of(parser) - absent == set(), "README lists commands omcm lacks"


def test_each_row_is_syntax_omcm_knows(parser):
    problems = []
    for syntaxes, _description in table_rows():
        for syntax in syntaxes:
            if syntax.split()[1] not in commands_of(parser):
                continue  # its plugin is not installed here: the test above decides
            for argv in spelled_out(syntax):
                problems += [f"{syntax}: {p}" for p in unknown_words(parser, argv)]
    assert problems == []


VALUES = {"NAME": "tool-counter", "QUERY": "port", "N": "3", "EVENT": "PreToolUse"}
NEVER_RUN = (
    ["daemon", "run"],
    ["plugins", "install"],
    ["plugins", "uninstall"],
    ["update"],
)  # serves until stopped; changes .venv


def complete(parser: argparse.ArgumentParser, argv: list[str]) -> bool:
    """Whether ``argv`` is a whole command: the table abbreviates some (`notepad add` without its text)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit:
        return False
    return True


@pytest.mark.slow
def test_each_row_runs_as_written(parser, tmp_path):
    """Every whole command a row spells out, placeholders filled in: no usage error, no traceback."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    env = {**clean_env(home, f"{Path(sys.executable).parent}:/usr/bin:/bin"), "CLAUDE_PROJECT_DIR": str(project)}
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    values = {**VALUES, "PATH": str(tmp_path / "settings.json")}
    ran, problems = 0, []
    for syntaxes, _description in table_rows():
        for syntax in syntaxes:
            for argv in spelled_out(syntax):
                argv = [values.get(word, word) for word in argv]
                if (
                    argv[0] not in commands_of(parser)
                    or argv[:2] in NEVER_RUN
                    or any(PLACEHOLDER.match(w) for w in argv)
                ):
                    continue
                if not complete(parser, argv):
                    continue
                proc = subprocess.run(
                    [sys.executable, "-m", "omcm_core", *argv],
                    input=payload if argv[0] == "hook" else "",
                    capture_output=True,
                    text=True,
                    cwd=project,
                    env=env,
                    timeout=120,
                )
                ran += 1
                # 1 and 2 may say "not running" or "not configured"; argparse's own error starts "usage:".
                if proc.returncode not in (0, 1, 2) or "usage: omcm" in proc.stderr or "Traceback" in proc.stderr:
                    problems.append(f"omcm {shlex.join(argv)}: exit {proc.returncode}\n{proc.stderr[-1500:]}")
    assert ran >= 10 and problems == []


def documented_lines() -> list[str]:
    page = (ROOT / "docs" / "plugins" / "memory-rotation.md").read_text(encoding="utf-8")
    commands = page.split("## Commands", 1)[1]
    lines = [line for block in code_blocks(README) for line in shell_lines(block)]
    return lines + shell_lines(code_blocks(commands)[0])


def test_every_omcm_line_in_a_code_block_is_syntax_omcm_knows(parser):
    argvs = [argv for line in documented_lines() if (argv := omcm_argv(line)) is not None]
    assert len(argvs) >= 10, "README's code blocks lost their omcm commands?"
    problems = []
    for argv in argvs:
        if argv[0] in commands_of(parser):
            problems += [f"omcm {shlex.join(argv)}: {p}" for p in unknown_words(parser, argv)]
    assert problems == []


def install_block(marker: str) -> list[str]:
    (block,) = [b for b in code_blocks(README) if marker in b]
    return shell_lines(block)


def run_lines(lines: list[str], cwd: Path, env: dict) -> None:
    for line in lines:
        proc = subprocess.run(line, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def clean_env(home: Path, path: str) -> dict:
    """The user's environment for a fresh account: no venv, no omcm variables, HOME in tmp."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMCM_", "PIPX_", "UV_TOOL", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    return {**env, "HOME": str(home), "PATH": path, "OMCM_DAEMON": "0", "XDG_DATA_HOME": str(home / ".local/share")}


def check_hooks_answer(home: Path, venv: Path) -> None:
    """The user settings run this venv's interpreter on its fast_hook.py, and a call is answered without PATH."""
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    parts = shlex.split(command)
    if len(parts) == 3:  # the native client omcm install built (a C compiler is here): OMCM_HOME/bin/omcm-hook-<key>
        binary, verb, event = parts
        assert Path(binary).is_relative_to(home / ".omcm" / "bin") and (verb, event) == ("hook", "PreToolUse")
        state = json.loads((home / ".omcm" / "bin" / "native-client.json").read_text())
        assert state["client"] == "native" and state["path"] == binary
    else:
        python, flag, _c, _code, script, event = parts
        # The venv's own interpreter (python or python3, as the venv's scripts name it): its site-packages, not PATH's.
        assert Path(python).parent == venv / "bin" and Path(python).name.startswith("python")
        assert flag == "-S" and event == "PreToolUse"
        assert Path(script).is_relative_to(venv) and script.endswith("omcm_core/fast_hook.py")
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "OMCM_TRACE_PLUGINS": "1", "OMCM_DAEMON": "0"}
    proc = subprocess.run(shlex.split(command), input=json.dumps(payload), capture_output=True, text=True, env=env)
    assert proc.returncode == 0
    assert {"tool-counter", "pre-tool-guide"} <= {
        json.loads(line.split(" ", 1)[1])["plugin"]
        for line in proc.stderr.splitlines()
        if line.startswith("omcm-trace ")
    }


def test_the_install_blocks_omcm_lines_do_what_they_say(tmp_path):
    pytest.importorskip("omcm_tool_counter", reason="omcm install needs a plugin's hooks (tox cell core: alone)")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    lines = [line for line in install_block("pipx install") if omcm_argv(line) is not None]
    assert [omcm_argv(line)[0] for line in lines] == ["install", "install", "doctor"]
    run_lines(lines, project, clean_env(home, f"{Path(sys.executable).parent}:/usr/bin:/bin"))
    assert json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert (home / ".omcm").stat().st_mode & 0o077 == 0  # made owner-only by omcm: doctor had nothing to fix


def tool(name: str) -> str | None:
    """pipx or uv from PATH or beside this Python (requirements-dev.txt installs both into .venv)."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


@pytest.fixture
def account(tmp_path):
    """A fresh user: an empty HOME, a copy of this checkout, and PATH with python3, pipx and uv only."""
    home, checkout, bin_dir = tmp_path / "home", tmp_path / "omcm", tmp_path / "tools"
    home.mkdir()
    bin_dir.mkdir()
    junk = (".venv", ".git", ".tox", "build", "*.egg-info", "__pycache__", "*_cache", ".hypothesis", "bench")
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*junk))
    (bin_dir / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    for name in ("pipx", "uv"):
        if found := tool(name):
            (bin_dir / name).symlink_to(found)
    env = clean_env(home, f"{bin_dir}:{home / '.local' / 'bin'}:/usr/bin:/bin")
    return home, checkout, env


@pytest.mark.slow
@pytest.mark.parametrize("route", ["pipx", "uv"])
def test_the_install_route_works_as_shown(account, route):
    home, checkout, env = account
    if tool(route) is None:
        reason = f"{route} is not installed (pip install -r requirements-dev.txt)"
        # dev.py installs both: in CI's main run a missing one is a failure. Tox cells do not
        # install them (the route does not depend on the Python version); there it is a skip.
        if os.environ.get("CI", "").lower() in ("1", "true", "yes") and not os.environ.get("TOX_ENV_NAME"):
            pytest.fail(reason)
        pytest.skip(reason)
    pipx_block = install_block("pipx install")
    omcm_lines = [line for line in pipx_block if omcm_argv(line) is not None]
    # The uv block stands for the pipx block's first lines, the ones that install.
    lines = pipx_block if route == "pipx" else install_block("uv tool install") + omcm_lines
    run_lines(lines, checkout, env)
    venv = home / ".local" / "share" / ("pipx/venvs" if route == "pipx" else "uv/tools") / "omcm-core"
    check_hooks_answer(home, venv)
    listed = subprocess.run([home / ".local/bin/omcm", "plugins", "--json"], capture_output=True, text=True, env=env)
    assert len(json.loads(listed.stdout)) == 6  # every plugin of the block, in omcm's own venv


@pytest.mark.slow
def test_the_plain_venv_route_works_as_shown(account):
    home, checkout, env = account
    (block,) = [b for b in code_blocks(README) if "python3 -m venv" in b]
    lines = shell_lines(block)
    assert any(omcm_argv(line) == ["install"] for line in lines)
    run_lines(lines, checkout, env)
    venv = home / ".local" / "share" / "omcm" / "venv"
    assert not (home / ".omcm" / "venv").exists()
    check_hooks_answer(home, venv)
