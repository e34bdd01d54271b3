"""Data parallelism (``tf.distribute.MirroredStrategy``): the footprint of one device.

Under MirroredStrategy every device holds a full copy of the variables and the
optimizer slots and runs the step on its share of the global batch; the
gradients are then summed across devices.  So one device needs what a single
device needs at the per-replica batch, plus what the all-reduce adds.

What the all-reduce adds, read from TF 2.21's source: MirroredStrategy's
default cross-device op is ``CollectiveAllReduce`` (``mirrored_strategy.py``,
``_make_collective_ops_with_fallbacks``; NCCL on GPUs).  Inside the train
step's ``tf.function`` it packs the gradients (``bytes_per_pack=0``: one pack,
``cross_device_utils.group_by_size``), flattens and concatenates them into one
buffer, all-reduces that and splits it back
(``CollectiveReplicaLauncher.batch_all_reduce``).  While the concatenation
runs, each device holds its gradients twice.  The estimate therefore adds one
candidate peak moment: variables + optimizer state + input batch + all
gradients + a gradient-sized pack.  Whether it is the step's peak depends on
the model: it wins when weights dominate, the backward pass wins when
activations do.  Measured on two logical CPU devices (docs/gpu.md), this
moment matched within a few percent; on GPUs it is not measured here.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from .footprint import ALLOCATOR_ROW_NAME, Footprint, LayerInfo, PeakLine, check_replicas

#: The per-layer table's row for the concatenated gradient buffer of the all-reduce.
ALLREDUCE_ROW_NAME = "(gradient all-reduce: packed gradients)"

#: Categories alive throughout the step, copied from the single-device peak lines.
_RESIDENT = ("parameters", "optimizer_state", "input_batch")


def replicas_from(replicas: Any, strategy: Any) -> int:
    """The number of replicas from ``replicas=`` or ``strategy=`` (not both)."""
    if strategy is not None:
        if replicas is not None:
            raise TypeError("give replicas= or strategy=, not both")
        count = getattr(strategy, "num_replicas_in_sync", None)
        if count is None:
            raise TypeError(
                f"strategy must be a tf.distribute strategy such as MirroredStrategy(), "
                f"not {type(strategy).__name__}"
            )
        return check_replicas(int(count))
    if replicas is None:
        return 1
    return check_replicas(replicas)


def gradient_bytes(model: Any) -> int:
    """Bytes of one full set of gradients: one per trainable variable, in its dtype.

    Under a mixed policy the variables (and so the gradients the optimizer
    applies) stay float32, which is what this counts.
    """
    total = 0
    for var in getattr(model, "trainable_weights", ()):
        size = math.prod(int(d) for d in var.shape)
        total += size * _dtype_size(var.dtype)
    return total


def _dtype_size(dtype: Any) -> int:
    import numpy as np

    name = getattr(dtype, "name", dtype)
    try:
        return int(np.dtype(str(name)).itemsize)
    except TypeError:  # e.g. bfloat16, which NumPy does not know
        digits = "".join(ch for ch in str(name) if ch.isdigit())
        return max(int(digits or 32) // 8, 1)


def data_parallel(
    fp: Footprint, replicas: int, grad_bytes: int, global_batch: int | None = None
) -> Footprint:
    """``fp`` (estimated at the per-replica batch) as one of ``replicas`` data-parallel devices.

    ``batch_size`` becomes ``global_batch`` (default: ``fp.batch_size`` times
    ``replicas``), of which each device runs ``device_batch_size``, and
    a training step gains the all-reduce moment described in the module
    docstring.  Inference has no all-reduce.
    """
    replicas = check_replicas(replicas)
    if replicas == 1:
        return fp
    global_batch = fp.batch_size * replicas if global_batch is None else int(global_batch)
    notes = [
        f"Data parallel over {replicas} devices (tf.distribute.MirroredStrategy): the "
        f"batch size is the global batch, each device runs batch / {replicas} (rounded up) "
        "and holds a full copy of the weights and optimizer slots; every figure is per "
        "device, so total_bytes must fit on each card.",
    ]
    lines = fp.lines
    scenarios = fp.scenarios
    info = fp.layer_info
    if fp.training and grad_bytes > 0:
        allreduce = _allreduce_line(fp.lines[0], grad_bytes)
        lines = (*lines, allreduce)
        # the all-reduce comes after the backward pass whatever its schedule
        scenarios = tuple(
            dataclasses.replace(s, lines=(*s.lines, (allreduce.a, allreduce.b))) for s in scenarios
        )
        at = next((i for i, row in enumerate(info) if row.name == ALLOCATOR_ROW_NAME), len(info))
        info = (*info[:at], LayerInfo(ALLREDUCE_ROW_NAME, "", "", 0), *info[at:])
        notes.append(
            f"Gradient all-reduce: TF's default CollectiveAllReduce concatenates all "
            f"{grad_bytes:,} bytes of gradients into one buffer per device before summing "
            "them, so each device briefly holds the gradients twice; modelled as one more "
            "candidate peak (weights + optimizer state + input batch + 2 x gradients). "
            "NCCL's own buffers are outside TF's allocator and not included."
        )
    return dataclasses.replace(
        fp,
        batch_size=global_batch,
        replicas=replicas,
        lines=lines,
        scenarios=scenarios,
        layer_info=info,
        notes=(*fp.notes, *notes),
    )


def _allreduce_line(reference: PeakLine, grad_bytes: int) -> PeakLine:
    """What is alive while the gradients are packed: resident state + gradients twice."""
    layers: dict[str, dict[str, tuple[float, float]]] = {}
    for name, coefs in reference.layers.items():
        kept = {cat: coefs[cat] for cat in _RESIDENT if cat in coefs}
        if kept:
            layers[name] = kept
    layers[ALLREDUCE_ROW_NAME] = {
        "gradients": (float(grad_bytes), 0.0),
        "temporaries": (float(grad_bytes), 0.0),
    }
    # Category totals from the reference line itself: they include what no
    # layer owns (the views show that as the "other" row).
    resident = [cat for cat in _RESIDENT if cat in reference.categories]
    categories = {cat: reference.categories[cat] for cat in resident}
    categories["gradients"] = (float(grad_bytes), 0.0)
    categories["temporaries"] = (float(grad_bytes), 0.0)
    a = sum(v[0] for v in categories.values())
    b = sum(v[1] for v in categories.values())
    return PeakLine(a, b, categories, layers)
