"""Replay the optimized graph in executor order and track every live buffer.

The executor runs an op once all its inputs are ready and drops a tensor
when its last consumer has run.  Replaying that order (a FIFO ready queue, as
TF's executor keeps on each thread) with each buffer sized ``a + b * batch``
gives, at every step of the replay, the live bytes as a line in the batch
size; the step's peak is the upper envelope of those lines.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Iterator

from ..footprint import MAX_BATCH_SIZE_CAP
from .loops import exit_frame_of, frame_of
from .opsem import (
    ALIAS_OPS,
    CONSTANT_OPS,
    FORWARDED_INPUTS,
    FORWARDING_OPS,
    NO_BUFFER_OPS,
    VARIABLE_WRITE_OPS,
)

_keys = itertools.count()  # identities of buffers in the allocator model


@dataclasses.dataclass
class Buffer:
    a: float
    b: float
    dtype: object
    category: str
    layer: int
    persistent: bool = False
    pending: int = 0  # consumers (over all tensors sharing it) still to run
    live: bool = False
    keep: bool = False  # a function output: alive until the step returns
    key: object = None  # identity in the allocator model
    #: equal allocations the buffer is made of: a TensorList's elements are
    #: each allocated on their own, so the allocator can fit them into gaps
    #: a single buffer of their total size would not fit
    pieces: int = 1
    #: the loop frame whose iterations write the pieces (``Node.fills``)
    fills: str | None = None


@dataclasses.dataclass
class Node:
    name: str
    op: str
    inputs: list[tuple[str, int]]  # data inputs (node, output index)
    controls: list[str]
    outputs: list[tuple[float, float, object] | None]  # (a, b, dtype); None: unknown
    category: Callable[[int, float], str] | None = None  # per output, from b
    layer: int = -1
    #: bytes the op allocates for itself while it runs, as ``(a, b)`` (XLA calls)
    scratch: tuple[float, float] | None = None
    #: buffers the kernel allocates before its outputs and frees (last first)
    #: when it ends, each ``(a, b)`` in allocation order: an Einsum's operand copies
    pre_temps: tuple[tuple[float, float], ...] = ()
    #: the same, allocated after its outputs: a float16 product's float32 copies
    post_temps: tuple[tuple[float, float], ...] = ()
    #: the outputs (and ``post_temps``) are allocated when the op ends, not
    #: when it starts: an Einsum that copies its product into the output's
    #: order makes the output last (``einsum.einsum_output_late``)
    late_outputs: bool = False
    #: per pre-temporary, the input whose buffer it takes over when nobody else
    #: needs it (TF's ``forward_input_or_allocate_temp``), or ``None``
    pre_temp_inputs: tuple[int | None, ...] = ()
    #: per output, the inputs it may be written into, where the kernel this
    #: node runs differs from ``opsem.FORWARDED_INPUTS``' (Eigen's max pool
    #: gradient writes into its input, oneDNN's does not)
    forwards: dict[int, tuple[int, ...]] | None = None
    #: the allocations output 0 is made of (``Buffer.pieces``)
    pieces: int = 1
    #: the loop frame whose iterations write output 0's pieces: a list a
    #: loop fills one element per iteration (``interleave_filled_lists``)
    fills: str | None = None
    #: a loop Merge's inputs from its NextIterations, which the replay drops
    #: (it has no back edge); the executor model's loop chunks wait on them
    back_edges: tuple[str, ...] = ()
    #: the input whose buffer every output is a view of: a kernel that cuts
    #: its input along dimension 0 into rows of whole 64-byte blocks hands
    #: out slices of that buffer, which lives until the last slice dies
    view_of: int | None = None
    #: bytes per element the op's time is charged at where its elements are
    #: narrower (a transpose that moves the innermost axis, ``executor``)
    element_cost_bytes: int | None = None
    #: an Einsum's equation: its product's size (``einsum.einsum_flops``)
    equation: str | None = None


@dataclasses.dataclass
class Snapshot:
    """Live bytes at one moment, as ``a + b * batch`` (BFC-rounded at ``n``)."""

    a: float
    b: float
    buffers: list[Buffer]


def topo_fifo_order(nodes: dict[str, Node]) -> list[str]:
    """The order a single-threaded executor with a FIFO ready queue runs ops."""
    indeg: dict[str, int] = {}
    succ: dict[str, list[str]] = collections.defaultdict(list)
    for node in nodes.values():
        deps = {src for src, _ in node.inputs if src in nodes} | {
            c for c in node.controls if c in nodes
        }
        indeg[node.name] = len(deps)
        for dep in deps:
            succ[dep].append(node.name)
    ready = collections.deque(name for name in nodes if indeg[name] == 0)
    order = []
    while ready:
        name = ready.popleft()
        order.append(name)
        for nxt in succ[name]:
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    return order


def started_ops(order: Iterable) -> Iterator[str]:
    """The ops of ``order`` as they start (an item is a name, or ``("s"|"e", name)``)."""
    for item in order:
        if isinstance(item, str):
            yield item
        elif item[0] == "s":
            yield item[1]


def replay(
    nodes: dict[str, Node],
    order: list[str],
    n: int,
    *,
    preset: dict[tuple[str, int], Buffer],
    keep: Iterable[tuple[str, int]] = (),
    record: set[int] | None = None,
    events: list | None = None,
    copy_first_writes: Iterable[tuple[str, int]] = (),
) -> tuple[list[tuple[float, float]], dict[int, Snapshot]]:
    """Replay ``order`` at batch ``n``.

    ``preset`` maps tensors that exist before the step (variables, inputs) to
    their buffers.  Returns the live ``(a, b)`` after each op and, for the
    positions in ``record``, a snapshot of which buffers were live.  The
    variables in ``copy_first_writes`` move to a new buffer at their first
    write even with no reader left, as a model's own variables do in its
    first training step.
    """
    consumers: dict[tuple[str, int], int] = collections.Counter()
    for name in started_ops(order):
        for src in nodes[name].inputs:
            consumers[src] += 1
    keep = set(keep)

    remaining: dict[tuple[str, int], int] = dict(consumers)
    tensor_buf: dict[tuple[str, int], Buffer] = {}
    # The reverse of tensor_buf (id of a buffer -> the tensors it backs), so a
    # variable write finds the tensors sharing the variable's buffer without
    # scanning every tensor.  Buffers in it stay referenced by tensor_buf for
    # the whole replay, so their ids are not reused.
    holders: dict[int, list[tuple[str, int]]] = collections.defaultdict(list)
    reads: dict[int, list[tuple[str, int]]] = collections.defaultdict(
        list
    )  # var buf -> read tensors
    live: dict[int, Buffer] = {}
    a_live = 0.0
    b_live = 0.0
    first_event = len(events) if events is not None else 0
    filled: list[tuple[int, int, str]] = []  # pieces' events: [start, end) and loop frame
    spans: dict[str, list[int]] = {}  # loop frame -> events before its body, before its Exit
    # only the allocator's events of a step whose loops fill lists need the spans
    track_spans = events is not None and any(node.fills for node in nodes.values())

    def add(buf: Buffer) -> None:
        nonlocal a_live, b_live
        if buf.live:
            return
        buf.live = True
        live[id(buf)] = buf
        if events is not None and not _made_before(buf):
            if buf.key is None:
                buf.key = ("t", next(_keys))
            keys = _allocation_keys(buf)
            k = len(keys)
            if buf.fills is not None and k > 1:
                filled.append((len(events), len(events) + k, buf.fills))
            events.extend(("a", key, buf.a / k, buf.b / k, buf.category) for key in keys)
        a_live += buf.a  # requested bytes; the allocator's slack is modelled in bfc.py
        b_live += buf.b

    def drop(buf: Buffer) -> None:
        nonlocal a_live, b_live
        if not buf.live or buf.persistent or buf.keep:
            return
        buf.live = False
        del live[id(buf)]
        if events is not None and not _made_before(buf):
            events.extend(("f", key, 0.0, 0.0, None) for key in _allocation_keys(buf))
        a_live -= buf.a
        b_live -= buf.b

    for tensor, buf in preset.items():
        tensor_buf[tensor] = buf
        holders[id(buf)].append(tensor)
        buf.pending += consumers.get(tensor, 0)
        if buf.persistent or buf.keep or buf.pending > 0:
            add(buf)
    for tensor in keep:
        if tensor in tensor_buf:
            tensor_buf[tensor].keep = True
    first_copy = {id(tensor_buf[t]) for t in copy_first_writes if t in tensor_buf}

    def outputs(node: Node, in_bufs, new_bufs: list[Buffer], temps: list[Buffer]) -> None:
        """Allocate ``node``'s outputs (and the temporaries it makes after them)."""
        for idx, spec in enumerate(node.outputs):
            tensor = (node.name, idx)
            if tensor in tensor_buf:  # preset (placeholders)
                continue
            uses = consumers.get(tensor, 0)
            buf = _output_buffer(node, idx, spec, in_bufs)
            if buf is None:
                continue
            buf.pending += uses
            if tensor in keep:
                buf.keep = True
            tensor_buf[tensor] = buf
            holders[id(buf)].append(tensor)
            if node.op == "ReadVariableOp" and buf.persistent:
                reads[id(buf)].append(tensor)
            if not buf.live:
                add(buf)
                new_bufs.append(buf)
        for a, b in node.post_temps:
            temps.append(Buffer(a, b, None, "temporaries", node.layer))
            add(temps[-1])

    timeline: list[tuple[float, float]] = []
    snaps: dict[int, Snapshot] = {}
    running: dict[str, tuple[list[Buffer | None], list[Buffer], list[Buffer]]] = {}

    def mark(pos: int) -> None:
        timeline.append((a_live, b_live))
        if record is not None and pos in record:
            snaps[pos] = Snapshot(a_live, b_live, list(live.values()))

    for pos, item in enumerate(order):
        if isinstance(item, str):
            name, start, end = item, True, True
        else:
            name, start, end = item[1], item[0] == "s", item[0] == "e"
        node = nodes[name]
        if start and track_spans:
            if node.op == "Exit" and (frame := exit_frame_of(name)) is not None:
                span = spans.setdefault(frame, [len(events)] * 2)
                span[1] = min(span[1], len(events))
            elif (frame := frame_of(name)) is not None and frame not in spans:
                spans[frame] = [len(events), 1 << 62]
        if not start:  # the op ends: release what it held
            held = running.pop(name)
            if node.late_outputs:
                outputs(node, *held)
            _finish(node, *held, remaining, drop)
            mark(pos)
            continue
        in_bufs = [tensor_buf.get(src) for src in node.inputs]
        new_bufs: list[Buffer] = []
        temps = []
        for i, (a, b) in enumerate(node.pre_temps):
            src = node.pre_temp_inputs[i] if i < len(node.pre_temp_inputs) else None
            if src is not None and src < len(in_bufs) and _takes_over(in_bufs[src], a, b):
                continue  # the kernel works in that input's buffer
            temps.append(Buffer(a, b, None, "temporaries", node.layer))
            add(temps[-1])
        if (
            node.op == "AssignVariableOp"
            and len(in_bufs) > 1
            and in_bufs[0] is not None
            and in_bufs[0].persistent
            and in_bufs[1] is not None
            and (not in_bufs[1].persistent or _is_constant(in_bufs[1]))
        ):
            first_copy.discard(id(in_bufs[0]))
            old_key = in_bufs[0].key
            _adopt(node.inputs[0], in_bufs[0], in_bufs[1], reads, remaining, tensor_buf, holders)
            if events is not None:
                events.append(("m", old_key, in_bufs[1].key, 0.0, None))
            new_bufs.append(in_bufs[0])  # the old buffer goes at the end if nobody reads it
            in_bufs[0] = in_bufs[1]  # this op's use of the handle moved with it
        elif (
            node.op in VARIABLE_WRITE_OPS
            and in_bufs
            and in_bufs[0] is not None
            and in_bufs[0].persistent
        ):
            # a variable sharing a constant's buffer copies it at its next update
            force = id(in_bufs[0]) in first_copy or _is_constant(in_bufs[0])
            first_copy.discard(id(in_bufs[0]))
            cow = _copy_on_write(
                node.inputs[0], in_bufs[0], reads, remaining, tensor_buf, holders, force
            )
            if cow is not None:
                add(cow)
                new_bufs.append(in_bufs[0])  # the old buffer goes at the end if nobody reads it
                in_bufs[0] = cow  # this op's use of the handle moved with it
        late = node.late_outputs and not end
        if not late:
            outputs(node, in_bufs, new_bufs, temps)
        if node.scratch is not None and (node.scratch[0] > 0 or node.scratch[1] > 0):
            temps.append(Buffer(*node.scratch, None, "temporaries", node.layer))
            add(temps[-1])
        mark(pos)
        if end:
            _finish(node, in_bufs, new_bufs, temps, remaining, drop)
        else:
            running[name] = (in_bufs, new_bufs, temps)
    if events is not None:  # the step returns: its outputs and inputs go
        for buf in list(live.values()):
            if not buf.persistent:
                buf.keep = False
                drop(buf)
        if len(filled) > 1:
            events[first_event:] = interleave_filled_lists(
                events[first_event:],
                [(s - first_event, e - first_event, f) for s, e, f in filled],
                {f: (i - first_event, j - first_event) for f, (i, j) in spans.items()},
            )
    return timeline, snaps


def interleave_filled_lists(
    events: list, runs: list[tuple[int, int, str]], spans: dict[str, tuple[int, int]]
) -> list:
    """Allocator events with the pieces of lists filled side by side interleaved.

    The replay allocates a list's pieces together where the list is made, so
    each list is one block of memory.  TF allocates a list's elements as the
    iterations write them: the lists of one loop, and of loops that run at
    the same time (a bidirectional layer's two directions), take turns, and
    when one is freed its elements leave holes between the other's.  Where
    later requests land depends on those holes: TF's profile of a BiLSTM
    over 200 steps at batch 32 and the replay both hold 6.25 MiB of tensors
    at the peak, but with each list in one block the replay's allocator
    found larger free chunks that it did not split (10.4 MiB against TF's
    8.0).

    ``runs`` are the pieces' events, ``[start, end)`` with the loop frame
    that fills them; ``spans`` each frame's body, from its first op to its
    first Exit, in events.  The lists of loops whose bodies overlap are
    allocated, element by element in proportion, where the last of them was;
    a loop whose body or Exit the replay did not run overlaps none.
    """
    ran = {f: span for f, span in spans.items() if span[1] < 1 << 62}
    frames = sorted({f for _, _, f in runs}, key=lambda f: ran.get(f, (1 << 62,))[0])
    group_of: dict[str, object] = {f: f for f in frames if f not in ran}
    count, until = -1, -1
    for f in frames:
        if f in group_of:
            continue
        first, last = ran[f]
        if first >= until:
            count, until = count + 1, last
        else:
            until = max(until, last)
        group_of[f] = count
    groups: dict[object, list[tuple[int, int, str]]] = collections.defaultdict(list)
    for run in sorted(runs):
        groups[group_of[run[2]]].append(run)
    moved: dict[int, list] = {}
    skip: set[int] = set()
    for group in groups.values():
        if len(group) < 2:
            continue
        at = group[-1][0]
        freed = {ev[1] for ev in events[group[0][0] : at] if ev[0] == "f"}
        group = [r for r in group if not any(ev[1] in freed for ev in events[r[0] : r[1]])]
        if len(group) < 2:
            continue
        pieces = sorted(
            ((i + 0.5) / (end - start), j, events[start + i])
            for j, (start, end, _) in enumerate(group)
            for i in range(end - start)
        )
        moved[group[-1][0]] = [ev for _, _, ev in pieces]
        for start, end, _ in group:
            skip.update(range(start, end))
    if not moved:
        return events
    out: list = []
    for i, ev in enumerate(events):
        if i in moved:
            out.extend(moved[i])
        if i not in skip:
            out.append(ev)
    return out


def _finish(node: Node, in_bufs, new_bufs, temps, remaining, drop) -> None:
    """An op has run: its temporaries go, and each input has one consumer fewer."""
    for buf in reversed(temps):
        drop(buf)
    for src, buf in zip(node.inputs, in_bufs, strict=True):
        if src in remaining:
            remaining[src] -= 1
        if buf is None:
            continue
        buf.pending -= 1
        if buf.pending <= 0:
            drop(buf)
    for buf in new_bufs:  # outputs nobody consumes
        if buf.pending <= 0:
            drop(buf)


def _copy_on_write(handle, var_buf, reads, remaining, tensor_buf, holders, force=False):
    """A write to a variable whose value is still being read copies it first.

    TF's assign kernels write in place only when nobody else holds the
    variable's buffer; otherwise the variable gets a new buffer and the old one
    lives until its last reader has run (``force``: copied all the same).
    """
    readers = sum(remaining.get(t, 0) for t in reads.get(id(var_buf), ()))
    if readers <= 0 and not force:
        return None
    # the key names the buffer it replaces, so a later step can find the variable
    new = dataclasses.replace(var_buf, pending=0, live=False, key=("cow", next(_keys), var_buf.key))
    _move_variable(handle, var_buf, new, reads, remaining, tensor_buf, holders)
    return new


def _adopt(handle, var_buf, value_buf, reads, remaining, tensor_buf, holders) -> None:
    """``AssignVariableOp`` makes the variable hold the value's buffer; it never copies.

    TF's kernel aliases the value tensor (every other write copies on write,
    so sharing is safe): the variable moves to wherever its new value was
    computed, and its old buffer goes once its last reader has run.
    """
    if not _is_constant(value_buf):  # a constant (zeros to reset to) stays the constant's
        value_buf.persistent = True
        value_buf.category = var_buf.category
        value_buf.layer = var_buf.layer
    _move_variable(handle, var_buf, value_buf, reads, remaining, tensor_buf, holders)


def _move_variable(handle, var_buf, new, reads, remaining, tensor_buf, holders) -> None:
    """The variable behind ``handle`` now lives in ``new``; values read from it stay.

    ``holders`` (buffer id -> tensors) is kept in step with ``tensor_buf``: the
    tensors that move are found there, so a write costs what shares its buffer
    rather than a scan of every tensor (a DenseNet's Adam step has ~1,800 writes).
    """
    moved = remaining.get(handle, 0)
    var_buf.pending -= moved
    new.pending += moved
    if not _is_constant(var_buf):
        var_buf.persistent = False
    stay = set(reads.get(id(var_buf), ()))
    kept, moving = [], []
    for tensor in holders.pop(id(var_buf), ()):
        (kept if tensor in stay else moving).append(tensor)
    for tensor in moving:  # the handle and its aliases follow the variable
        tensor_buf[tensor] = new
    holders[id(var_buf)] = kept
    holders[id(new)].extend(moving)


#: At most this many allocations stand for one buffer's pieces, each then
#: holding several of its elements: the allocator model runs every event at
#: each batch of the slack ladder, for every sequence of steps, and a long
#: sequence's lists would otherwise add thousands.  Against one allocation
#: per element, 64 changed the five SimpleRNN and GRU cases compared by at
#: most 0.8% and halved a stacked bidirectional GRU's estimate time.
MAX_PIECES = 64


def _allocation_keys(buf: Buffer) -> list:
    """The allocator model's keys for ``buf``: its own, or one per piece."""
    k = min(buf.pieces, MAX_PIECES)
    return [buf.key] if k <= 1 else [(*buf.key, i) for i in range(k)]


def _made_before(buf: Buffer) -> bool:
    """Whether the allocator model made ``buf`` before the step (a variable, the batch)."""
    return buf.key is not None and (buf.key[0] == "in" or (buf.persistent and buf.key[0] == "p"))


def _is_constant(buf: Buffer) -> bool:
    """A ``Const`` op's tensor: the kernel holds it for as long as the function lives."""
    return isinstance(buf.key, tuple) and buf.key[:1] == ("c",)


#: List ops whose first output is the list they read, changed in place.
IN_PLACE_LIST_OPS = frozenset({"TensorListPopBack", "TensorListPushBack", "TensorListSetItem"})


def may_own_buffer(op: str) -> bool:
    """Whether ``_output_buffer`` can give an op's first output a buffer of its
    own, rather than nothing or the buffer of the input it reads in place."""
    return not (
        op in NO_BUFFER_OPS
        or op in ALIAS_OPS
        or op in IN_PLACE_LIST_OPS
        or op in ("ReadVariableOp", "TensorListGetItem")
    )


def _output_buffer(node: Node, idx: int, spec, in_bufs: list[Buffer | None]) -> Buffer | None:
    if spec is None:
        return None
    a, b, dtype = spec
    op = node.op
    if op in NO_BUFFER_OPS:
        return None
    if node.view_of is not None and node.view_of < len(in_bufs):
        viewed = in_bufs[node.view_of]
        if viewed is not None:
            return viewed
    # A popped element is the list's own buffer (TF's kernel sets the stored
    # tensor as its output); the list, charged whole, already holds it.
    if op == "TensorListPopBack" and idx == 1:
        return None
    # TensorListFromTensor copies every slice into an aligned element of its
    # own, so it allocates; pushes, pops and reads work on the list in place.
    if (
        ((op in IN_PLACE_LIST_OPS and idx == 0) or op == "TensorListGetItem")
        and in_bufs
        and in_bufs[0] is not None
    ):
        return in_bufs[0]
    if op in ALIAS_OPS or op == "ReadVariableOp":
        if op == "IdentityN":
            src = in_bufs[idx] if idx < len(in_bufs) else None
        elif op == "Merge":  # the one input that arrived (the other branch is dead)
            src = next((buf for buf in in_bufs if buf is not None), None)
        else:
            src = in_bufs[0] if in_bufs else None
        if src is not None:
            return src
    if a <= 0 and b <= 0:
        return None
    category = node.category(idx, b) if node.category else "temporaries"
    if op in CONSTANT_OPS:
        return Buffer(a, b, dtype, category, node.layer, persistent=True, key=("c", node.name, idx))
    named = node.forwards if node.forwards is not None else FORWARDED_INPUTS.get(op)
    if op in FORWARDING_OPS or named:
        candidates = in_bufs
        if named:
            candidates = [in_bufs[i] for i in named.get(idx, ()) if i < len(in_bufs)]
        for buf in candidates:
            if buf is not None and buf.dtype == dtype and _takes_over(buf, a, b):
                return buf  # written in place: the output takes over the buffer
    if idx:
        return Buffer(a, b, dtype, category, node.layer)
    return Buffer(a, b, dtype, category, node.layer, pieces=node.pieces, fills=node.fills)


def _takes_over(buf: Buffer | None, a: float, b: float) -> bool:
    """Whether a kernel may reuse ``buf`` for ``a + b * batch`` bytes: this op is its
    last reader, and nothing (a variable, the step's outputs) holds it."""
    return (
        buf is not None
        and buf.live
        and not buf.persistent
        and not buf.keep
        and buf.pending == 1
        and abs(buf.a - a) < 0.5
        and abs(buf.b - b) < 1e-9
    )


def upper_hull_positions(
    timeline: list[tuple[float, float]], n_max: int = MAX_BATCH_SIZE_CAP
) -> list[int]:
    """Positions whose line is the maximum for some batch size in [1, n_max]."""
    best: dict[float, tuple[float, int]] = {}
    for pos, (a, b) in enumerate(timeline):
        key = round(b, 6)
        if key not in best or a > best[key][0]:
            best[key] = (a, pos)
    cands = sorted((b, a, pos) for b, (a, pos) in best.items())
    kept: list[tuple[float, float, int]] = []
    for b, a, pos in cands:
        while len(kept) >= 2:
            b1, a1, _ = kept[-2]
            b2, a2, _ = kept[-1]
            if (a1 - a2) * (b - b1) >= (a1 - a) * (b2 - b1):
                kept.pop()
            else:
                break
        kept.append((b, a, pos))
    result = [pos for _, _, pos in kept]

    # drop lines that only win for batch < 1
    def value(p: int, x: float) -> float:
        a_, b_ = timeline[p]
        return a_ + b_ * x

    final = [
        p
        for p in result
        if any(
            value(p, x) >= max(value(q, x) for q in result) - 1e-6
            for x in _probes(result, timeline, n_max)
        )
    ]
    return final


def _probes(positions: list[int], timeline, n_max: int) -> list[float]:
    xs = {1.0, float(n_max)}
    for i in range(len(positions) - 1):
        a1, b1 = timeline[positions[i]]
        a2, b2 = timeline[positions[i + 1]]
        if b1 != b2:
            x = (a1 - a2) / (b2 - b1)
            if 1 <= x <= n_max:
                xs.add(x)
                xs.add(math.floor(x))
                xs.add(math.ceil(x))
    return sorted(xs)
