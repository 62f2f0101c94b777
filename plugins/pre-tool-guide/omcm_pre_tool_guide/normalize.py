"""Turn a raw tool error into a stable key, and find the file it is about.

What varies between two occurrences of the same mistake (line and column
numbers, addresses, timestamps, UUIDs, temporary paths, durations) is replaced
by a placeholder. File paths are kept, with one separator style, because the
file is what the Edit/Write guidance looks up; the file's key also goes into a
column of its own so the lookup is an indexed equality, not a LIKE scan.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from omcm_core.redact import MARGIN, mask_head

MAX_ERROR = 500
MASKED_ERROR = 16_384  # of the raw error, masked before it is normalized and cut to MAX_ERROR

_TAGS = re.compile(r"</?tool_use_error>")
#: Failures that say nothing about the tool call itself: nothing to learn.
NOT_MISTAKES = (
    "The user doesn't want to proceed with this tool use",
    "Sibling tool call errored",
    "[Request interrupted by user",
)

_SUBSTITUTIONS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<UUID>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b"), "<TS>"),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(\.\d+)?\b"), "<TS>"),
    (re.compile(r"\b0x[0-9a-f]{4,}\b", re.I), "<ADDR>"),
    (
        re.compile(r"(?:/tmp|/var/folders|/private/var/folders|[A-Za-z]:/Users/[^/\s]+/AppData/Local/Temp)/[^\s'\":]+"),
        "<TMP>",
    ),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|sec|seconds|µs)\b"), "<DUR>"),
    (re.compile(r"(?<=[\w)\]])(:\d+)(:\d+)?\b"), ":<N>"),  # file.py:12:5
    (re.compile(r"\(\d+,\s*\d+\)"), "(<N>)"),  # file.ts(3,1)
    (re.compile(r"\b(line|col|column|row|offset|pid|port)\s+\d+\b", re.I), r"\1 <N>"),
    (re.compile(r"\bpid[=:]\d+\b", re.I), "pid=<N>"),
    (re.compile(r"[ \t]+"), " "),
]
# Bounded repeats: error text can be one long token, and unbounded ones go quadratic.
_PATH = re.compile(
    r"(?<![\w.~/-])(?:[A-Za-z]:)?[\w.~-]{0,100}(?:/[\w.@+-]{1,100}){0,30}/?[\w@+-][\w.@+-]{0,100}\.[A-Za-z][A-Za-z0-9]{0,7}\b"
)
_FILE_INPUTS = ("file_path", "notebook_path", "path")


def unify_separators(path: str) -> str:
    return path.replace("\\", "/")


def normalize_error(raw: str) -> str:
    """The stable form of ``raw`` (secrets masked, variable parts replaced)."""
    # Only the start is kept: mask that (with its margin), not a 64 MB error whole.
    text = unify_separators(mask_head(_TAGS.sub("", (raw or "")[: MASKED_ERROR + MARGIN]), MASKED_ERROR))
    text = text.replace("\r", "")
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    text = "\n".join(lines)
    for pattern, repl in _SUBSTITUTIONS:
        text = pattern.sub(repl, text)
    return text[:MAX_ERROR]


#: Errors Claude Code gives an Edit or Write of a file the session has not read, whatever the file.
UNREAD_FILE_ERRORS = ("has not been read yet", "File has been modified since read")
DISPLAY_CHARS = 300


def display_error(raw: str, project_dir: str | None) -> str:
    """The error as Claude saw it (already masked), short, with paths relative to the project."""
    text = _TAGS.sub("", raw or "").replace("\r", "")
    if project_dir:
        root = unify_separators(str(project_dir)).rstrip("/") + "/"
        text = unify_separators(text).replace(root, "")
    lines = [line.strip() for line in text.split("\n") if line.strip()][:3]
    text = "\n".join(lines)
    return text if len(text) <= DISPLAY_CHARS else text[: DISPLAY_CHARS - 1] + "…"


def displayed(rows, project_dir: str | None) -> list[tuple[str, Any]]:
    """(raw error, resolution JSON) rows as Claude should read them: short, paths relative to the project."""
    import json

    shown = []
    for error, resolution in rows:
        try:
            value = json.loads(resolution)
        except (TypeError, ValueError):
            value = None
        if isinstance(value, dict) and isinstance(value.get("resolvedBy"), str):
            value["resolvedBy"] = display_error(value["resolvedBy"], project_dir)
            resolution = json.dumps(value, ensure_ascii=False)
        shown.append((display_error(error, project_dir), resolution))
    return shown


#: A hook's refusal as the client words it (``PreToolUse:Bash hook error: bash-guard: ...``,
#: ``TaskCreated hook feedback:``): another plugin's policy, not a mistake in the call.
_HOOK_REFUSAL = re.compile(r"^[A-Za-z]+(?::\S*)? hook (?:error|blocking error|feedback)\b")


def is_mistake(raw: str) -> bool:
    """False for rejections, interruptions and hooks' refusals, which teach nothing about the call."""
    text = _TAGS.sub("", (raw or "")[:4096]).strip()
    return bool(text) and not text.startswith(NOT_MISTAKES) and not _HOOK_REFUSAL.match(text)


def file_of(tool_input: Mapping[str, Any], error: str = "") -> str | None:
    """The file a call or its error is about: the tool's file argument, else the first path in the error."""
    for key in _FILE_INPUTS:
        value = tool_input.get(key) if isinstance(tool_input, Mapping) else None
        if isinstance(value, str) and value.strip():
            return unify_separators(value.strip())
    match = _PATH.search(unify_separators(error or "")[:2000])
    return match.group(0) if match else None


def file_key(path: str | None) -> str | None:
    """Index key of a file: its base name, case-folded (Windows and macOS fold case)."""
    if not path:
        return None
    name = unify_separators(path).rstrip("/").rsplit("/", 1)[-1]
    return name.casefold() or None


def failed_exit(tool_name: str, tool_response: Any) -> str | None:
    """For a PostToolUse of Bash that still failed (older Claude Code), the error text."""
    if tool_name not in ("Bash", "PowerShell") or not isinstance(tool_response, Mapping):
        return None
    for key in ("exitCode", "exit_code", "returncode", "code"):
        code = tool_response.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            stderr = tool_response.get("stderr") or tool_response.get("stdout") or ""
            return f"Exit code {code}\n{stderr}".strip()
    return None


_WRAPPERS = {"sudo", "env", "time", "nice", "nohup", "timeout", "command", "exec", "xargs"}


def programs(command: str | None) -> set[str]:
    """The programs a shell command runs (``cd x && FOO=1 pytest -q | tee log`` -> {cd, pytest, tee})."""
    found = set()
    for part in re.split(r"&&|\|\||[;|&\n]", command or "")[:20]:
        words = [w for w in part.split() if "=" not in w.split("/")[0] or w.startswith(("-", "/", "."))]
        while words and (words[0] in _WRAPPERS or words[0].startswith("-")):
            words = words[1:]
        if words:
            found.add(words[0].rsplit("/", 1)[-1])
    return found


def resolved_by(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    """What succeeded, said briefly (the command for Bash, the file for file tools)."""
    command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    if isinstance(command, str) and command.strip():
        return mask_head(command.strip(), 200)
    path = file_of(tool_input)
    return f"{tool_name} {path}" if path else tool_name


#: Programs that never fix anything: a success of theirs is no resolution of another program's error.
_NO_FIX = {"cd", "echo", "printf", "true", "pwd", "export", "set", "sleep", "clear", ":"}
_MODULE = re.compile(r"No module named '?([A-Za-z_][\w]*)|Cannot find module '([^'./][^']*)'")
_WORD = re.compile(r"[A-Za-z_][\w.-]{1,100}")


def _family(program: str) -> str:
    """``python3.11`` -> ``python``, ``pip3`` -> ``pip``: one program under its versioned names."""
    return re.sub(r"[\d.]+$", "", program) or program


def subject(tool_name: str, tool_input: Mapping[str, Any], error: str = "") -> list[str]:
    """What a call is about, as keys a later call must share to be its fix.

    ``program:P`` (each program a Bash command runs, in its family), ``module:M``
    (the module an import error names), ``file:K`` (the file's key) and, for a
    failure, ``arg:W`` for each word of its command its error names. For a
    success, also ``module:W``, ``arg:W`` and ``file:K`` for each word of its command:
    ``pip install foo`` fixes "No module named 'foo'", ``mkdir d`` fixes
    "ls: cannot access 'd'"; ``echo hi`` fixes nothing.
    """
    keys: set[str] = set()
    command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    # Masked first: these keys are stored, and a command's words can be a secret (`export TOKEN=...`).
    command = mask_head(command, 2000) if isinstance(command, str) and command else ""
    keys |= {f"program:{_family(p)}" for p in programs(command) if p not in _NO_FIX}
    for match in _MODULE.finditer((error or "")[:2000]):
        keys.add(f"module:{(match.group(1) or match.group(2)).split('/')[0]}")
    key = file_key(file_of(tool_input, error))
    if key:
        keys.add(f"file:{key}")
    words = [w for w in _WORD.findall(command[:2000])[:200] if len(w) >= 3] if command else []
    if command and not error:
        for word in words:
            keys.add(f"module:{word.split('.')[0]}")
            keys.add(f"arg:{word}")
            if "." in word:
                keys.add(f"file:{file_key(word)}")
    elif command:
        # A word of the failed command that its error names (`ls: cannot access 'missing-dir'`) is what
        # went wrong: `mkdir missing-dir` is about the same thing.
        named = (error or "")[:2000]
        keys |= {f"arg:{word}" for word in words if word in named and word not in programs(command)}
    return sorted(keys)


def related(failed: list[str], succeeded: list[str]) -> bool:
    """Whether a success can be the fix of a failure: they share a key (a failure with none: yes)."""
    return not failed or bool(set(failed) & set(succeeded))
