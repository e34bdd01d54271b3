"""Host memory an estimate needs, next to the model's own weights.

Builds a model with large weights, then estimates it (training with Adam) and
reports how far the process's resident memory and TF's allocator rose above
where they were before the estimate.  Adam's slots alone would be two more
copies of the weights if the estimator built a real optimizer.

    python benchmarks/memory.py [--width 8192] [--layers 3]

Writes docs/memory.md.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import gc
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_CPU_ALLOCATOR_USE_BFC"] = "true"  # so TF's allocator can be read

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "memory.md"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GiB = 2**30
MiB = 2**20


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def helper_peak_mib() -> float:
    """The helper process's peak resident memory (VmHWM), 0 if none ran."""
    from jupyter_tfmem.engine import helper_process

    helper = helper_process._helper
    if helper is None:
        return 0.0
    with open(f"/proc/{helper.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class PeakRss:
    """Samples resident memory every few milliseconds while a block runs."""

    def __enter__(self) -> PeakRss:
        self.peak = rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss())
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=8192)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument(
        "--large-layers",
        type=int,
        default=16,
        help="then a model of this many Dense layers of --width (16: 1.07 billion "
        "parameters), executor path only; 0 skips it",
    )
    args = parser.parse_args()

    import keras
    import tensorflow as tf

    import jupyter_tfmem as tfmem

    libc = ctypes.CDLL("libc.so.6")

    def wide_mlp(layers: int, name: str):
        inp = keras.Input((args.width,))
        x = inp
        for _ in range(layers):
            x = keras.layers.Dense(args.width)(x)
        built = keras.Model(inp, x, name=name)
        built.compile(optimizer="adam", loss="mse")
        return built

    model = wide_mlp(args.layers, "wide")
    weights = sum(v.numpy().nbytes for v in model.weights)
    tfmem.estimate(keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]), 2)  # warm up TF

    def one(compiled):
        gc.collect()
        libc.malloc_trim(0)
        tf.config.experimental.reset_memory_stats("CPU:0")
        tf_before = tf.config.experimental.get_memory_info("CPU:0")["current"]
        before = rss()
        t = time.perf_counter()
        with PeakRss() as peak:
            fp = tfmem.estimate(compiled, 32)
        seconds = time.perf_counter() - t
        tf_extra = tf.config.experimental.get_memory_info("CPU:0")["peak"] - tf_before
        gc.collect()
        tf_after = tf.config.experimental.get_memory_info("CPU:0")["current"] - tf_before
        return fp, seconds, peak.peak - before, tf_extra, tf_after

    runs = {"executor": one(model)}
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    runs["xla"] = one(model)
    fp = runs["executor"][0]
    opt_mib = fp.categories["optimizer_state"].bytes / MiB
    for name, (f, seconds, rss_extra, tf_extra, tf_after) in runs.items():
        print(
            f"{name}: weights {weights / MiB:.0f} MiB; estimate {seconds:.1f} s, "
            f"peak {f.peak_bytes / MiB:.0f} MiB; extra resident {rss_extra / MiB:.1f} MiB "
            f"({rss_extra / weights:.1%} of the weights); TF allocator +{tf_extra / MiB:.1f} "
            f"MiB during, +{tf_after / MiB:.1f} MiB after"
        )

    large = None
    if args.large_layers:
        del model
        gc.collect()
        libc.malloc_trim(0)
        rss_start = rss()
        big = wide_mlp(args.large_layers, "large")
        big_weights = sum(int(v.numpy().size) * 4 for v in big.weights)
        params = big.count_params()
        built = rss() - rss_start
        f, seconds, rss_extra, tf_extra, _ = one(big)
        large = (params, big_weights, built, f, seconds, rss_extra, tf_extra)
        print(
            f"large: {params / 1e9:.2f}B parameters, weights {big_weights / MiB:.0f} MiB "
            f"(building took {built / MiB:.0f} MiB resident); estimate {seconds:.1f} s, "
            f"peak {f.peak_bytes / GiB:.1f} GiB; extra resident {rss_extra / MiB:.1f} MiB; "
            f"TF allocator +{tf_extra / MiB:.1f} MiB"
        )
        del big

    helper_mib = helper_peak_mib()
    print(f"helper process: peak resident {helper_mib:.0f} MiB")

    def cell(i, fmt):
        return " | ".join(fmt(runs[k][i]) for k in ("executor", "xla"))

    lines = [
        "# Memory an estimate needs",
        "",
        "Written by `python benchmarks/memory.py` on "
        f"{datetime.date.today().isoformat()} "
        f"(TensorFlow {tf.__version__}, Keras {keras.__version__}).",
        "",
        f"A model of {args.layers} Dense layers of width {args.width} "
        f"({weights / MiB:.0f} MiB of float32 weights), compiled with Adam, estimated for training "
        "at batch 32:",
        "",
        "| what | TF executor (default) | `jit_compile=True` (XLA) |",
        "|---|---|---|",
        f"| model weights | {weights / MiB:.0f} MiB | {weights / MiB:.0f} MiB |",
        f"| estimated optimizer state (not allocated) | {opt_mib:.0f} MiB | {opt_mib:.0f} MiB |",
        "| extra resident memory while estimating | "
        + cell(2, lambda v: f"{v / MiB:.1f} MiB ({v / weights:.1%} of the weights)")
        + " |",
        "| extra in TF's allocator while estimating | "
        + cell(3, lambda v: f"{v / MiB:.1f} MiB")
        + " |",
        "| extra in TF's allocator after | " + cell(4, lambda v: f"{v / MiB:.1f} MiB") + " |",
        "| estimate time | " + cell(1, lambda v: f"{v:.1f} s") + " |",
        "",
        "Why it is small: the step is traced with the model's variables captured as "
        "handles (no copy of the weights), our own optimizer's slots are created as "
        "uninitialized resource handles (shapes only), and nothing runs.  What remains is "
        "the traced graph and its Grappler rewrite, which grow with the number of ops, "
        "not with the size of the weights.  So the largest model that can be estimated "
        "is the largest whose weights fit in this machine's memory once.",
        "",
        "With `jit_compile=True` the estimate compiles the whole step with XLA (nothing "
        "runs).  XLA's compiler reads each variable's shape from the variable itself, so "
        "for the compilation the optimizer's slots get buffers from TF's `Empty` op: TF's "
        "allocator counts them (the row above), but they are never written, so the "
        "operating system does not back them with memory, and they are freed as soon as "
        "the compilation ends.  The extra resident memory is the XLA compiler's own.  "
        "Each compiled step is cached per model, so estimating the same model again "
        "compiles nothing.",
        "",
        "Besides this process, the helper process (`engine/helper_process.py`, "
        "docs/engine.md) ran Grappler and half of the replays: it holds TensorFlow and one "
        "graph or replay at a time, never weights.  Its resident memory peaked at "
        f"{helper_mib:.0f} MiB over all the estimates of this run.",
        "",
    ]
    if large is not None:
        params, big_weights, built, f, seconds, rss_extra, tf_extra = large
        lines += [
            "## A billion parameters",
            "",
            f"{args.large_layers} Dense layers of width {args.width}: {params / 1e9:.2f} "
            f"billion parameters, {big_weights / MiB:.0f} MiB of float32 weights (building "
            f"the model took {built / MiB:.0f} MiB of resident memory).  Estimating its "
            f"Adam training step at batch 32 (executor path) took {seconds:.1f} s and "
            f"{rss_extra / MiB:.1f} MiB of extra resident memory ({rss_extra / big_weights:.2%} "
            f"of the weights); TF's allocator rose by {tf_extra / MiB:.1f} MiB.  The "
            f"footprint: {f.peak_bytes / GiB:.1f} GiB at the peak.  On this 24 GiB machine "
            "the limit is the weights themselves, held once by the model.",
            "",
        ]
    DOCS.write_text("\n".join(lines))
    print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
