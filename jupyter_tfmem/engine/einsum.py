"""The temporaries TF's ``Einsum`` kernel allocates while it runs.

An ``Einsum`` op is not one product: the kernel (``EinsumHelper`` in
``tensorflow/core/kernels/linalg/einsum_op_impl.h``, shared by the oneDNN
``_MklEinsum`` and the GPU kernel) first transposes each operand so that its
axes run batch, free, contracted, summed; that is a full copy of the operand
whenever the order changes.  It then multiplies into a new buffer laid out
batch, free-of-the-first, free-of-the-second, and copies that into the
equation's output order if it differs.  Keras' attention writes its scores as
``BTNH,BSNH->BNTS``: both operands are copied before the product, and TF's
allocator log shows the two copies live next to the scores.

Only the sizes matter here; everything is computed from the equation and the
operand shapes, in elements.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

__all__ = ["einsum_flops", "einsum_output_late", "einsum_temporaries"]

# DimensionType in TF's order; the sort of an operand's axes follows it.
_BROADCAST, _BATCH, _FREE, _CONTRACT, _REDUCE = range(5)
#: Free and contracted swapped: the order that lets the product transpose
#: in place (``ShouldSwapFreeAndContract``) rather than copy the operand.
_SWAPPED = {_BROADCAST: 0, _BATCH: 1, _FREE: 3, _CONTRACT: 2, _REDUCE: 4}
_BROADCAST_IDS = 1 << 20  # TF numbers the axes under ``...`` after the named labels


def _labels(subscripts: str, rank: int, ids: dict[str, int]) -> list[int] | None:
    """Integer labels of one operand, numbered by first appearance as TF does."""
    head, dots, tail = subscripts.partition("...")
    extra = rank - len(head) - len(tail) if dots else 0
    if extra < 0 or (not dots and rank != len(head)):
        return None
    labels = [ids.setdefault(ch, len(ids)) for ch in head]
    labels += [_BROADCAST_IDS + k for k in range(extra)]
    return labels + [ids.setdefault(ch, len(ids)) for ch in tail]


def _parse(
    equation: str,
    in_shapes: Sequence[Sequence[int] | None],
    out_shape: Sequence[int] | None,
):
    """Each operand's labels and shape, the output's labels, each label's size and kind.

    ``None`` when the equation or a shape is not understood.
    """
    if "->" not in equation or out_shape is None:
        return None
    lhs, out_sub = equation.replace(" ", "").split("->")
    subs = lhs.split(",")
    if len(subs) != len(in_shapes) or not 1 <= len(subs) <= 2:
        return None
    shapes = [[int(d) for d in shape] for shape in in_shapes if shape is not None]
    if len(shapes) != len(subs) or any(d < 0 for shape in shapes for d in shape):
        return None
    ids: dict[str, int] = {}
    parsed = [_labels(sub, len(shape), ids) for sub, shape in zip(subs, shapes, strict=True)]
    output = _labels(out_sub, len(out_shape), ids)
    operands = [labels for labels in parsed if labels is not None]
    if output is None or len(operands) != len(parsed):
        return None
    dims: dict[int, int] = {}
    for labels, shape in zip(operands, shapes, strict=True):
        dims.update(zip(labels, shape, strict=True))

    def kind(label: int) -> int:
        if label >= _BROADCAST_IDS:
            return _BROADCAST
        removed = label not in output
        unique = len(operands) == 1 or any(label not in labels for labels in operands)
        if removed:
            return _REDUCE if unique else _CONTRACT
        return _FREE if unique else _BATCH

    return operands, shapes, output, dims, kind


def _kernel(
    equation: str,
    in_shapes: Sequence[Sequence[int] | None],
    out_shape: Sequence[int] | None,
) -> tuple[list[int], bool] | None:
    """The kernel's temporaries (``einsum_temporaries``) and whether it copies
    its product into the output's order; ``None`` when not understood."""
    parsed = _parse(equation, in_shapes, out_shape)
    if parsed is None:
        return None
    operands, shapes, output, dims, kind = parsed
    temps: list[int] = []
    free: list[list[int]] = []
    for labels, shape in zip(operands, shapes, strict=True):
        size = math.prod(shape)
        swapped = all(
            (_SWAPPED[kind(x)], x) <= (_SWAPPED[kind(y)], y) for x, y in itertools.pairwise(labels)
        )
        order = labels if swapped else sorted(labels, key=lambda x: (kind(x), x))
        if len(labels) >= 2 and order != labels and size > 0:
            temps.append(size)  # TransposeOperand
        unique = list(dict.fromkeys(order))
        if len(unique) < len(order):  # a repeated label: its diagonal is copied out
            size = math.prod(dims[x] for x in unique)
            temps.append(size)
        reduced = math.prod(dims[x] for x in unique if kind(x) == _REDUCE)
        if reduced > 1:  # summed away before the product
            temps.append(size // reduced)
        free.append([x for x in unique if kind(x) == _FREE])

    if len(output) != len(set(output)):
        return None  # an inflated output (i->ii): not modelled
    batch = {x for labels in operands for x in labels if kind(x) in (_BROADCAST, _BATCH)}
    result = sorted(batch, key=lambda x: (kind(x), x)) + [x for f in free for x in f]
    reordered = len(output) >= 2 and result != output
    if len(operands) == 2:
        if reordered:  # the product is a temporary, copied into the output's order
            temps.append(math.prod(dims[x] for x in result))
    elif not reordered and temps:
        temps.pop()  # one operand: its last copy is the output itself
    return temps, reordered


def einsum_temporaries(
    equation: str,
    in_shapes: Sequence[Sequence[int] | None],
    out_shape: Sequence[int] | None,
) -> list[int] | None:
    """Elements of each temporary the kernel allocates before its output, in order.

    ``None`` when the equation or a shape is not understood (nothing is
    charged then).  The output itself is not in the list.
    """
    kernel = _kernel(equation, in_shapes, out_shape)
    return None if kernel is None else kernel[0]


def einsum_output_late(
    equation: str,
    in_shapes: Sequence[Sequence[int] | None],
    out_shape: Sequence[int] | None,
) -> bool:
    """Whether the kernel allocates its output only when it ends.

    Where the product's axes are not in the output's order, the output is
    made by the last step, ``TransposeOperand``, after the product: any
    buffer another thread frees while the product runs can take the
    output's place (TF's allocator log of a hypernetwork's ``ac,ab->abc``
    gradient: the product's 8 MiB first, the output's 8 MiB 3 ms later in
    a chunk just freed).  Where they are in order, the product's buffer is
    the output, allocated before the product.
    """
    kernel = _kernel(equation, in_shapes, out_shape)
    return kernel is not None and kernel[1]


def einsum_flops(
    equation: str,
    in_shapes: Sequence[Sequence[int] | None],
    out_shape: Sequence[int] | None,
) -> float | None:
    """Multiply-adds of a two-operand Einsum's product, times two: its compute time's measure.

    The product runs once per element of every batch, free and contracted
    label; labels summed out of one operand beforehand are not in it.  A
    one-operand Einsum moves memory only (0).  ``None`` when not understood.
    """
    parsed = _parse(equation, in_shapes, out_shape)
    if parsed is None:
        return None
    operands, _, output, dims, kind = parsed
    if len(operands) != 2:
        return 0.0
    # the output's sizes first: a label broadcast from 1 has the other operand's
    sizes = {**dims, **dict(zip(output, map(int, out_shape), strict=True))}
    return 2.0 * math.prod(size for label, size in sizes.items() if kind(label) != _REDUCE)
