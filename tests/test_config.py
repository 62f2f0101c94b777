import json

import attrs
import pytest

from omcm_core import log
from omcm_core.config import Config, CoreConfig, Project, resolve_language


@attrs.frozen
class Sample:
    threshold: int = 5
    ratio: float = attrs.field(default=0.5, metadata=Project.free)
    name: str = attrs.field(default="x", metadata=Project.free)
    flags: tuple = ()
    enabled: bool = True


def test_project_overrides_home_and_env_overrides_both(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    (home).mkdir()
    (project / ".claude").mkdir(parents=True)
    (home / "config.toml").write_text("[sample]\nthreshold = 7\nname = 'home'\n")
    (project / ".claude" / "omcm.toml").write_text("[sample]\nname = 'project'\nratio = 1\n")
    config = Config.load(home, project, {"OMCM__SAMPLE__FLAGS": '["a", "b"]'})
    assert config.section("sample", Sample) == Sample(threshold=7, ratio=1.0, name="project", flags=("a", "b"))


def test_bad_keys_fall_back_to_defaults_and_are_logged(tmp_path):
    home = tmp_path
    log.configure(home)
    (home / "config.toml").write_text("[sample]\nthreshold = 'many'\nenabled = 1\nunknown = 3\nratio = 0.25\n")
    config = Config.load(home, None, {})
    assert config.section("sample", Sample) == Sample(ratio=0.25)
    logged = [json.loads(line) for line in (home / "logs" / "omcm.jsonl").read_text().splitlines()]
    assert {(e["event"], e["key"]) for e in logged} == {
        ("config_bad_value", "threshold"),
        ("config_bad_value", "enabled"),
        ("config_unknown_key", "unknown"),
    }


def test_invalid_toml_means_defaults(tmp_path):
    log.configure(tmp_path)
    (tmp_path / "config.toml").write_text("[core\nlanguage = ")
    assert Config.load(tmp_path, None, {}).section("core", CoreConfig) == CoreConfig()
    assert "config_invalid_toml" in (tmp_path / "logs" / "omcm.jsonl").read_text()


def test_env_section_with_dashes_and_validator(tmp_path):
    config = Config.load(tmp_path, None, {"OMCM__TOOL_COUNTER__READ_THRESHOLD": "9", "OMCM__CORE__LANGUAGE": "fr"})
    assert config.sections["tool-counter"] == {"read_threshold": 9}
    assert config.section("core", CoreConfig).language == "auto"  # "fr" fails the validator


def test_language_resolution():
    assert resolve_language("ko", {"LANG": "en_US.UTF-8"}) == "ko"
    assert resolve_language("auto", {"LANG": "ko_KR.UTF-8"}) == "ko"
    assert resolve_language("auto", {"LC_ALL": "en_GB.UTF-8", "LANG": "ko_KR.UTF-8"}) == "en"
    assert resolve_language("auto", {}) == "en"


def test_an_environment_value_is_parsed_once_and_never_shared(tmp_path):
    """The warm dispatcher loads the config on every call: a cached list must not carry one call's change."""
    env = {"OMCM__SAMPLE__FLAGS": '["a", "b"]', "OMCM__SAMPLE__NAME": "not toml {", "OMCM__SAMPLE__N": "3"}
    first = Config.load(tmp_path, None, env)
    first.sections["sample"]["flags"].append("changed")
    second = Config.load(tmp_path, None, env)
    assert second.sections["sample"] == {"flags": ["a", "b"], "name": "not toml {", "n": 3}


@pytest.mark.parametrize(
    ("rule", "user", "project", "expected"),
    [
        ("add", ("a",), ["b", "a"], ("a", "b")),
        ("add", ["a"], [], ["a"]),
        ("add", ("a",), "b", attrs.NOTHING),  # not a list: ignored
        ("lower", 3, 50, 3),
        ("lower", 3, 2.5, 2.5),
        ("lower", 3, True, attrs.NOTHING),  # a bool is no number
        ("raise", 3, 1, 3),
        ("raise", 3, 9, 9),
        ("off", False, True, False),
        ("off", True, False, False),
        ("on", False, True, True),
        ("on", True, False, True),
        ("off", True, "false", attrs.NOTHING),
        ("free", 1, 2, attrs.NOTHING),  # free keys are not combined: the project's value is used as it is
    ],
)
def test_a_projects_value_moves_the_users_only_the_declared_way(rule, user, project, expected):
    from omcm_core._config.rules import combine

    assert combine(rule, user, project) == expected


@pytest.mark.parametrize(
    ("written", "key", "section"),
    [
        ("fail_closed", "fail_closed", "fail-closed"),
        ("Fail-Closed", "fail_closed", "fail-closed"),
        (" FAIL-CLOSED ", "fail_closed", "fail-closed"),
        ("Tool_Counter", "tool_counter", "tool-counter"),
        ("CORE", "core", "core"),
    ],
)
def test_one_spelling_per_key_and_section(written, key, section):
    from omcm_core.config import key_name, section_name

    assert (key_name(written), section_name(written)) == (key, section)
