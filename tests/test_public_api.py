"""What a plugin author may import is listed, documented, and all plugins keep to it."""

import re
from pathlib import Path

import omcm_core

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"^\s*(from|import)\s+omcm_core\.(_runtime|_cli)\b|omcm_core\.(_runtime|_cli)\b", re.M)


def test_every_public_name_resolves():
    for name in omcm_core.__all__:
        assert getattr(omcm_core, name) is not None, name


def test_every_public_name_is_documented_for_plugin_authors():
    manual = (ROOT / "docs" / "writing-plugins.md").read_text()
    undocumented = [name for name in omcm_core.__all__ if name != "__version__" and f"`{name}`" not in manual]
    assert undocumented == [], f"add these to docs/writing-plugins.md: {undocumented}"


def test_no_plugin_or_example_imports_a_private_module():
    offenders = []
    for folder in ("plugins", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            if ".venv" in path.parts or "build" in path.parts:
                continue
            if PRIVATE.search(path.read_text(encoding="utf-8", errors="replace")):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], f"these import omcm_core._runtime or omcm_core._cli: {offenders}"


def test_the_public_api_does_not_export_the_spec_marker():
    assert "hookspec" not in omcm_core.__all__
