"""omcm as people install it, judged by the real client: interactive slash commands, the plugin route, a reinstall.

- `/ralph-loop TASK` and `/cancel-ralph` typed into the interactive client (tmux), on the
  `omcm install` route and on the plugin route, on the pinned and the latest client;
- the plugin installed with the client's own CLI (`claude plugin marketplace add`,
  `claude plugin install`) builds its environment by itself, then its hooks work and
  `omcm doctor` (through the plugin's bin/omcm) is clean;
- omcm moved to another Python under the same path: no registered command exits 2,
  a session still reaches the model, `omcm install` rewrites, doctor is clean.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_client import CLIENT_VERSION
from conftest import LATEST_CLIENT, client_or_skip
from e2e_harness import Harness
from fake_anthropic import FakeAnthropic, read, text, tool_use
from interactive import Interactive, wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def _tmux_for_interactive(request):
    """The interactive tests need tmux: fail under CI (the set-up installs it), skip with the reason elsewhere."""
    if "interactive" not in request.node.name and "marketplace" not in request.node.name:
        return
    if shutil.which("tmux") is None and not Path("/usr/bin/tmux").exists():
        if os.environ.get("CI"):
            pytest.fail("tmux is not installed (CI is set, so this fails): apt-get install tmux")
        pytest.skip("tmux is not installed (apt-get install tmux)")


ROOT = Path(__file__).resolve().parents[2]
CANCELLED = "The user cancelled the persistent modes"
#: Two Stop continuations in a row, then the client pauses the loop: enough to see it run, quick to run.
LOOP_ENV = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "2"}


def ralph_then_cancel(harness: Harness, name: str, prefix: str = "/") -> list:
    """Type `/ralph-loop TASK`, see the loop continue, type `/cancel-ralph`: the model's requests.

    ``prefix``: the plugin route's commands are named with the plugin's name, `/omcm:ralph-loop`.
    """
    with FakeAnthropic([[text("on it")]], final_text="Working.") as api, Interactive(harness, api, name=name) as tui:
        tui.ready()
        tui.type(f"{prefix}ralph-loop fix the flaky test")
        tui.wait_for(lambda s: "Iteration 2/" in s, 90, "the loop's second iteration")
        tui.wait_for(lambda s: "paused" in s, 60, "the loop paused by the client's block cap")
        looped = len([r for r in api.requests if r.main_loop])
        tui.type(f"{prefix}cancel-ralph")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and CANCELLED not in _context(api):
            time.sleep(0.25)
        time.sleep(3)  # a continuation would come now
        requests = [r for r in api.requests if r.main_loop]
    assert looped >= 3, f"the loop did not continue: {looped} requests"
    assert CANCELLED in requests[-1].all_text()
    assert len(requests) == looped + 1, "the loop went on after /cancel-ralph"
    return requests


def _context(api) -> str:
    main = [r for r in api.requests if r.main_loop]
    return main[-1].all_text() if main else ""


@pytest.mark.parametrize("version", [CLIENT_VERSION, LATEST_CLIENT])
def test_interactive_ralph_loop_and_cancel_on_the_install_route(tmp_path, version):
    harness = Harness(tmp_path / "world", client_or_skip(version), extra_env=LOOP_ENV)
    try:
        assert (harness.home / ".claude" / "commands" / "ralph-loop.md").exists()  # `omcm install` put it there
        requests = ralph_then_cancel(harness, "install")
        assert "ralph-loop: fix the flaky test" in requests[0].all_text()  # the command's expansion
    finally:
        harness.close()


def clean_copy(dest: Path) -> Path:
    """This checkout's files as a git clone would have them (no .venv, no caches)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, (os.fsdecode(n) for n in listed)):
        source = ROOT / name
        if source.is_file() and not name.startswith(("tests/", "bench/", "demo/")):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def plain_path(tmp_path: Path) -> str:
    """A PATH with Python (3.10+) and uv if there is one, but no omcm: what a new user has."""
    tools = tmp_path / "tools"
    tools.mkdir()
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv:
        (tools / "uv").symlink_to(uv)
    python = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    (tools / "python3").symlink_to(python)
    return f"{tools}:/usr/bin:/bin"


def index_access() -> dict:
    """This machine's way to the package index (certificates, mirrors): the user's environment has it too."""
    names = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "PIP_INDEX_URL", "PIP_FIND_LINKS")
    passed = {k: v for k, v in os.environ.items() if k in names or k.startswith(("UV_", "PIP_EXTRA"))}
    return passed | {k: v for k, v in os.environ.items() if k.lower() in ("http_proxy", "https_proxy", "no_proxy")}


def dispatches_by_daemons(home: Path) -> tuple[int, int]:
    """(dispatches answered inside a warm dispatcher, all dispatches), from the debug log."""
    lines = [json.loads(line) for line in (home / "logs" / "omcm.jsonl").read_text().splitlines()]
    daemons = {e["pid"] for e in lines if e["event"] == "daemon_started"}
    dispatched = [e["pid"] for e in lines if e["event"] == "dispatched"]
    return sum(pid in daemons for pid in dispatched), len(dispatched)


def stop_daemons(harness: Harness, under: Path) -> None:
    """Stop the warm dispatchers the other installations under ``under`` started (harness.close stops its own)."""
    for omcm in under.glob("**/bin/omcm"):
        subprocess.run([str(omcm), "daemon", "stop"], env=harness.env(), capture_output=True, timeout=60, check=False)


def wait_ready(data: Path, timeout: float = 300) -> Path:
    omcm = data / "venv" / "bin" / "omcm"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not omcm.exists():
        assert not (data / "setup.failed").exists(), (data / "setup.log").read_text()
        time.sleep(1)
    assert omcm.exists(), (data / "setup.log").read_text() if (data / "setup.log").exists() else "no setup log"
    return omcm


def mcp_failures(run) -> list[str]:
    """The debug log's lines that say omcm's MCP server failed (not how it was stopped at the end)."""
    log = run.debug_log.read_text(errors="replace").splitlines()
    ours = [line for line in log if "MCP server" in line and "omcm" in line]
    print("\n".join(ours))
    return [line for line in ours if "failed to connect" in line.lower() or "connection failed" in line.lower()]


def test_the_plugin_route_through_the_marketplace(tmp_path, claude_binary):
    source = clean_copy(tmp_path / "omcm-src")
    harness = Harness(tmp_path / "world", claude_binary, install_hooks=False, extra_env={"PATH": plain_path(tmp_path)})
    harness.extra_env |= LOOP_ENV | index_access() | {"OMCM_LOG_LEVEL": "debug"}
    try:
        for args in (("marketplace", "add", str(source)), ("install", "omcm@omcm")):
            done = subprocess.run(
                [str(claude_binary), "plugin", *args], env=harness.env(), capture_output=True, text=True, timeout=120
            )
            assert done.returncode == 0, done.stdout + done.stderr
        # First session: the hooks answer at once and say, once, that omcm is getting ready.
        first = harness.session([[text("hello")]], prompt="hi")
        assert first.returncode == 0 and first.turns_served == 1, first.explain()
        said = [e.get("output", "") + e.get("stdout", "") for e in first.hook_events("SessionStart", "hook_response")]
        assert any("setting up its Python environment" in s for s in said), said
        # Its MCP server did not fail while the environment was built (the client would remember that).
        assert not mcp_failures(first), mcp_failures(first)
        (data,) = (harness.home / ".claude" / "plugins" / "data").iterdir()
        omcm = wait_ready(data)
        # The session after the build: told once that omcm is ready, and offered omcm's MCP tools.
        # (The model calls one: under load the server may connect after the first request is sent.)
        search = tool_use("mcp__plugin_omcm_omcm__search", {"query": "falcon"})
        ready = harness.session([[search], [text("hello again")]], prompt="hi")
        assert ready.returncode == 0 and ready.turns_served == 2, ready.explain()
        said = [e.get("output", "") + e.get("stdout", "") for e in ready.hook_events(subtype="hook_response")]
        assert sum("omcm is ready" in s for s in said) == 1, said
        assert not mcp_failures(ready), mcp_failures(ready)
        answer, is_error = ready.tool_result(search["id"])
        assert not is_error and "hits" in json.loads(answer), answer
        # Third session: the plugin's hooks work (memory at SessionStart, tool-counter's suggestion).
        memory = harness.project / ".claude" / "memory"
        memory.mkdir(parents=True, exist_ok=True)  # the session above made it
        (memory / "memory.md").write_text("- remember the ochre falcon\n")
        files = [harness.project / f"f{n}.txt" for n in range(5)]
        for n, path in enumerate(files):
            path.write_text(f"file {n}\n")
        run = harness.session([[read(p)] for p in files] + [[text("read them all")]], prompt="read the five files")
        assert run.returncode == 0 and run.turns_served == 6, run.explain()
        (context,) = run.main_requests[0].hook_contexts("SessionStart")
        assert "- remember the ochre falcon" in context
        assert "5 consecutive Read calls detected" in run.main_requests[5].all_text()
        # ...answered by the warm dispatcher: the launcher runs the interpreter by its resolved path,
        # as the dispatcher names itself (through DATA/venv, a symlink, every call went in process).
        by_daemon, dispatched = dispatches_by_daemons(harness.omcm_home)
        assert by_daemon >= dispatched // 2 > 0, (by_daemon, dispatched)
        # `omcm` from a shell: the plugin's bin/omcm, and doctor judges the plugin route clean.
        (root,) = (harness.home / ".claude" / "plugins" / "cache" / "omcm" / "omcm").iterdir()
        doctor = subprocess.run(
            [str(root / "bin" / "omcm"), "doctor", "--json"], env=harness.env(), capture_output=True, text=True
        )
        report = json.loads(doctor.stdout)
        assert doctor.returncode == 0 and not report["problems"], report["problems"]
        ids = {c["id"] for s in report["sections"] for c in s["checks"]}
        assert "settings.plugin" in ids and "settings.none" not in ids
        assert omcm.resolve().is_relative_to(data)
        # The slash commands on the plugin route, interactive.
        requests = ralph_then_cancel(harness, "plugin", prefix="/omcm:")
        assert "ralph-loop: fix the flaky test" in requests[0].all_text()
    finally:
        stop_daemons(harness, harness.home / ".claude" / "plugins" / "data")
        harness.close()


def another_python() -> str | None:
    """A working interpreter of another 3.10+ minor version than this one (a real binary, not a pyenv shim)."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [shutil.which(f"python3.{m}") for m in (12, 13, 10, 11)] + sorted(map(str, pyenv.glob("3.1*/bin/python3")))
    for candidate in filter(None, found):
        try:
            out = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[1], sys.executable)"],
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout.split()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if len(out) == 2 and int(out[0]) >= 10 and int(out[0]) != sys.version_info[1]:
            return out[1]
    return None


@pytest.mark.parametrize("client", ["python", "native"])
def test_a_reinstall_under_another_python_never_blocks(tmp_path, claude_binary, client):
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    other = another_python()
    if not uv or not other:
        pytest.skip("needs uv and a second Python 3.10+ of another minor version (on PATH or under pyenv)")
    tool = tmp_path / "uv-tool"  # `uv tool install` keeps one folder per tool, whatever the Python
    targets = [str(ROOT)] + sorted(str(p.parent) for p in ROOT.glob("plugins/*/pyproject.toml"))

    def install_with(python: str) -> None:
        subprocess.run([uv, "venv", "--quiet", "--clear", "--python", python, str(tool)], check=True)
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(tool / "bin" / "python"), *targets], check=True
        )

    install_with(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    harness = Harness(tmp_path / "world", claude_binary, install_hooks=False)
    try:
        env = {**harness.env(), "OMCM_NATIVE_CLIENT": "1" if client == "native" else "0"}
        omcm = [str(tool / "bin" / "omcm")]
        done = subprocess.run(
            [*omcm, "install", "--settings", str(harness.settings_path)], env=env, capture_output=True
        )
        assert done.returncode == 0, done.stderr
        install_with(other)  # the old site-packages (lib/python3.11) is gone; bin/python is another Python
        settings = json.loads(harness.settings_path.read_text())
        for event, groups in settings["hooks"].items():
            command = groups[0]["hooks"][0]["command"]
            payload = json.dumps({"hook_event_name": event, "session_id": "s", "cwd": str(harness.project)})
            ran = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, env=env)
            assert ran.returncode != 2 and ran.returncode == 0, (event, ran.stderr)
        run = harness.session([[text("still here")]], prompt="hi")
        assert run.returncode == 0 and run.turns_served == 1, run.explain()
        again = subprocess.run(
            [*omcm, "install", "--settings", str(harness.settings_path)], env=env, capture_output=True, text=True
        )
        command = shlex.split(
            json.loads(harness.settings_path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        )
        if client == "python":  # the command names the installation's files: rewritten in place, by the
            # warm dispatcher's repair when the session above started one (issue 33 item 3), else by this install
            said = again.stdout + again.stderr
            assert again.returncode == 0 and ("omcm updated in" in said or "already installed" in said), said
            assert command[0] == str(tool / "bin" / "python")
        else:  # the native client's path stays; it was rebuilt for the new installation
            assert again.returncode == 0, again.stdout + again.stderr
            assert "omcm-hook-" in command[0]
            state = json.loads((harness.omcm_home / "bin" / "native-client.json").read_text())
            assert state["client"] == "native" and state["fingerprint"]
        doctor = subprocess.run([*omcm, "doctor", "--json"], env=env, capture_output=True, text=True)
        report = json.loads(doctor.stdout)
        assert doctor.returncode == 0 and not report["problems"], report["problems"]
    finally:
        stop_daemons(harness, tmp_path)
        harness.close()


def test_interactive_plugin_route_has_omcms_mcp_tools_in_its_first_two_sessions(tmp_path, claude_binary):
    """The first session's MCP server starts before omcm's environment exists; its tools come once it is built."""
    source = clean_copy(tmp_path / "omcm-src")
    harness = Harness(tmp_path / "world", claude_binary, install_hooks=False, extra_env={"PATH": plain_path(tmp_path)})
    harness.extra_env |= index_access()
    try:
        for args in (("marketplace", "add", str(source)), ("install", "omcm@omcm")):
            done = subprocess.run(
                [str(claude_binary), "plugin", *args], env=harness.env(), capture_output=True, text=True, timeout=120
            )
            assert done.returncode == 0, done.stdout + done.stderr
        data = harness.home / ".claude" / "plugins" / "data"
        answers = []
        for session in ("mcp1", "mcp2"):
            search = tool_use("mcp__plugin_omcm_omcm__search", {"query": "anything"})
            with (
                FakeAnthropic([[search], [text("done")]], final_text="ok") as api,
                Interactive(harness, api, name=session) as tui,
            ):
                tui.ready()
                if session == "mcp1":  # built while this first session runs
                    (folder,) = wait_until(lambda: list(data.iterdir()) if data.is_dir() else [], 60, "DATA", tui)
                    wait_ready(folder)
                    time.sleep(3)  # the waiting server hands over and announces the tools
                tui.type(f"search, {session}")
                found = wait_until(
                    lambda api=api, call=search: tool_answer(api, call["id"]), 120, "the tool's answer", tui
                )
            answers.append(found)
        for answer, is_error in answers:
            assert not is_error and "hits" in json.loads(answer), answer
    finally:
        stop_daemons(harness, harness.home / ".claude" / "plugins" / "data")
        harness.close()


def tool_answer(api, tool_use_id: str):
    """(text, is_error) of a tool result the model got, once it got it."""
    for request in [r for r in api.requests if r.main_loop]:
        results = request.tool_results()
        if tool_use_id in results:
            return results[tool_use_id]
    return None
