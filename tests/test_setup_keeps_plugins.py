"""bin/omcm_setup.py on the plugin route: a rebuild installs again what the user added to the old environment."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("omcm_setup", ROOT / "bin" / "omcm_setup.py")
assert spec and spec.loader
omcm_setup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(omcm_setup)


@pytest.fixture(scope="module")
def old_venv(tmp_path_factory) -> Path:
    """A real virtualenv (no pip needed) standing for the environment the last build made."""
    venv = tmp_path_factory.mktemp("old") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


def site_packages(venv: Path) -> Path:
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(found.stdout.strip())


def distribution(site: Path, name: str, origin: dict | None, group: str = "omcm") -> None:
    dist = site / f"{name.replace('-', '_')}-1.2.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\nx = {name.replace('-', '_')}\n")
    if origin is not None:
        (dist / "direct_url.json").write_text(json.dumps(origin))


def test_the_plugins_the_user_added_are_listed_with_where_they_came_from(old_venv, tmp_path):
    site = site_packages(old_venv)
    editable, folder = tmp_path / "my plugin", tmp_path / "copied"
    editable.mkdir()
    folder.mkdir()
    distribution(site, "omcm-edited", {"url": editable.as_uri(), "dir_info": {"editable": True}})
    distribution(site, "omcm-from-folder", {"url": folder.as_uri(), "dir_info": {}})
    distribution(site, "omcm-folder-gone", {"url": (tmp_path / "gone").as_uri(), "dir_info": {}})
    git = {"url": "https://example.org/p.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    distribution(site, "omcm-from-git", git)
    distribution(site, "omcm-from-index", None)
    distribution(site, "omcm-notepad", None)  # comes with omcm: the new build has it anyway
    distribution(site, "some-library", None, group="console_scripts")  # not an omcm plugin

    got = omcm_setup.user_plugins(old_venv / "bin" / "python", {"omcm-core", "omcm-notepad"})

    assert sorted(got) == sorted(
        [
            ["-e", str(editable)],
            [str(folder)],
            ["omcm-folder-gone==1.2"],
            ["omcm-from-git @ git+https://example.org/p.git@abc123"],
            ["omcm-from-index==1.2"],
        ]
    )


def test_no_previous_environment_means_nothing_to_carry(tmp_path):
    assert omcm_setup.user_plugins(tmp_path / "venv" / "bin" / "python", {"omcm-core"}) == []


def test_the_bundled_names_are_read_from_the_plugins_pyprojects():
    names = omcm_setup.bundled_names(ROOT)
    assert {"omcm-core", "omcm-notepad", "omcm-persistent-mode", "omcm-team-store"} <= names


@pytest.mark.slow
@pytest.mark.e2e  # builds a real environment from the package index, as the plugin route does
def test_an_update_rebuilds_with_the_plugin_the_user_installed(tmp_path):
    data = tmp_path / "data"
    old = data / "venv-old"
    subprocess.run([sys.executable, "-m", "venv", str(old)], check=True)
    plugin = ROOT / "tests" / "events" / "plugin"
    pip = [str(old / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps"]
    subprocess.run([*pip, str(plugin)], check=True)
    (data / "venv").symlink_to("venv-old")

    done = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "omcm_setup.py"), str(ROOT), str(data), "v2"],
        capture_output=True,
        text=True,
        timeout=900,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    new = (data / "venv").resolve()
    assert new != old.resolve() and new.name.startswith("venv-")
    # The previous environment stays until the next build: hooks that read its paths just before
    # the switch, the MCP server and the warm dispatcher still run from it.
    assert (old / "bin" / "python").exists() and sorted(data.glob("venv-*")) == sorted([old, new])
    listed = subprocess.run(
        [str(data / "venv" / "bin" / "omcm"), "plugins", "--json"], capture_output=True, text=True, check=True
    )
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["every-event"]["distribution"] == "omcm-every-event"
    assert {"notepad", "persistent-mode"} <= rows.keys()
