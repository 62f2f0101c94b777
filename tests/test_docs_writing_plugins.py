"""docs/writing-plugins.md shows what the commands really print.

Each sample is a fenced block after an ``<!-- output of: ... -->`` comment; its
first line is the command (``$ ...``), the rest its output. The sample of
``omcm plugins`` for a freshly generated plugin is checked in
test_new_plugin_install.py, in a venv that holds only that plugin.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-plugins.md"


def doc_samples() -> dict[str, tuple[str, list[str]]]:
    """``output of`` label -> (command, output lines)."""
    text = DOC.read_text(encoding="utf-8")
    samples = {}
    for label, block in re.findall(r"<!-- output of: (.+?) -->\n```\n(.*?)```", text, re.S):
        command, *output = block.rstrip("\n").split("\n")
        samples[label] = (command.removeprefix("$ "), output)
    return samples


def omcm(args: list[str], cwd: Path, home: Path, **env: str) -> list[str]:
    full_env = {**os.environ, "OMCM_HOME": str(home), **env}
    proc = subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.rstrip("\n").split("\n")


def test_the_doc_has_its_samples():
    assert set(doc_samples()) == {
        "omcm new-plugin careful-rm",
        "omcm plugins (only careful-rm installed)",
        "omcm plugins (only bash-guard installed)",
    }


def test_new_plugin_sample_is_the_real_output(tmp_path):
    command, output = doc_samples()["omcm new-plugin careful-rm"]
    assert command == "omcm new-plugin careful-rm"
    # The output names this installation's Python (the doc shows a pipx one) and its omcm (`omcm`, found on PATH).
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    lines = omcm(command.split()[1:], cwd=tmp_path, home=tmp_path / "home", PATH=path)
    here = shlex.quote(sys.executable)
    assert [line.replace(here, "~/.local/share/pipx/venvs/omcm-core/bin/python") for line in lines] == output


def test_plugins_sample_is_the_real_output(bash_guard_site, tmp_path):
    """Other plugins are installed here: compare bash-guard's rows (a name line, then its hooks line)."""
    command, output = doc_samples()["omcm plugins (only bash-guard installed)"]
    path = os.pathsep.join([str(bash_guard_site), os.environ.get("PYTHONPATH", "")])
    lines = omcm(command.split()[1:], cwd=tmp_path, home=tmp_path / "home", PYTHONPATH=path)
    first = next(i for i, line in enumerate(lines) if line.startswith("bash-guard "))
    assert lines[first : first + 2] == output


def doc_test_files() -> dict[str, str]:
    """``test file`` name -> the Python of each complete test file the doc shows."""
    text = DOC.read_text(encoding="utf-8")
    return dict(re.findall(r"<!-- test file: (\S+) -->\n```python\n(.*?)```", text, re.S))


def test_the_docs_test_files_pass_as_written(tmp_path):
    files = doc_test_files()
    assert "test_greeter_surfaces.py" in files
    for name, source in files.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", *files],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "OMCM_HOME": str(tmp_path / "home")},
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout
