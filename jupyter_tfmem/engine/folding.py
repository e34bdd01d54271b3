"""TF's runtime constant folding: tensors a function holds from before its first step.

Grappler is not the last pass over a step's graph.  When TF first runs the
function on a device, its classic graph optimizer (OptimizerOptions L1, the
default) runs on Grappler's output: it evaluates every op whose data inputs
are all constants, and each such tensor read by the rest of the graph is
read from a new ``Const`` (``<name>/_<k>__cf__<id>`` in TF's logs) instead.
Equal constants are merged (CSE).  The ``Const`` kernel holds its tensor for
the function's life, so a folded tensor is made before the first step and
never freed.

Grappler leaves such chains alone when the result is larger than its inputs:
a weight regularizer's gradient tiles a scalar to the kernel's shape, and a
mean-squared-error loss's gradient tiles one to the model's output.  TF's
profile of the zoo's ``regularized_mlp_sgd`` (``TF_CPP_VMODULE=
constant_folding=1`` logs "Replacing gradient_tape/Tile_4 :: 0 with a
constant") shows what the step then does:

* ``gradient_tape/Tile_4/_0__cf__0`` (256 KiB) and ``Tile_5/_1__cf__1``
  (1 MiB) are allocated as the function is first run and held through
  every later step;
* the ``Tile`` ops still run in every step, but nothing reads their
  outputs: each is freed as soon as it is made, and the ops that read it
  before read the constant (so they cannot write into its buffer).

So the constants are added to the step's graph, and its readers moved to
them; the folded ops stay.  Which tensors fold, as TF's pass decides
(common_runtime's ``constant_folding.cc``):

* a node folds if it is a ``Const``, or if its op is registered, stateless,
  not control flow, and every data input comes from a folded node (control
  inputs from the rest of the graph are allowed);
* each folded tensor read by an unfolded node becomes a constant, unless it
  is over ``MAX_CONSTANT_BYTES``;
* equal constants (the same chain of ops from the same values) are one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

from .opsem import CONSTANT_OPS, CONTROL_FLOW_OPS
from .schedule import Node

#: ``ConstantFoldingOptions::max_constant_size_in_bytes``' default: a larger
#: folded tensor is not put in the graph, so its ops keep running each step.
MAX_CONSTANT_BYTES = 10 * 1024 * 1024

#: what TF's folding puts in a constant's name (``<name>/_<k>__cf__<id>``)
_MARK = "__cf__"

#: ops TF never folds: control flow, and the transfers between devices
NOT_FOLDED = CONTROL_FLOW_OPS | {
    "_SwitchN",
    "ControlTrigger",
    "_Send",
    "_Recv",
    "_HostSend",
    "_HostRecv",
}


def fold_constants(
    nodes: dict[str, Node],
    order: list[str],
    attrs: Callable[[str], Mapping[str, bytes]],
    stateless: Callable[[str], bool],
    batch: int,
) -> list[str]:
    """Add the constants TF's runtime folds to ``nodes`` and ``order``; returns their names.

    ``order`` is a topological order of ``nodes``, and stays one.  ``attrs(name)`` gives a
    node's attributes as serialized bytes (a ``Const``'s value among them),
    from which equal constants are found; ``stateless(op)`` is whether TF
    may evaluate an op ahead of time (registered, with a CPU kernel, not
    stateful).  A folded tensor's size is read at ``batch``.
    """
    folded = _foldable(nodes, order, stateless)
    readers = _readers(nodes, order)
    signature = _signatures(nodes, order, folded, attrs)
    made: dict[bytes, str] = {}
    moved: dict[tuple[str, int], tuple[str, int]] = {}
    # TF makes them in the order of their names (its ``__cf__`` numbers), and
    # their kernels, which allocate them, in that order too
    for name in sorted(folded):
        node = nodes[name]
        if node.op in CONSTANT_OPS:
            continue
        fetched = {idx for reader, idx in readers[name] if reader not in folded}
        for idx in sorted(fetched):
            spec = node.outputs[idx] if idx < len(node.outputs) else None
            size = _bytes(spec, batch)
            if size is None or size > MAX_CONSTANT_BYTES:
                continue  # TF leaves the tensor to the step
            key = signature[name] + str(idx).encode()
            if key not in made:  # else equal to a constant made already (CSE)
                made[key] = f"{name}/_{idx}{_MARK}{len(made)}"
                nodes[made[key]] = _constant(made[key], node, spec)
            moved[(name, idx)] = (made[key], 0)
    if not moved:
        return []
    for name in order:
        if name in folded:
            continue
        node = nodes[name]
        node.inputs = [moved.get(tensor, tensor) for tensor in node.inputs]
    order[:0] = made.values()  # made before the step, as the function is first run
    return list(made.values())


def is_folded(name: str) -> bool:
    """Whether ``name`` is a constant ``fold_constants`` made (named as TF names them)."""
    return _MARK in name


def _constant(name: str, like: Node, spec) -> Node:
    return Node(name, "Const", [], [], [spec], category=like.category, layer=like.layer)


def _foldable(nodes: Mapping[str, Node], order: list[str], stateless) -> set[str]:
    folded: set[str] = set()
    for name in order:
        node = nodes[name]
        if node.op in CONSTANT_OPS:
            folded.add(name)
        elif (
            node.inputs
            and node.op not in NOT_FOLDED
            and stateless(node.op)
            and not any(spec is not None and _is_variant(spec[2]) for spec in node.outputs)
            and all(src in folded for src, _ in node.inputs)
        ):
            folded.add(name)
    return folded


def _is_variant(dtype) -> bool:
    """A list or other variant: the estimate sizes it by what the loop puts in it,
    which a constant list (TF could fold an empty ``TensorListReserve``) would not hold."""
    return getattr(dtype, "name", str(dtype)) == "variant"


def _readers(nodes: Mapping[str, Node], order: list[str]) -> dict[str, list[tuple[str, int]]]:
    """Each node's data readers, as ``(reader, output read)`` (a control edge
    reads no tensor, and TF leaves it where it is)."""
    readers: dict[str, list[tuple[str, int]]] = {name: [] for name in order}
    for name in order:
        for src, idx in nodes[name].inputs:
            if src in readers:
                readers[src].append((name, idx))
    return readers


def _bytes(spec, batch: int) -> float | None:
    return None if spec is None else spec[0] + spec[1] * batch


def _signatures(nodes, order, folded: set[str], attrs) -> dict[str, bytes]:
    """A digest of what each folded node computes: its op, its attributes and
    its inputs' digests, down to the constants' values (names left out)."""
    sig: dict[str, bytes] = {}
    for name in order:
        if name not in folded:
            continue
        node = nodes[name]
        h = hashlib.blake2b(node.op.encode(), digest_size=16)
        for key, value in sorted(attrs(name).items()):
            h.update(key.encode())
            h.update(value)
        for src, idx in node.inputs:
            h.update(sig[src])
            h.update(str(idx).encode())
        sig[name] = h.digest()
    return sig
