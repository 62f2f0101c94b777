"""Registration: the Claude Code settings files that run omcm, and whether they cover every plugin's events.

A plugin that gains a hook (say ``pre_compact``) answers nothing until its event is
registered, which only ``omcm install`` does; an event registered for a hook no
plugin implements any more starts a process per call for nothing.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

from omcm_core._cli.doctor.records import Check, Probe, error, ok, warning
from omcm_core._cli.install import InstallError, installed_commands, settings_path
from omcm_core.files import read_capped


def registration(probe: Probe) -> Iterator[Check]:
    files = _settings_files(probe)
    broken = {}
    registered: dict[Path, set[str]] = {}
    for path, scope in files.items():
        problem = _json_problem(path)
        if problem:
            broken[path] = problem
            line, text = problem
            yield error(
                f"settings.{scope}.invalid",
                f"{probe.tilde(path)} is not valid JSON ({text}); Claude Code cannot use it and omcm will not edit it",
                fix=f"edit {probe.tilde(path)} line {line}: {text}" if line else f"edit {probe.tilde(path)}: {text}",
            )
            continue
        events = {event for event, _ in installed_commands(path)}
        if events:
            registered[path] = events
    plugin = _plugin_route(probe, files)
    if plugin:
        yield ok("settings.plugin", plugin, data={"root": probe.env.get("CLAUDE_PLUGIN_ROOT", "")})
        yield from _plugin_environment(probe)
        for path in registered:  # both routes: Claude Code runs every hook twice
            yield warning(
                f"settings.{files[path]}.twice",
                f"{probe.tilde(path)} also runs omcm, so every hook runs twice",
                fix=f"omcm uninstall{_install_command(path, files[path], probe)[len('omcm install') :]}",
            )
        return
    if not registered:
        # `omcm install` refuses a broken file: the edit above is the fix, and the only one shown.
        if settings_path("user", None, probe.env) not in broken:
            yield error("settings.none", "omcm is not registered in any Claude Code settings file", fix="omcm install")
        return
    wanted = _wanted_events(probe)
    for path, events in registered.items():
        yield from _coverage(probe, path, files[path], events, wanted)
    yield from _client_unknown(probe)


def _client_unknown(probe: Probe) -> Iterator[Check]:
    """Events left out because `claude` was not found: say why, not "run omcm install" (which would leave them out again)."""
    from omcm_core._cli.install import client_version
    from omcm_core.events import EVENTS

    hooks = {hook for plugin in probe.manager.enabled() for hook in plugin.hooks}
    needs = [spec for spec in EVENTS.values() if spec.hook in hooks and spec.min_client]
    if needs and client_version() is None:
        names = ", ".join(spec.name for spec in needs)
        yield warning(
            "settings.client_unknown",
            f"{names} not registered: `claude` is not on PATH, so omcm cannot tell whether your Claude Code "
            f"knows {'them' if len(needs) > 1 else 'it'} (a client that does not would reject the settings file)",
            fix="omcm install  # from a shell where `claude --version` works",
        )


def _plugin_route(probe: Probe, files: dict[Path, str]) -> str | None:
    """How omcm runs as a Claude Code plugin (``claude plugin install omcm@…``), if it does.

    Inside a hook the client says so (CLAUDE_PLUGIN_ROOT); from a shell, a settings
    file enables a plugin named omcm, or this omcm is the plugin's own environment.
    """
    if probe.env.get("CLAUDE_PLUGIN_ROOT"):
        return f"loaded as a Claude Code plugin from {probe.env['CLAUDE_PLUGIN_ROOT']}"
    for path in files:
        try:
            enabled = json.loads(read_capped(path)).get("enabledPlugins") or {}
        except (OSError, ValueError, AttributeError):
            continue
        names = [k for k, on in enabled.items() if on is True and isinstance(k, str) and k.startswith("omcm@")]
        if names:
            return f"enabled as the Claude Code plugin {names[0]} in {probe.tilde(path)}"
    return None


def _plugin_environment(probe: Probe) -> Iterator[Check]:
    """The plugin's own environment (bin/omcm_setup.py): a failed build leaves its hooks silent."""
    home = Path(probe.env.get("HOME") or Path.home())
    for failed in sorted((home / ".claude" / "plugins" / "data").glob("omcm-*/setup.failed")):
        log = probe.tilde(failed.parent / "setup.log")
        yield error(
            "settings.plugin.setup_failed",
            f"the plugin could not build its Python environment, so its hooks do nothing (see {log})",
            fix=f"rm {shlex.quote(probe.tilde(failed))}  # the next Claude Code session tries again",
        )


def _settings_files(probe: Probe) -> dict[Path, str]:
    """Every settings file omcm installed into (its manifests) or may live in, -> its scope name."""
    files: dict[Path, str] = {}
    for scope in ("user", "project", "local"):
        try:
            path = settings_path(scope, probe.project, probe.env)
        except InstallError:
            continue
        if path.exists() and path.resolve() not in {p.resolve() for p in files}:
            files[path] = scope
    for manifest in sorted((probe.home / "installs").glob("*.json")):
        try:
            data = json.loads(manifest.read_text())
            path = Path(data["settings"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if data.get("agent", "claude") != "claude":
            continue  # another agent's file: its own doctor section (`omcm doctor --agent NAME`)
        if path.exists() and path.resolve() not in {p.resolve() for p in files}:
            files[path] = "other"
    return files


def _json_problem(path: Path) -> tuple[int, str] | None:
    """(line, what is wrong) when ``path`` holds something other than a JSON object."""
    try:
        raw = read_capped(path)  # a project's settings.json may be a link to /dev/zero
    except OSError as exc:
        return 0, f"unreadable: {exc.strerror or exc}"
    except ValueError as exc:
        return 0, f"unreadable: {exc}"
    if not raw.strip():
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return raw[: exc.start].count(b"\n") + 1, "not UTF-8 text"
    except json.JSONDecodeError as exc:
        return exc.lineno, f"{exc.msg} at column {exc.colno}"
    return None if isinstance(data, dict) else (1, "the file must hold one JSON object { ... }")


def _wanted_events(probe: Probe) -> dict[str, list[str]]:
    """Event -> the enabled plugins whose hooks answer it (what `omcm install` would register now)."""
    from omcm_core._cli.install import client_version
    from omcm_core.events import EVENTS, events_for_hooks

    hooks: dict[str, list[str]] = {}
    for plugin in probe.manager.enabled():
        for hook in plugin.hooks:
            hooks.setdefault(hook, []).append(plugin.name)
    events = events_for_hooks(set(hooks), client_version())
    return {event: sorted(hooks[EVENTS[event].hook]) for event in events}


def _install_command(path: Path, scope: str, probe: Probe) -> str:
    if scope == "user":
        return "omcm install"
    if scope in ("project", "local"):
        return f"omcm install --scope {scope}"
    return f"omcm install --settings {shlex.quote(probe.tilde(path))}"


def _coverage(probe: Probe, path: Path, scope: str, events: set[str], wanted: dict[str, list[str]]) -> Iterator[Check]:
    from omcm_core.events import EVENTS

    shown = probe.tilde(path)
    ordered = sorted(events, key=lambda e: (list(EVENTS).index(e) if e in EVENTS else len(EVENTS), e))
    data = {"path": str(path), "scope": scope, "events": ordered}
    yield ok(f"settings.{scope}", f"{shown} runs omcm for {', '.join(ordered)}", data=data)
    install = _install_command(path, scope, probe)
    for event in wanted:
        if event not in events:
            hook, plugins = EVENTS[event].hook, ", ".join(wanted[event])
            yield error(
                f"settings.{scope}.missing.{event}",
                f"{event} is not registered in {shown}, so {plugins}'s {hook} hook never runs",
                fix=install,
            )
    for event in sorted(events - set(wanted)):
        yield warning(
            f"settings.{scope}.unused.{event}",
            f"{event} is registered in {shown} but no enabled plugin answers it (a process per call for nothing)",
            fix=f"omcm uninstall{install[len('omcm install') :]} && {install}",
        )
    yield from _commands(probe, path, scope, f"omcm uninstall{install[len('omcm install') :]} && {install}")


def _programs(command: str) -> tuple[list[str], bool]:
    """The absolute paths a registered command runs (interpreter, fast_hook.py), and whether it is the old file form.

    ``python -S .../fast_hook.py EVENT`` (before the ``-c`` form) exits 2, a blocking
    error, once that file is gone.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return [], False
    head = words[:3] if "-c" not in words[:3] else [words[0]] + words[3:5]
    programs = [w for w in head if w.startswith("/") and (w is words[0] or w.endswith(("fast_hook.py", "omcm")))]
    return programs, any(w.endswith("fast_hook.py") for w in words[:3])


def _commands(probe: Probe, path: Path, scope: str, reinstall: str) -> Iterator[Check]:
    """Commands that cannot run, run twice, run another omcm (after a move to pipx, say), or could block."""
    from collections import Counter

    import omcm_core

    shown, ours = probe.tilde(path), (Path(omcm_core.__file__).parent / "fast_hook.py").resolve()
    found = installed_commands(path)
    gone, others, old_form = set(), set(), set()
    for event, command in found:
        programs, old = _programs(command)
        gone |= {w for w in programs if not Path(w).exists()}
        others |= {w for w in programs if w.endswith("fast_hook.py") and Path(w).resolve() != ours}
        if old:
            old_form.add(event)
    for program in sorted(gone):
        yield error(
            f"settings.{scope}.missing_program",
            f"{shown} runs {program}, which does not exist (omcm was moved or reinstalled)",
            fix=reinstall,
        )
    if old_form and not gone:
        yield warning(
            f"settings.{scope}.old_form",
            f"{shown} runs omcm's hook file directly, which blocks every prompt once a reinstall moves it",
            fix=reinstall,
        )
    twice = sorted(event for event, n in Counter(event for event, _ in found).items() if n > 1)
    if twice:
        yield error(
            f"settings.{scope}.twice",
            f"{shown} runs omcm more than once for {', '.join(twice)} (two installations registered)",
            fix=reinstall,
        )
    for other in sorted(others - gone):
        yield warning(
            f"settings.{scope}.other_install",
            f"{shown} runs the omcm of {probe.tilde(Path(other).parent.parent)}, not this one ({probe.tilde(ours.parent.parent)})",
            fix=reinstall,
        )
