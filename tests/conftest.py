import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "omcm-bash-guard"


@pytest.fixture(scope="session")
def bash_guard_site(tmp_path_factory):
    """The example plugin built as a wheel from a copy outside the repo and installed into a private folder.

    Put the folder on PYTHONPATH to make its entry point visible to a subprocess.
    """
    work = tmp_path_factory.mktemp("third-party")
    src = work / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "wheels"), str(src)], check=True
    )
    wheel = next((work / "wheels").glob("omcm_bash_guard-*.whl"))
    subprocess.run(pip + ["install", "--no-deps", "--target", str(work / "site"), str(wheel)], check=True)
    return work / "site"


@pytest.fixture(scope="session")
def native_client_binary():
    """The native hook client, built once for this installation (readable by any uid, for the uid tests)."""
    import tempfile

    from omcm_core._cli import native_client

    folder = Path(tempfile.mkdtemp(prefix="omcm-native-", dir="/tmp"))
    folder.chmod(0o755)
    binary, why = native_client.build(folder / "omcm-hook")
    if binary is None:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"the native client cannot be built here: {why}")
    yield binary
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["python", "native"])
def hook_client(request, monkeypatch) -> list[str]:
    """The hook client under test, as the argv that precedes the event name.

    The client tests take this fixture so each runs against every client omcm
    can register; ``reliability_harness.run_hook`` starts the one chosen here.
    """
    if request.param == "native":
        argv = [str(request.getfixturevalue("native_client_binary")), "hook"]
    else:
        argv = [sys.executable, "-m", "omcm_core", "hook"]
    harness = sys.modules.get("reliability_harness")
    if harness is not None:
        monkeypatch.setattr(harness, "CLIENT_ARGV", argv)
    return argv


@pytest.fixture(scope="session")
def core_wheel(tmp_path_factory) -> Path:
    """omcm-core's wheel, built once from a copy of the checkout (a build writes build/ and egg-info beside the source)."""
    root = Path(__file__).resolve().parents[1]
    work = tmp_path_factory.mktemp("core")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, src / name)
    shutil.copytree(root / "omcm_core", src / "omcm_core", ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "wheels"), str(src)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return next((work / "wheels").glob("omcm_core-*.whl"))


#: Seconds a team-store test may take, PostgreSQL's start included: its sync loops until the outbox is
#: empty and the server has nothing newer, so a bug there would otherwise hang the suite.
TEAM_TEST_TIMEOUT_S = 300


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.path)).parts
        team = ("tests", "team") in zip(parts, parts[1:], strict=False) or "team-store" in parts
        if team and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEAM_TEST_TIMEOUT_S))
