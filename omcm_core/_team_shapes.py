"""What of a command may leave the machine: its structure, not its values (``omcm_core.team.shape``).

``shape("docker login -u deploy -p hunter2 registry.io")`` is
``"docker login -u <arg> -p <arg> <arg>"``: the program, a subcommand of a
program known to take one, flags (``--name=<arg>`` keeps the name only, short
flags only when they cannot carry a value glued to them) and, after
``pip/npm/apt/... install``, package names. Every other word is a placeholder:
what a teammate learns is how the fix was done, never a value that was typed.
"""

from __future__ import annotations

import re

from omcm_core.redact import mask

PLACEHOLDER = "<arg>"
# Programs whose first word is a subcommand (git commit, docker login, pip install, kubectl apply ...).
SUBCOMMANDS = frozenset(
    [
        "git",
        "docker",
        "podman",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "conda",
        "apt",
        "apt-get",
        "brew",
        "gem",
        "cargo",
        "go",
        "kubectl",
        "helm",
        "terraform",
        "gh",
        "aws",
        "gcloud",
        "az",
        "systemctl",
        "dotnet",
        "mvn",
        "gradle",
        "bundle",
        "composer",
        "rustup",
        "nvm",
        "pipx",
        "tox",
        "nox",
    ]
)
INSTALLERS = frozenset(
    [
        "pip",
        "pip3",
        "uv",
        "npm",
        "pnpm",
        "yarn",
        "apt",
        "apt-get",
        "brew",
        "gem",
        "cargo",
        "poetry",
        "conda",
        "pipx",
        "composer",
    ]
)
INSTALL_WORDS = frozenset({"install", "add", "i"})
WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "timeout", "command", "exec", "xargs"})
SEPARATORS = frozenset({"&&", "||", "|", ";", "&"})
_WORD = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
_LONG_FLAG = re.compile(r"^--[a-z][a-z0-9-]{0,30}$")
_SHORT_FLAG = re.compile(r"^-[A-Za-z]{1,2}$")  # -q, -rf; -pSecret could be a value glued to -p
_PACKAGE = re.compile(
    r"^@?[A-Za-z0-9][A-Za-z0-9._-]{0,60}(/[A-Za-z0-9._-]{1,60})?(\[[A-Za-z0-9,._-]{1,60}\])?"
    r"([=<>~!@]=?[0-9][0-9A-Za-z.*+-]{0,30})?$"
)
MAX_TOKENS = 40


def shape(command: str | None) -> str | None:
    """``command`` with every value replaced by :data:`PLACEHOLDER` (see the module's docstring)."""
    if not command:
        return command
    out: list[str] = []
    program: str | None = None
    expect_program, subcommand_next, installing = True, False, False
    tokens = mask(command).split()
    for token in tokens[:MAX_TOKENS]:
        if token in SEPARATORS:
            out.append(token)
            expect_program, subcommand_next, installing = True, False, False
            continue
        if expect_program:
            name = token.rsplit("/", 1)[-1]
            if _WORD.match(name) or name in WRAPPERS:
                out.append(name)
                program = name
                expect_program = name in WRAPPERS
                subcommand_next = name in SUBCOMMANDS
                installing = False
            else:  # FOO=bar, ./script.sh with an odd name, a quoted word: a value
                out.append(PLACEHOLDER)
                expect_program = "=" in token  # an environment assignment: the program follows
            continue
        if token.startswith("-"):
            flag, eq, _ = token.partition("=")
            if _LONG_FLAG.match(flag):
                out.append(flag + ("=" + PLACEHOLDER if eq else ""))
            elif _SHORT_FLAG.match(token):
                out.append(token)
            else:
                out.append(PLACEHOLDER)
            subcommand_next = False
            continue
        if subcommand_next and _WORD.match(token):
            out.append(token)
            installing = program in INSTALLERS and token in INSTALL_WORDS
            subcommand_next = False
            continue
        subcommand_next = False
        out.append(token if installing and _PACKAGE.match(token) else PLACEHOLDER)
    if len(tokens) > MAX_TOKENS:
        out.append("…")
    return " ".join(out)
