"""notepad's MCP tool (``omcm mcp``): read this project's notepad."""

from __future__ import annotations

from omcm_core.records import McpTool


def offered(ctx) -> list[McpTool]:
    def notepad() -> str:
        from omcm_notepad import notes, storage
        from omcm_notepad.settings import NotepadConfig

        if ctx.project_dir is None:
            return "no project: the notepad lives in <project>/" + storage.relative_path()
        doc = notes.load(ctx.project_dir, ctx.log)
        if doc is None:
            return f"this project has no notepad ({storage.relative_path()})"
        return notes.for_claude(doc.render(), 10 * ctx.config(NotepadConfig).max_bytes)

    return [
        McpTool(
            name="notepad",
            description="This project's notepad (.omc/notepad.md): the priority context, timestamped working notes "
            "kept from subagents' <remember> tags, and the user's MANUAL section.",
            function=notepad,
        )
    ]
