"""The order TF's executor runs a step in on the CPU, with its inter-op threads.

On a GPU every kernel counts as inexpensive (``OpKernel`` sets ``expensive_``
false for GPU devices), so the executor runs each newly ready op inline on
the thread that made it ready, in the order they became ready: the FIFO
replay of ``schedule.topo_fifo_order``.

On the CPU almost every kernel is "expensive" for the first ~90 runs of a
function (the executor's cost estimate starts at 1e8 cycles and decays by a
tenth per run towards the measured cost, against a threshold of 8,000
cycles).  When an op finishes, ``ExecutorState::ScheduleReady`` runs the
cheap successors inline and hands every expensive one but the last to the
inter-op thread pool; the last runs inline only if nothing else is queued.
With two inter-op threads the second thread picks those up at once, so a
weight gradient runs beside the input-gradient chain and its inputs stay
alive while that chain allocates: the peak can hold buffers that a one-op-
at-a-time replay frees earlier.

This module simulates that with op durations from a rough cost model (the
FLOPs of matrix products and convolutions, the bytes of everything else) and
returns the start and end of every op in time order; ``schedule.replay``
allocates an op's outputs at its start and releases its inputs at its end.
The durations only decide which of two concurrent ops ends first.
"""

from __future__ import annotations

import collections
import heapq
import math
from collections.abc import Mapping

from .opsem import CONTROL_FLOW_OPS

#: CPU kernels whose ``IsExpensive()`` is false: they always run inline.
CHEAP_OPS = (
    frozenset(
        {
            "Const",
            "HostConst",
            "Identity",
            "IdentityN",
            "StopGradient",
            "PreventGradient",
            "Shape",
            "ShapeN",
            "Rank",
            "Size",
            "Reshape",
            "ExpandDims",
            "Squeeze",
            "NoOp",
            "ControlTrigger",
            "_Arg",
            "_Retval",
            "_DeviceArg",
            "_DeviceRetval",
            "Placeholder",
            "VarHandleOp",
            "ReadVariablesOp",
            "BroadcastGradientArgs",
            "_LaggingProducts",  # the estimator's held weight-gradient products, no kernel
        }
    )
    | CONTROL_FLOW_OPS
)

#: Threads of TF's inter-op pool on this machine's default (one per core).
DEFAULT_THREADS = 2

_FLOP_RATE = 40.0  # FLOPs per ns of one busy thread (order of magnitude)
_BYTE_RATE = 8.0  # bytes per ns for memory-bound kernels
_OVERHEAD = 3000.0  # ns an expensive kernel costs however small
#: Filter gradients take 0.96 to 1.25 times as long as the input gradient of
#: the same convolution, timed alone on this machine's oneDNN kernels over
#: five shapes (geometric mean 1.08 and 1.05 in two runs:
#: ``python benchmarks/kernel_costs.py``).  Only the order of two concurrent
#: ops depends on it, and with it a weight gradient ends after the input
#: gradient it started with, as TF's log shows for the Conv1D zoo case.
_FILTER_GRAD_SLOWDOWN = 1.08
#: The ends of that ratio, replayed as scenarios of the peak
#: (``Footprint.peak_range``): the same five shapes gave 0.90 to 1.40 on the
#: Intel Xeon of session 31 (geometric mean 1.05), so the ends are the widest
#: measured.
FILTER_GRAD_SLOWDOWN_RANGE = (0.90, 1.40)
#: oneDNN's filter gradients in 16-bit dtypes are another matter.  Timed
#: alone in tf.functions on an Intel Xeon with AVX512-FP16 and AMX (session
#: 32, ``python benchmarks/kernel_costs.py --filters``: the five shapes above
#: and the zoo's small CNN's five), a ``float16`` ``Conv2DBackpropFilter``
#: takes 37 to 665 times as long as the input gradient (geometric means 285
#: and 258 in two runs), a ``bfloat16`` one 1.3 to 2.7 times (1.83 and 1.58).
#: These are the means of the two runs.  TF's Eigen kernels, which take every
#: dtype oneDNN does not, keep about float32's ratio in 16 bits (``float16``
#: 0.62 to 1.01 with oneDNN off); in float32 and float64 theirs follows the
#: channels (``EIGEN_FILTER_GRAD_FIT``).  A convolution's slow filter gradient is still
#: running when the next layer's input gradient allocates: the
#: ``mixed_float16`` small CNN's estimate went from +21.9% to +5.5%.
#: Each ratio holds on CPUs with the instruction set it was timed on, so each
#: dtype lists ``(the /proc/cpuinfo flag a CPU needs, ratio)``, the first
#: the CPU has applying (``None``: any CPU whose oneDNN takes the dtype).
#: oneDNN runs ``bfloat16`` on AMX where there is AMX-BF16; on an AMD EPYC
#: without it, with AVX512-BF16, the same ten shapes gave 0.58 to 1.96
#: (geometric means 1.37 and 1.39 in two runs, session 40).  A CPU with
#: neither keeps float32's ratio: not timed.
ONEDNN_FILTER_GRAD_SLOWDOWN: dict[str, tuple[tuple[str | None, float], ...]] = {
    "float16": ((None, 271.0),),
    "bfloat16": (("amx_bf16", 1.70), ("avx512_bf16", 1.38)),
}
#: ``UnsortedSegmentSum`` (summing a sparse gradient's rows, as Keras'
#: optimizers do for an embedding) runs 2.5 to 7.5 times slower per byte it
#: reads and writes than an element-wise product: each input row is a
#: read-modify-write of an output row at a random place.  Geometric means
#: 3.85 and 3.90 over five shapes on an Intel Xeon, net of the call, in two
#: runs of five passes (``python benchmarks/kernel_costs.py --scatter``;
#: 3.59 with the call counted).  With it, the Nadam update of a
#: 30,000 x 48 embedding keeps its squared gradient alive until the second
#: scatter-add starts, as TF's profile does.
SCATTER_SLOWDOWN = 3.9
#: The cross-entropy kernels (a softmax, its log and its gradient over every
#: row of logits, in one kernel) run slower per byte they read and write than
#: an element-wise product: 2.8 to 9.2 times for the sparse one, 1.7 to 6.0
#: for the dense one, over six shapes of logits (a language model's, a
#: classifier's, a segmenter's) on an Intel Xeon, net of the call
#: (geometric means 4.54 and 4.46, and 2.64 and 2.61, in two runs of five
#: passes: ``python benchmarks/kernel_costs.py --xent``; 4.1 and 2.3 with
#: the call counted).  Costed
#: by its bytes, the loss of a softmax over 8,000 words ended before a metric
#: reading the softmax had started, so the logits were freed early: TF's
#: profile holds them, the loss still running, when the metric allocates.
XENT_SLOWDOWN = {"SparseSoftmaxCrossEntropyWithLogits": 4.5, "SoftmaxCrossEntropyWithLogits": 2.6}
#: The random draws Keras' layers make in training (Dropout, SpatialDropout
#: and AlphaDropout draw uniforms; GaussianNoise and GaussianDropout
#: normals) are bound by Philox's arithmetic, not by the bytes they write:
#: timed alone against an element-wise product of a tensor of their shape on
#: an Intel Xeon, net of what calling a ``tf.function`` costs, 4.5 to 8.1
#: times slower per byte for the uniform and 10.7 to 25.8 for the normal,
#: over six shapes of activations (geometric means 6.9, 6.4 and 6.5, and
#: 19.4, 18.1 and 18.0, in three runs of five passes:
#: ``python benchmarks/kernel_costs.py --rng``).  Costed by their bytes, a
#: CNN's dropout mask was drawn in 0.53 ms of the model's time where TF's
#: profile took 3.1 to 4.1 ms, so the ops queued behind it started too
#: early.  (Session 58's 4.6 and 10.3 were timed with the call's 0.25 ms in
#: both kernels' times, which brings small shapes' ratios toward 1.)
RNG_SLOWDOWN = {"StatelessRandomUniformV2": 6.6, "StatelessRandomNormalV2": 18.5}
#: Each kernel above that is timed per byte, by name: how many times its
#: bytes' time it takes.
_OP_BYTE_SLOWDOWN = {"UnsortedSegmentSum": SCATTER_SLOWDOWN, **XENT_SLOWDOWN, **RNG_SLOWDOWN}

#: A transpose that moves the innermost axis copies element by element, and
#: narrow elements do not make it faster: timed alone on this AMD EPYC
#: (2048 x 2048 and 4096 x 1024 swapped, a (16, 1024, 1024) tensor's last two
#: axes swapped), int8 and uint8 took 0.86 to 1.45 times float32's time,
#: float16 1.8 to 2.6 times, bfloat16 0.74 to 1.7 times; one that keeps the
#: innermost axis copies rows, and int8 took 0.36 of float32's time.  So
#: such a transpose is charged at least 4 bytes per element.  Charged by its
#: bytes, the int8 transposes unpacking the int4 MLP's kernels took 4.7 times
#: the model's time in TF's profile, relative to the step's median.
ELEMENT_MOVE_BYTES = 4

#: Expensive kernels that copy nothing: a resource variable's read hands out
#: the variable's own buffer (the replay aliases it), so it costs the
#: kernel's overhead whatever the variable's size.  TF's profile of the
#: masked embedding bag with Lion shows reads of its 11 MiB embedding and
#: momentum taking 0.2 to 1 us; costed by their bytes they took 1.4 ms, and
#: the products that read them queued behind.
NO_COPY_OPS = frozenset({"ReadVariableOp"})

#: Reductions that keep the innermost axis (a BatchNormalization gradient's
#: sums over batch and pixels, a bias gradient) stride through their input:
#: timed alone here, the sum of a 2 to 8 MiB (N, H, W, C) tensor over N, H
#: and W takes 0.99 to 1.29 times as long as multiplying it by a (C,)
#: vector (four shapes, C from 32 to 128, geometric mean 1.11:
#: ``python benchmarks/kernel_costs.py``), where bytes moved alone make it
#: half as long.  The slowdown gives the model that mean ratio.  In a
#: BatchNormalization gradient it decides whether the product ``x * dy``
#: starts while the sum over ``dy`` still runs (TF's profile: the product
#: then allocates, as ``dy`` has another reader) or after it (it writes
#: into ``dy``).
REDUCTION_OPS = frozenset(
    {"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm", "BiasAddGrad"}
)
#: Which of the two ends first depends on the CPU.  Timed on the AMD EPYC
#: the zoo is measured on now, the same sums take only 0.23 to 0.58 times as
#: long as the products (geometric mean 0.39, session 24): the slowdown that
#: gives that ratio is 0.77.  So the slowdown follows the CPU's vendor
#: (``/proc/cpuinfo``'s ``vendor_id``); a CPU of another vendor, or none
#: known, gets the Intel figure, the one the model was first built on.
REDUCTION_SLOWDOWN = {"GenuineIntel": 2.2, "AuthenticAMD": 0.77}
_REDUCTION_SLOWDOWN = REDUCTION_SLOWDOWN["GenuineIntel"]


#: TF's own (Eigen) filter gradient, where oneDNN does not run the dtype,
#: builds the input's column matrix and multiplies it by the output gradient
#: into a filter-sized result; the input gradient multiplies first and
#: scatters the columns back.  Their ratio follows the channels: timed alone
#: on an AVX2 AMD EPYC over 3x3 convolutions with 16 to 256 input and output
#: channels each (``python benchmarks/kernel_costs.py --channels float32``),
#: 2 to 3.6 with many input and few output channels, 0.6 to 0.9 with 256
#: output channels, geometric mean 1.28.  ``log ratio = c0 + c1 log C_in +
#: c2 log C_out + c3 log C_in log C_out`` fits the 25 to an rms of 0.12
#: (three runs gave nearly these coefficients).  Against the ratios TF's own
#: steps showed there (level-1 profiles of six float32 CNNs, 46 pairs), the
#: fit is off by an rms of 0.38 in log ratio, the constant by 0.50; for
#: float64 (four pairs of the float64 U-Net) 0.18 against 0.41.  Channel
#: counts outside the grid take its nearest edge; a 1x1 kernel has no column
#: matrix and keeps the constant.
EIGEN_FILTER_GRAD_FIT = (-2.170, 0.889, 0.499, -0.1942)
#: The grid's channel counts, the fit's range.
EIGEN_FIT_CHANNELS = (16, 256)
#: Eigen's convolutions with fewer than 16 input or output channels (a
#: grayscale or spectrogram CNN's first layer, an image-to-image network's
#: last) take far longer than their FLOPs: their time falls far less than
#: the FLOPs do as the channels do.  Timed alone here over 3x3 convolutions
#: with 1 to 64 input and output channels each, on four image sizes
#: (``python benchmarks/kernel_costs.py --few-channels``), each of the
#: three kernels' time is proportional to ``pixels * (taps * k + cols) *
#: (m + rows)`` within an rms of 0.21 to 0.26 in log time (FLOPs alone: 1.3
#: to 1.5), ``k`` the channels contracted (the input's; the output's for
#: the input gradient), ``m`` the others: as if each pixel's column of
#: ``taps * k`` entries had ``cols`` more and the result ``rows`` more
#: channels.  These pads are a first run's; the benchmark's gave (324, 28),
#: (528, 4) and (48, 60), as close.  Where a count is under 16, the replay
#: charges the FLOPs at the 16-channel kernel's rate times how much that
#: product per FLOP grows below it (``few_channel_slowdown``).  Costed by
#: its FLOPs, a one-channel first layer's filter gradient took 2.2 to 8
#: times the model's time alone, and the triplet encoder's step waited on
#: it; a convolution to one channel (the KL VAE's output) took 18.7 ms for
#: its input gradient in TF's step, the model 1.6 (10.1 now).
EIGEN_FEW_CHANNEL_PADS = {
    "Conv2D": (276, 28),
    "_FusedConv2D": (276, 28),
    "Conv2DBackpropInput": (540, 8),
    "Conv2DBackpropFilter": (48, 68),
}
#: How far TF's in-step ratios stray from the fit: one rms (0.38 in log
#: ratio, the 46 float32 pairs above) either way.  Where the fit times a
#: step's filter gradients, its scenarios scale them by these ends instead
#: of ``FILTER_GRAD_SLOWDOWN_RANGE``'s.
EIGEN_FILTER_GRAD_SCALES = (math.exp(-0.38), math.exp(0.38))


#: The dtypes Eigen's convolution kernels were timed in, for the channel fit
#: and the few-channel pads.
EIGEN_TIMED_DTYPES = ("float32", "float64")

#: oneDNN's convolutions with few channels, the same way, timed on the
#: Intel Xeon of session 65 (AVX-512, AMX; ``python
#: benchmarks/kernel_costs.py --few-channels --onednn``): rms 0.34 to 0.43
#: in log time against 1.28 to 1.40 for FLOPs alone.  The kernel slows down
#: where its result has few channels (``m``): a 64-to-3 convolution's
#: filter gradient took 10.6 ms on 16 96x96 pictures, its input gradient
#: 3.7, the same FLOPs.  Costed by FLOPs the two were equal, and in the
#: super-resolution net's step (``zoo_heldout.residual_subpixel_sr``) the
#: replay ended the filter gradient first, freeing its 64 MiB input before
#: the sub-pixel gradient allocated; TF's filter gradient still held it.
#: Timed on Intel only, they follow the CPU's vendor (``/proc/cpuinfo``'s
#: ``vendor_id``; none known counts as Intel, as for ``REDUCTION_SLOWDOWN``).
#: On the Zen 4 EPYC's page (its cached truth, estimated as on it) the
#: Xeon's pads took the cases over 15% from 17 to 19
#: (``conv1d_transpose_ae_sgd`` -5.1% to +17.2%), so an AMD CPU keeps the
#: FLOPs until its kernels are timed.
ONEDNN_FEW_CHANNEL_PADS: dict[str, dict[str, tuple[int, int]]] = {
    "GenuineIntel": {
        "Conv2D": (48, 32),
        "_FusedConv2D": (48, 32),
        "Conv2DBackpropInput": (60, 44),
        "Conv2DBackpropFilter": (48, 28),
    },
}
#: The dtypes oneDNN's kernels were timed in for those pads.
ONEDNN_TIMED_DTYPES = ("float32",)


def _full_kernel(kernel: Shape | None) -> bool:
    """Whether ``kernel`` is a whole ``(height, width, C_in, C_out)`` shape, every size known."""
    return kernel is not None and len(kernel) == 4 and all(isinstance(d, int) for d in kernel)


def contracted_channels(op: str, c_in: int, c_out: int) -> tuple[int, int]:
    """``(k, m)``: the channels a convolution kernel contracts over, and the others.

    The input's for the forward kernel and the filter gradient, the output's
    for the input gradient.
    """
    return (c_out, c_in) if op == "Conv2DBackpropInput" else (c_in, c_out)


def eigen_times_by_channels(op: str, dtype: str, onednn: bool) -> bool:
    """Whether ``EIGEN_FILTER_GRAD_FIT`` times this op (given its kernel's shape).

    TF's own filter gradient, where oneDNN does not run the dtype, in the
    two dtypes the fit was checked for.
    """
    return op == "Conv2DBackpropFilter" and not onednn and dtype in EIGEN_TIMED_DTYPES


def filter_grad_slowdown(
    op: str,
    dtype: str,
    onednn: bool,
    flags: frozenset[str] | None = None,
    kernel: Shape | None = None,
) -> float:
    """How many times its input gradient's time a convolution's filter gradient takes.

    ``onednn`` says whether oneDNN runs ``dtype`` on this CPU
    (``estimator.onednn_dtypes``), ``flags`` are the CPU's (``None``: not known),
    ``kernel`` the filter's shape ``(height, width, C_in, C_out)`` if known.
    """
    if op != "Conv2DBackpropFilter":
        return _FILTER_GRAD_SLOWDOWN
    if onednn:
        for needs, ratio in ONEDNN_FILTER_GRAD_SLOWDOWN.get(dtype, ()):
            if needs is None or needs in (flags or ()):
                return ratio
        return _FILTER_GRAD_SLOWDOWN
    if (
        not eigen_times_by_channels(op, dtype, onednn)
        or not _full_kernel(kernel)
        or kernel[0] * kernel[1] < 2
    ):
        return _FILTER_GRAD_SLOWDOWN
    lo, hi = EIGEN_FIT_CHANNELS
    a, b = (math.log(min(max(c, lo), hi)) for c in kernel[2:])
    c0, c1, c2, c3 = EIGEN_FILTER_GRAD_FIT
    return math.exp(c0 + c1 * a + c2 * b + c3 * a * b)


def few_channel_pads(onednn: bool, vendor: str | None) -> dict[str, tuple[int, int]]:
    """The few-channel pads of oneDNN's kernels on a CPU of ``vendor`` (none known: Intel's),
    or of Eigen's; per op, empty where they were not timed."""
    if onednn:
        return ONEDNN_FEW_CHANNEL_PADS.get(vendor or "GenuineIntel", {})
    return EIGEN_FEW_CHANNEL_PADS


def few_channel_slowdown(
    op: str, dtype: str, onednn: bool, kernel: Shape | None, vendor: str | None = None
) -> float:
    """How many times its FLOPs' time a convolution with under 16 channels takes.

    ``onednn`` says whether oneDNN runs ``dtype`` on this CPU: its kernels
    have their own pads, for the CPU's ``vendor`` (``None``: not known).  1
    for other ops, for dtypes or vendors the kernels were not timed on, for
    1x1 kernels and for kernels of unknown shape ``(height, width, C_in,
    C_out)``.
    """
    table = few_channel_pads(onednn, vendor)
    timed = ONEDNN_TIMED_DTYPES if onednn else EIGEN_TIMED_DTYPES
    pads = table.get(op)
    if pads is None or dtype not in timed or not _full_kernel(kernel):
        return 1.0
    taps, c_in, c_out = kernel[0] * kernel[1], kernel[2], kernel[3]
    if taps < 2 or min(c_in, c_out) < 1:
        return 1.0
    k, m = contracted_channels(op, c_in, c_out)
    cols, rows = pads
    edge = EIGEN_FIT_CHANNELS[0]

    def per_flop(k: int, m: int) -> float:
        return (taps * k + cols) * (m + rows) / (taps * k * m)

    return per_flop(k, m) / per_flop(max(k, edge), max(m, edge))


#: TF's own (Eigen) ``MaxPoolGrad``, where oneDNN does not run the dtype,
#: finds each window's maximum again and scatters the gradient into it: it
#: runs 2.1 to 4.5 times slower per byte it reads and writes than an
#: element-wise product, timed alone on the AVX2 EPYC over six pooled
#: shapes of 2.6 to 16 MiB (session 49: geometric mean 3.15 in
#: ``python benchmarks/kernel_costs.py --pool-grads``, 3.29 in a first
#: scratch run of the same shapes).  oneDNN's kernel
#: reads the argmax its forward pooling saved and is not slower: in a
#: profiled triplet-encoder step here it took 0.5 to 0.8 ms with oneDNN on,
#: 2.1 to 3.4 ms with it off (the model: 0.9 ms).  Costed by its bytes, the
#: pooling gradients of that step's three branches ended before the dense
#: layers' gradients did, and its three filter gradients ran one after the
#: other; TF ran two branches' pooling gradients, then their filter
#: gradients (each with a 10.7 MiB column buffer), side by side.
EIGEN_POOL_GRAD_SLOWDOWN = 3.2


def pool_grad_slowdown(op: str, onednn: bool) -> float:
    """How many times its bytes' time a pooling gradient takes (1 for other ops).

    ``onednn`` says whether oneDNN runs the op's dtype on this CPU.
    """
    return EIGEN_POOL_GRAD_SLOWDOWN if op == "MaxPoolGrad" and not onednn else 1.0


def by_vendor(table: Mapping[str, float], vendor: str | None) -> float:
    """``vendor``'s entry in a table of figures measured per CPU vendor.

    A CPU of a vendor not in it, or of none known, gets the Intel figure:
    the cost model was first built on an Intel Xeon.
    """
    return table.get(vendor or "", table["GenuineIntel"])


def reduction_slowdown(vendor: str | None) -> float:
    """How many times its bytes a reduction that keeps the innermost axis costs, on ``vendor``."""
    return by_vendor(REDUCTION_SLOWDOWN, vendor)


#: Comparisons write one byte per element, yet take as long as a float op on
#: as many elements: in TF's profile of the causal decoder's loss (8.2M
#: float32 elements), ``LessEqual`` and ``GreaterEqual`` took 4.7 and 5.0 ms,
#: ``Minimum`` and ``Maximum`` 5.1 and 4.7 (``benchmarks/tf_timeline.py
#: --case causal_decoder_lion --kernels 3000``).  So their output is charged
#: at their inputs' width.  Charged as bytes, the clip's gradient mask ended
#: before the ``Maximum`` started with it, where in TF it ended after, while
#: ``Log`` allocated: its input, the 31 MiB ``Minimum``, was freed too early.
COMPARISON_OPS = frozenset(
    {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "ApproximateEqual"}
)
#: ...and how long they take beside that float op is known to a range, not a
#: point: ``GreaterEqual`` over ``Maximum`` on the same clipped logits took
#: 1.6 in the grouped-query decoder's profile and 1.06 in the causal
#: decoder's (session 21), 0.98, 0.31 and 0.94 in three of the masked causal
#: LM's (session 41, ``tf_timeline.py --case masked_causal_lm_lion --order
#: sparse_categorical_crossentropy``).  Where the mask ends before the
#: ``Log`` allocates, TF's peak holds one logits-sized tensor less; the
#: scenarios of ``Footprint.peak_range`` time every comparison at 0.9 and 1.6
#: of its modelled cost (0.9 ends the mask first where the two start together).
COMPARISON_SLOWDOWN_RANGE = (0.9, 1.6)

#: ns from an op being queued to an idle thread starting it, with every
#: thread at full speed.  TF's profiles show the queued one of two ops made
#: ready together starting 50 to 60 us after the one run inline (an MLP's
#: input and weight gradients 53 us apart; the U-Net's last input gradient
#: 58 us after its thread was free), so of two equally long ops the inline
#: one ends first.  With shared cores, ops started together share them
#: instead (``simulate``).
WAKE_UP = 50_000.0

Shape = tuple[int, ...]


def _size(shape: Shape | None) -> int:
    return math.prod(shape) if shape else 1


def _batch_of(shape: Shape) -> int:
    """The batch of matrices a (batch) matrix product's operand holds: 1 for a matrix.

    An empty batch counts as 1 too, so that dividing by it is safe (the
    product's output is empty then, and so are its FLOPs).
    """
    return _size(shape[:-2]) or 1


def op_flops(op: str, out_shapes: list[Shape | None], in_shapes: list[Shape | None]) -> float:
    """FLOPs of matrix products and convolutions; 0 for other ops."""
    out = out_shapes[0] if out_shapes else None
    if out is None:
        return 0.0
    if op in ("MatMul", "_MklMatMul", "_FusedMatMul") and len(in_shapes) >= 2:
        a, b = in_shapes[0], in_shapes[1]
        if a is None or b is None:
            return 0.0
        return 2.0 * math.sqrt(_size(a) * _size(b) * _size(out))
    if op.startswith("BatchMatMul") and len(in_shapes) >= 2:
        a, b = in_shapes[0], in_shapes[1]
        if a is None or b is None or len(out) < 2:
            return 0.0
        # per operand, its own batch: a weight shared by every batch entry
        # (EinsumDense's ``abc,cd->abd``) has none, and broadcasts
        matrices = _size(a) / _batch_of(a) * _size(b) / _batch_of(b) * _size(out[-2:])
        return 2.0 * _batch_of(out) * math.sqrt(matrices)
    if op in ("Conv2D", "Conv3D", "_FusedConv2D", "DepthwiseConv2dNative"):
        filt = in_shapes[1] if len(in_shapes) > 1 else None
        if filt is None:
            return 0.0
        per_out = _size(filt[:-2]) * (1 if op.startswith("Depthwise") else filt[-2])
        return 2.0 * _size(out) * per_out
    if op in ("Conv2DBackpropInput", "Conv3DBackpropInputV2", "DepthwiseConv2dNativeBackpropInput"):
        filt = in_shapes[1] if len(in_shapes) > 1 else None
        dy = in_shapes[2] if len(in_shapes) > 2 else None
        if filt is None or dy is None:
            return 0.0
        per = _size(filt[:-2]) * (1 if op.startswith("Depthwise") else filt[-2])
        return 2.0 * _size(dy) * per
    if op in (
        "Conv2DBackpropFilter",
        "Conv3DBackpropFilterV2",
        "DepthwiseConv2dNativeBackpropFilter",
    ):
        dy = in_shapes[2] if len(in_shapes) > 2 else None
        if dy is None:
            return 0.0
        per = _size(out[:-2]) * (1 if op.startswith("Depthwise") else out[-2])
        return 2.0 * _size(dy) * per
    return 0.0


def op_duration(
    op: str,
    out_shapes: list[Shape | None],
    in_shapes: list[Shape | None],
    out_bytes: float,
    in_bytes: float,
    reduction_slowdown: float = _REDUCTION_SLOWDOWN,
    filter_slowdown: float = _FILTER_GRAD_SLOWDOWN,
    pool_slowdown: float = 1.0,
    channel_slowdown: float = 1.0,
    *,
    flops: float | None = None,
) -> float:
    """A rough duration in ns: compute for products, memory traffic for the rest.

    ``reduction_slowdown`` is the CPU's (``reduction_slowdown(vendor)``),
    ``filter_slowdown`` the op's if it is a filter gradient
    (``filter_grad_slowdown``), ``pool_slowdown`` if it is a pooling gradient
    (``pool_grad_slowdown``), ``channel_slowdown`` if it is a convolution with
    few channels (``few_channel_slowdown``).  ``flops`` replaces ``op_flops``'
    where the shapes alone do not say them (an Einsum's equation does).
    """
    if op in CHEAP_OPS:
        return 0.0
    if op in NO_COPY_OPS:
        return _OVERHEAD
    if flops is None:
        flops = op_flops(op, out_shapes, in_shapes)
    if op in COMPARISON_OPS and out_shapes and out_shapes[0] is not None:
        elements = sum(_size(s) for s in in_shapes if s is not None)
        if elements:
            out_bytes = _size(out_shapes[0]) * in_bytes / elements
    if "BackpropFilter" in op:  # a reduction over the batch: slower per FLOP
        flops *= filter_slowdown
    flops *= channel_slowdown
    moved = (out_bytes + in_bytes) / _BYTE_RATE
    if op in REDUCTION_OPS:
        moved *= reduction_slowdown
    else:
        moved *= _OP_BYTE_SLOWDOWN.get(op, 1.0) * pool_slowdown
    return _OVERHEAD + flops / _FLOP_RATE + moved


def simulate(
    names: list[str],
    deps: Mapping[str, list[str]],
    duration: Mapping[str, float],
    threads: int = DEFAULT_THREADS,
    *,
    shared_cores: bool = False,
    solo_ns: float = 0.0,
) -> list[tuple[str, str]]:
    """``("s", op)`` / ``("e", op)`` events in time order, as TF's executor runs them.

    ``names`` is the graph order (which fixes the order of ready successors),
    ``deps`` the data and control inputs of each op within ``names``.

    How concurrent kernels share the machine decides which of them ends
    first, and TF does not do it one way (its profiler's op timeline on this
    machine, ``benchmarks/tf_timeline.py``): an MLP's input and weight
    gradients, the same FLOPs, started 53 us apart and ended in that order,
    2.1 and 3.0 ms later, as if the cores served them in turn, while a conv
    autoencoder's input gradient ended 17 ms before the filter gradient
    started with it.  By default every thread runs its op at full
    speed, as on a machine with a core per thread.  ``shared_cores`` models
    the other case: an expensive op's work waits for the work of the ops
    started before it (oneDNN and Eigen share one intra-op pool), and ops
    started at the same instant share the cores.  Ops still *start* (and
    allocate) when a thread picks them up, in both models.  With
    ``shared_cores``, an op of at most ``solo_ns`` runs at full speed all the
    same, as a kernel too small for Eigen to split runs on its own thread:
    a rule for which ops take turns, tried and not kept (docs/engine.md,
    ``benchmarks/core_modes.py --solo-ns``).
    """
    index = {name: i for i, name in enumerate(names)}
    indeg = {}
    succ: dict[str, list[str]] = collections.defaultdict(list)
    for name in names:
        ds = {d for d in deps.get(name, ()) if d in index}
        indeg[name] = len(ds)
        for d in ds:
            succ[d].append(name)
    for d in succ:
        succ[d].sort(key=index.__getitem__)

    def expensive(name: str) -> bool:
        return duration.get(name, 0.0) > 0.0

    # Per thread: the ops it runs inline, and its task queue (own end = front).
    inline: list[collections.deque] = [collections.deque() for _ in range(threads)]
    tasks: list[collections.deque] = [collections.deque() for _ in range(threads)]
    # The first ready ops come from outside the pool: all queued as tasks.
    spread = 0
    for name in names:
        if indeg[name] == 0:
            tasks[spread % threads].append(name)
            spread += 1
    events: list[tuple[str, str]] = []
    running: list[str | None] = [None] * threads
    clock = [(0.0, t, 0) for t in range(threads)]  # (time free, thread, entry)
    heapq.heapify(clock)
    idle: set[int] = set()
    seq = 0
    current = {t: 0 for t in range(threads)}  # a thread's live clock entry (others are stale)
    # shared_cores: when the cores are next free, and the ops that started at
    # one instant and share them: (start, first free time, [(duration, thread)]).
    cores_free = 0.0
    batch: tuple[float, float, list[tuple[float, int]]] = (-1.0, 0.0, [])

    def push(at: float, t: int) -> None:
        nonlocal seq
        seq += 1
        current[t] = seq
        heapq.heappush(clock, (at, t, seq))

    def start(now: float, t: int, cost: float) -> None:
        nonlocal cores_free, batch
        if not shared_cores or cost <= max(solo_ns, 0.0):
            push(now + cost, t)
            return
        if batch[0] != now:
            batch = (now, max(now, cores_free), [])
        batch[2].append((cost, t))
        # Processor sharing within the batch: the k-th shortest ends after
        # the k-1 shorter ones and its own share of the rest.
        done = 0.0
        members = sorted(batch[2])
        for k, (d, thread) in enumerate(members):
            push(batch[1] + done + (len(members) - k) * d, thread)
            done += d
        cores_free = batch[1] + done

    def schedule_ready(t: int, ready: list[str]) -> None:
        last = None
        for name in ready:
            if not expensive(name):
                inline[t].append(name)
            else:
                if last is not None:
                    tasks[t].appendleft(last)
                last = name
        if last is not None:
            if not inline[t]:
                inline[t].append(last)
            else:
                tasks[t].appendleft(last)

    def next_op(t: int) -> str | None:
        if inline[t]:
            return inline[t].popleft()
        if tasks[t]:
            return tasks[t].popleft()
        for other in range(threads):
            if other != t and tasks[other]:
                return tasks[other].pop()  # steal the oldest
        return None

    while clock:
        now, t, entry = heapq.heappop(clock)
        if entry != current[t]:
            continue  # rescheduled: another op joined its shared batch
        done = running[t]
        if done is not None:
            running[t] = None
            events.append(("e", done))
            ready = []
            for nxt in succ.get(done, ()):
                indeg[nxt] -= 1
                if indeg[nxt] == 0:
                    ready.append(nxt)
            schedule_ready(t, ready)
        name = next_op(t)
        if name is None:
            idle.add(t)
            continue
        running[t] = name
        events.append(("s", name))
        start(now, t, duration.get(name, 0.0))
        # Work left in the queues wakes the idle threads now.
        for other in sorted(idle):
            if any(tasks[k] for k in range(threads)):
                idle.discard(other)
                push(now if shared_cores else now + WAKE_UP, other)
    return events
