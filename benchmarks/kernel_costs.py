"""Convolution gradient kernels timed alone: the filter gradient against the input gradient.

The CPU executor model (``jupyter_tfmem/engine/executor.py``) ranks concurrent
ops by rough durations from their FLOPs.  A convolution's filter and input
gradients have the same FLOPs, but the filter gradient reduces over the batch
and runs a little slower; which of the two ends first decides whether their
shared input is still alive when the next layer's gradient allocates.  This
prints the ratio for a few shapes; the engine's ``_FILTER_GRAD_SLOWDOWN`` is
their geometric mean on this machine.  It also times VGG16's largest dense
layer's gradients (batch 16, 4096x4096 kernel) and a square of that kernel's
size against the cost model, the tie docs/engine.md describes.  Last, it
times a BatchNormalization gradient's sum of ``dy`` over batch and pixels
against its product of ``dy`` with a per-channel vector, the two kernels
whose race decides whether that gradient's ``x * dy`` writes into ``dy``,
and prints the ratio the cost model gives them (``REDUCTION_OPS``).
Then it times ``UnsortedSegmentSum`` (the scatter-add that sums a sparse
gradient's rows, as Keras' optimizers do for an embedding) against an
element-wise product of its input, and prints how much slower per byte
than that the scatter-add runs; the engine's ``SCATTER_SLOWDOWN`` is the
geometric mean (``--scatter`` times only these).
Then it times the two cross-entropy kernels (a softmax, its log and its
gradient over every row of logits, in one kernel) against an element-wise
product of the logits, per byte; the engine's ``XENT_SLOWDOWN`` is the
geometric mean (``--xent`` times only these).
Then it times the random-number kernels Keras' layers draw from
(``StatelessRandomUniformV2`` for Dropout and its kin,
``StatelessRandomNormalV2`` for GaussianNoise and GaussianDropout) against
an element-wise product of a tensor of their output's shape, per byte; the
engine's ``RNG_SLOWDOWN`` holds the geometric means (``--rng`` times only
these).  These per-byte factors (and ``--pool-grads``') are timed net of
what calling a ``tf.function`` costs (``call_overhead``), over ``--rounds``
passes of their shapes (default 5), the means taken over all.
With ``--dtypes`` it times products, convolution gradients and element-wise
kernels in float64, float16 and bfloat16 against float32 instead, with the
spread of each factor over the shapes (docs/engine.md, point 3: a cost model
by dtype, tried and not kept).
With ``--filters`` it prints the filter gradient over the input gradient of
the same convolution in each dtype, in tf.functions as the model's step runs
them, over ``SHAPES`` and the shapes of the zoo's small CNN; the engine's
``ONEDNN_FILTER_GRAD_SLOWDOWN`` holds the 16-bit geometric means oneDNN
gives (a float16 filter gradient can take seconds: this takes some minutes).

    python benchmarks/kernel_costs.py
    python benchmarks/kernel_costs.py --dtypes
    python benchmarks/kernel_costs.py --filters
    python benchmarks/kernel_costs.py --scatter
    python benchmarks/kernel_costs.py --xent
    python benchmarks/kernel_costs.py --rng
    python benchmarks/kernel_costs.py --bias-grads
    python benchmarks/kernel_costs.py --side-by-side

With ``--side-by-side`` it starts each shape's filter and input gradients
together in a TF1 graph run by a session (both wait for one
``tf.timestamp``, and each is followed by one of its own), and prints each
one's time from the common start, their ratio, in how many of the runs
the filter gradient ended first, and their ratio alone.  With
``--channels DTYPE`` it does the same over a grid of 3x3 convolutions
(input and output channels each 16 to 256) with TF's Eigen kernels, and
fits the log ratio on the channel counts; the fit alone is the engine's
``EIGEN_FILTER_GRAD_FIT`` (docs/engine.md: it predicts the ratios TF's
own steps show better than the fit together or a constant).

    python benchmarks/kernel_costs.py --channels float32

With ``--pool-grads`` it times TF's own (Eigen) ``MaxPoolGrad`` of a 2x2
pooling against an element-wise product of its input, per byte each moves
(the gradient reads the input, the pooled output and its gradient and
writes an input-sized result: 2.5 input sizes; the product 2), and the
forward pooling the same way; the engine's ``EIGEN_POOL_GRAD_SLOWDOWN`` is
the gradient's geometric mean.

    python benchmarks/kernel_costs.py --pool-grads

With ``--few-channels`` it times Eigen's three kernels of 3x3 convolutions
(forward, input and filter gradients) with 1 to 64 input and output
channels each (a first layer over grayscale or spectrogram inputs, a last
layer to a few channels) on four image sizes, prints TF's time and the time
the cost model gives it (``executor.op_duration``), and fits each kernel's
two pads of ``executor.EIGEN_FEW_CHANNEL_PADS``: TF's time as if each
pixel's column had ``cols`` more entries and the result ``rows`` more
channels.  It takes about two minutes.

    python benchmarks/kernel_costs.py --few-channels

With ``--onednn`` as well it leaves oneDNN on (where TF turns it on for
float32: a CPU with AVX-512 and TF's default ``TF_ENABLE_ONEDNN_OPTS``), so
the three kernels are oneDNN's, and fits ``ONEDNN_FEW_CHANNEL_PADS``.

    python benchmarks/kernel_costs.py --few-channels --onednn

With ``--pairs`` it starts two kernels together in one ``tf.function`` (as
TF's executor starts two ready ops on its inter-op threads) and reads when
each ends (``tf.timestamp`` after each), over several runs in one process,
beside each kernel's time alone: convolution gradients with 3 to 128
channels, two matrix products, and a clip with its mask.  Each run is
"side by side" (each ends within 1.25 times its time alone), "turns" (one
does, the other ends after it: one got the cores first) or "shared"
(neither does).  These are the schedules of ``executor.simulate``: side by
side is its default, ``shared_cores`` the other two.  It takes about a
minute.

    python benchmarks/kernel_costs.py --pairs
"""

from __future__ import annotations

import math
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

#: (batch, height, width, in channels, out channels, kernel height, kernel width)
SHAPES = [
    (64, 1, 98, 64, 128, 1, 5),
    (64, 1, 200, 16, 64, 1, 5),
    (32, 32, 32, 64, 64, 3, 3),
    (32, 16, 16, 128, 128, 3, 3),
    (16, 8, 8, 256, 256, 3, 3),
]


def timed(fn, repeats: int = 30) -> float:
    """Median wall time of ``fn`` in ms, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        out.numpy()  # wait for the result
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e3


def call_overhead(tf) -> float:
    """The time in ms ``timed`` gives a ``tf.function`` that does next to nothing.

    Calling a ``tf.function`` and copying its result to NumPy costs about
    0.25 ms here, a fifth of a 4 MiB product's time, where TF's executor
    starts a kernel of a step in microseconds.  The per-byte sections take
    it off both kernels' times, as ``reductions`` does.
    """
    tiny = tf.random.normal((4,))
    product = tf.function(lambda d: d * 0.5)
    empty = sorted(timed(lambda: product(tiny)) for _ in range(5))[2]
    print(f"a call that does next to nothing: {empty:.3f} ms, taken off each time below")
    return empty


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dtypes",
        action="store_true",
        help="time kernels in float64, float16 and bfloat16 against float32 instead",
    )
    parser.add_argument(
        "--filters",
        action="store_true",
        help="time convolution filter gradients against input gradients in each dtype instead",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="time each filter gradient and input gradient started together instead",
    )
    parser.add_argument(
        "--scatter",
        action="store_true",
        help="time only the scatter-add of a sparse gradient against an element-wise product",
    )
    parser.add_argument(
        "--xent",
        action="store_true",
        help="time only the cross-entropy kernels against an element-wise product",
    )
    parser.add_argument(
        "--rng",
        action="store_true",
        help="time only the random-number kernels against an element-wise product",
    )
    parser.add_argument(
        "--bias-grads",
        action="store_true",
        help="time only the bias gradient (BiasAddGrad) against a sum over the same axes "
        "and an element-wise product",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        metavar="N",
        help="passes over the shapes of the per-byte factors (scatter-add, cross-entropy, "
        "random draws, pooling gradients), the means taken over all (default 5)",
    )
    parser.add_argument(
        "--channels",
        metavar="DTYPE",
        choices=("float32", "float64"),
        help="time Eigen's filter and input gradients, together and alone, over a grid of "
        "channel counts in DTYPE (float32 or float64) and fit the log ratio on them (the "
        "fit alone is the engine's EIGEN_FILTER_GRAD_FIT)",
    )
    parser.add_argument(
        "--pool-grads",
        action="store_true",
        help="time only Eigen's max-pooling gradient against an element-wise product, per byte",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="start two kernels together and tell, run by run, whether they ran side by side, "
        "took turns or shared the cores",
    )
    parser.add_argument(
        "--few-channels",
        action="store_true",
        help="time only Eigen's convolutions with 1 to 64 channels and fit their pads",
    )
    parser.add_argument(
        "--onednn",
        action="store_true",
        help="with --few-channels: leave oneDNN on and fit its pads instead of Eigen's",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.onednn and not args.few_channels:
        parser.error("--onednn goes with --few-channels")
    eigen_only = args.channels or args.pool_grads or (args.few_channels and not args.onednn)
    if eigen_only:  # TF's own (Eigen) kernels on any CPU
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    import tensorflow as tf

    if args.pool_grads:
        pool_gradients(tf, args.rounds)
        return 0
    if args.few_channels:
        few_channel_convolutions(tf, onednn=args.onednn)
        return 0
    if args.pairs:
        concurrent_pairs(tf, max(args.rounds, 7))
        return 0

    if args.channels:
        channel_grid(tf, args.channels)
        return 0
    if args.scatter:
        scatter_adds(tf, args.rounds)
        return 0
    if args.xent:
        cross_entropies(tf, args.rounds)
        return 0
    if args.rng:
        random_draws(tf, args.rounds)
        return 0
    if args.bias_grads:
        bias_gradients(tf, args.rounds)
        return 0
    if args.dtypes:
        dtype_factors(tf)
        return 0
    if args.filters:
        filter_ratios_by_dtype(tf)
        return 0
    if args.side_by_side:
        side_by_side(tf)
        return 0
    strides = [1, 1, 1, 1]
    ratios = []
    for n, h, w, cin, cout, kh, kw in SHAPES:
        x = tf.random.normal((n, h, w, cin))
        k = tf.random.normal((kh, kw, cin, cout))
        dy = tf.random.normal(tf.nn.conv2d(x, k, 1, "VALID").shape)
        grad_input = timed(
            lambda x=x, k=k, dy=dy: tf.raw_ops.Conv2DBackpropInput(
                input_sizes=x.shape, filter=k, out_backprop=dy, strides=strides, padding="VALID"
            )
        )
        grad_filter = timed(
            lambda x=x, k=k, dy=dy: tf.raw_ops.Conv2DBackpropFilter(
                input=x, filter_sizes=k.shape, out_backprop=dy, strides=strides, padding="VALID"
            )
        )
        ratios.append(grad_filter / grad_input)
        print(
            f"x {(n, h, w, cin)} kernel {(kh, kw, cin, cout)}: input gradient "
            f"{grad_input:.2f} ms, filter gradient {grad_filter:.2f} ms, "
            f"ratio {ratios[-1]:.2f}"
        )
    print(f"geometric mean ratio: {_geomean(ratios):.2f}")
    dense_gradients(tf)
    reductions(tf)
    scatter_adds(tf, args.rounds)
    cross_entropies(tf, args.rounds)
    random_draws(tf, args.rounds)
    return 0


def dense_gradients(tf) -> None:
    """VGG16's 4096x4096 layer at batch 16: measured against the executor's cost model."""
    from jupyter_tfmem.engine.executor import op_duration

    n, d = 16, 4096
    x, dy, w = tf.random.normal((n, d)), tf.random.normal((n, d)), tf.random.normal((d, d))
    kernel, rows = 4.0 * d * d, 4.0 * n * d
    cases = [
        # name, fn, op, out shape, in shapes, out bytes, in bytes
        ("weight gradient x^T dy", lambda: tf.matmul(x, dy, transpose_a=True),
         "MatMul", (d, d), [(n, d), (n, d)], kernel, 2 * rows),
        ("input gradient dy w^T", lambda: tf.matmul(dy, w, transpose_b=True),
         "MatMul", (n, d), [(n, d), (d, d)], rows, rows + kernel),
        ("square of the kernel", lambda: tf.square(w),
         "Square", (d, d), [(d, d)], kernel, kernel),
    ]  # fmt: skip
    for name, fn, op, out, ins, out_bytes, in_bytes in cases:
        modelled = op_duration(op, [out], ins, out_bytes, in_bytes) / 1e6
        print(f"{name}: {timed(fn):.1f} ms measured, {modelled:.1f} ms modelled")


#: (N, H, W, C) gradients of BatchNormalization layers, 2 to 8 MiB in float32
BN_SHAPES = [(32, 32, 32, 32), (64, 16, 16, 64), (32, 16, 16, 128), (64, 32, 32, 32)]


def reductions(tf) -> None:
    """A sum over all axes but the channels against a per-channel product, measured and modelled.

    Each kernel runs in its own ``tf.function`` (no copy of the result to
    NumPy); the time of an empty call of the same kind is subtracted.
    """
    from jupyter_tfmem.engine.executor import op_duration, reduction_slowdown
    from jupyter_tfmem.estimator import _cpu_vendor

    def call_time(fn, repeats: int = 40) -> float:
        fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        times.sort()
        return times[len(times) // 2] * 1e6

    # the cost model's figure for this CPU's vendor (engine/executor.py)
    slowdown = reduction_slowdown(_cpu_vendor())
    tiny = tf.zeros((4,))
    empty = call_time(tf.function(lambda: tiny * 2.0))
    for shape in BN_SHAPES:
        dy, v = tf.random.normal(shape), tf.random.normal(shape[-1:])
        sum_time = call_time(tf.function(lambda dy=dy: tf.reduce_sum(dy, [0, 1, 2])))
        mul_time = call_time(tf.function(lambda dy=dy, v=v: dy * v))
        nbytes = 4.0 * math.prod(shape)
        channels = 4.0 * shape[-1]
        modelled = op_duration(
            "Sum", [shape[-1:]], [shape], channels, nbytes, slowdown
        ) / op_duration("Mul", [shape], [shape, shape[-1:]], nbytes, nbytes + channels)
        measured = (sum_time - empty) / (mul_time - empty)
        print(
            f"sum of dy {shape} over N, H, W: {sum_time - empty:.0f} us; dy * v: "
            f"{mul_time - empty:.0f} us; ratio {measured:.2f} measured, {modelled:.2f} modelled"
        )


#: (rows, row width, segments) of sparse gradients summed by UnsortedSegmentSum
SCATTER_SHAPES = [
    (43520, 48, 30000),  # two token inputs of 20 and 150 at batch 256 into a 30,000 x 48 table
    (43520, 48, 2000),
    (8192, 128, 50000),
    (100000, 16, 10000),
    (4096, 256, 1000),
]


def scatter_adds(tf, rounds: int = 1) -> None:
    """A scatter-add's time per byte against an element-wise product's, in the cost model's bytes.

    The cost model times both by the bytes they read and write; the ratio
    of the measured times over the ratio of those bytes is how much slower
    per byte the scatter-add is (each input row is a read-modify-write of a
    row of the output, at a random place).
    """
    import numpy as np

    rng = np.random.default_rng(0)
    empty = call_overhead(tf)
    factors = []
    for rows, width, segments in _rounds(SCATTER_SHAPES, rounds):
        data = tf.constant(rng.standard_normal((rows, width), dtype=np.float32))
        ids = tf.constant(rng.integers(0, segments, rows).astype(np.int32))
        scatter = tf.function(lambda d, i, s=segments: tf.math.unsorted_segment_sum(d, i, s))
        product = tf.function(lambda d: d * 0.5)
        scatter_ms = timed(lambda d=data, i=ids, f=scatter: f(d, i)) - empty
        product_ms = timed(lambda d=data, f=product: f(d)) - empty
        data_bytes, out_bytes = 4.0 * rows * width, 4.0 * segments * width
        counted = (data_bytes + 4.0 * rows + out_bytes) / (2 * data_bytes)
        factors.append(scatter_ms / product_ms / counted)
        print(
            f"UnsortedSegmentSum of {rows} rows of {width} into {segments}: {scatter_ms:.2f} ms; "
            f"the same rows times 0.5: {product_ms:.2f} ms; slower per byte: {factors[-1]:.2f}"
        )
    print(f"scatter-add slowdown per byte: {_spread(factors)}")


#: (rows, classes) of logits: a language model's tokens, a classifier's images, and a
#: segmenter's pixels
XENT_SHAPES = [(2048, 8000), (512, 32000), (4096, 1000), (256, 1000), (8192, 100), (131072, 21)]


def cross_entropies(tf, rounds: int = 1) -> None:
    """The cross-entropy kernels' time per byte against an element-wise product's.

    Both kernels read the logits and write a gradient of their shape (and a
    loss per row), the bytes a product of the logits moves, so the time
    ratio is the slowdown per byte the cost model needs.
    """
    import numpy as np

    rng = np.random.default_rng(0)
    empty = call_overhead(tf)
    factors: dict[str, list[float]] = {"sparse": [], "dense": []}
    for rows, classes in _rounds(XENT_SHAPES, rounds):
        logits = tf.constant(rng.standard_normal((rows, classes), dtype=np.float32))
        ids = tf.constant(rng.integers(0, classes, rows).astype(np.int32))
        dense = tf.one_hot(ids, classes)
        sparse = tf.function(
            lambda x, i: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=i)[1]
        )
        full = tf.function(
            lambda x, y: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)[1]
        )
        product = tf.function(lambda x: x * 0.5)
        product_ms = timed(lambda x=logits, f=product: f(x)) - empty
        sparse_ms = timed(lambda x=logits, i=ids, f=sparse: f(x, i)) - empty
        # the dense kernel reads its labels too: a third of the bytes more
        full_ms = timed(lambda x=logits, y=dense, f=full: f(x, y)) - empty
        factors["sparse"].append(sparse_ms / product_ms)
        factors["dense"].append(full_ms / product_ms / 1.5)
        print(
            f"{rows} x {classes} logits: sparse cross-entropy {sparse_ms:.2f} ms, "
            f"dense {full_ms:.2f} ms, the logits times 0.5 {product_ms:.2f} ms; "
            f"slower per byte: {factors['sparse'][-1]:.2f} and {factors['dense'][-1]:.2f}"
        )
    for kind, values in factors.items():
        print(f"{kind} cross-entropy slowdown per byte: {_spread(values)}")


#: activations a Dropout or GaussianNoise layer draws a mask or noise for: a
#: CNN's feature maps, a transformer's tokens, an MLP's and a classifier's rows
RNG_SHAPES = [
    (64, 128, 128),
    (32, 32, 32, 64),
    (32, 16, 16, 128),
    (64, 64, 512),
    (256, 1024),
    (128, 4096),
]


def random_draws(tf, rounds: int = 1) -> None:
    """The random-number kernels' time per byte against an element-wise product's.

    The cost model times a draw by the bytes it writes (its inputs are a
    shape, a key and a counter), and a product of a tensor of the draw's
    shape by the bytes it reads and writes: twice as many.  Philox makes
    four 32-bit numbers per round and the normal draw transforms pairs of
    them, so both are bound by arithmetic, not memory.  Under a mixed
    precision policy Keras draws in the 16-bit compute dtype; last, each
    draw's time in bfloat16 and float16 over its float32 time (per element:
    the engine charges them per byte, which was tried the other way and not
    kept, docs/engine.md).
    """
    seed = tf.constant([1, 2], tf.int64)
    empty = call_overhead(tf)
    draws = {"StatelessRandomUniformV2": tf.random.stateless_uniform,
             "StatelessRandomNormalV2": tf.random.stateless_normal}  # fmt: skip
    factors: dict[str, list[float]] = {op: [] for op in draws}
    narrow: dict[str, list[float]] = {op: [] for op in draws}
    for shape in _rounds(RNG_SHAPES, rounds):
        x = tf.random.normal(shape)
        product = tf.function(lambda d: d * 0.5)
        product_ms = timed(lambda x=x, f=product: f(x)) - empty
        line = [f"{shape}: the tensor times 0.5 {product_ms:.2f} ms"]
        for op, draw in draws.items():
            fn = tf.function(lambda s=shape, d=draw: d(s, seed))
            draw_ms = timed(fn) - empty
            factors[op].append(2.0 * draw_ms / product_ms)
            line.append(f"{op} {draw_ms:.2f} ms ({factors[op][-1]:.1f} per byte)")
            for dtype in (tf.bfloat16, tf.float16):
                fn = tf.function(lambda s=shape, d=draw, t=dtype: d(s, seed, dtype=t))
                narrow[op].append((timed(fn) - empty) / draw_ms)
        print(", ".join(line))
    for op, values in factors.items():
        print(f"{op} slowdown per byte: {_spread(values)}; a 16-bit draw's time over "
              f"float32's: {_spread(narrow[op])}")  # fmt: skip


#: (batch, height, width, channels) pooled 2x2: the zoo's pooled activations
#: (the triplet encoder's, the spectral-norm CNN's, the mel-spectrogram
#: CNN's, the U-Net's) and two more
POOL_SHAPES = [
    (64, 26, 26, 16),
    (64, 32, 32, 64),
    (16, 64, 64, 32),
    (32, 64, 100, 16),
    (16, 96, 96, 16),
    (32, 16, 16, 128),
]


def pool_gradients(tf, rounds: int = 1) -> None:
    """Eigen's ``MaxPoolGrad`` and ``MaxPool`` per byte against an element-wise product."""
    import numpy as np

    rng = np.random.default_rng(0)
    empty = call_overhead(tf)
    window = [1, 2, 2, 1]
    grads, pools = [], []
    for shape in _rounds(POOL_SHAPES, rounds):
        x = tf.constant(rng.standard_normal(shape, dtype=np.float32))
        pool = tf.function(lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"))
        y = pool(x)
        dy = tf.constant(rng.standard_normal(y.shape, dtype=np.float32))
        grad = tf.function(
            lambda x, y, dy: tf.raw_ops.MaxPoolGrad(
                orig_input=x, orig_output=y, grad=dy, ksize=window, strides=window, padding="VALID"
            )
        )
        product = tf.function(lambda x: x * 0.5)
        product_ms = timed(lambda x=x, f=product: f(x)) - empty
        grad_ms = timed(lambda x=x, y=y, dy=dy, f=grad: f(x, y, dy)) - empty
        pool_ms = timed(lambda x=x, f=pool: f(x)) - empty
        # bytes moved, in input sizes: the gradient 2.5, the pooling 1.25, the product 2
        grads.append(grad_ms / product_ms / 1.25)
        pools.append(pool_ms / product_ms / 0.625)
        print(
            f"{shape}: MaxPoolGrad {grad_ms:.2f} ms, MaxPool {pool_ms:.2f} ms, the input times "
            f"0.5 {product_ms:.2f} ms; slower per byte: {grads[-1]:.2f} and {pools[-1]:.2f}"
        )
    for kind, values in (("MaxPoolGrad", grads), ("MaxPool", pools)):
        print(f"{kind} slowdown per byte: {_spread(values)}")


#: (batch, height, width) images, and the channel counts, of ``--few-channels``
FEW_CHANNEL_IMAGES = [(16, 96, 96), (32, 64, 64), (64, 28, 28), (128, 14, 14)]
FEW_CHANNELS = (1, 3, 8, 16, 32, 64)


def _few_channel_kernels(tf, x, dy, kernel, padding: str = "VALID"):
    """The three convolution kernels of ``--few-channels``, as (op, function, args).

    Plain functions: ``--few-channels`` times each as a ``tf.function``,
    ``--pairs`` calls the two gradients (with ``"SAME"`` padding) inside one;
    a ``tf.function`` called in another loses the control edge that starts it
    after the step's first timestamp.
    """
    strides, shape = [1, 1, 1, 1], x.shape.as_list()
    sizes = [int(d) for d in kernel.shape]

    def forward(x, k):
        return tf.raw_ops.Conv2D(input=x, filter=k, strides=strides, padding=padding)

    def input_gradient(dy, k):
        return tf.raw_ops.Conv2DBackpropInput(
            input_sizes=shape, filter=k, out_backprop=dy, strides=strides, padding=padding
        )

    def filter_gradient(x, dy):
        return tf.raw_ops.Conv2DBackpropFilter(
            input=x, filter_sizes=sizes, out_backprop=dy, strides=strides, padding=padding
        )

    return [
        ("Conv2D", forward, (x, kernel)),
        ("Conv2DBackpropInput", input_gradient, (dy, kernel)),
        ("Conv2DBackpropFilter", filter_gradient, (x, dy)),
    ]


def few_channel_convolutions(tf, onednn: bool = False) -> None:
    """Convolution kernels with few channels: TF's time, the pads that fit it, the model's.

    The engine's ``EIGEN_FEW_CHANNEL_PADS`` (``ONEDNN_FEW_CHANNEL_PADS`` with
    ``onednn``) are, per kernel, the ``(cols, rows)`` for which TF's time is
    closest to proportional to ``pixels * (9 k + cols) * (m + rows)``, ``k``
    the contracted channels (the least spread of the log ratio over the grid).
    """
    import numpy as np

    from jupyter_tfmem.engine.executor import (
        contracted_channels,
        few_channel_pads,
        few_channel_slowdown,
        filter_grad_slowdown,
        op_duration,
    )
    from jupyter_tfmem.estimator import _cpu_vendor, _onednn_dtypes

    if onednn and "float32" not in _onednn_dtypes():
        raise SystemExit(
            "oneDNN does not run float32 here (it needs AVX-512 VNNI, BF16 or AMX, or "
            "TF_ENABLE_ONEDNN_OPTS=1): run without --onednn to time Eigen's kernels"
        )
    vendor = _cpu_vendor()
    engine_pads = few_channel_pads(onednn, vendor)
    print(f"{'oneDNN' if onednn else 'Eigen'}'s kernels, float32")
    rng = np.random.default_rng(0)
    timings: dict[str, list] = {}  # op: [(pixels, k, m, TF's ms, the model's ms)]
    for n, h, w in FEW_CHANNEL_IMAGES:
        for cin in FEW_CHANNELS:
            for cout in FEW_CHANNELS:
                x = tf.constant(rng.standard_normal((n, h, w, cin), dtype=np.float32))
                dy = tf.constant(rng.standard_normal((n, h - 2, w - 2, cout), dtype=np.float32))
                kernel = tf.constant(rng.standard_normal((3, 3, cin, cout), dtype=np.float32))
                shape = (3, 3, cin, cout)
                for op, kernel_fn, args in _few_channel_kernels(tf, x, dy, kernel):
                    # read in the step, as --pairs does: timing the call from
                    # Python counted copying an image-sized result out
                    ms = sorted(end for (end,) in _ends(tf, [(kernel_fn, args)], 9))[4]
                    out = {"Conv2D": dy.shape, "Conv2DBackpropInput": x.shape}.get(op, shape)
                    modelled = op_duration(
                        op,
                        [tuple(out)],
                        [x.shape.as_list(), shape, dy.shape.as_list()],
                        math.prod(out) * 4,
                        sum(t.shape.num_elements() for t in args) * 4,
                        filter_slowdown=filter_grad_slowdown(op, "float32", onednn, None, shape),
                        channel_slowdown=few_channel_slowdown(
                            op, "float32", onednn, shape, vendor
                        ),
                    ) / 1e6  # fmt: skip
                    k, m = contracted_channels(op, cin, cout)
                    timings.setdefault(op, []).append((n * (h - 2) * (w - 2), k, m, ms, modelled))

    def spread(rows: list, cols: float, pad: float) -> float:
        logs = [
            math.log(ms / (pixels * (9 * k + cols) * (m + pad))) for pixels, k, m, ms, _ in rows
        ]
        mean = sum(logs) / len(logs)
        return math.sqrt(sum((v - mean) ** 2 for v in logs) / len(logs))

    columns = list(range(0, 600, 12)) + list(range(600, 3001, 100))
    for op, rows in timings.items():
        print(f"{op}: TF's ms over the model's, rows k (contracted), columns m, {FEW_CHANNELS}")
        per_image = len(FEW_CHANNELS) ** 2
        for i, image in enumerate(FEW_CHANNEL_IMAGES):
            block = sorted(rows[i * per_image : (i + 1) * per_image], key=lambda t: (t[1], t[2]))
            print(f"  {image}")
            for a in range(len(FEW_CHANNELS)):
                row = block[a * len(FEW_CHANNELS) : (a + 1) * len(FEW_CHANNELS)]
                print(f"    k {row[0][1]:2d}: " + " ".join(f"{t[3]:6.2f}/{t[4]:6.2f}" for t in row))
        best = min((spread(rows, c, r), c, r) for c in columns for r in range(0, 201, 4))
        ratios = [t[3] / t[4] for t in rows]
        print(
            f"  TF's time ~ pixels * (9 k + {best[1]}) * (m + {best[2]}): rms {best[0]:.2f} in "
            f"log time (FLOPs alone {spread(rows, 0, 0):.2f}; the engine's "
            f"{engine_pads.get(op, 'none')}: {spread(rows, *engine_pads.get(op, (0, 0))):.2f}); "
            f"TF over the model {min(ratios):.2f} to {max(ratios):.2f}, "
            f"geometric mean {_geomean(ratios):.2f}"
        )


#: (batch, height, width, in channels, out channels) of ``--pairs``' convolutions
PAIR_CONVOLUTIONS = [
    (16, 128, 128, 64, 3),
    (16, 128, 128, 64, 16),
    (16, 128, 128, 3, 64),
    (16, 64, 64, 64, 64),
    (16, 32, 32, 128, 128),
]


def pair_mode(alone: tuple[float, float], ends: tuple[float, float]) -> str:
    """How two kernels started together shared the machine, from when each ended.

    ``alone`` is each one's time alone, ``ends`` when each ended, in the same
    unit.  A kernel that ends within 1.25 times its time alone had the cores
    (or as many as it uses) to itself: both did, "side by side"; one did and
    the other ended after it, "turns"; neither did, "shared".
    """
    full = [end <= 1.25 * own for end, own in zip(ends, alone, strict=True)]
    if all(full):
        return "side by side"
    return "turns" if any(full) else "shared"


def _ends(tf, kernels: list, runs: int) -> list[tuple[float, ...]]:
    """When each of ``kernels`` (``(function, args)``), started together, ends: ms, per run.

    A one-element slice of each result is returned too: a kernel nothing
    reads would be pruned from the graph.
    """

    def step():
        start = tf.timestamp()
        with tf.control_dependencies([start]):
            outs = [fn(*args) for fn, args in kernels]
        ends = []
        for out in outs:
            with tf.control_dependencies([out]):
                ends.append((tf.timestamp() - start) * 1e3)
        kept = [tf.cast(tf.reshape(out, [-1])[:1], tf.float32) for out in outs]
        return ends, kept

    step = tf.function(step, autograph=False)
    step()
    return [tuple(float(t) for t in step()[0]) for _ in range(runs)]


def concurrent_pairs(tf, runs: int) -> None:
    """Two kernels started together: side by side, taking turns or sharing, run by run."""
    import numpy as np

    rng = np.random.default_rng(0)
    pairs = []
    for n, h, w, cin, cout in PAIR_CONVOLUTIONS:
        x = tf.constant(rng.standard_normal((n, h, w, cin), dtype=np.float32))
        dy = tf.constant(rng.standard_normal((n, h, w, cout), dtype=np.float32))
        kernel = tf.constant(rng.standard_normal((3, 3, cin, cout), dtype=np.float32))
        by_op = {op: (fn, args) for op, fn, args in _few_channel_kernels(tf, x, dy, kernel, "SAME")}
        name = f"conv {cin}->{cout} at {n}x{h}x{w}: filter, input gradient"
        pairs.append((name, by_op["Conv2DBackpropFilter"], by_op["Conv2DBackpropInput"]))
    a = tf.constant(rng.standard_normal((1024, 1024), dtype=np.float32))
    b = tf.constant(rng.standard_normal((1024, 1024), dtype=np.float32))
    pairs.append(("1024^3 MatMul, another", (tf.linalg.matmul, (a, b)), (tf.linalg.matmul, (b, a))))
    logits = tf.constant(rng.random(24 * 2**20, dtype=np.float32))
    low = tf.constant(1e-7)
    clip = ((tf.maximum, (logits, low)), (tf.greater_equal, (logits, low)))
    pairs.append(("96 MiB Maximum, GreaterEqual", *clip))
    for name, first, second in pairs:
        alone = tuple(
            sorted(e[0] for e in _ends(tf, [kernel], runs))[runs // 2] for kernel in (first, second)
        )
        ends = _ends(tf, [first, second], runs)
        modes = [pair_mode(alone, e) for e in ends]
        counts = ", ".join(f"{m} {modes.count(m)}" for m in ("side by side", "turns", "shared"))
        print(f"{name}: alone {alone[0]:.1f} and {alone[1]:.1f} ms; {counts}")
        print("   ends (ms): " + "; ".join(f"{x:.1f} {y:.1f}" for x, y in ends))


#: (m, k, n) products and the U-Net's two largest convolutions besides SHAPES
PRODUCTS = [(256, 1024, 1024), (64, 4096, 1024), (4096, 128, 512), (512, 784, 256)]
UNET_SHAPES = [(16, 48, 48, 48, 16, 3, 3), (16, 24, 24, 96, 32, 3, 3)]


#: output gradients a bias gradient sums: a text CNN's (as Conv1D and as the
#: Conv2D TF runs it), 2D and 3D convolutions' and two Dense layers'
BIAS_GRAD_SHAPES = [
    (64, 396, 128),
    (64, 1, 396, 128),
    (32, 32, 32, 64),
    (32, 16, 16, 128),
    (16, 56, 56, 64),
    (4, 30, 30, 30, 16),
    (256, 1024),
    (1024, 256),
]


def bias_gradients(tf, rounds: int = 1) -> None:
    """A bias gradient's time alone, against a sum over the same axes and a product.

    The cost model charges ``BiasAddGrad`` as a reduction that keeps the
    innermost axis (``executor.REDUCTION_OPS``), about 1.1 times a product
    of the same tensor.  In TF's step it can take three times its modelled
    share (``benchmarks/tf_timeline.py --durations``), delaying the input
    gradient queued behind it; timed alone it shows whether that is the
    kernel or the step it runs in.
    """
    empty = call_overhead(tf)
    to_sum, to_product = [], []
    for shape in _rounds(BIAS_GRAD_SHAPES, rounds):
        dy = tf.random.normal(shape)
        axes = list(range(len(shape) - 1))
        bias = tf.function(lambda d: tf.raw_ops.BiasAddGrad(out_backprop=d))
        total = tf.function(lambda d, a=axes: tf.reduce_sum(d, axis=a))
        product = tf.function(lambda d: d * 0.5)
        bias_ms = timed(lambda d=dy, f=bias: f(d)) - empty
        sum_ms = timed(lambda d=dy, f=total: f(d)) - empty
        product_ms = timed(lambda d=dy, f=product: f(d)) - empty
        to_sum.append(bias_ms / sum_ms)
        to_product.append(bias_ms / product_ms)
        print(
            f"BiasAddGrad of {shape}: {bias_ms:.3f} ms; the sum {sum_ms:.3f} ms; "
            f"the product {product_ms:.3f} ms"
        )
    print(f"bias gradient over the sum: {_spread(to_sum)}")
    print(f"bias gradient over the product: {_spread(to_product)}")


def _rounds(shapes: list, rounds: int) -> list:
    """The shapes, ``rounds`` times over: one pass's geometric mean moves by a
    fifth from run to run (the normal draw's 10.3 to 13.5 over four runs,
    session 58), so a constant is the mean over several passes."""
    return [shape for _ in range(rounds) for shape in shapes]


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _spread(values: list[float]) -> str:
    """A factor timed over several shapes, as the docs quote it: its geometric mean and range."""
    return f"geometric mean {_geomean(values):.2f}, {min(values):.2f} to {max(values):.2f}"


def dtype_factors(tf) -> None:
    """Each dtype's time against float32's for the same kernel, per kind of kernel.

    Element-wise kernels are compared per byte (a float64 tensor has twice
    float32's bytes).  A factor summarizes its kind only where the shapes
    agree: the spread (largest over smallest ratio) is printed beside it.
    """
    dtypes = [tf.float32, tf.float64, tf.float16, tf.bfloat16]
    times: dict[tuple[str, str, object], float] = {}
    for dt in dtypes:
        for m, k, n in PRODUCTS:
            a = tf.cast(tf.random.normal((m, k)), dt)
            b = tf.cast(tf.random.normal((k, n)), dt)
            times[(dt.name, "product", (m, k, n))] = timed(lambda a=a, b=b: tf.matmul(a, b), 10)
        for shape in SHAPES + UNET_SHAPES:
            n, h, w, cin, cout, kh, kw = shape
            x = tf.cast(tf.random.normal((n, h, w, cin)), dt)
            kern = tf.cast(tf.random.normal((kh, kw, cin, cout)), dt)
            dy = tf.cast(tf.random.normal((n, h, w, cout)), dt)
            times[(dt.name, "convolution gradient", shape)] = timed(
                lambda x=x, kern=kern, dy=dy: tf.raw_ops.Conv2DBackpropInput(
                    input_sizes=x.shape,
                    filter=kern,
                    out_backprop=dy,
                    strides=[1] * 4,
                    padding="SAME",
                ),
                10,
            )
        x = tf.cast(tf.random.normal((32, 32, 32, 64)), dt)
        y = tf.cast(tf.random.normal((32, 32, 32, 64)), dt)
        v = tf.cast(tf.random.normal((64,)), dt)
        elementwise = {
            "x + y": lambda x=x, y=y: x + y,
            "x * v": lambda x=x, v=v: x * v,
            "ReluGrad": lambda x=x, y=y: tf.raw_ops.ReluGrad(gradients=x, features=y),
            "sum over N, H, W": lambda x=x: tf.reduce_sum(x, [0, 1, 2]),
            "max pool": lambda x=x: tf.nn.max_pool2d(x, 2, 2, "VALID"),
            "tanh": lambda x=x: tf.tanh(x),
        }
        for name, fn in elementwise.items():
            # per byte: the time over the tensor's bytes, float32's being 4 an element
            times[(dt.name, "element-wise per byte", name)] = timed(fn, 20) * 4 / dt.size
    for dt in dtypes[1:]:
        for kind in ("product", "convolution gradient", "element-wise per byte"):
            ratios = [
                t / times[("float32", kind, key)]
                for (name, k, key), t in times.items()
                if name == dt.name and k == kind
            ]
            low, high = min(ratios), max(ratios)
            print(
                f"{dt.name} {kind}: {_geomean(ratios):.2f} times float32 "
                f"(from {low:.2f} to {high:.2f}, spread {high / low:.1f})"
            )


#: The zoo's small CNN (``zoo._bn_cnn``): its three convolutions at batch 32 and 64.
SMALL_CNN_SHAPES = [
    (32, 32, 32, 3, 32, 3, 3),
    (32, 16, 16, 32, 64, 3, 3),
    (32, 8, 8, 64, 128, 3, 3),
    (64, 16, 16, 32, 64, 3, 3),
    (64, 8, 8, 64, 128, 3, 3),
]

#: (N, H, W, C) inputs of 3x3 depthwise convolutions, as in the zoo's separable nets
DEPTHWISE_SHAPES = [(32, 32, 32, 48), (32, 16, 16, 96), (32, 64, 64, 24)]


def filter_ratios_by_dtype(tf) -> None:
    """A convolution's filter gradient over its input gradient, per dtype.

    Which kernel runs a dtype depends on the CPU (oneDNN's where
    ``estimator.onednn_dtypes`` says so, Eigen's otherwise, all Eigen with
    ``TF_ENABLE_ONEDNN_OPTS=0``), so the ratio is printed with that.  Timed
    in tf.functions (graph mode, where TF's layout pass picks oneDNN's
    kernels as in a model's step), few repeats: one float16 filter gradient
    under oneDNN can take seconds.
    """
    from jupyter_tfmem.estimator import _onednn_dtypes

    onednn = _onednn_dtypes()
    conv = [
        ((n, h, w, cin), (kh, kw, cin, cout), cout)
        for n, h, w, cin, cout, kh, kw in SHAPES + SMALL_CNN_SHAPES
    ]
    depthwise = [((n, h, w, c), (3, 3, c, 1), c) for n, h, w, c in DEPTHWISE_SHAPES]
    for dt in (tf.float32, tf.float64, tf.float16, tf.bfloat16):
        kernels = "oneDNN" if dt.name in onednn else "Eigen"
        # depthwise convolutions' gradients are other kernels (not costed by dtype)
        for kind, op, shapes in (
            (f"({kernels})", "Conv2D", conv),
            ("depthwise", "DepthwiseConv2dNative", depthwise),
        ):
            ratios = [_filter_over_input(tf, dt, op, *shape) for shape in shapes]
            print(
                f"{dt.name} {kind} filter over input gradient: {_geomean(ratios):.2f} "
                f"(from {min(ratios):.2f} to {max(ratios):.2f} over {len(ratios)} shapes)"
            )


#: The zoo's CNN convolutions whose two gradients race (docs/engine.md):
#: ``multi_step_cnn``'s and ``spectral_norm_cnn``'s second convolution.
RACING_SHAPES = [
    (32, 32, 32, 32, 64, 3, 3),
    (64, 16, 16, 64, 128, 3, 3),
]


def _pair_times(tf, dt, shape, repeats: int) -> tuple[float, float, float, float, int]:
    """One convolution's filter and input gradients, started together and alone.

    Returns the median ms from their common start to each one's end (filter,
    input), their medians alone (filter, input), and in how many of the
    ``repeats`` runs together the filter gradient ended first.  Built as a
    TF1 graph run by a session: in a ``tf.function`` the automatic control
    dependencies chain the stateful ``tf.timestamp`` ops, so the first end
    was read only once both gradients had ended (the ratio came out 1.00).
    """
    import statistics

    n, h, w, cin, cout, kh, kw = shape
    same = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    graph = tf.Graph()
    with graph.as_default():
        x = tf.Variable(tf.cast(tf.random.normal((n, h, w, cin)), dt))
        k = tf.Variable(tf.cast(tf.random.normal((kh, kw, cin, cout)), dt))
        dy = tf.Variable(tf.cast(tf.random.normal((n, h, w, cout)), dt))
        ins = [tf.identity(x), tf.identity(k), tf.identity(dy)]

        def grad_filter(after):
            with tf.control_dependencies(after):
                return tf.raw_ops.Conv2DBackpropFilter(
                    input=ins[0], filter_sizes=tf.shape(k), out_backprop=ins[2], **same
                )

        def grad_input(after):
            with tf.control_dependencies(after):
                return tf.raw_ops.Conv2DBackpropInput(
                    input_sizes=tf.shape(x), filter=ins[1], out_backprop=ins[2], **same
                )

        def stamp(after):
            with tf.control_dependencies(after):
                return tf.timestamp()

        def used(stamps, grads):
            # reading one element of each keeps Grappler from pruning them
            with tf.control_dependencies(stamps):
                return [*stamps, sum(tf.reduce_sum(g[0, 0, 0]) for g in grads)]

        begin = stamp(ins)
        filt, inp = grad_filter([begin]), grad_input([begin])
        together = used([begin, stamp([filt]), stamp([inp])], [filt, inp])
        begin_f = stamp(ins)
        filt_alone = grad_filter([begin_f])
        end_f = stamp([filt_alone])
        begin_i = stamp([end_f])
        inp_alone = grad_input([begin_i])
        alone = used([begin_f, end_f, begin_i, stamp([inp_alone])], [filt_alone, inp_alone])
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(together)
            session.run(alone)
            runs = [session.run(together) for _ in range(repeats)]
            solo = [session.run(alone) for _ in range(max(3, repeats // 2))]
    ms = statistics.median
    return (
        ms((f - s) * 1e3 for s, f, _, _ in runs),
        ms((i - s) * 1e3 for s, _, i, _ in runs),
        ms((f - s) * 1e3 for s, f, _, _, _ in solo),
        ms((i - s) * 1e3 for _, _, s, i, _ in solo),
        sum(f < i for _, f, i, _ in runs),
    )


def side_by_side(tf, repeats: int = 15) -> None:
    """Filter and input gradients started together: their times and which ends first.

    The executor runs one of two ops made ready together on its own thread
    and queues the other; with two inter-op threads both run at once and
    share the intra-op pool, which is what the replay's side-by-side
    schedule assumes.  Printed with each pair's ratio alone.
    """
    ratios = []
    for shape in SHAPES + RACING_SHAPES:
        filt, inp, filt_alone, inp_alone, first = _pair_times(tf, tf.float32, shape, repeats)
        ratios.append(filt / inp)
        print(
            f"x {shape[:4]} kernel {shape[5:] + shape[3:5]}: together, filter gradient "
            f"{filt:.2f} ms, input gradient {inp:.2f} ms from their start, ratio "
            f"{filt / inp:.2f}, filter gradient ends first in {first} of {repeats}; "
            f"alone, ratio {filt_alone / inp_alone:.2f}"
        )
    print(f"geometric mean ratio side by side: {_geomean(ratios):.2f}")


#: Channel counts of the grid ``--channels`` times (3x3 kernels, as in most CNNs).
CHANNEL_GRID = (16, 32, 64, 128, 256)


def channel_grid(tf, dtype: str, repeats: int = 9) -> None:
    """Eigen's filter gradient over its input gradient across channel counts.

    Runs with oneDNN off (``TF_ENABLE_ONEDNN_OPTS=0`` is set before TF is
    imported), so that TF's own kernels run on any CPU.  Each 3x3
    convolution's batch and size keep it near 0.3 GFLOP.  Prints every
    ratio, together and alone, then per kind the least-squares fit of
    ``log ratio`` on ``log C_in``, ``log C_out`` and their product.  The
    engine's ``EIGEN_FILTER_GRAD_FIT`` holds the fit alone: started
    together the two share the intra-op pool and the ratio is noisier, and
    the fit alone follows the ratios TF's own steps show (docs/engine.md).
    """
    import numpy as np

    dt = getattr(tf, dtype)
    rows: list[list[float]] = []
    ratios: dict[str, list[float]] = {"together": [], "alone": []}
    for cin in CHANNEL_GRID:
        for cout in CHANNEL_GRID:
            hw = 32 if cin * cout <= 4096 else 16
            n = max(4, min(64, int(0.3e9 / (2 * hw * hw * 9 * cin * cout))))
            filt, inp, filt_alone, inp_alone, _ = _pair_times(
                tf, dt, (n, hw, hw, cin, cout, 3, 3), repeats
            )
            ratios["together"].append(filt / inp)
            ratios["alone"].append(filt_alone / inp_alone)
            a, b = math.log(cin), math.log(cout)
            rows.append([1.0, a, b, a * b])
            print(
                f"{dtype} x {(n, hw, hw, cin)} to {cout} channels: together {filt / inp:.2f}, "
                f"alone {filt_alone / inp_alone:.2f}",
                flush=True,
            )
    for kind, values in ratios.items():
        fit, *_ = np.linalg.lstsq(np.array(rows), np.log(values), rcond=None)
        residual = np.log(values) - np.array(rows) @ fit
        print(
            f"{dtype} {kind}: geometric mean {_geomean(values):.2f} (from {min(values):.2f} "
            f"to {max(values):.2f}); fit log ratio = {fit[0]:.3f} + {fit[1]:.3f} log C_in + "
            f"{fit[2]:.3f} log C_out + {fit[3]:.4f} log C_in log C_out, "
            f"rms residual {float(np.sqrt(np.mean(residual**2))):.2f}"
        )


def _filter_over_input(tf, dt, op: str, x_shape, kernel_shape, out_depth: int) -> float:
    """``op``'s filter gradient time over its input gradient time, stride 1, SAME padding."""
    x = tf.cast(tf.random.normal(x_shape), dt)
    kern = tf.cast(tf.random.normal(kernel_shape), dt)
    dy = tf.cast(tf.random.normal((*x_shape[:3], out_depth)), dt)
    grad_input = getattr(tf.raw_ops, f"{op}BackpropInput")
    grad_filter = getattr(tf.raw_ops, f"{op}BackpropFilter")
    same = {"strides": [1] * 4, "padding": "SAME", "out_backprop": dy}
    on_input = tf.function(lambda: grad_input(input_sizes=x.shape, filter=kern, **same))
    on_filter = tf.function(lambda: grad_filter(input=x, filter_sizes=kern.shape, **same))
    return timed(on_filter, 3) / timed(on_input, 5)


if __name__ == "__main__":
    raise SystemExit(main())
