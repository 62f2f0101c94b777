"""Every surface of a plugin besides its hooks, driven the way omcm drives it (``omcm_core.testing.omcm_plugin``).

Each helper goes through the real machinery with only the plugin under test
registered: ``omcm COMMAND`` through omcm's own parser and the ``commands``
hook, MCP tools through the server ``omcm mcp`` builds and the MCP SDK's own
client (in memory: no subprocess), the doctor report through ``omcm doctor``,
and settings through the files a user and a project write. Kept out of
``omcm_core.testing`` so that module stays the list of what authors use.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen


@frozen
class CliRun:
    """What ``omcm ARGS`` did: its exit code and what it printed."""

    code: int
    stdout: str
    stderr: str


@frozen
class McpAnswer:
    """A tool's answer as the model reads it (masked and cut by omcm), and whether it is an error."""

    text: str
    is_error: bool


@frozen
class McpToolInfo:
    """A tool as Claude sees it listed: its name, description and the JSON schema of its arguments."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


class PluginSurfaces:
    """One plugin (a module or object with ``@hookimpl`` functions) in a private OMCM_HOME and project."""

    def __init__(self, name: str, plugin: Any, home: Path, project: Path, env: Mapping[str, str]) -> None:
        self.name, self.plugin, self.home, self.project = name, plugin, home, project
        self.env = {**env, "OMCM_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        home.mkdir(mode=0o700, parents=True, exist_ok=True)  # as the first hook call would: owner-only

    def _invocation(self) -> Any:
        from omcm_core._cli.invocation import Invocation
        from omcm_core._failure_capture import recording_manager

        manager = recording_manager()
        info = manager.register(self.plugin, name=self.name)
        if not info.enabled:
            fix = f" (fix: {info.fix})" if info.fix else ""
            raise ValueError(f"plugin {self.name} could not be registered: {info.why}{fix}")
        inv = Invocation(dict(self.env), cwd=str(self.project))
        inv.__dict__["manager"] = manager  # the cached_property, filled: only this plugin, no entry points
        return inv

    def cli(self, *argv: str) -> CliRun:
        """``omcm ARGV`` as a user types it (the plugin's own subcommands included), in process."""
        from omcm_core import log
        from omcm_core._cli.main import run

        inv = self._invocation()
        # Before the redirection: reconfiguring the log inside it would close the sink it replaces,
        # which may be the real stderr.
        log.configure(inv.home)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = run(list(argv), inv)
            except SystemExit as exc:  # argparse's own exit (usage errors, --help)
                code = exc.code if isinstance(exc.code, int) else 1
        return CliRun(code, out.getvalue(), err.getvalue())

    def mcp_tools(self) -> list[McpToolInfo]:
        """The tools ``omcm mcp`` lists for this plugin, as an MCP client receives them."""
        tools, _ = self._mcp([])
        return tools

    def mcp(self, tool: str, **arguments: Any) -> McpAnswer:
        """Call ``tool`` with ``arguments`` as Claude does: through the server ``omcm mcp`` builds, by the SDK's client."""
        _, (answer,) = self._mcp([(tool, arguments)])
        return answer

    def _mcp(self, calls: list[tuple[str, dict]]) -> tuple[list[McpToolInfo], list[McpAnswer]]:
        import anyio
        from mcp import Client

        from omcm_core._cli.mcp import build_server

        server = build_server(self._invocation())

        async def talk() -> tuple[list[McpToolInfo], list[McpAnswer]]:
            async with Client(server) as client:
                listed = await client.list_tools()
                tools = [McpToolInfo(t.name, t.description or "", dict(t.input_schema or {})) for t in listed.tools]
                answers = []
                for name, arguments in calls:
                    result = await client.call_tool(name, arguments)
                    text = "".join(getattr(part, "text", "") for part in result.content)
                    answers.append(McpAnswer(text, bool(result.is_error)))
                return tools, answers

        return anyio.run(talk)

    def doctor(self) -> list[str]:
        """The lines ``omcm doctor`` shows for this plugin: its facts and problems, each problem's fix."""
        run = self.cli("doctor", "--json")
        report = json.loads(run.stdout)
        lines = []
        for section in report["sections"]:
            for check in section["checks"]:
                if check["id"] == f"plugin.{self.name}" or check["id"].startswith(f"plugin.{self.name}."):
                    lines.append(f"{check['level']}: {check['message']}")
                    lines += [f"  {detail}" for detail in check.get("details") or ()]
                    if check.get("fix"):
                        lines.append(f"  fix: {check['fix']}")
        return lines

    def settings(self, schema: type, user: str | None = None, project: str | None = None) -> Any:
        """The plugin's settings (an instance of ``schema``) when a user and a project write these TOML lines.

        ``user`` goes under ``[NAME]`` in ``OMCM_HOME/config.toml``, ``project``
        under ``[NAME]`` in the project's ``.claude/omcm.toml`` (None: no such file);
        what a project may not set is dropped as omcm drops it (``omcm doctor`` says so).
        """
        from omcm_core.config import Config
        from omcm_core.context import Context

        # Each call stands alone: a side given None has no file, whatever an earlier call wrote.
        user_file, project_file = self.home / "config.toml", self.project / ".claude" / "omcm.toml"
        for path, lines in ((user_file, user), (project_file, project)):
            if lines is None:
                path.unlink(missing_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"[{self.name}]\n{lines}\n", encoding="utf-8")
        config = Config.load(self.home, self.project, self.env)
        ctx = Context(self.name, self.home, self.project, config, self.env)
        try:
            return ctx.config(schema)
        finally:
            ctx.close()
