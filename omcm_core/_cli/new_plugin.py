"""``omcm new-plugin NAME``: write a new plugin's distribution, tested and installable.

Like ``cookiecutter gh:simonw/datasette-plugin`` or ``llm``'s plugin template,
without the extra tool: the templates ship inside omcm-core
(``omcm_core/_cli/plugin_template``), one code and one test snippet per hook.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from string import Template

from omcm_core._cli.invocation import Invocation
from omcm_core._cli.plugin_install import omcm_command

#: Hooks a new plugin can start with, in the order the generated module lists them.
HOOKS = (
    "pre_tool",
    "post_tool",
    "session_start",
    "session_end",
    "user_prompt_submit",
    "stop",
    "pre_compact",
    "stop_failure",
    "permission_request",
    "notification",
    "subagent_start",
    "post_tool_batch",
)


def _all_hooks() -> tuple[str, ...]:
    """Every hookspec, in the order ``omcm_core.hookspecs`` defines them."""
    from omcm_core import hookspecs

    marker = f"{hookspecs.PROJECT}_spec"
    specs = [f for f in vars(hookspecs).values() if callable(f) and hasattr(f, marker)]
    return tuple(f.__name__ for f in sorted(specs, key=lambda f: f.__code__.co_firstlineno))


#: Every hook ``--hooks`` takes: those in :data:`HOOKS` come with a worked example and its test;
#: the others get a stub that answers nothing and a test of it (the hook's contract: docs/hooks.md).
ALL_HOOKS = _all_hooks()
# A distribution name as packaging accepts it: letters and digits, with . _ - inside.
_VALID = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


class BadName(ValueError):
    """NAME cannot become a plugin name."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "new-plugin",
        help="write a new plugin's distribution (pyproject, package, README, passing tests)",
        description="Write omcm-NAME/: a pip-installable plugin with the chosen hooks and tests that pass.",
    )
    p.add_argument(
        "name", metavar="NAME", help="the plugin's name, e.g. rate-limit (omcm- is added for the distribution)"
    )
    p.add_argument(
        "--dir", type=Path, metavar="PATH", help="the folder to create (default: ./omcm-NAME); it must not exist"
    )
    p.add_argument(
        "--hooks",
        metavar="HOOK,...",
        default="pre_tool",
        help=f"comma-separated hooks to implement (default: pre_tool); any of {', '.join(ALL_HOOKS)}. "
        f"With a worked example: {', '.join(HOOKS)}; the others start as a stub (docs/hooks.md says what they answer)",
    )
    p.set_defaults(run=run)


def names_for(raw: str) -> dict[str, str]:
    """NAME -> the plugin, distribution, package and table-prefix names (PEP 503 normalised)."""
    if not _VALID.match(raw):
        raise BadName(
            f"{raw!r} is not a valid name: use letters, digits and - (e.g. rate-limit), starting and ending with a letter or digit"
        )
    plugin = re.sub(r"[-_.]+", "-", raw).lower()
    plugin = plugin.removeprefix("omcm-")
    if not plugin or plugin == "omcm" or plugin == "core":
        raise BadName(f"{raw!r} names omcm itself: choose a name for what your plugin does")
    package = "omcm_" + plugin.replace("-", "_")
    return {"plugin": plugin, "dist": f"omcm-{plugin}", "package": package, "table": package.removeprefix("omcm_")}


def hooks_for(raw: str) -> list[str]:
    from omcm_core._runtime.hook_checks import did_you_mean

    chosen = [h.strip() for h in raw.split(",") if h.strip()]
    unknown = [h for h in chosen if h not in ALL_HOOKS]
    if not chosen:
        raise BadName(f"no hook given: choose from {', '.join(ALL_HOOKS)}")
    if unknown:
        named = ", ".join(f"{h} (did you mean {c}?)" if (c := did_you_mean(h, ALL_HOOKS)) else h for h in unknown)
        raise BadName(f"unknown hook(s) {named}: the hooks are {', '.join(ALL_HOOKS)}")
    return [h for h in ALL_HOOKS if h in chosen]


def _stub(hook: str, names: dict[str, str]) -> tuple[str, str]:
    """The code and test of a hook with no worked example: a stub answering nothing, tested as it is."""
    import inspect

    from omcm_core import hookspecs
    from omcm_core.events import EVENTS

    function = getattr(hookspecs, hook)
    args = ", ".join(inspect.signature(function).parameters)
    summary = (inspect.getdoc(function) or hook).splitlines()[0].rstrip(".")
    code = (
        f"\n\n@hookimpl\ndef {hook}({args}):\n"
        f'    """{summary}: answer as docs/hooks.md#{hook} says (new-plugin has no example of it)."""\n'
        "    return None\n"
    )
    # any_event answers the events a newer client adds: one omcm does not know stands for them.
    event = "SomeNewerEvent" if hook == "any_event" else next((e.name for e in EVENTS.values() if e.hook == hook), None)
    if event is not None:
        test = (
            f"\n\ndef test_{hook}_answers_nothing_yet(omcm_dispatch):\n"
            f'    assert dispatcher(omcm_dispatch)(testing.hook_payload("{event}")) is None\n'
        )
    else:
        call = ", ".join("object()" for _ in inspect.signature(function).parameters)
        test = f"\n\ndef test_{hook}_answers_nothing_yet():\n    assert {names['package']}.{hook}({call}) is None\n"
    return code, test


def render(names: dict[str, str], hooks: list[str]) -> dict[str, str]:
    """The new distribution's files: relative path -> text."""
    from importlib.resources import files

    root = files("omcm_core._cli") / "plugin_template"

    def fill(name: str, **more: str) -> str:
        return Template(root.joinpath(name).read_text(encoding="utf-8")).substitute(names, **more)

    stubs = {hook: _stub(hook, names) for hook in hooks if hook not in HOOKS}
    code = "".join(stubs[hook][0] if hook in stubs else fill(f"hooks/{hook}.py.tmpl") for hook in hooks)
    tests = "".join(stubs[hook][1] if hook in stubs else fill(f"hooks/{hook}_test.py.tmpl") for hook in hooks)
    plugin = names["plugin"]
    return {
        "pyproject.toml": fill("pyproject.toml.tmpl"),
        "README.md": fill("README.md.tmpl", hook_list=", ".join(f"`{h}`" for h in hooks)),
        f"{names['package']}/__init__.py": fill("package.py.tmpl", hooks=code),
        f"tests/test_{plugin.replace('-', '_')}.py": fill("test_plugin.py.tmpl", tests=tests),
    }


def write(target: Path, rendered: dict[str, str]) -> None:
    """Create ``target`` (never an existing one) and the files in it."""
    target.mkdir(parents=True, exist_ok=False)
    for relative, text in rendered.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run(args: argparse.Namespace, inv: Invocation) -> int:
    try:
        names = names_for(args.name)
        hooks = hooks_for(args.hooks)
    except BadName as exc:
        print(f"omcm new-plugin: {exc}", file=sys.stderr)
        return 2
    shown = args.dir if args.dir is not None else Path(names["dist"])  # as the user would type it
    target = Path(inv.cwd) / shown
    if target.exists() or target.is_symlink():
        print(f"omcm new-plugin: {shown} already exists; nothing written", file=sys.stderr)
        return 1
    try:
        write(target, render(names, hooks))
    except OSError as exc:
        print(f"omcm new-plugin: cannot write {shown}: {exc}", file=sys.stderr)
        return 1
    print(
        f"Plugin {names['plugin']}: distribution {names['dist']}, package {names['package']}, hooks {', '.join(hooks)}"
    )
    print(f"Created {shown}/")
    for hook in hooks:
        if hook not in HOOKS:
            print(f"  {hook}: no worked example for it yet: a stub answering nothing (see docs/hooks.md#{hook})")
    print("Next:")
    print(f"  cd {shown}")
    # The commands of this installation (its omcm, its Python): a pipx or uv tool environment has no pytest on PATH.
    omcm = omcm_command(inv.env)
    print(f"  {omcm} plugins install -e '.[test]'   # into omcm's own environment, editable; brings pytest")
    print(f"  {shlex.quote(sys.executable)} -m pytest   # omcm's Python: its pytest and omcm_core.testing")
    print(f"  {omcm} plugins                        # lists {names['plugin']}")
    return 0
