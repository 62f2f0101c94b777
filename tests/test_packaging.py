"""The files that make omcm installable into Claude Code, and its docs, stay true."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core import hookspecs
from omcm_core.events import EVENTS

ROOT = Path(__file__).resolve().parents[1]


def _spec_names():
    return sorted(name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "omcm_spec"))


def test_every_hookspec_is_documented_for_plugin_authors():
    manual = (ROOT / "docs" / "writing-plugins.md").read_text()
    names = _spec_names()
    assert "pre_tool" in names and "commands" in names
    for name in names:
        assert f"`{name}" in manual, f"hook {name} is missing from docs/writing-plugins.md"
        assert getattr(hookspecs, name).__doc__.strip(), f"hook {name} has no docstring"


def test_hooks_json_registers_every_event_the_repo_plugins_use():
    hooks = json.loads((ROOT / "hooks.json").read_text())["hooks"]
    used = set()
    for pyproject in (ROOT / "plugins").glob("*/pyproject.toml"):
        package = re.search(
            r'=\s*"(omcm_[a-z_]+)"', pyproject.read_text().split("[project.entry-points.omcm]")[1]
        ).group(1)
        source = "\n".join(p.read_text() for p in pyproject.parent.rglob("*.py") if "tests" not in p.parts)
        for spec in EVENTS.values():
            if re.search(rf"def {spec.hook}\(", source):
                used.add(spec.name)
        assert package
    # Every one, version-gated events too: a client that meets an event it does not know in a
    # plugin's hooks.json ignores that entry and loads the rest (measured on 2.1.330 and 2.1.332,
    # tests/e2e/test_plugin_hooks_events_e2e.py), unlike a settings file before 2.1.101.
    assert used <= set(hooks), f"events used but not registered: {used - set(hooks)}"
    for event, groups in hooks.items():
        (handler,) = [h for g in groups for h in g["hooks"]]
        assert handler["type"] == "command"
        assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/omcm-hook" {event}'  # path quoted
        assert handler["timeout"] == EVENTS[event].timeout_s
        assert handler["timeout"] < 100  # seconds, not milliseconds
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] <= 1.5


def test_plugin_manifest_loads_hooks_once():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "omcm"
    # Claude Code auto-loads hooks/hooks.json; ours is at the root, so the
    # manifest names it, and there must be no second copy in the default place.
    assert manifest["hooks"] == "./hooks.json"
    assert not (ROOT / "hooks" / "hooks.json").exists()
    launcher = ROOT / "bin" / "omcm-hook"
    assert launcher.stat().st_mode & 0o111


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1].strip().splitlines()
    assert [line.split("#")[0].strip() for line in first_block] == ["python3 dev.py demo", "python3 dev.py test"]
    # CI runs the README's command as its first step, before the linters and the matrix cells.
    commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line for line in commands if line and not line.startswith(("#", "set ", "cd "))]
    assert commands[0] == "python3 dev.py test"


@pytest.mark.slow
@pytest.mark.parametrize(
    "project", [".", *sorted(str(p.parent.relative_to(ROOT)) for p in ROOT.glob("plugins/*/pyproject.toml"))]
)
def test_building_a_distribution_warns_about_nothing(project, tmp_path):
    # A first install printed setuptools' deprecation and "absent from packages" warnings
    # to every new user; they hide the lines that matter.
    source = tmp_path / "src"
    shutil.copytree(
        ROOT / project,
        source,
        ignore=shutil.ignore_patterns(".venv", ".tox", "build", "*.egg-info", "__pycache__", "tests", "bench"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), "."],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    warnings = [line for line in (proc.stdout + proc.stderr).splitlines() if "Warning" in line]
    assert warnings == []


def test_every_python_package_of_omcm_core_is_shipped():
    """A new subpackage missing from pyproject's list works in the checkout and fails once installed."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    root = ROOT
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(root).parts) for init in (root / "omcm_core").rglob("__init__.py")}
    assert found - listed == set()
