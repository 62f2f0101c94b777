"""Every install hint omcm gives works on the route the user took: none names a distribution no index holds.

omcm-core and its plugins are on no package index, and a bare `pip` is the
wrong environment for pipx and uv tool users. The hints go through
`omcm plugins install`, which installs into omcm's own environment and
resolves extras of what is installed there. Here: no bare `pip install` of an
omcm distribution anywhere a user reads (docs, doctor, errors, the plugin
template); each `omcm plugins install` line in the docs is one omcm parses;
and doctor's hints, run as printed in a fresh environment, do what they say.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).parent / "uv"
# A `pip install` (not `omcm plugins install`, not a named venv's pip) of something omcm's or a local extra.
BARE_PIP = re.compile(r"(?<![\w/.-])(?:python3? -m )?pip install [^\n`]*(?:omcm|'\.\[)")


def user_texts() -> list[Path]:
    docs = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "plugins").glob("*.md")]
    code = [*(ROOT / "omcm_core").rglob("*.py"), *(ROOT / "omcm_core" / "_cli" / "plugin_template").rglob("*.tmpl")]
    code += [p for p in (ROOT / "plugins").glob("*/omcm_*/**/*.py")]
    return docs + code


def test_no_hint_pip_installs_an_omcm_distribution():
    found = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in user_texts()
        for m in BARE_PIP.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_docs_plugins_install_lines_parse():
    parser, _sub = build_parser()
    lines = [
        line.strip()
        for path in user_texts()
        if path.suffix in (".md", ".tmpl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith("omcm plugins install ")
    ]
    assert len(lines) >= 5
    for line in lines:
        argv = shlex.split(line.split("  #")[0])[1:]
        with contextlib.redirect_stderr(io.StringIO()):
            args = parser.parse_args(argv)
        assert args.action == "install" and (args.name or args.editable), line


def run(argv, ok=True, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    assert (proc.returncode == 0) == ok, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


def doctor(omcm: Path, env: dict) -> dict[str, dict]:
    proc = subprocess.run([omcm, "doctor", "--json"], capture_output=True, text=True, env=env, timeout=300)
    return {c["id"]: c for section in json.loads(proc.stdout)["sections"] for c in section["checks"]}


@pytest.mark.slow
def test_doctors_plugin_hints_work_as_printed(tmp_path):
    """A uv tool-like environment (no pip): doctor's fix for "no plugin", then for a broken plugin, run verbatim."""
    if not UV.exists():
        pytest.skip("uv is not installed beside this Python (pip install -r requirements-dev.txt)")
    env_dir, home, bundle = tmp_path / "venv", tmp_path / "home", tmp_path / "bundle"
    home.mkdir()
    src = bundle / "core"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "omcm_core", src / "omcm_core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        ROOT / "plugins" / "tool-counter",
        bundle / "plugins" / "tool-counter",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"),
    )
    run([UV, "venv", "-q", "--python", sys.executable, env_dir])
    run([UV, "pip", "install", "-q", "--python", env_dir / "bin" / "python", src])
    omcm = env_dir / "bin" / "omcm"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("OMCM")}
    # The plugin route's bundled sources; omcm's bin on PATH as pipx and uv put it there.
    env.update(HOME=str(home), PATH=f"{env_dir / 'bin'}:{UV.parent}:/usr/bin:/bin", CLAUDE_PLUGIN_ROOT=str(bundle))

    fix = doctor(omcm, env)["plugins.none"]["fix"]
    assert fix == f"omcm plugins install {bundle / 'plugins' / 'tool-counter'}"
    run(fix, shell=True, env=env, cwd=tmp_path)
    assert doctor(omcm, env)["plugin.tool-counter"]["level"] == "ok"

    # Break it as a half-finished upgrade would: its module does not import, its metadata stays.
    (init,) = (env_dir / "lib").glob("python*/site-packages/omcm_tool_counter/__init__.py")
    init.write_text('raise ImportError("half installed")\n')
    broken = doctor(omcm, env)["plugin.tool-counter"]
    assert broken["level"] == "error" and "--reinstall" in broken["fix"]
    run(broken["fix"], shell=True, env=env, cwd=tmp_path)
    assert doctor(omcm, env)["plugin.tool-counter"]["level"] == "ok"

    # The extra writing-plugins.md and the template install (pytest), resolved from the installed omcm-core.
    run("omcm plugins install 'omcm-core[testing]'", shell=True, env=env, cwd=tmp_path)
    run([env_dir / "bin" / "python", "-c", "import pytest"])
