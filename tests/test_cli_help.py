"""Every `omcm ... --help` says something for every argument; a reader that leaves early gets no traceback."""

import argparse
import json
import os
import subprocess
import sys

import pytest

from omcm_core._cli import extensions
from omcm_core._cli.invocation import Invocation
from omcm_core._cli.main import CORE_COMMANDS, build_parser


def _env(tmp_path, **extra):
    return {
        **os.environ,
        "OMCM_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "OMCM_DAEMON": "0",
        **extra,
    }


def _omcm(*args, env, **kw):
    return subprocess.run([sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, env=env, **kw)


def every_parser(tmp_path):
    """(command words, parser) for `omcm` and every subcommand under it, the installed plugins' included."""
    parser, sub = build_parser()
    extensions.register(sub, Invocation({"OMCM_HOME": str(tmp_path / "home")}), reserved=CORE_COMMANDS)
    found, todo = [], [((), parser)]
    while todo:
        words, p = todo.pop()
        found.append((words, p))
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [((*words, name), child) for name, child in action.choices.items()]
    return found


def test_every_argument_of_every_command_has_help(tmp_path):
    parsers = every_parser(tmp_path)
    missing = []
    for words, p in parsers:
        text = p.format_help()
        assert "==SUPPRESS==" not in text, f"omcm {' '.join(words)} --help"
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"omcm {' '.join(words)} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_internal_subcommands_stay_out_of_help(tmp_path):
    pytest.importorskip("omcm_memory_rotation", reason="memory-rotation's write-l1 (tox cell core: alone)")
    proc = _omcm("memory", "--help", env=_env(tmp_path))
    assert proc.returncode == 0 and "write-l1" not in proc.stdout and "SUPPRESS" not in proc.stdout
    assert "rotate" in proc.stdout


def test_hook_help_says_what_it_reads_prints_and_returns(tmp_path):
    # stdin left open: were the hook run instead, it would wait for a payload and the timeout would fail the test.
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", "hook", "--help"],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=60,
    )
    assert proc.returncode == 0
    for part in ("reads:", "prints:", "exit:", "always 0", "OMCM_TRACE_PLUGINS"):
        assert part in proc.stdout
    assert _omcm("hook", "-h", env=_env(tmp_path), input="").stdout == proc.stdout


def test_a_hook_call_is_still_answered_by_the_dispatcher(tmp_path):
    # OMCM_TRACE_PLUGINS: the dispatcher, not argparse, took the call (one trace line per plugin called).
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s"}
    proc = _omcm("hook", "PreToolUse", env=_env(tmp_path, OMCM_TRACE_PLUGINS="1"), input=json.dumps(payload))
    assert proc.returncode == 0 and "usage:" not in proc.stderr
    assert "omcm-trace " in proc.stderr
    assert proc.stdout == "" or isinstance(json.loads(proc.stdout), dict)


def _fill_observations(home):
    from omcm_post_tool_observer import storage

    from omcm_core.store import Store

    store = Store(home)
    storage.ready(store)
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO observer_events(event_id, ts, tool_name, success, command, output, payload_json, bytes) "
            "VALUES(?, ?, 'Bash', 1, 'echo port 8080', ?, '{}', 10)",
            [(f"bulk-{i}", 1e9 + i, "port 8080 " * 20) for i in range(300)],
        )


COMMANDS = {
    "search": ["search", "port", "--limit", "300"],
    "memory search": ["memory", "search", "port 8080", "--limit", "300"],
    "plugins --json": ["plugins", "--json"],
}


@pytest.fixture
def world(tmp_path):
    for module in ("omcm_post_tool_observer", "omcm_memory_rotation"):
        pytest.importorskip(module, reason="the commands piped are plugins' (tox cell core: alone)")
    _fill_observations(tmp_path / "home")
    memory = tmp_path / ".claude" / "memory"
    memory.mkdir(parents=True)
    (memory / "memory.md").write_text("".join(f"port 8080 note {i}\n" for i in range(300)))
    return _env(tmp_path)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_reader_gone_before_the_output_is_a_quiet_exit(world, name):
    # A pipe whose reading end is closed before omcm writes: the first flush fails, every time.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "omcm_core", *COMMANDS[name]],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=world,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141  # what a shell reports for `cat big | head -1`: 128 + SIGPIPE


@pytest.mark.parametrize("name", COMMANDS)
def test_piped_into_head_prints_the_first_line_and_no_traceback(world, name):
    command = " ".join(["'" + sys.executable + "'", "-m", "omcm_core", *(f"'{a}'" for a in COMMANDS[name])])
    proc = subprocess.run(f"{command} | head -1", shell=True, capture_output=True, text=True, env=world, timeout=120)
    assert len(proc.stdout.splitlines()) == 1 and proc.stdout.strip()
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr and "ignored" not in proc.stderr
