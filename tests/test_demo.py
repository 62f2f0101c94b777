"""The demo tells its story end to end through real `omcm hook` processes and leaves nothing behind."""

import os
import shutil
import signal
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = [
    "omcm-tool-counter",
    "omcm-pre-tool-guide",
    "omcm-post-tool-observer",
    "omcm-memory-rotation",
    "omcm-persistent-mode",
]


def _missing() -> list[str]:
    missing = []
    for name in PLUGINS:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


# The demo's story needs every plugin; the matrix also runs these tests with the core alone.
MISSING = _missing()
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"the demo needs every plugin installed: {MISSING}")

TRANSCRIPTS = ROOT.parent / "shared" / "fixtures" / "transcripts"
# Two small real transcripts in which tool-counter and pre-tool-guide both have something to say.
SMALL = ["491e126e-1e71-469c-ade2-fcc8af567c74.jsonl", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"]


def processes_mentioning(text: str) -> dict[int, str]:
    """Processes whose command line or environment (OMCM_HOME, TMPDIR) names the folder: daemon, workers."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        if proc.name == str(os.getpid()):
            continue
        try:
            seen = b" ".join((proc / name).read_bytes() for name in ("cmdline", "environ"))
        except OSError:  # gone, or another user's
            continue
        if text.encode() in seen:
            found[int(proc.name)] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    return found


def run_demo(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMCM")}
    env["TMPDIR"] = str(tmp)  # every temporary folder of the demo lands here, so we can see what it left
    return subprocess.run(
        [sys.executable, str(ROOT / "demo" / "run_demo.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo-tmp")
    absent = tmp_path_factory.mktemp("no-fixtures") / "absent"
    return run_demo(tmp, "--fixtures", str(absent)), tmp


def test_demo_exits_cleanly_and_quietly(demo):
    proc, _ = demo
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.strip() == ""
    assert "[MEMORY_KEEPER" not in proc.stdout and "(nothing to say" not in proc.stdout


def test_demo_tells_what_each_plugin_did(demo):
    out = demo[0].stdout
    # memory loaded at SessionStart, in the memory's own words
    assert "memory-rotation tells Claude: - The service listens on one port" in out
    # a suggestion by tool-counter and a learned warning relevant to the command it precedes
    assert "tool-counter tells Claude: 5 consecutive Read calls detected" in out
    assert "▶ Claude wants to run Bash pytest -q\n    pre-tool-guide tells Claude: 💡 Bash error earlier" in out
    assert "No module named 'requests'" in out
    # the third-party guard denies, with the JSON Claude Code receives
    assert "bash-guard denies it: bash-guard: this command pipes a download straight into a shell." in out
    assert '"permissionDecision": "deny"' in out
    # the ralph loop: started, a stop turned into a continuation, the promise verified, then done
    assert "persistent-mode tells Claude: The user started a ralph loop" in out
    # (the recorded client, 2.1.330, takes Stop context: the continuation is no hook error)
    assert "persistent-mode keeps Claude going (context, not an error): [The Promise Binds You]" in out
    assert '"additionalContext": "[The Promise Binds You]' in out and '"decision": "block"' not in out
    assert "ralph verification 1/3" in out
    assert "no plugin objects: Claude Code lets Claude stop" in out
    assert "The ralph loop ended with status 'completed'" in out
    # a subagent's priority note saved by notepad, then carried along when persistent-mode continues
    assert "notepad tells the user: notepad: saved the priority context" in out
    assert "notepad adds to the continuation: [notepad] Priority context" in out
    assert "Deploy only from main; the staging database is read-only." in out
    # the search at the end finds the failed run, and the secrets never reached the disk
    assert "$ omcm search requests" in out and "FAIL Bash       pytest -q" in out
    assert "GITHUB_TOKEN»=[REDACTED" in out and "ghp_" not in out  # «» marks what the search matched
    assert "(the tokens themselves: found in 0 of the files under OMCM_HOME)" in out


def test_demo_ends_with_a_summary_table(demo):
    out = demo[0].stdout
    table = out[out.index("plugin             | what it did") :]
    for row in (
        "bash-guard         | denied a dangerous command",
        "tool-counter       | suggested a better way to use the tools",
        "pre-tool-guide     | warned about an error it had seen before",
        "persistent-mode    | kept Claude working until the task was verified",
        "memory-rotation    | loaded the project's memory into the session",
        "post-tool-observer | recorded tool calls for `omcm search`",
        "notepad            | saved a subagent's priority note to the notepad",
    ):
        assert row in table
    assert len(out.splitlines()) < 125  # a screen or two, not a log


def test_demo_skips_absent_fixtures_with_a_line(demo):
    assert "(no real transcripts at " in demo[0].stdout and "absent: skipping their replay)" in demo[0].stdout


def test_demo_fixtures_say_what_was_said(tmp_path):
    if not all((TRANSCRIPTS / name).is_file() for name in SMALL):
        pytest.skip("the real transcripts are not beside the checkout")
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for name in SMALL:
        shutil.copy(TRANSCRIPTS / name, folder / name)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = run_demo(tmp, "--fixtures", str(folder))
    assert proc.returncode == 0, proc.stderr[-2000:]
    said = proc.stdout[proc.stdout.index("=== What the plugins said across 2 real Claude Code transcript(s) ===") :]
    assert "74 hook calls replayed" in said
    # the distinct messages themselves, with how often each was said
    assert "tool-counter (2 answer(s), 1 distinct):" in said
    assert "2×  3 consecutive Bash calls detected. Consider combining" in said
    # A failed `tree` of a folder its error names, then an `ls` inside that folder: related, so learned.
    assert "pre-tool-guide (" in said and "No such file or directory" in said
    assert list(tmp.iterdir()) == []


def test_demo_leaves_nothing_behind(demo):
    proc, tmp = demo
    assert proc.returncode == 0
    left = processes_mentioning(str(tmp))
    for pid in left:  # started by this test's demo: end them so a failure does not leak a daemon
        os.kill(pid, signal.SIGTERM)
    assert left == {}
    assert list(tmp.iterdir()) == []
