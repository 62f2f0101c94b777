"""docs/hooks.md, the hook reference, rendered from the hookspecs and the event table.

``python -m omcm_core._hooks_doc > docs/hooks.md`` writes it; a test fails when
the file differs from :func:`render`, so the reference never drifts from the
code it describes (``omcm_core.hookspecs``, ``omcm_core.events``,
``omcm_core.records`` and new-plugin's worked examples).
"""

from __future__ import annotations

import inspect
from typing import Any

import attrs

HEADER = """\
# Hook reference

<!-- Rendered by `python -m omcm_core._hooks_doc > docs/hooks.md` from omcm_core/hookspecs.py,
omcm_core/events.py and omcm_core/records.py; tests/test_hooks_doc.py fails when it is stale. -->

Every hook a plugin can implement, in the order `omcm_core.hookspecs` defines
them: its signature, the Claude Code events that call it (with the oldest client
that sends each, the time Claude Code waits, and which `Result` fields the
client honours there: any other field is dropped and logged), its contract,
the fields of the record it receives, and an example. The guide is
[writing-plugins.md](writing-plugins.md).

Common to every hook: take only the arguments you use and give them no default
value (omcm refuses the plugin otherwise); return `None` ("no opinion") or a
`Result`; each plugin runs on its own within `[core] plugin_budget_ms`; label
context you give with `[your-plugin] `.
"""


def _hooks() -> list[Any]:
    from omcm_core import hookspecs

    marker = f"{hookspecs.PROJECT}_spec"
    specs = [f for f in vars(hookspecs).values() if callable(f) and hasattr(f, marker)]
    return sorted(specs, key=lambda f: f.__code__.co_firstlineno)


def honoured(spec: Any) -> list[str]:
    """The ``Result`` fields Claude Code honours on the event of ``spec``, as the merge renders them."""
    out = []
    if spec.permission:
        out.append(f"`permission` ({'/'.join(spec.permissions)}) + `reason`")
    if spec.decision:
        out.append("`permission` allow/deny (→ `decision.behavior`), `reason`, `updated_input`, `updated_permissions`")
    if spec.rewrite:
        out.append("`updated_input`")
    if spec.block:
        out.append("`block` + `reason`")
    if spec.context:
        out.append("`additional_context`" + ("" if spec.budget_context else " (a continuation, not cut by the budget)"))
    if spec.retry:
        out.append("`retry`")
    if spec.watch_paths:
        out.append("`watch_paths`")
    if spec.worktree_path:
        out.append("`worktree_path`" + (" (printed as plain text)" if spec.plain_stdout else ""))
    if spec.elicitation:
        out.append("`elicitation_action`, `elicitation_content`")
    if spec.display:
        out.append("`display_content`")
    if spec.system_message:
        out.append("`system_message`")
    if spec.halt:
        out.append("`halt` + `halt_reason` (`continue: false`)")
    return out or ["nothing (side effects only)"]


def _events_table(hook: str) -> list[str]:
    from omcm_core.events import EVENTS, GENERIC

    specs = [s for s in EVENTS.values() if s.hook == hook] or ([GENERIC] if hook == GENERIC.hook else [])
    if not specs:
        return ["Called by omcm itself, not by a Claude Code event.", ""]
    lines = ["| event | minimum client | Claude Code waits | honoured |", "|---|---|---|---|"]
    for spec in specs:
        name = "any event omcm does not know" if spec.name == "*" else spec.name
        lines.append(f"| {name} | {spec.min_client or 'any'} | {spec.timeout_s:g} s | {', '.join(honoured(spec))} |")
    return [*lines, ""]


def _type_name(record: type, field: str, annotation: object) -> str:
    """A field's type as written in the source.

    The class's own annotation strings are read first: cattrs resolves attrs field types in place the
    first time a record is structured, and a resolved `Any` prints as `typing.Any` on Python 3.10, so
    `attrs.fields` alone would render differently depending on what ran before.
    """
    for klass in record.__mro__:
        written = vars(klass).get("__annotations__", {}).get(field)
        if isinstance(written, str):
            return written
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).removeprefix("typing.")


def _record(hook: Any) -> list[str]:
    annotation = inspect.signature(hook).parameters.get("event")
    if annotation is None:
        return []
    from omcm_core import records

    record = getattr(records, str(annotation.annotation), None)
    if record is None or not attrs.has(record):
        return []
    lines = [f"`event` is a `{record.__name__}`: {(inspect.getdoc(record) or '').splitlines()[0]}", ""]
    lines += ["| field | type |", "|---|---|"]
    # A pipe inside a table cell, even in code, ends the cell: escaped.
    lines += [
        f"| `{f.name}` | `{_type_name(record, f.name, f.type).replace('|', chr(92) + '|')}` |"
        for f in attrs.fields(record)
    ]
    return [*lines, ""]


def _example(hook: Any) -> list[str]:
    from omcm_core._cli import new_plugin

    name = hook.__name__
    if name in new_plugin.HOOKS:
        from importlib.resources import files

        template = (files("omcm_core._cli") / "plugin_template" / "hooks" / f"{name}.py.tmpl").read_text("utf-8")
        code = template.strip().replace("${plugin}", "my-plugin").replace("${table}", "my_plugin")
    else:
        code = new_plugin._stub(name, {"package": "omcm_my_plugin"})[0].strip()
    return ["Example:", "", "```python", code, "```", ""]


def render() -> str:
    """The whole of docs/hooks.md."""
    parts = [HEADER]
    for hook in _hooks():
        signature = str(inspect.signature(hook)).replace("'", "")
        doc = inspect.getdoc(hook) or ""
        section = [f"## `{hook.__name__}`", "", f"```python\ndef {hook.__name__}{signature}\n```", ""]
        section += _events_table(hook.__name__)
        section += [doc, ""]
        section += _record(hook)
        section += _example(hook)
        parts.append("\n".join(section))
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
