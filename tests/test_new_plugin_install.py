"""A plugin from ``omcm new-plugin``, installed as a user would: a fresh venv, omcm-core's wheel, no checkout.

The wheel is built from this checkout (so the templates must travel as package
data), installed with the ``testing`` extra, the generated distribution is
pip-installed next to it (not editable), its tests run with the venv's pytest,
and the real ``omcm`` command of that venv lists the plugin and answers through it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest

from omcm_core.testing import pre_tool_payload

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kwargs)
    assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_wheel_carries_the_templates(core_wheel):
    import zipfile

    names = zipfile.ZipFile(core_wheel).namelist()
    assert "omcm_core/_cli/plugin_template/pyproject.toml.tmpl" in names
    assert "omcm_core/_cli/plugin_template/hooks/pre_tool_test.py.tmpl" in names


def test_new_plugin_installs_tests_and_answers(core_wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["OMCM_HOME"] = str(tmp_path / "home")
    pip = [bin_dir / "python", "-m", "pip", "--disable-pip-version-check", "-q"]
    run(pip + ["install", f"{core_wheel}[testing]"], env=env)

    # The venv's own omcm, from the wheel: no checkout on the path.
    run([bin_dir / "omcm", "new-plugin", "careful-rm", "--hooks", "pre_tool,session_start"], cwd=tmp_path, env=env)
    plugin_dir = tmp_path / "omcm-careful-rm"
    run(pip + ["install", plugin_dir], env=env)

    tests = run([bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=plugin_dir, env=env)
    assert "4 passed" in tests.stdout

    listed = run([bin_dir / "omcm", "plugins", "--json"], env=env)
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "careful-rm")
    assert (row["distribution"], row["version"], row["enabled"]) == ("omcm-careful-rm", "0.1.0", True)
    assert row["hooks"] == ["pre_tool", "session_start"]
    # docs/writing-plugins.md shows this venv's `omcm plugins` (for the default hooks: pre_tool)
    doc = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    sample = re.search(
        r"<!-- output of: omcm plugins \(only careful-rm installed\) -->\n```\n\$ (.+?)\n(.*?)```", doc, re.S
    )
    assert sample is not None, "the doc lost its sample of `omcm plugins`"
    shown = run([bin_dir / "omcm", *sample[1].split()[1:]], env=env).stdout
    assert shown == sample[2].replace("hooks: pre_tool", "hooks: pre_tool, session_start")

    payload = json.dumps(pre_tool_payload("Bash", {"command": "rm -rf build"}, cwd=str(tmp_path)))
    hook = run([bin_dir / "omcm", "hook"], input=payload, env={**env, "OMCM_DAEMON": "0"})
    decision = json.loads(hook.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "ask"
    assert decision["permissionDecisionReason"] == "careful-rm: this command deletes files recursively."
