"""memory-rotation's MCP tool (``omcm mcp``): search this project's memory and its archives."""

from __future__ import annotations

from omcm_core.records import McpTool


def offered(ctx) -> list[McpTool]:
    def memory_search(query: str, limit: int = 10, deep: bool = False) -> dict:
        from omcm_memory_rotation import layout, search

        if ctx.project_dir is None:
            return {"error": "no project: memory lives in <project>/.claude/memory"}
        folder = layout.memory_dir(ctx.project_dir)
        if not folder.is_dir():  # read-only: never create the memory folder to say it is empty
            return {"hits": [], "note": "this project has no .claude/memory yet"}
        if not query.strip():
            return {"error": "give words to look for"}
        hits = search.search(folder, query, deep, ctx.log)
        limit = max(1, min(int(limit), 30))
        return {"hits": hits[:limit], "more": max(0, len(hits) - limit)}

    return [
        McpTool(
            name="memory_search",
            description="Search this project's memory: memory.md, the summaries of rotated memory, the archived "
            "memory files and (with `deep`) which past session transcripts mention the words. Each hit names its "
            "file and line. Case-insensitive substring match.",
            function=memory_search,
        )
    ]
