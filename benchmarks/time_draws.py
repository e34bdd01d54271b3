"""Replays under random draws of kernel times, against TF's spread between fresh processes.

    python benchmarks/time_draws.py --cases unet_small_adam,spectral_norm_cnn_adam
    python benchmarks/time_draws.py --cases <list> --draws 6 --sigma 0.3 --seed 0

TF's peak for one step moves from one fresh process to the next
(docs/accuracy.md's range column), because its kernels do not take the same
time twice and so do not always end in the same order.  The estimate's
executor replay takes one set of modelled kernel times
(``engine/executor.op_duration``).  This estimates each case again with every
kernel's time scaled by exp(N(0, sigma)), ``--draws`` times (seeded by
``--seed``), and prints the estimate, the draws' range and median beside TF's
runs cached by ``accuracy.py`` for this CPU: does the spread of the draws
look like TF's, and is their median nearer TF's median than the estimate?
Each draw is a whole estimate, so a case takes ``--draws`` + 1 estimates.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MIB = 2**20


def drawn_peaks(name: str, draws: int, sigma: float, seed: int) -> list[float]:
    """The case's estimated peak (bytes) with the model's kernel times, then under each draw."""
    from jupyter_tfmem import estimator
    from jupyter_tfmem.zoo import get_case

    durations = estimator._durations
    peaks = []
    for k in range(draws + 1):
        rng = random.Random(f"{seed}:{k}")

        def drawn(*args, _k=k, _rng=rng, **kwargs):
            out = durations(*args, **kwargs)
            if _k == 0:
                return out
            return {
                op: d * math.exp(_rng.gauss(0.0, sigma)) if d > 0 else d
                for op, d in sorted(out.items())
            }

        estimator._durations = drawn
        try:
            peaks.append(float(get_case(name).estimate(device="CPU").peak_bytes))
        finally:
            estimator._durations = durations
    return peaks


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import accuracy

    from jupyter_tfmem.zoo import CASES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True, help="comma-separated zoo cases")
    parser.add_argument("--draws", type=int, default=6, help="draws of kernel times per case")
    parser.add_argument("--sigma", type=float, default=0.3, help="log-normal spread of a time")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws")
    args = parser.parse_args(argv)
    if args.draws < 1 or args.sigma <= 0:
        parser.error("--draws must be at least 1 and --sigma above 0")
    names = [n for n in args.cases.split(",") if n]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown cases: {', '.join(unknown)} (see jupyter_tfmem/zoo.py)")
    cache = accuracy.load_cache()
    suffix = f"@tf{accuracy.tf_version()}@{accuracy.cpu_model()}"
    missing = [n for n in names if n + suffix not in cache]
    if missing:
        parser.error(f"not measured on this CPU: {', '.join(missing)} (run accuracy.py first)")

    rows = []
    print(f"{'case':38s} {'TF median':>9s} {'TF runs':>15s} {'estimate':>9s} {'draws':>15s} median")
    for name in names:
        runs = cache[name + suffix]["runs"]
        truth = cache[name + suffix]["peak_bytes"]
        est, *drawn = drawn_peaks(name, args.draws, args.sigma, args.seed)
        everything = [est, *drawn]
        mid = statistics.median(everything)
        rows.append((truth, est, mid, min(everything), max(everything)))
        lo, hi = min(everything) / MIB, max(everything) / MIB
        print(
            f"{name:38s} {truth / MIB:9.1f} {min(runs) / MIB:7.1f}-{max(runs) / MIB:<7.1f} "
            f"{(est - truth) / truth:+9.1%} {lo:7.1f}-{hi:<7.1f} {(mid - truth) / truth:+.1%}",
            flush=True,
        )
    for label, col in (("estimate", 1), (f"median of the {args.draws + 1} replays", 2)):
        errors = [abs(r[col] - r[0]) / r[0] for r in rows]
        print(
            f"{label:28s} median |error| {statistics.median(errors):.2%}, worst "
            f"{max(errors):.1%}, over 10%: {sum(e > 0.10 for e in errors)}, "
            f"over 15%: {sum(e > 0.15 for e in errors)}"
        )
    covered = sum(lo * 0.98 <= t <= hi * 1.02 for t, _, _, lo, hi in rows)
    print(f"TF's median within the replays' range (2% either side): {covered} of {len(rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
