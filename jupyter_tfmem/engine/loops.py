"""While loops in the executor model: a loop runs as a few chunks of its iterations.

The replay runs a loop's body once, with its lists sized for every
iteration, and the executor model needs the body to take as long as all its
iterations beside the ops outside it.  Making each body op trip-count times
as long did that, but ran two loops that share the threads (a bidirectional
RNN's forward and backward directions) as a few long blocks each: one loop
ended a whole block before the other, and what came after it ran while the
other loop still held its buffers.  In TF the two interleave iteration by
iteration: its profile of the zoo's stacked BiGRU at batch 128 ends the
first layer's two 31 ms loops 0.07 ms apart.

So the executor model runs a loop as ``CHUNKS`` copies of its body, each
taking a ``CHUNKS``-th of the loop's time, copy ``k + 1``'s Merges waiting
for copy ``k``'s NextIterations (the back edges the replay drops).  The
replay takes each body op's start and end from the first copy, where the
loop's buffers first exist (docs/engine.md, point 4).
"""

from __future__ import annotations

import collections
import functools
import re
from collections.abc import Callable, Hashable, Mapping

#: How many copies of a loop body the executor model runs (at most its trips).
CHUNKS = 64

_FRAME = re.compile(r"^(.*)/(?:body|cond)/_\d+/")


@functools.lru_cache(maxsize=1 << 16)  # the replay asks for every op of every step it replays
def frame_of(name: str) -> str | None:
    """The while loop frame a body or condition op belongs to, from its name."""
    m = _FRAME.match(name.removeprefix("Func/"))
    return m.group(1) if m else None


def exit_frame_of(name: str) -> str | None:
    """The while loop frame an Exit node leaves, from its name (``<frame>/exit/_<n>``)."""
    return _frame_before(name, "/exit/")


def enter_frame_of(name: str) -> str | None:
    """The while loop frame an Enter node enters, from its name (``<frame>/enter/_<n>``)."""
    return _frame_before(name, "/enter/")


def _frame_before(name: str, part: str) -> str | None:
    frame, sep, _ = name.rpartition(part)
    return frame if sep else None


def loop_members(
    nodes, order: list[str], deps: Mapping[str, list[str]]
) -> tuple[dict[str, set[str]], dict[str, str]] | None:
    """Each loop frame's ops that run once per iteration and its LoopCond, or None if loops nest.

    A loop is found from its LoopCond: the Switches it drives name its
    Merges, and everything downstream of those Merges up to the Exits runs
    per iteration, as do the body's ops computed from loop constants alone
    (found by the frame in their names).  A loop inside another would need
    copies of copies; the caller then keeps the whole-loop durations.
    """
    succ: dict[str, list[str]] = collections.defaultdict(list)
    for name in order:
        for d in deps.get(name, ()):
            succ[d].append(name)
    merges: dict[str, set[str]] = collections.defaultdict(set)
    frame_of_cond: dict[str, str] = {}
    for name in order:
        node = nodes[name]
        if node.op == "LoopCond" and node.inputs:
            frame = frame_of(node.inputs[0][0])
            if frame is not None:
                frame_of_cond[name] = frame
    for name in order:
        node = nodes[name]
        if node.op == "Switch" and len(node.inputs) == 2 and node.inputs[1][0] in frame_of_cond:
            src = node.inputs[0][0]
            if src in nodes and nodes[src].op == "Merge":
                merges[frame_of_cond[node.inputs[1][0]]].add(src)
    by_frame: dict[str, list[str]] = collections.defaultdict(list)
    for name in order:
        frame = frame_of(name)
        if frame is not None:
            by_frame[frame].append(name)
    members: dict[str, set[str]] = {}
    conds: dict[str, str] = {}
    owner: dict[str, str] = {}
    for cond, frame in frame_of_cond.items():
        todo = [*merges[frame], *by_frame[frame], cond]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for nxt in succ.get(name, ()):
                if nodes[nxt].op in ("Exit", "RefExit"):
                    continue
                if nodes[nxt].op in ("Enter", "RefEnter", "LoopCond") and nxt != cond:
                    return None  # a nested loop
                todo.append(nxt)
        for name in seen:
            if owner.setdefault(name, frame) != frame:
                return None  # two loops share ops: nested
        members[frame] = seen
        conds[frame] = cond
    return members, conds


def chunked(
    nodes,
    order: list[str],
    deps: Mapping[str, list[str]],
    durations: Mapping[str, float],
    trips: Mapping[str, int],
    run: Callable[[list, dict, dict], list[tuple[str, Hashable]]],
) -> list[tuple[str, str]] | None:
    """``run``'s events with each loop run as chunks of its iterations (module doc).

    ``run(names, deps, durations)`` is the executor model; a copy of a loop
    op is named ``(op, k)``.  ``durations`` are for whole loops (a body
    op's, times its trips).  Returns None when there is no loop to chunk or
    loops nest.
    """
    found = loop_members(nodes, order, deps) if trips else None
    if not found or not found[0]:
        return None
    members, conds = found
    longest = max(trips.values())
    copies = {frame: max(1, min(CHUNKS, trips.get(frame, longest))) for frame in members}
    owner = {name: frame for frame, names in members.items() for name in names}

    def last(name: str) -> Hashable:
        frame = owner.get(name)
        return name if frame is None else (name, copies[frame] - 1)

    names: list[Hashable] = []
    deps2: dict[Hashable, list[Hashable]] = {}
    dur2: dict[Hashable, float] = {}
    for name in order:
        frame = owner.get(name)
        ds = deps.get(name, ())
        if frame is None:
            names.append(name)
            deps2[name] = [last(d) for d in ds]
            dur2[name] = durations.get(name, 0.0)
            continue
        n = copies[frame]
        inside = [d for d in ds if owner.get(d) == frame]
        outside = [last(d) for d in ds if owner.get(d) != frame]
        if nodes[name].op == "Merge":
            after = [b for b in nodes[name].back_edges if owner.get(b) == frame]
        elif not inside:
            # TF makes an iteration when the one before it passes its first
            # NextIteration (a loop constant passed through, just after its
            # Switch): only then can the iteration's constant work start.
            after = [conds[frame]]
        else:
            after = []
        d = durations.get(name, 0.0) / n
        for k in range(n):
            c = (name, k)
            names.append(c)
            deps2[c] = outside + [(x, k) for x in inside] + [(x, k - 1) for x in after if k]
            dur2[c] = d
    events = run(names, deps2, dur2)
    if len(events) != 2 * len(names):
        return None  # a copy never became ready: keep the whole-loop model
    # The replay takes a loop op's start and end from the first iteration.
    return [
        (kind, name) if isinstance(name, str) else (kind, name[0])
        for kind, name in events
        if isinstance(name, str) or name[1] == 0
    ]
