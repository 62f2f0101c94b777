"""What each plugin may put in front of the model on one event: a max-min fair share.

Every character of ``additionalContext`` is a token the user pays for, and
Claude Code keeps at most 10,000 of them per hook. Joining the answers and
cutting the tail would let the first plugin (in name order) crowd out the
rest, so the budget is shared by water-filling: a plugin that asks for less
than an equal share gets all of it, and what it leaves is split among the
others. A plugin's share can be capped lower (``[core] context_caps``).

Text is cut at a line boundary, ending with a one-line marker that says how
much was left out, so Claude (and the user reading the transcript) knows the
note is incomplete. Pure functions: the dispatcher applies them to the
plugins' answers before the merge joins them.

What a plugin asks Claude to *do* must not be the part that is cut: a request
at the end of a long text ("summaries pending: write them") would be the
first thing to go. Such text goes in the answer's ``context_tail``: it follows
the body and is never cut; the body shares what the tails leave. Only when the
tails alone exceed the budget are they cut like bodies (and logged as cuts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

#: What separates two plugins' texts when the merge joins them ("\n\n").
SEPARATOR = 2


def fair_shares(asks: Sequence[int], budget: int, caps: Sequence[int | None] = ()) -> list[int]:
    """Max-min fair allocation of ``budget`` among ``asks`` (each at most its cap).

    Water-filling: the smallest demands are met in full while they fit an equal
    split of what remains; the rest share the remainder equally (the first ones
    in order get the odd characters). The shares never sum above ``budget``.
    """
    caps = [*caps, *[None] * (len(asks) - len(caps))]
    demands = [max(0, ask if cap is None else min(ask, cap)) for ask, cap in zip(asks, caps, strict=True)]
    shares = [0] * len(demands)
    left = max(0, budget)
    waiting = sorted(range(len(demands)), key=lambda i: (demands[i], i))
    while waiting:
        equal = left // len(waiting)
        index = waiting[0]
        if demands[index] <= equal:
            shares[index] = demands[index]
            left -= demands[index]
            waiting.pop(0)
            continue
        # Nobody left asks for less than an equal split: split what remains, in the answers' order.
        for rank, i in enumerate(sorted(waiting)):
            shares[i] = equal + (1 if rank < left - equal * len(waiting) else 0)
        break
    return shares


def marker(cut_chars: int, plugin: str) -> str:
    return f"[omcm: {cut_chars:,} more characters from {plugin} cut to fit the context budget]"


def cut_to(text: str, limit: int, plugin: str) -> tuple[str, int]:
    """``text`` shortened to at most ``limit`` characters at a line boundary, with a marker line.

    Returns the text to show and how many of the plugin's characters were left out.

    A first line longer than the room left is cut at a word boundary instead
    (then anywhere): some of the plugin's text beats none of it. When even the
    marker does not fit, the text is dropped ("").
    """
    if len(text) <= limit:
        return text, 0
    # The marker's length depends on the count it reports; one with the full length is long enough.
    room = limit - len(marker(len(text), plugin)) - 1
    if room <= 0:
        return "", len(text)
    head = text[:room]
    newline = head.rfind("\n")
    if newline > 0:
        head = head[:newline]
    else:
        space = head.rfind(" ")
        head = head[:space] if space > room // 2 else head
    head = head.rstrip()
    if not head:
        return "", len(text)
    return f"{head}\n{marker(len(text) - len(head), plugin)}", len(text) - len(head)


@attrs.frozen
class Fitted:
    """The plugins' texts after the budget, and what was cut from each (plugin -> characters)."""

    texts: tuple[tuple[str, str], ...]
    cut: Mapping[str, int]


def fit(
    pieces: Sequence[tuple[str, str]],
    budget: int,
    caps: Mapping[str, int] | None = None,
    tails: Mapping[str, str] | None = None,
) -> Fitted:
    """Share ``budget`` among ``(plugin, text)`` pieces, as the merge will join them.

    ``tails``: plugin -> text that follows its piece on a line of its own and is
    kept whole (see the module's docstring). Empty texts take no share. The joined
    result (texts separated by a blank line) is at most ``budget`` characters long.
    """
    caps, tails = caps or {}, {p: t for p, t in (tails or {}).items() if t}
    speaking = [(plugin, text) for plugin, text in pieces if text or plugin in tails]
    speaking += [(plugin, "") for plugin in tails if plugin not in dict(speaking)]
    room = budget - SEPARATOR * max(0, len(speaking) - 1)
    kept_whole = sum(len(tails[p]) + 1 for p, _ in speaking if p in tails)  # +1: the line break before it
    if kept_whole > room:  # the tails alone do not fit: everything is body, cut fairly
        joined = [(p, "\n".join(t for t in (text, tails.get(p, "")) if t)) for p, text in speaking]
        return fit(joined, budget, caps)
    left = [None if caps.get(p) is None else max(0, caps[p] - len(tails.get(p, "")) - 1) for p, _ in speaking]
    shares = fair_shares([len(t) for _, t in speaking], room - kept_whole, left)
    texts, cut = [], {}
    for (plugin, text), share in zip(speaking, shares, strict=True):
        kept, lost = cut_to(text, share, plugin)
        if lost:
            cut[plugin] = lost
        shown = "\n".join(t for t in (kept, tails.get(plugin, "")) if t)
        if shown:
            texts.append((plugin, shown))
    return Fitted(texts=tuple(texts), cut=cut)
