"""``omcm install|uninstall|doctor --agent codex``: Codex's hooks.json, its trust records and MCP entry in config.toml.

The trust key and hash values below are what ``codex app-server`` 0.171.0 reported
(``hooks/list``: ``key``, ``currentHash``) for hooks.json files written by hand;
tests/e2e/test_codex_e2e.py shows ``codex exec`` running hooks trusted this way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omcm_core._cli.agent_setup import codex_toml as toml
from omcm_core._cli.agent_setup.codex import codex_home, shape
from omcm_core.agents.codex import HOOK_EVENTS


@pytest.mark.parametrize(
    ("event", "handler", "matcher", "expected"),
    [
        (
            "PreToolUse",
            {"type": "command", "command": "echo hi", "timeout": 30},
            "Bash",
            "sha256:65f88c378f287741bd683c759c7306a773bbb410594d61f7a39b723f8ab8eb45",
        ),
        (  # non-ASCII and a quote: serde_json's form, UTF-8 unescaped
            "UserPromptSubmit",
            {"type": "command", "command": "echo 'é\"x'", "timeout": 10},
            None,
            "sha256:40d043a83a30494c6d85fce84e2c1f1a9be4d08cd39e4f6e283b9e5e9dec4bc2",
        ),
        (  # no timeout: Codex's 600 s default is hashed
            "UserPromptSubmit",
            {"type": "command", "command": "true"},
            None,
            "sha256:0c5faf9b4c95d27d454f681f22931c6d071e6b0ab11bcbf2e461c464355de34d",
        ),
        (  # Codex reads no matcher on UserPromptSubmit: none is hashed
            "UserPromptSubmit",
            {"type": "command", "command": "true"},
            "anything",
            "sha256:0c5faf9b4c95d27d454f681f22931c6d071e6b0ab11bcbf2e461c464355de34d",
        ),
    ],
)
def test_trusted_hash_is_the_one_codex_reports(event, handler, matcher, expected):
    assert toml.trusted_hash(event, handler, matcher) == expected


@pytest.mark.parametrize(
    ("event", "group", "handler", "key"),
    [
        ("PreToolUse", 0, 0, "/h/.codex/hooks.json:pre_tool_use:0:0"),
        ("UserPromptSubmit", 0, 1, "/h/.codex/hooks.json:user_prompt_submit:0:1"),
        ("SessionEnd", 2, 0, "/h/.codex/hooks.json:session_end:2:0"),
        ("SubagentStart", 1, 3, "/h/.codex/hooks.json:subagent_start:1:3"),
    ],
)
def test_hook_key_names_file_event_group_and_handler(event, group, handler, key):
    assert toml.hook_key("/h/.codex/hooks.json", event, group, handler) == key


@pytest.mark.parametrize(
    ("value", "quoted"),
    [("plain", '"plain"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("a\nb", '"a\\u000Ab"'), ("é", '"é"')],
)
def test_basic_string_escapes_what_toml_needs(value, quoted):
    assert toml.basic_string(value) == quoted
    assert toml.parse(f"k = {quoted}")["k"] == value


@pytest.mark.parametrize(
    ("event", "entry", "timeout"),
    [
        ("PreToolUse", {"type": "command", "command": "x", "timeout": 15}, 15),
        ("SessionEnd", {"type": "command", "command": "x", "timeout": 1.5}, 2),  # whole seconds, rounded up
        ("SessionEnd", {"type": "command", "command": "x", "timeout": 20}, 3),  # Codex's SessionEnd limit
        ("Stop", {"type": "command", "command": "x", "timeout": 0.2, "onFailure": "block"}, 1),
    ],
)
def test_shape_gives_codex_whole_seconds_and_no_claude_only_keys(event, entry, timeout):
    shaped = shape(event, entry)
    assert shaped["timeout"] == timeout and isinstance(shaped["timeout"], int)
    assert "onFailure" not in shaped and shaped["command"] == "x"


CONFIG = """# mine
model = "o3"

[projects."/x"]
trust_level = "trusted"

# about the next table
[mcp_servers.other]
command = "other"
"""


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('[projects."/x"]', '# mine\nmodel = "o3"\n\n# about the next table\n[mcp_servers.other]\ncommand = "other"\n'),
        (
            "[mcp_servers.other]",
            '# mine\nmodel = "o3"\n\n[projects."/x"]\ntrust_level = "trusted"\n\n# about the next table\n',
        ),
        ("[nothing]", CONFIG),
    ],
)
def test_remove_table_takes_the_table_and_leaves_the_next_ones_comment(header, expected):
    assert toml.remove_table(CONFIG, header)[0] == expected


def test_append_then_remove_gives_the_text_back():
    tables = [toml.state_table("/h/hooks.json:stop:0:0", "sha256:ab"), toml.mcp_table("/bin/omcm", ["mcp"])]
    for text in (CONFIG, CONFIG.rstrip("\n"), ""):
        added = toml.append_tables(text, tables)
        parsed = toml.parse(added)
        assert parsed["hooks"]["state"]["/h/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:ab"}
        assert parsed["mcp_servers"]["omcm"] == {"command": "/bin/omcm", "args": ["mcp"]}
        back = added
        for header in (toml.state_header("/h/hooks.json:stop:0:0"), toml.MCP_HEADER):
            back = toml.remove_table(back, header)[0]
        assert toml.parse(back) == toml.parse(text)
        assert back.rstrip("\n") == text.rstrip("\n")


def test_an_edit_that_would_change_the_users_values_is_refused():
    # A line in a multi-line array that looks like a header: cutting there would break the user's value.
    text = '[hooks.state."k"]\ntrusted_hash = "sha256:x"\nnested = [\n[1, 2],\n]\n'
    cut, _ = toml.remove_table(text, '[hooks.state."k"]')
    with pytest.raises(toml.TomlEditError):
        toml.checked(text, cut, ["k"], mcp=False)
    assert toml.checked(CONFIG, CONFIG + "\n" + toml.state_table("k", "sha256:1"), ["k"], mcp=False)


def test_codex_home_is_named_as_codex_names_it(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert codex_home({"CODEX_HOME": str(tmp_path / "link"), "HOME": "/h"}) == real  # Codex canonicalises it
    assert codex_home({"HOME": str(tmp_path / "link")}) == tmp_path / "link" / ".codex"  # but not ~/.codex


# --- through the CLI, as a user runs it ----------------------------------------------------------------


@pytest.fixture
def world(tmp_path, bash_guard_site):
    home, omcm_home = tmp_path / "home", tmp_path / "omcm-home"
    (home / ".codex").mkdir(parents=True)
    omcm_home.mkdir(mode=0o700)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "OMCM_HOME": str(omcm_home),
        "PYTHONPATH": str(bash_guard_site),
        "OMCM_LOAD_PLUGINS": "bash-guard,tool-counter",
        "OMCM_NATIVE_CLIENT": "0",
    }
    return home / ".codex", omcm_home, env


def omcm(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "omcm_core", *args], env=env, capture_output=True, text=True, timeout=120
    )


def _records(codex: Path) -> dict[str, dict]:
    return toml.parse((codex / "config.toml").read_text()).get("hooks", {}).get("state", {})


def _ours(codex: Path) -> list[tuple[str, str, dict]]:
    """(key, event, handler) of each handler running omcm, as Codex would key it."""
    data = json.loads((codex / "hooks.json").read_text())
    return [
        (toml.hook_key(str(codex / "hooks.json"), event, g, h), event, handler)
        for event, groups in data["hooks"].items()
        for g, group in enumerate(groups)
        for h, handler in enumerate(group["hooks"])
        if "OMCM_AGENT=codex " in handler["command"]
    ]


def test_install_trusts_exactly_its_handlers_and_uninstall_restores_both_files(world):
    codex, _home, env = world
    (codex / "config.toml").write_text(CONFIG)
    theirs = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]}}
    (codex / "hooks.json").write_text(json.dumps(theirs))
    before = {p.name: p.read_bytes() for p in codex.iterdir()}
    done = omcm(env, "install", "--agent", "codex")
    assert done.returncode == 0, done.stderr
    ours = _ours(codex)
    events = {e for _k, e, _h in ours}
    assert {"PreToolUse", "SessionEnd"} <= events <= set(HOOK_EVENTS), events
    assert all(isinstance(h["timeout"], int) for _k, _e, h in ours)
    assert next(h for _k, e, h in ours if e == "SessionEnd")["timeout"] <= 3
    records = _records(codex)
    assert {k: r["trusted_hash"] for k, r in records.items()} == {k: toml.trusted_hash(e, h) for k, e, h in ours}, (
        "one record per omcm handler, and none for the user's guard.sh"
    )
    assert toml.parse((codex / "config.toml").read_text())["projects"] == {"/x": {"trust_level": "trusted"}}
    assert (codex / "config.toml").read_text().startswith(CONFIG)
    installed = {p.name: p.read_bytes() for p in codex.iterdir()}
    again = omcm(env, "install", "--agent", "codex")
    assert again.returncode == 0 and {p.name: p.read_bytes() for p in codex.iterdir()} == installed  # idempotent
    doctor = omcm(env, "doctor", "--agent", "codex")
    assert f"Codex trusts omcm's {len(ours)} hook(s)" in doctor.stdout, doctor.stdout
    done = omcm(env, "uninstall", "--agent", "codex")
    assert done.returncode == 0, done.stderr
    assert {p.name: p.read_bytes() for p in codex.iterdir()} == before


def test_a_rewritten_entry_gets_a_fresh_record_and_user_edits_survive_uninstall(world):
    codex, omcm_home, env = world
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    old = {k: r["trusted_hash"] for k, r in _records(codex).items()}
    with open(codex / "config.toml", "a") as handle:  # the user (or Codex) adds something meanwhile
        handle.write('\n[profiles.fast]\nmodel = "mini"\n')
    hooks = json.loads((codex / "hooks.json").read_text())
    hooks["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "mine.sh"}]}]
    (codex / "hooks.json").write_text(json.dumps(hooks))  # and a hook of their own
    (omcm_home / "config.toml").write_text('[core]\nfail_closed = ["bash-guard"]\n')  # PreToolUse's command changes
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    ours = _ours(codex)
    pre = next((k, h) for k, e, h in ours if e == "PreToolUse")
    assert "fail-closed" in pre[1]["command"]
    records = _records(codex)
    assert records[pre[0]]["trusted_hash"] == toml.trusted_hash("PreToolUse", pre[1]) != old[pre[0]]
    assert set(records) == {k for k, _e, _h in ours}
    assert omcm(env, "uninstall", "--agent", "codex").returncode == 0
    left = toml.parse((codex / "config.toml").read_text())
    assert left == {"profiles": {"fast": {"model": "mini"}}}
    assert json.loads((codex / "hooks.json").read_text()) == {  # their hook kept, omcm's gone
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine.sh"}]}]}
    }


def test_a_stale_record_at_omcms_position_is_replaced_then_put_back(world):
    codex, _home, env = world
    stale = f'[hooks.state."{codex / "hooks.json"}:pre_tool_use:0:0"]\nenabled = false\ntrusted_hash = "sha256:old"\n'
    (codex / "config.toml").write_text(stale)
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    key = next(k for k, e, _h in _ours(codex) if e == "PreToolUse")
    assert "enabled" not in _records(codex)[key]  # a leftover `enabled = false` would switch omcm's guard off
    assert omcm(env, "uninstall", "--agent", "codex").returncode == 0
    assert (codex / "config.toml").read_text() == stale


def test_the_users_own_mcp_entry_is_kept(world, tmp_path):
    codex, _home, env = world
    mine = '[mcp_servers.omcm]\ncommand = "my-own"\n'
    (codex / "config.toml").write_text(mine)
    env = {**env, "OMCM_LOAD_PLUGINS": "bash-guard,tool-counter,post-tool-observer"}
    done = omcm(env, "install", "--agent", "codex")
    assert done.returncode == 0, done.stderr
    if "mcp" in done.stdout:  # a plugin serving MCP tools is loaded
        assert "kept your own [mcp_servers.omcm]" in done.stdout
    assert toml.parse((codex / "config.toml").read_text())["mcp_servers"] == {"omcm": {"command": "my-own"}}
    assert omcm(env, "uninstall", "--agent", "codex").returncode == 0
    assert (codex / "config.toml").read_text() == mine


def test_an_unparsable_config_stops_install_before_anything_is_written(world):
    codex, _home, env = world
    (codex / "config.toml").write_text("model = \n")
    done = omcm(env, "install", "--agent", "codex")
    assert done.returncode == 2 and "not valid TOML" in done.stderr, done.stderr
    assert not (codex / "hooks.json").exists()
    assert (codex / "config.toml").read_text() == "model = \n"


def test_doctor_names_an_untrusted_handler_and_the_fix(world):
    codex, _home, env = world
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    key, event, handler = next(o for o in _ours(codex) if o[1] == "PreToolUse")
    text = (codex / "config.toml").read_text()
    (codex / "config.toml").write_text(text.replace(toml.trusted_hash(event, handler), "sha256:" + "0" * 64))
    doctor = omcm(env, "doctor", "--agent", "codex")
    assert "Codex skips 1 of omcm's hooks" in doctor.stdout and "PreToolUse (modified)" in doctor.stdout
    assert "omcm install --agent codex" in doctor.stdout
    assert doctor.returncode == 1
    assert omcm(env, "install", "--agent", "codex").returncode == 0  # the fix works
    assert "Codex trusts omcm's" in omcm(env, "doctor", "--agent", "codex").stdout


def test_codex_home_is_honoured(world, tmp_path):
    _codex, _home, env = world
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**env, "CODEX_HOME": str(elsewhere)}
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    keys = set(_records(elsewhere))
    assert keys and all(k.startswith(f"{elsewhere}/hooks.json:") for k in keys)
    assert not (_codex / "hooks.json").exists()


def test_doctor_names_a_registered_client_that_is_gone(world, tmp_path):
    """omcm upgraded or moved: the commands in hooks.json (as its manifest recorded them) run a file that is gone."""
    from omcm_core._cli.settings_file import _manifest_path, _through_links

    codex, omcm_home, env = world
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    here = str(Path(__import__("omcm_core").__file__).resolve().parent / "fast_hook.py")
    gone = str(tmp_path / "old-venv" / "omcm_core" / "fast_hook.py")
    manifest_file = _manifest_path(omcm_home, _through_links(codex / "hooks.json"))
    for path in (codex / "hooks.json", manifest_file):
        path.write_text(path.read_text().replace(here, gone))
    doctor = omcm(env, "doctor", "--agent", "codex")
    assert "Codex runs an omcm client that is gone" in doctor.stdout and gone in doctor.stdout, doctor.stdout
    assert omcm(env, "install", "--agent", "codex").returncode == 0  # the fix: the commands and their trust renewed
    doctor = omcm(env, "doctor", "--agent", "codex")
    assert "that is gone" not in doctor.stdout and "Codex trusts omcm's" in doctor.stdout, doctor.stdout


def test_an_inline_hooks_table_stops_install_with_a_clear_message(world):
    codex, _home, env = world
    inline = 'hooks = { state = { "x:stop:0:0" = { enabled = false } } }\n'
    (codex / "config.toml").write_text(inline)
    done = omcm(env, "install", "--agent", "codex")
    assert done.returncode == 2 and "defines hooks.state or mcp_servers inline" in done.stderr, done.stderr
    assert (codex / "config.toml").read_text() == inline
    assert not (codex / "hooks.json").exists()  # checked before anything was written


@pytest.mark.parametrize(
    ("agent", "argv"),
    [
        ("codex", ["install", "--settings", "{settings}", "--agent", "codex"]),
        (None, ["install", "--settings", "{settings}"]),
    ],
)
def test_repair_and_plugin_install_register_an_agents_file_again_for_that_agent(tmp_path, agent, argv):
    from omcm_core._cli.install import install
    from omcm_core._cli.settings_file import reinstall_argv

    settings = tmp_path / "hooks.json"
    install(tmp_path / "home", settings, ["Stop"], ["/opt/omcm"], agent=agent)
    assert reinstall_argv(tmp_path / "home", settings) == [a.format(settings=settings) for a in argv]


def test_install_again_with_settings_and_agent_as_repair_runs_it(world):
    """What `omcm plugins install` and the background repair run: `install --settings HOOKS.JSON --agent codex`."""
    codex, omcm_home, env = world
    assert omcm(env, "install", "--agent", "codex").returncode == 0
    installed = {p.name: p.read_bytes() for p in codex.iterdir()}
    from omcm_core._cli.settings_file import reinstall_argv

    again = omcm(env, *reinstall_argv(omcm_home, codex / "hooks.json"))
    assert again.returncode == 0, again.stderr
    assert {p.name: p.read_bytes() for p in codex.iterdir()} == installed
