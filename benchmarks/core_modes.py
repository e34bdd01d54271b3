"""The two ways of sharing the cores, each against TF: which one decides each case's error.

    python benchmarks/core_modes.py                          # whole zoo, about 30 min here
    python benchmarks/core_modes.py --cases unet_small_adam,siamese_adam
    python benchmarks/core_modes.py --solo-ns 70000          # short kernels never take turns
    python benchmarks/core_modes.py --truth-cpu "Intel(R) Xeon(R) Processor"

With more than one inter-op thread the estimate replays the step twice, with
concurrent kernels side by side and taking turns on the cores
(``engine/executor.simulate``); it reports the side-by-side peak and notes
the other.  This prints both peaks of every case beside the measured median
cached by ``accuracy.py`` for this CPU, and the median and worst error of
each mode alone, of their mean (the estimate until session 23) and of the
better of the two (what a perfect rule for choosing the mode would give).
``--solo-ns`` tries one such rule: a kernel whose modelled duration is at
most that many ns runs at full speed in the taking-turns replay too.
``--truth-cpu`` compares with another CPU's cached ground truth as well,
leaving out the 16-bit cases, whose kernels (and estimates) follow the CPU's
instructions.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MIB = 2**20


def mode_peaks(names: list[str], solo_ns: float) -> dict[str, tuple[float, float]]:
    """Per case: the side-by-side and taking-turns peaks, in bytes."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from tf_timeline import estimate_one_way

    from jupyter_tfmem.engine import executor

    executor.simulate = functools.partial(executor.simulate, solo_ns=solo_ns)
    out = {}
    for name in names:
        out[name] = (estimate_one_way(name, False), estimate_one_way(name, True))
        print(f"  estimated {name}", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    import accuracy

    from jupyter_tfmem.zoo import CASES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="", help="comma-separated zoo cases (default: all)")
    parser.add_argument(
        "--solo-ns",
        type=float,
        default=0.0,
        help="kernels at most this long (modelled ns) never take turns (default: 0, as shipped)",
    )
    parser.add_argument(
        "--truth-cpu",
        action="append",
        default=[],
        help="compare with this CPU's cached ground truth too (default: this machine's only)",
    )
    args = parser.parse_args(argv)
    names = [n for n in args.cases.split(",") if n] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown cases: {', '.join(unknown)} (see jupyter_tfmem/zoo.py)")
    here = accuracy.cpu_model()
    cache = accuracy.load_cache()
    measured: dict[str, dict[str, int]] = {}
    for cpu in [here, *args.truth_cpu]:
        prefix = f"@tf{accuracy.tf_version()}@{cpu}"
        measured[cpu] = {
            n: cache[n + prefix]["peak_bytes"]
            for n in names
            if n + prefix in cache and (cpu == here or not accuracy.is_16bit(CASES[n]))
        }
        if not measured[cpu]:
            parser.error(f"none of these cases is measured on {cpu}: run accuracy.py there")
    todo = {n for truth in measured.values() for n in truth}
    peaks = mode_peaks([n for n in names if n in todo], args.solo_ns)

    def err(value: float, n: str, truth: dict[str, int]) -> float:
        return (value - truth[n]) / truth[n]

    truth = measured[here]
    print(f"{'case':40s} {'measured':>9s} {'side':>7s} {'turns':>7s} {'mean':>7s}")
    for n in truth:
        side, turns = peaks[n]
        row = [err(v, n, truth) for v in (side, turns, (side + turns) / 2)]
        print(f"{n:40s} {truth[n] / MIB:9.1f} " + " ".join(f"{e:+7.1%}" for e in row))
    pick = {
        "side by side": lambda n: peaks[n][0],
        "taking turns": lambda n: peaks[n][1],
        "mean of the two": lambda n: sum(peaks[n]) / 2,
    }
    for cpu, truth in measured.items():
        print(f"\n{len(truth)} cases measured on {cpu}, --solo-ns {args.solo_ns:g}")
        for label, value in pick.items():
            errors = [abs(err(value(n), n, truth)) for n in truth]
            print(
                f"  {label:20s} median |error| {statistics.median(errors):.2%}, "
                f"worst {max(errors):.1%}, over 10%: {sum(e > 0.10 for e in errors)}, "
                f"over 15%: {sum(e > 0.15 for e in errors)}"
            )
        better = [min(abs(err(v, n, truth)) for v in peaks[n]) for n in truth]
        print(
            f"  {'better of the two':20s} median |error| {statistics.median(better):.2%}, "
            f"worst {max(better):.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
