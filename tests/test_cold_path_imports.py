"""Issue 35: a cold hook call (no dispatcher) imports only what answering needs, even when it logs.

Real subprocesses run the command ``omcm install`` registers, with ``-X importtime``
(which lists every module the process imported), against a real store and the
dev environment's installed plugins. The log lines themselves must stay what
structlog wrote before it left the hook path: tests and users read them.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from omcm_core import log
from omcm_core._cli.hook_command import fast_hook_argv
from omcm_core.testing import pre_tool_payload, session_start_payload

#: What no cold call needs: structlog (and asyncio, ssl, subprocess with it), cattrs (payloads
#: arrive well typed), detect-secrets (deferred until the answer is out), the MCP SDK, the
#: metadata scan, OpenSSL's hashlib (the digests come from CPython's built-in sha256).
NEVER = {"structlog", "asyncio", "ssl", "cattrs", "detect_secrets", "mcp", "importlib.metadata", "email", "_hashlib"}
ENV = {
    "OMCM_DAEMON": "0",  # the cold path: answered in process, no dispatcher started
    "OMCM__CORE__PLUGIN_BUDGET_MS": "60000",  # not a budget test: a loaded machine must not drop a plugin
    "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "false",
}


def _run(argv: list[str], payload: bytes, env: dict, cwd) -> tuple[subprocess.CompletedProcess, set]:
    timed = [argv[0], "-X", "importtime", *argv[1:]]
    proc = subprocess.run(timed, input=payload, capture_output=True, env=env, cwd=cwd, timeout=120, check=False)
    modules = set(re.findall(rb"^import time:\s+\d+ \|\s+\d+ \| *(\S+)", proc.stderr, re.M))
    return proc, {m.decode() for m in modules}


@pytest.fixture
def cold_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OMCM_LOAD_PLUGINS", "OMCM_DISABLE_PLUGINS")}
    return {**env, **ENV, "OMCM_HOME": str(tmp_path / "home"), "OMCM_LOG_LEVEL": "debug"}


@pytest.mark.parametrize(
    ("event", "payload"),
    [
        ("PreToolUse", pre_tool_payload("Bash", {"command": "ls"})),
        ("SessionStart", session_start_payload()),
        ("PreToolUse", None),  # a payload that is not JSON: an error line
    ],
    ids=["pre-tool-use", "session-start", "bad-payload"],
)
def test_a_cold_call_that_logs_imports_no_heavy_library(cold_env, tmp_path, event, payload):
    project = tmp_path / "project"
    project.mkdir()
    good = json.dumps({**(payload or {}), "cwd": str(project)}).encode()
    argv = fast_hook_argv(event)
    first = subprocess.run(argv, input=good, capture_output=True, env=cold_env, cwd=project, timeout=120)
    assert first.returncode == 0, first.stderr[-2000:]  # plugin cache and store made: the next call is cold only
    logged = tmp_path / "home" / "logs" / "omcm.jsonl"
    before = len(logged.read_bytes().splitlines())
    proc, modules = _run(argv, good if payload else b"{not json", cold_env, project)
    assert proc.returncode == 0
    assert "omcm_core._runtime.dispatch" in modules  # really the in-process path, not a dispatcher's answer
    lines = [json.loads(line) for line in logged.read_bytes().splitlines()[before:]]
    wanted = "dispatched" if payload else "bad_payload"
    assert any(line["event"] == wanted for line in lines), lines  # the call did write its line
    assert {name for name in modules if name.split(".")[0] in NEVER or name in NEVER} == set()
    assert proc.stdout.count(b"\n") <= 1 and (not proc.stdout or isinstance(json.loads(proc.stdout), dict))


def _structlog_line(fields: dict, event: str, level: str, exc: bool = False) -> dict:
    """The line the pipeline log.py configured before (structlog itself) writes for these fields."""
    import structlog

    out = io.StringIO()
    logger = structlog.wrap_logger(
        structlog.WriteLogger(out),
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            log._mask_processor,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(10),
    )
    getattr(logger, level)(event, **fields, **({"exc_info": True} if exc else {}))
    return json.loads(out.getvalue())


class _Odd:
    def __repr__(self) -> str:
        return "<odd token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB>"


def test_log_lines_are_the_ones_structlog_wrote(tmp_path):
    fields = {
        "component": "t",
        "plugin": "p",
        "n": 3,
        "ratio": 0.25,
        "none": None,
        "text": "password=hunter2 and ghp_0123456789abcdefghijklmnopqrstuvwxyzAB é ✓",
        "nested": {"token": "abc", "list": [1, True, {"api_key": "x"}]},
        "path": tmp_path,
        "odd": _Odd(),
        "level": "overridden",
        "timestamp": "overridden",
    }
    home = tmp_path / "home"
    log.configure(home, "debug")
    try:
        logger = log.get_logger(component="t")
        logger.warning("a_warning", **{k: v for k, v in fields.items() if k != "component"})
        try:
            raise ValueError("boom with secret=hunter2")
        except ValueError:
            logger.exception("crashed", plugin="p")
            want_crash = _structlog_line({"component": "t", "plugin": "p"}, "crashed", "error", exc=True)
    finally:
        log.configure(None)
    ours = [json.loads(line) for line in (home / "logs" / "omcm.jsonl").read_text().splitlines()]
    wants = [_structlog_line(fields, "a_warning", "warning"), want_crash]
    assert len(ours) == 2
    for got, want in zip(ours, wants, strict=True):
        stamp = got.pop("timestamp")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", stamp)
        want.pop("timestamp")
        if "exception" in want:  # the frames differ by line number only: the traceback's shape and masking
            assert [e["exc_type"] for e in got["exception"]] == ["ValueError"]
            assert "hunter2" not in json.dumps(got) and got["exception"][0]["frames"]
            got.pop("exception"), want.pop("exception")
        assert list(got) == [k for k in want if k != "timestamp"]  # same keys, same order
        assert got == want
    assert "hunter2" not in (home / "logs" / "omcm.jsonl").read_text()


def test_stderr_sink_gets_the_same_lines(capsys):
    log.configure(None, "info", stderr=True)
    try:
        log.get_logger(component="t").info("to_stderr", n=1)
        log.get_logger(component="t").debug("filtered_out")
    finally:
        log.configure(None)
    lines = capsys.readouterr().err.splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["to_stderr"]
    assert sys.stdout is not None  # never stdout: the hook's stdout is its answer


@pytest.mark.slow
def test_the_dispatcher_imports_no_cli_module(tmp_path):
    """``omcm daemon run`` (what a cold call spawns) serves without argparse or any command's module."""
    import time

    from omcm_core._runtime import daemon

    env = {k: v for k, v in os.environ.items() if k not in ("OMCM_LOAD_PLUGINS", "OMCM_DISABLE_PLUGINS")}
    env = {**env, **ENV, "OMCM_DAEMON": "1", "OMCM_HOME": str(tmp_path / "home"), "PYTHONPROFILEIMPORTTIME": "1"}
    errors = tmp_path / "stderr"
    with errors.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "omcm_core", "daemon", "run"], env=env, stderr=sink, cwd="/")
    try:
        deadline = time.monotonic() + 60
        while not daemon.status(env) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert daemon.status(env), errors.read_bytes()[-2000:]
        project = tmp_path / "project"
        project.mkdir()
        payload = json.dumps(pre_tool_payload("Bash", {"command": "ls"}, cwd=str(project))).encode()
        answered = subprocess.run(fast_hook_argv("PreToolUse"), input=payload, capture_output=True, env=env, timeout=60)
        assert answered.returncode == 0
    finally:
        daemon.stop(env)
        proc.wait(timeout=60)
    imported = set(re.findall(rb"^import time:\s+\d+ \|\s+\d+ \| *(\S+)", errors.read_bytes(), re.M))
    modules = {m.decode() for m in imported}
    assert "omcm_core._runtime.daemon" in modules and "omcm_core._runtime.dispatch" in modules
    assert {"argparse", "omcm_core._cli.main", "omcm_core._cli.doctor", "structlog", "asyncio"} & modules == set()


def test_the_built_in_digest_is_hashlibs():
    import hashlib

    from omcm_core._runtime.digest import sha256

    for data in (b"", b"abc", bytes(range(256)) * 300):
        ours, theirs = sha256(data), hashlib.sha256(data)
        ours.update(b"more"), theirs.update(b"more")
        assert ours.hexdigest() == theirs.hexdigest()


GATED_PROBE = r"""
import json
from omcm_core import _redact_rules, redact
quiet = redact.mask("dispatched PreToolUse plugins=3 ms=12.5", library=False)
after_quiet = _redact_rules.compiled_count()
# Upper case where the rule's pattern folds case: the first text to reach it must be masked all the same.
shouted = redact.mask("curl -H 'AUTHORIZATION: Bearer Zx81kQm2Lr7Vp0aaQ1zz' https://x", library=False)
token = redact.mask("token ghp_" + "Zq9Xw8Vu" * 5, library=False)
print(json.dumps([quiet, after_quiet, shouted, token, _redact_rules.compiled_count()]))
"""


def test_token_rules_compile_when_a_text_first_holds_their_needle():
    out = subprocess.run([sys.executable, "-c", GATED_PROBE], capture_output=True, text=True, check=True)
    quiet, after_quiet, shouted, token, after_all = json.loads(out.stdout)
    assert quiet == "dispatched PreToolUse plugins=3 ms=12.5"
    assert "Zx81kQm2Lr7Vp0aaQ1zz" not in shouted and "[REDACTED" in shouted
    assert "Zq9Xw8Vu" not in token and "[REDACTED:github-token]" in token
    assert after_all > after_quiet  # the token rules compiled on their first candidate text, not before


def test_a_gated_rule_reads_the_case_folding_of_its_pattern_right():
    """Before compiling, a rule reads from the source whether its pattern ignores case: never wrongly "no"."""
    import re as std_re

    from omcm_core import _redact_rules

    lazies = [p for _, p in _redact_rules._WHOLE + _redact_rules._VALUED]
    lazies += [v for v in vars(_redact_rules).values() if isinstance(v, _redact_rules._Lazy)]
    assert lazies
    for lazy in lazies:
        if isinstance(lazy, _redact_rules._Lazy) and lazy.compiled().flags & std_re.IGNORECASE:
            assert _redact_rules.folds_case(lazy), lazy._args[0][:60]
    for source, folds in (("(?i)ab", True), ("(?s)(?i)ab", True), ("(?s)ab", False), ("ab(?i:c)", False)):
        assert _redact_rules.folds_case(_redact_rules._Lazy(source, 0)) is folds
