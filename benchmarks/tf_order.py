"""Does TF run one model's step in the same order in every fresh process?

Runs a zoo case's training step in ``--runs`` fresh processes with TF's BFC
allocator logging every call (``TF_CPP_VMODULE=bfc_allocator=4``) and
``--threads`` inter-op threads, and prints for each process the measured
step's allocator peak, the peak of the step's own requests, and where its
sequence of allocation sizes first differs from the first process's.  With
one thread the executor never runs two kernels at once, so a sequence that
differs means the kernels themselves ran in another order.  The logging makes
each allocation slow (minutes per process), and it changes the timing, so the
peaks here are not the unlogged ones ``accuracy.py`` measures.

    python benchmarks/tf_order.py                       # the two-input model, 3 runs, 1 thread
    python benchmarks/tf_order.py --case shared_nested_sgd --runs 2 --threads 2
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from zoo_step import ZOO_STEP

ROOT = Path(__file__).resolve().parents[1]

_DRIVER = ZOO_STEP + textwrap.dedent(
    """
    warm_up()
    print("MARK step", file=sys.stderr, flush=True)
    step()
    peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
    print(f"MARK end {peak}", file=sys.stderr, flush=True)
    """
)

_EVENT = re.compile(r"\[mem-debug\] (Allocate|Deallocate)Raw,[^,]*,(\d+),(0x[0-9a-f]+)")


def logged_step(case: str, threads: int) -> tuple[int, int, list[int]]:
    """(allocator peak, peak of the step's own requests, sizes allocated in order)."""
    env = dict(
        os.environ,
        TF_CPU_ALLOCATOR_USE_BFC="true",
        TF_CPP_VMODULE="bfc_allocator=4",
        TF_CPP_MIN_LOG_LEVEL="0",
        TF_NUM_INTEROP_THREADS=str(threads),
    )
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, case],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    log = proc.stderr
    step = re.search(r"MARK step\n(.*)MARK end (\d+)", log, flags=re.S)
    if proc.returncode != 0 or step is None:
        raise RuntimeError(f"the logged run of {case} failed:\n{log[-2000:]}")
    live: dict[str, int] = {}
    now = requested = 0
    sizes = []
    for kind, size, address in _EVENT.findall(step.group(1)):
        if kind == "Allocate":
            live[address] = int(size)
            now += int(size)
            sizes.append(int(size))
            requested = max(requested, now)
        else:
            now -= live.pop(address, 0)
    return int(step.group(2)), requested, sizes


def first_difference(a: list[int], b: list[int]) -> int | None:
    """Index of the first allocation where two sequences differ; None if equal."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="two_input_two_output_sgd", help="a training zoo case")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes")
    parser.add_argument("--threads", type=int, default=1, help="TF_NUM_INTEROP_THREADS")
    parser.add_argument("--jobs", type=int, default=2, help="processes at once")
    args = parser.parse_args(argv)
    if args.runs < 2 or args.threads < 1 or args.jobs < 1:
        parser.error("--runs must be at least 2, --threads and --jobs at least 1")
    from jupyter_tfmem.zoo import get_case

    try:
        if not get_case(args.case).training:
            parser.error(f"{args.case} is an inference case; pick a training one")
    except ValueError as exc:
        parser.error(str(exc))
    print(f"{args.case}: {args.runs} logged processes, {args.threads} inter-op thread(s)")
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda _: logged_step(args.case, args.threads), range(args.runs)))
    first = results[0][2]
    for i, (peak, requested, sizes) in enumerate(results, 1):
        diff = first_difference(first, sizes)
        if diff is None:
            same = "same order as run 1"
        else:
            kept = "the same sizes" if sorted(sizes) == sorted(first) else "other sizes"
            same = f"{kept} in another order (first difference at allocation {diff})"
        print(
            f"run {i}: allocator peak {peak / 2**20:7.2f} MiB, requests peak "
            f"{requested / 2**20:7.2f} MiB, {len(sizes)} allocations, {same}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
