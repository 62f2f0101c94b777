"""[memory-rotation] in the TOML config: honoured by the hook and the CLI, env overrides, the old config.json."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from omcm_memory_rotation import index, layout
from omcm_memory_rotation.rotation import check_and_rotate
from omcm_memory_rotation.settings import Settings, load_settings

from omcm_core import log as omcm_log
from omcm_core.config import Config
from omcm_core.context import Context
from omcm_core.testing import post_tool_payload, run_hook

ENV = {"OMCM_LOAD_PLUGINS": "memory-rotation"}
ROTATED = "[MEMORY_KEEPER_ROTATE] file=memory_"


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    layout.memory_dir(path).mkdir(parents=True)
    (layout.memory_dir(path) / "memory.md").write_text("line of memory\n" * 400)  # 1,500 tokens
    return path


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def log_lines(home):
    """The JSON log lines written while the test runs (to ``home``/logs/omcm.jsonl)."""
    omcm_log.configure(home)

    def read():
        path = home / "logs" / "omcm.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    yield read
    omcm_log.configure(None)


def settings_for(project, home, env=None):
    env = env or {}
    ctx = Context("memory-rotation", home, project, Config.load(home, project, env), env)
    return load_settings(ctx, project)


def one_tool_use(project, home, **env):
    out = run_hook(
        post_tool_payload("Read", {"file_path": "/a"}, {}, session_id="s"),
        env={**ENV, "OMCM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project), **env},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.decode()


def test_defaults_do_not_rotate_a_small_memory(project, home):
    assert settings_for(project, home) == Settings()
    assert one_tool_use(project, home, OMCM__MEMORY_ROTATION__SAVE_INTERVAL="1") == ""


def test_toml_section_is_honoured_through_omcm_hook(project, home):
    (home / "config.toml").write_text(
        "[memory-rotation]\nsave_interval = 1\nthreshold_tokens = 1000\ncarryover_tokens = 100\n"
    )
    assert ROTATED in one_tool_use(project, home)
    assert list(layout.memory_dir(project).glob("memory_*.md"))


def test_project_toml_is_honoured_too(project, home):
    (project / ".claude" / "omcm.toml").write_text(
        "[memory-rotation]\nthreshold_tokens = 1000\ncarryover_tokens = 200\n"
    )
    assert settings_for(project, home) == Settings(threshold_tokens=950, carryover_tokens=190)


def test_env_overrides_the_toml(project, home):
    (home / "config.toml").write_text("[memory-rotation]\nsave_interval = 1\ncarryover_tokens = 100\n")
    assert one_tool_use(project, home) == ""
    assert ROTATED in one_tool_use(project, home, OMCM__MEMORY_ROTATION__THRESHOLD_TOKENS="1000")
    env = {"OMCM__MEMORY_ROTATION__THRESHOLD_TOKENS": "1000"}
    assert settings_for(project, home, env).threshold_tokens == 950


def test_the_cli_uses_the_same_settings(project, home, tmp_path):
    (project / ".claude" / "omcm.toml").write_text("[memory-rotation]\nthreshold_tokens = 1000\ncarryover_tokens = 9\n")
    env = {**ENV, "OMCM_HOME": str(home), "OMCM_DAEMON": "0", "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "omcm_core", "memory", f"--project={project}", "status"]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "rotates at 950)" in out.stdout and "write this instead" not in out.stdout
    (layout.memory_dir(project) / "config.json").write_text(json.dumps({"saveInterval": 7}))
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.stdout.endswith("write this instead, then delete it:\n[memory-rotation]\nsave_interval = 7\n")


def test_old_config_json_is_used_with_one_log_line_giving_the_toml(project, home, log_lines):
    legacy = {"saveInterval": 2, "memoryRotation": {"thresholdTokens": 1000, "carryoverTokens": 300}}
    (layout.memory_dir(project) / "config.json").write_text(json.dumps(legacy))
    (home / "config.toml").write_text("[memory-rotation]\ncarryover_tokens = 100\n")  # the TOML wins for its keys
    for _ in range(3):
        assert settings_for(project, home) == Settings(save_interval=2, threshold_tokens=950, carryover_tokens=95)
    notes = [line for line in log_lines() if line["event"] == "memory_config_json_deprecated"]
    assert len(notes) == 1
    assert notes[0]["path"].endswith(".claude/memory/config.json")
    assert notes[0]["section"] == "memory-rotation"
    assert notes[0]["keys"] == {"save_interval": 2, "threshold_tokens": 1000}


def test_old_config_json_in_omcm_home_reaches_the_hook(project, home):
    (home / "memory-rotation").mkdir()
    legacy = {"saveInterval": 1, "memoryRotation": {"thresholdTokens": 1000, "carryoverTokens": 10}}
    (home / "memory-rotation" / "config.json").write_text(json.dumps(legacy))
    assert ROTATED in one_tool_use(project, home)
    logged = (home / "logs" / "omcm.jsonl").read_text()
    assert "memory_config_json_deprecated" in logged and '"threshold_tokens": 1000' in logged


BAD = [
    ("threshold_tokens = 1", "threshold_tokens must be an integer from 100 to 10,000,000, got 1"),
    ("save_interval = 0", "save_interval must be an integer from 1 to 10,000, got 0"),
    ('threshold_tokens = "2000"', "expected int, got str"),
    ("enabled = 1", "expected bool, got int"),
]


@pytest.mark.parametrize(("toml", "error"), BAD)
def test_out_of_range_toml_is_refused_with_a_log_line(project, home, log_lines, toml, error):
    (home / "config.toml").write_text(f"[memory-rotation]\n{toml}\n")
    settings = settings_for(project, home)
    refused = [line for line in log_lines() if line["event"] == "config_bad_value"]
    assert refused and error in refused[0]["error"] and refused[0]["section"] == "memory-rotation"
    assert settings == Settings()
    assert settings.carryover_tokens < settings.threshold_tokens
    assert settings.save_interval >= 1 and settings.threshold_tokens >= 95
    folder = layout.memory_dir(project)
    (folder / "memory.md").write_text("")
    index.ensure_structure(folder)
    assert check_and_rotate(folder, settings, omcm_log.get_logger()) is None
    assert not list(folder.glob("memory_*.md")), "an empty memory.md was archived"


@pytest.mark.parametrize(
    "order", ["threshold_tokens = 5000\ncarryover_tokens = 6000", "carryover_tokens = 6000\nthreshold_tokens = 5000"]
)
def test_carryover_not_below_threshold_keeps_both_defaults(project, home, log_lines, order):
    (home / "config.toml").write_text(f"[memory-rotation]\nsave_interval = 3\n{order}\n")
    assert settings_for(project, home) == Settings(save_interval=3)
    refused = [line for line in log_lines() if line["event"] == "memory_config_invalid"]
    assert [r["error"] for r in refused] == ["carryover_tokens (6000) must be below threshold_tokens (5000)"]


def test_either_order_of_valid_keys_is_taken(project, home):
    (home / "config.toml").write_text("[memory-rotation]\nthreshold_tokens = 1000\ncarryover_tokens = 100\n")
    assert settings_for(project, home) == Settings(threshold_tokens=950, carryover_tokens=95)


@pytest.mark.parametrize(
    ("legacy", "error"),
    [
        ({"memoryRotation": {"thresholdTokens": 1}}, "threshold_tokens must be an integer from 100"),
        ({"memoryRotation": {"thresholdTokens": 5000, "carryoverTokens": 6000}}, "carryover_tokens (6000) must be"),
        ({"saveInterval": 0}, "save_interval must be an integer from 1"),
        ({"memoryRotation": {"thresholdTokens": "2000"}}, "got '2000'"),
        ({"memoryRotation": []}, "memoryRotation must be an object"),
    ],
)
def test_out_of_range_config_json_is_refused_with_a_log_line(project, home, log_lines, legacy, error):
    (layout.memory_dir(project) / "config.json").write_text(json.dumps(legacy))
    settings = settings_for(project, home)
    assert settings.carryover_tokens < settings.threshold_tokens and settings.threshold_tokens >= 95
    assert settings.save_interval >= 1
    refused = [line for line in log_lines() if line["event"] == "memory_config_invalid"]
    assert refused and error in refused[0]["error"]


def test_carryover_equal_to_threshold_is_refused(project, home, log_lines):
    """Equal is not below: a carry-over as big as the threshold would rotate again at once, for ever."""
    (home / "config.toml").write_text("[memory-rotation]\nthreshold_tokens = 5000\ncarryover_tokens = 5000\n")
    assert settings_for(project, home) == Settings()
    refused = [line for line in log_lines() if line["event"] == "memory_config_invalid"]
    assert [r["error"] for r in refused] == ["carryover_tokens (5000) must be below threshold_tokens (5000)"]
