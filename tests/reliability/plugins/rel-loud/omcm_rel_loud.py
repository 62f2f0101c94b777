"""Plugins that speak as much as the test asks: ``REL_LOUD_<X>_CHARS`` characters of numbered lines.

Each line is ``<plugin> line <n> `` padded with dots to 60 characters, so a test
can tell which lines of which plugin reached the model and where a cut fell.
"""

from omcm_core import Result, hookimpl


def text(name: str, chars: int) -> str:
    lines, n = [], 0
    while sum(len(line) + 1 for line in lines) < chars:
        n += 1
        lines.append(f"{name} line {n} ".ljust(60, "."))
    return "\n".join(lines)[:chars]


def speaker(name: str):
    def speak(event, ctx):
        chars = int(ctx.env.get(f"REL_LOUD_{name[-1].upper()}_CHARS", "0"))
        return Result(additional_context=text(name, chars)) if chars else None

    return hookimpl(speak)
