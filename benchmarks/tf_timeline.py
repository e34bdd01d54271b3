"""When does TF run each kernel of a step, and what does it hold at its peak?

Runs a zoo case in a fresh process, with TF's profiler on for the measured
step only (warm-up as ``measure`` does it, ``reset_memory_stats``, profiled step), and reads
the profile: every kernel's start, end and thread, and every allocation of
TF's BFC allocator with the op that asked for it.  Unlike the allocator's
debug log (``tf_order.py``), the profiler writes no stack trace per
allocation, so the step runs at nearly its own speed; its peak is still one
process's, not the median ``accuracy.py`` measures.  The host tracer runs
at level 1 (``--host-level``): at TF's default, 2, it also traces every
task of the intra-op pool, and on an AVX2 EPYC that moved the float64
U-Net's peak from 142.8 MiB (every unprofiled run) to 124.1, the order of
its concurrent convolution gradients with it; at level 1 the profiled
runs gave 142.8, 142.8 and 130.2.  With gradient
accumulation over k steps the profiled step is the cycle's update step,
after k - 1 accumulating steps (``measure`` reads the whole cycle; this
step holds its peak: 188.8 MiB against 150.8 to 175.9 for the others in
one run of ``mlp_ln_dropout_accumulate_adamw``).

Prints the step's peak, the tensors live at that moment by op (what was
asked, what the allocator's chunks hold), and the longest kernels with their
threads: whether two kernels ran side by side or one after the other.  With
``--estimate`` it also prints the estimate's peak for each of the two ways
``engine/executor.py`` lets concurrent kernels share the cores.

With ``--replay`` the profiler runs from before the model is built, and TF's
own sequence of allocations and frees (building, warm-up, measured step) is
replayed through ``engine/bfc.py``: if that gives TF's peak, the allocator
model is right for the run, and an estimate that misses it was fed another
sequence.  The profiled process is slower to build, so its timing differs a
little more from an unprofiled one.

    python benchmarks/tf_timeline.py --case siamese_adam
    python benchmarks/tf_timeline.py --case mlp_sgd_b64 --kernels 12 --estimate
    python benchmarks/tf_timeline.py --case cnn_small_bfloat16_adam_b32 --replay
    python benchmarks/tf_timeline.py --case cnn_small_bfloat16_adam_b32 --compare
    python benchmarks/tf_timeline.py --case bilstm_long_adam_b64 --loops --kernels 0

With ``--replay``, ``--swap`` says which half of the sequence an estimate
that misses gets wrong: for each schedule the estimate replays, its own
peak, the peak of TF's history (building and warm-up) followed by the
estimate's measured step, and the peak of the estimate's history followed by
TF's measured step.

    python benchmarks/tf_timeline.py --case unet_small_adam --replay --swap

With ``--durations N`` it puts each kernel's time in TF's step beside the
duration the estimate's cost model gives its op (``estimator._durations``,
the order's only input): per op type, the median of TF's time over the
model's, against the step's median over all ops, and the N ops furthest
from the step's median.  The model's absolute rates are off (engine.md,
"The float32 rates"), so only a kernel far from the step's own ratio is a
gap; oneDNN's 16-bit filter gradients were one (hundreds of times).
Ops inside while loops are left out (the replay charges their trip count).

    python benchmarks/tf_timeline.py --case cnn_small_bfloat16_adam_b32 --durations 15

With ``--replay``, ``--start`` also compares what the allocator holds when the
measured step starts, in TF and in the estimate's model after its build and
warm-up: how many allocations, how many bytes of chunks, and the chunk sizes
of 4 KiB or more that one holds more often than the other.  The step's
placements follow from that state.

    python benchmarks/tf_timeline.py --case bert_small_infer --replay --start

``--estimate-peak`` lists, under TF's live tensors, what the estimate's
allocator model holds at its own peak (its first schedule, the estimate's
figure): its chunks in use, those of them held from before the step, and the
step's buffers by the op that made each, asked and chunk bytes.  Where the
two lists hold the same tensors and the peaks still differ, the difference
is in the chunks: where the requests landed.

    python benchmarks/tf_timeline.py --case retrieval_adamw --estimate-peak --kernels 0

``--behind`` gives, per backward loop, the most weight-gradient products
made and not yet summed: 32 where TF runs the loop's recurrence ahead of its
sums (docs/engine.md, "What is not modelled").

    python benchmarks/tf_timeline.py --case bigru_300_sgd_b1 --behind --kernels 0

``--products`` counts the same from TF's allocation events instead: how
many of each product's buffers are alive at once.  It does not need to pair
a product with its sum, so it also reads a user-written cell's loops, which
``--behind`` reported as keeping up (1) where 33 products were alive.

    python benchmarks/tf_timeline.py --case custom_cell_rnn_adam_b8 --products --kernels 0

``--compare`` lists the ops that allocate a buffer of 64 KiB or more more often
in TF's measured step than in the estimate's replay, and the reverse: an op
that writes into its input in one and not in the other shows up there.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from zoo_step import ZOO_STEP, run_fresh

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MiB = 2**20

# With "build" as its third argument the profiler runs from before the model
# is built, so the profile holds every allocation the measured step's
# allocator state comes from.
_START = textwrap.dedent(
    """
    import sys
    import tensorflow as tf

    # TF's host tracer at level 1 records the kernels and the allocator's
    # events; at its default 2 it also traces every task of the intra-op
    # pool, which slows the many-shard kernels and moves which of two
    # concurrent ones ends first.
    options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=int(sys.argv[4]))
    if sys.argv[3] == "build":
        tf.profiler.experimental.start(sys.argv[2], options=options)
    """
)

_DRIVER = (
    _START
    + ZOO_STEP
    + textwrap.dedent(
        """
    import glob, json
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    out = sys.argv[2]
    warm_up()
    # With gradient accumulation over k steps, profile the cycle's update
    # step (after k - 1 accumulating ones): its peak is the cycle's.
    opt = getattr(model, "optimizer", None) if case.training else None
    for _ in range(int(getattr(opt, "gradient_accumulation_steps", 0) or 1) - 1):
        step()
    tf.config.experimental.reset_memory_stats("CPU:0")
    before = tf.config.experimental.get_memory_info("CPU:0")["current"]
    if sys.argv[3] != "build":
        tf.profiler.experimental.start(out, options=options)
    step()
    tf.profiler.experimental.stop()
    peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
    space = xplane_pb2.XSpace()
    path = sorted(glob.glob(out + "/**/*.xplane.pb", recursive=True))[-1]
    space.ParseFromString(open(path, "rb").read())
    memory, kernels = [], []
    for plane in space.planes:
        names = {k: v.name for k, v in plane.event_metadata.items()}
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                name = names.get(event.metadata_id, "")
                at = line.timestamp_ns + event.offset_ps // 1000
                if name in ("MemoryAllocation", "MemoryDeallocation"):
                    stats = {}
                    for s in event.stats:
                        key = stat_names.get(s.metadata_id)
                        value = s.str_value or s.int64_value or s.uint64_value
                        if s.HasField("ref_value"):
                            value = stat_names.get(s.ref_value)
                        stats[key] = value
                    memory.append((at, name == "MemoryAllocation", stats))
                elif ":" in name and not name.startswith("ThreadpoolListener"):
                    kernels.append((at, event.duration_ps // 1000, line.id % 1000, name))
    memory.sort(key=lambda e: e[0])
    json.dump({"before": before, "peak": peak, "memory": memory, "kernels": sorted(kernels)},
              open(out + ".json", "w"))
    """
    )
)


#: TF's host tracer level for the profiles (``--host-level``).
HOST_LEVEL = 1


def profile(case: str, from_build: bool = False, host_level: int | None = None) -> dict:
    """One fresh process's profiled step of ``case`` (or everything from building the model).

    ``host_level`` is TF's host tracer level (default ``HOST_LEVEL``).
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile")
        step = "build" if from_build else "step"
        level = str(HOST_LEVEL if host_level is None else host_level)
        run_fresh(
            _DRIVER,
            case,
            out,
            step,
            level,
            doing=f"profiling {case}",
            TF_CPU_ALLOCATOR_USE_BFC="true",
        )
        with open(out + ".json") as f:
            return json.load(f)


def measured_step_start(memory: list) -> int:
    """Index of the measured step's first event: where ``reset_memory_stats`` lowered the peak."""
    peaks = [stats.get("peak_bytes_in_use", 0) for _, _, stats in memory]
    for i in range(1, len(peaks)):
        if peaks[i] < peaks[i - 1]:
            return i
    raise SystemExit("the profile shows no reset of the allocator's peak")


def replay_through_model(memory: list, start: int) -> tuple[float, int, int]:
    """TF's own allocation sequence through ``engine.bfc.BFCModel``.

    Returns the model's peak over the events from ``start`` on, and how many
    of all the allocations got a chunk of another size than TF's.  When TF's
    sequence gives TF's peak, the allocator model is right for that run, and
    an estimate that misses it has another sequence.
    """
    from jupyter_tfmem.engine.bfc import BFCModel

    model = BFCModel()
    differ = total = 0
    for i, (_, is_alloc, stats) in enumerate(memory):
        if i == start:
            model.reset_peak()
        if not is_alloc:
            model.free(stats["addr"])
            continue
        model.alloc(stats["addr"], stats["requested_bytes"])
        total += 1
        differ += model.chunks[model.owner[stats["addr"]]][0] != stats["allocation_bytes"]
    return model.peak, differ, total


def at_peak(memory: list) -> tuple[float, dict[str, list[float]]]:
    """Bytes in use at the step's peak, and the live allocations then by op: [asked, chunks]."""
    live: dict[int, tuple[str, float, float]] = {}
    best, best_live = -1.0, {}
    for _, is_alloc, stats in memory:
        if is_alloc:
            live[stats["addr"]] = (
                stats.get("tf_op") or "?",
                stats["requested_bytes"],
                stats["allocation_bytes"],
            )
        else:
            live.pop(stats["addr"], None)
        if stats["bytes_allocated"] > best:
            best, best_live = stats["bytes_allocated"], dict(live)
    by_op: dict[str, list[float]] = {}
    for op, asked, chunk in best_live.values():
        row = by_op.setdefault(op, [0.0, 0.0])
        row[0] += asked
        row[1] += chunk
    return best, by_op


def estimate_one_way(case_name: str, shared: bool | None = None) -> float:
    """The case's estimated peak in bytes, with every replay's concurrent kernels
    side by side (``False``), taking turns (``True``), or as the estimator does."""

    from jupyter_tfmem import estimator
    from jupyter_tfmem.zoo import get_case

    if shared is None:
        return float(get_case(case_name).estimate(device="CPU").peak_bytes)
    events = estimator._executor_events

    def forced(n, o, d, t, _=False, trips=None, **kw):
        return events(n, o, d, t, shared, trips, **kw)

    with mock.patch.object(estimator, "_executor_events", forced):
        return float(get_case(case_name).estimate(device="CPU").peak_bytes)


def modelled_durations(case_name: str) -> dict[str, tuple[str, float]]:
    """Each op's duration in the estimate's side-by-side replay, ns, with its op type."""
    from jupyter_tfmem import estimator
    from jupyter_tfmem.zoo import get_case

    events = estimator._executor_events
    got: dict[str, tuple[str, float]] = {}

    def grab(nodes, order, durations, *args, **kwargs):
        if not got:
            got.update((name, (nodes[name].op, durations.get(name, 0.0))) for name in order)
        return events(nodes, order, durations, *args, **kwargs)

    with mock.patch.object(estimator, "_executor_events", grab):
        get_case(case_name).estimate(device="CPU")
    return got


def print_durations(kernels: list, modelled: dict[str, tuple[str, float]], most: int) -> None:
    """TF's kernel times against the cost model's, by op type and the furthest ops."""
    took: dict[str, float] = collections.defaultdict(float)
    for _, dur, _, name in kernels:
        op = name.split(":", 1)[0]
        if op in modelled and "while/" not in op:
            took[op] += dur  # ns (an op can run as several events)
    ratios = {op: t / modelled[op][1] for op, t in took.items() if modelled[op][1] > 0 and t > 0}
    if not ratios:
        print("\nNo kernel of TF's step matched an op the cost model times.")
        return
    median = statistics.median(ratios.values())
    print(
        f"\nTF's kernel time over the cost model's, {len(ratios)} ops matched; "
        f"the step's median {median:.3f} (1.0 below = that median):"
    )
    by_type: dict[str, list[float]] = collections.defaultdict(list)
    type_ns: dict[str, float] = collections.defaultdict(float)
    for op, r in ratios.items():
        by_type[modelled[op][0]].append(r / median)
        type_ns[modelled[op][0]] += took[op]
    print("  per op type (median, ops, TF's total ms):")
    for kind, rs in sorted(by_type.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"    {statistics.median(rs):8.2f}  {len(rs):4d}  {type_ns[kind] / 1e6:9.2f}  {kind}")
    # microsecond kernels are all overhead: only ops that matter to the step's order
    least = 0.005 * sum(took[op] for op in ratios)
    print(f"  furthest {most} ops of 0.5% of TF's time or more (TF ms, model ms, relative):")
    big = [op for op in ratios if took[op] >= least or modelled[op][1] * median >= least]
    furthest = sorted(big, key=lambda op: -abs(math.log(ratios[op] / median)))[:most]
    for op in furthest:
        print(
            f"    {took[op] / 1e6:9.3f} {modelled[op][1] / 1e6:9.3f} "
            f"{ratios[op] / median:8.2f}  {op}"
        )


def estimate_both_ways(case_name: str) -> tuple[float, float, float]:
    """The estimate, and its peak with concurrent kernels side by side or taking turns, MiB."""
    return tuple(estimate_one_way(case_name, shared) / MiB for shared in (None, False, True))


def _held_before(memory: list, start: int) -> list[dict]:
    """The allocation events of what TF's allocator holds just before event ``start``."""
    live: dict[int, dict] = {}
    for _, is_alloc, stats in memory[:start]:
        if is_alloc:
            live[stats["addr"]] = stats
        else:
            live.pop(stats["addr"], None)
    return list(live.values())


def live_at(memory: list, start: int) -> list[int]:
    """The chunk sizes TF's allocator holds just before event ``start``."""
    return [stats["allocation_bytes"] for stats in _held_before(memory, start)]


def folded_at(memory: list, start: int) -> dict[str, int]:
    """The constants of TF's runtime folding its allocator holds just before event
    ``start``, by op name: bytes asked."""
    from jupyter_tfmem.engine.folding import is_folded

    held = (
        (stats.get("tf_op") or "", stats["requested_bytes"])
        for stats in _held_before(memory, start)
    )
    return {op: nbytes for op, nbytes in held if is_folded(op)}


def estimated_folded(case: str) -> dict[str, int]:
    """The constants ``engine/folding.py`` adds to the case's step, by name: bytes at its batch."""
    from jupyter_tfmem.engine import folding
    from jupyter_tfmem.zoo import get_case

    made: dict[str, int] = {}
    fold = folding.fold_constants

    def spy(nodes, order, attrs, stateless, batch):
        names = fold(nodes, order, attrs, stateless, batch)
        if not made:  # the estimate's own batch (the first call)
            for name in names:
                a, b, _ = nodes[name].outputs[0]
                made[name] = int(a + b * batch)
        return names

    with mock.patch.object(folding, "fold_constants", spy):
        get_case(case).estimate()
    return made


def by_folded_tensor(constants: dict[str, int]) -> dict[str, int]:
    """Folded constants keyed by the tensor each replaces (``<op>/_<k>__cf__<id>`` -> ``<op>``),
    so that TF's and the estimate's, numbered apart, can be matched."""
    from jupyter_tfmem.engine.folding import is_folded

    return {
        (name.rsplit("/_", 1)[0] if is_folded(name) else name): nbytes
        for name, nbytes in constants.items()
    }


def print_folded(tf: dict[str, int], estimate: dict[str, int]) -> None:
    """TF's folded constants beside the estimate's, matched by the tensor folded."""
    theirs, ours = by_folded_tensor(tf), by_folded_tensor(estimate)
    print(
        f"  TF's runtime-folded constants held at the measured step's start: {len(tf)}, "
        f"{sum(tf.values()) / MiB:.3f} MiB; the estimate's: {len(estimate)}, "
        f"{sum(estimate.values()) / MiB:.3f} MiB"
    )
    for name in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(name), ours.get(name)
        cols = [f"{x / MiB:9.3f}" if x is not None else "        -" for x in (a, b)]
        print(f"    {cols[0]} {cols[1]} MiB  {name}")


def print_by_op(by_op: dict[str, list[float]], most: int) -> None:
    """``at_peak``'s or ``estimate_at_peak``'s buffers by op, the largest chunks first."""
    for op, (a, chunk) in sorted(by_op.items(), key=lambda kv: -kv[1][1])[:most]:
        print(f"  {a / MiB:8.2f} {chunk / MiB:8.2f}  {op}")


def model_live_at_start(sequence: tuple, n: int) -> list[int]:
    """The chunk sizes the estimate's allocator model holds when the measured step starts.

    ``sequence`` is one schedule's events from ``estimate_sequences``, at batch ``n``.
    """
    from jupyter_tfmem import estimator

    creation, warm, _, holders = sequence
    model = estimator._allocator_after(creation, warm, [], n, holders)
    return [model.chunks[addr][0] for addr in model.owner.values()]


@contextlib.contextmanager
def buffers_named_by_op() -> Iterator[None]:
    """While open, each tensor the estimate's replay makes is keyed by the op that
    made it (the replay's own keys carry no name)."""
    from jupyter_tfmem.engine import schedule

    made = schedule._output_buffer

    def named(node, idx, spec, in_bufs):
        buf = made(node, idx, spec, in_bufs)
        if buf is not None and buf.key is None and not buf.persistent:
            buf.key = ("t", next(schedule._keys), node.name)
        return buf

    with mock.patch.object(schedule, "_output_buffer", named):
        yield


def op_of(key: object) -> str | None:
    """The op that made a replay buffer keyed under ``buffers_named_by_op``, or a
    copy-on-write's label; None for a buffer no op of the step made."""
    # a later step's keys are (step, the op's key): see estimator._chained
    if isinstance(key, tuple) and key and isinstance(key[0], int):
        key = key[1]
    if not isinstance(key, tuple) or not key:
        return None
    if key[0] == "cow":  # a copy-on-write's key names the variable, not an op
        return "(copy-on-write of a variable)"
    return str(key[2]) if key[0] == "t" and len(key) > 2 else None


def allocations_by_op(case_name: str, least: int) -> collections.Counter:
    """Buffers of ``least`` bytes or more per op, in the estimate's measured step
    (side-by-side mode: the first replay)."""
    n, sequences = estimate_sequences(case_name)
    _, _, measured, _ = sequences[0]
    return collections.Counter(
        op
        for kind, key, a, b, _ in measured
        if kind == "a" and a + b * n >= least and (op := op_of(key)) is not None
    )


def estimate_at_peak(sequence: tuple, n: int) -> tuple[float, float, dict[str, list[float]]]:
    """The estimate's allocator model at its peak in the measured step, as ``at_peak``
    reads TF's: the chunks in use then, those of them held before the step, and the
    step's own buffers by op: [asked, chunks].

    ``sequence`` is one schedule's events from ``estimate_sequences`` at batch ``n``,
    taken under ``buffers_named_by_op``.
    """
    from jupyter_tfmem import estimator

    creation, warm, measured, holders = sequence

    def warmed():  # the allocator model after the build and the warm-up
        return estimator._allocator_after(creation, warm, [], n, holders)

    # first pass: the event after which the peak is reached; second: the state then
    model, top, at = warmed(), -1, 0
    for i, event in enumerate(measured):
        model.run((event,), n)
        if model.in_use > top:
            top, at = model.in_use, i
    model = warmed()
    before = set(model.owner)
    asked = {}
    for event in measured[: at + 1]:
        model.run((event,), n)
        if event[0] == "a":
            asked[event[1]] = event[2] + event[3] * n
    held_before, by_op = 0.0, {}
    for key, addr in model.owner.items():
        chunk = model.chunks[addr][0]
        if key in before:
            held_before += chunk
            continue
        row = by_op.setdefault(op_of(key) or "(other)", [0.0, 0.0])
        row[0] += asked.get(key, 0)
        row[1] += chunk
    return model.in_use, held_before, by_op


def estimate_sequences(case_name: str) -> tuple[int, list[tuple]]:
    """The case's batch, and each sequence the estimate's allocator model runs at it
    (per schedule, and per sequence of branch orders for a step with conditions):
    its build, warm-up and measured-step events (``creation, warm, measured, holders``)."""
    from jupyter_tfmem import estimator
    from jupyter_tfmem.zoo import get_case

    case = get_case(case_name)
    after = estimator._allocator_after
    got: list[tuple] = []

    def grab(creation, warm, measured, m, holders=None, **kw):
        if m == case.batch_size:
            got.append((creation, warm, measured, holders))
        return after(creation, warm, measured, m, holders, **kw)

    with mock.patch.object(estimator, "_allocator_after", grab), buffers_named_by_op():
        case.estimate(device="CPU")
    return case.batch_size, got


def swapped_peaks(memory: list, start: int, ours: list[tuple], n: int) -> list[tuple]:
    """Per estimate schedule: its peak, TF's history + its step, its history + TF's step."""
    from jupyter_tfmem import estimator
    from jupyter_tfmem.engine.bfc import BFCModel

    def tf_events(events: list) -> list[tuple]:
        return [
            ("a" if is_alloc else "f", ("tf", stats["addr"]), stats["requested_bytes"], 0, "")
            for _, is_alloc, stats in events
        ]

    history, step = tf_events(memory[:start]), tf_events(memory[start:])
    rows = []
    for creation, warm, measured, holders in ours:
        own = estimator._allocator_after(creation, warm, measured, n, holders).peak
        tf_first = BFCModel()
        tf_first.run(history, 0)
        tf_first.reset_peak()
        tf_first.run(measured, n)
        ours_first = BFCModel()
        estimator._allocate_persistent(ours_first, creation, holders, n)
        ours_first.run(warm, n)
        ours_first.reset_peak()
        ours_first.run(step, 0)
        rows.append((own, tf_first.peak, ours_first.peak))
    return rows


def print_start_state(ours: list[int], tf_chunks: list[int]) -> None:
    for label, chunks in (("TF", tf_chunks), ("model", ours)):
        print(
            f"  at the measured step's start, {label} holds {len(chunks)} allocations, "
            f"{sum(chunks) / MiB:.2f} MiB of chunks"
        )
    tf_sizes, our_sizes = collections.Counter(tf_chunks), collections.Counter(ours)
    print("  chunk sizes of 4 KiB or more held a different number of times (TF, model):")
    for size in sorted(set(tf_sizes) | set(our_sizes), reverse=True):
        if size >= 4096 and tf_sizes[size] != our_sizes[size]:
            print(f"    {size:>11,d} bytes  {tf_sizes[size]:4d} {our_sizes[size]:4d}")


def loop_spans(kernels: list) -> dict[str, tuple[int, int, int, set[int]]]:
    """Per while loop (its frame's name), the first start and last end of its body's kernels.

    A lowered loop's body ops are named ``<frame>/body/_<n>/...``; whether two
    loops' spans overlap says whether TF ran them side by side.
    """
    from jupyter_tfmem.estimator import _frame_of

    spans: dict[str, list] = {}
    for at, dur, thread, name in kernels:
        frame = _frame_of(name.partition(":")[0])
        if frame is None:
            continue
        span = spans.setdefault(frame, [at, at + dur, 0, set()])
        span[0], span[1] = min(span[0], at), max(span[1], at + dur)
        span[2] += 1
        span[3].add(thread)
    return {frame: tuple(span) for frame, span in sorted(spans.items(), key=lambda kv: kv[1][0])}


_PRODUCT = re.compile(r"/(MatMul(?:_\d+)?)_grad/MatMul_1$")
_SUM = re.compile(r"/gradients/AddN(?:_\d+)?$")


def _backward_product(op: str) -> tuple[str, str] | None:
    """``(backward loop frame, product)`` of a weight-gradient product's op, else ``None``."""
    from jupyter_tfmem.estimator import _frame_of

    frame = _frame_of(op)
    product = _PRODUCT.search(op) if frame is not None and "while_grad" in frame else None
    return (frame, product.group(1)) if product else None


def products_alive(memory: list) -> dict[str, dict[str, tuple[int, int]]]:
    """Per backward loop, the most of each weight-gradient product alive at once.

    Read from TF's allocation events, not its kernel events: a product's
    buffer lives until its sum has read it, whichever op sums it (a
    user-written cell's sums are not ``AddN``s that ``sums_behind`` can
    pair, and the profiler drops some kernel events).  By frame, then
    product (``MatMul`` for ``MatMul_grad/MatMul_1``, ``MatMul_1`` ...):
    ``(most alive, bytes each)``; about 2 where the sums keep up, 33 where
    the recurrence runs ``parallel_iterations`` ahead.
    """
    alive: collections.Counter = collections.Counter()
    most: dict[str, dict[str, tuple[int, int]]] = collections.defaultdict(dict)
    held: dict[object, tuple[str, str]] = {}
    for _at, is_alloc, stats in memory:
        if not is_alloc:
            key = held.pop(stats.get("addr"), None)
            if key is not None:
                alive[key] -= 1
            continue
        key = _backward_product(stats.get("tf_op") or "")
        if key is None:
            continue
        held[stats.get("addr")] = key
        alive[key] += 1
        frame, product = key
        before = most[frame].get(product, (0, 0))[0]
        most[frame][product] = (max(before, alive[key]), int(stats.get("requested_bytes") or 0))
    return dict(most)


def sums_behind(kernels: list) -> dict[str, int]:
    """Per backward loop, the most weight-gradient products made and not yet summed.

    A backward loop's weight-gradient products (``<MatMul>_grad/MatMul_1``,
    one per kernel) are each added to a loop-carried total by an ``AddN`` of
    the body.  Which ``AddN`` sums which product is not in the profile, so
    for each product every ``AddN`` of the frame run about as often (0.8
    times or more: the profiler drops some events) and never ahead of it (a
    sum cannot run before its product) is tried, and the one that keeps up
    best is taken; the loop's figure is its products' largest.  A dropped
    product event can rule out its real sum, so a loop may go unreported.
    Counted when a sum starts, its own product included: 1 where the sums
    keep up, ``parallel_iterations`` (32 in Keras) where the recurrence runs
    ahead of them.
    """
    from jupyter_tfmem.estimator import _frame_of

    made: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    sums: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    worst: dict[tuple[str, str, str], int] = collections.defaultdict(int)
    least: dict[tuple[str, str, str], int] = collections.defaultdict(int)
    for _at, _dur, _thread, name in kernels:
        op = name.partition(":")[0]
        product = _backward_product(op)
        if product is not None:
            made[product[0]][product[1]] += 1
            continue
        frame = _frame_of(op)
        if frame is None or "while_grad" not in frame:
            continue
        if _SUM.search(op):
            total = op.rsplit("/", 1)[1]
            for kind, n in made[frame].items():
                key = (frame, kind, total)
                # waiting when this sum starts; a sum needs its product made
                worst[key] = max(worst[key], n - sums[frame][total])
                least[key] = min(least[key], n - sums[frame][total] - 1)
            sums[frame][total] += 1
    out = {}
    for frame, products in made.items():
        per_product = [
            min(
                (
                    worst[(frame, kind, t)]
                    for t, c in sums[frame].items()
                    if c >= 0.8 * n and least[(frame, kind, t)] >= 0
                ),
                default=None,
            )
            for kind, n in products.items()
        ]
        found = [m for m in per_product if m is not None]
        if found:
            out[frame] = max(found)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="siamese_adam", help="zoo case (default: %(default)s)")
    parser.add_argument("--tensors", type=int, default=12, help="live tensors to list")
    parser.add_argument("--kernels", type=int, default=20, help="longest kernels to list")
    parser.add_argument("--estimate", action="store_true", help="also estimate the case both ways")
    parser.add_argument(
        "--replay",
        action="store_true",
        help="profile from before the model is built and replay TF's own allocations "
        "through the allocator model",
    )
    parser.add_argument(
        "--start",
        action="store_true",
        help="with --replay: what the allocator holds when the measured step starts, "
        "TF against the estimate's model",
    )
    parser.add_argument(
        "--swap",
        action="store_true",
        help="with --replay: the peak with TF's history and the estimate's step, and the "
        "reverse, for each schedule the estimate replays",
    )
    parser.add_argument(
        "--folded",
        action="store_true",
        help="with --replay: the constants TF's runtime folding holds when the measured step "
        "starts (TF, the estimate), by the tensor each replaces",
    )
    parser.add_argument(
        "--loops",
        action="store_true",
        help="when each while loop's body ran in the step, and on which threads",
    )
    parser.add_argument(
        "--order",
        metavar="REGEX",
        help="list the kernels whose name matches REGEX in start order, with their threads "
        "(e.g. 'StridedSliceGrad|TemporaryVariable': where an in-place sum starts)",
    )
    parser.add_argument(
        "--behind",
        action="store_true",
        help="per backward loop, the most weight-gradient products made and not yet summed "
        "when a sum starts (1 if the sums keep up, 32 if the recurrence runs ahead)",
    )
    parser.add_argument(
        "--products",
        action="store_true",
        help="per backward loop, the most of each weight-gradient product alive at once, "
        "from TF's allocation events (about 2 if the sums keep up, 33 if not)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="list the ops that allocate (64 KiB or more) more often in TF's step than in "
        "the estimate's replay, and the reverse",
    )
    parser.add_argument(
        "--estimate-peak",
        action="store_true",
        help="also list what the estimate's allocator model holds at its peak, by op, beside "
        "TF's (its first schedule)",
    )
    parser.add_argument(
        "--durations",
        type=int,
        metavar="N",
        help="TF's kernel times against the estimate's cost model: per op type, and the N "
        "ops furthest from the step's median ratio",
    )
    parser.add_argument(
        "--host-level",
        type=int,
        choices=(1, 2, 3),
        default=HOST_LEVEL,
        help="TF's host tracer level (default 1: kernels and allocations; 2, TF's own "
        "default, also traces the intra-op pool's tasks and slows many-shard kernels)",
    )
    args = parser.parse_args(argv)
    from jupyter_tfmem.zoo import case_names

    if args.case not in case_names():
        parser.error(f"unknown case {args.case!r}; one of: {', '.join(case_names())}")
    for flag in ("start", "swap", "folded"):
        if getattr(args, flag) and not args.replay:
            parser.error(
                f"--{flag} needs --replay (the profile must begin before the model is built)"
            )
    run = profile(args.case, from_build=args.replay, host_level=args.host_level)
    memory = run["memory"]
    # the estimate's replay, made once for every option that reads it
    need = args.start or args.swap or args.estimate_peak
    n, sequences = estimate_sequences(args.case) if need else (0, [])
    if args.replay:
        start = measured_step_start(memory)
        replayed, differ, total = replay_through_model(memory, start)
        print(
            f"{args.case}: TF's {total} allocations since the model was built, replayed through "
            f"engine/bfc.py: measured-step peak {replayed / MiB:.2f} MiB (TF: "
            f"{run['peak'] / MiB:.2f}); {differ} got a chunk of another size than TF's"
        )
        if args.start:
            print_start_state(model_live_at_start(sequences[0], n), live_at(memory, start))
        if args.folded:
            print_folded(folded_at(memory, start), estimated_folded(args.case))
        if args.swap:
            print(
                "  per estimate schedule: its peak; TF's history + its step; "
                "its history + TF's step"
            )
            for own, tf_first, ours_first in swapped_peaks(memory, start, sequences, n):
                print(f"    {own / MiB:8.2f} {tf_first / MiB:8.2f} {ours_first / MiB:8.2f} MiB")
        memory = memory[start:]
        # the build and the warm-up ran under the profiler too
        run["kernels"] = [k for k in run["kernels"] if k[0] >= memory[0][0]]
    in_use, by_op = at_peak(memory)
    asked = sum(row[0] for row in by_op.values())
    print(
        f"{args.case}: allocator peak {run['peak'] / MiB:.2f} MiB in the profiled step "
        f"({in_use / MiB:.2f} by its allocation events)"
    )
    print(
        f"  in use before the step {run['before'] / MiB:.2f} MiB; at the peak the step's own "
        f"tensors ask {asked / MiB:.2f} MiB"
    )
    print(f"\nLive at the peak (asked / chunk MiB, op), largest {args.tensors}:")
    print_by_op(by_op, args.tensors)
    if args.estimate_peak:
        in_use, held, by_op = estimate_at_peak(sequences[0], n)
        asked = sum(row[0] for row in by_op.values())
        print(
            f"\nThe estimate's allocator model at its peak: {in_use / MiB:.2f} MiB of chunks, "
            f"{held / MiB:.2f} of them held before the step; the step's own buffers ask "
            f"{asked / MiB:.2f} MiB"
        )
        print(f"Its live buffers then (asked / chunk MiB, op), largest {args.tensors}:")
        print_by_op(by_op, args.tensors)
    kernels = run["kernels"]
    steps = [k for k in kernels if k[3].startswith("EagerLocalExecute: __inference")]
    t0 = steps[0][0] if steps else (kernels[0][0] if kernels else 0)
    longest = sorted(
        (k for k in kernels if not k[3].startswith(("Eager", "KernelAndDevice"))),
        key=lambda k: -k[1],
    )[: args.kernels]
    print(f"\nLongest {args.kernels} kernels in start order (us from the step's start):")
    for at, dur, thread, name in sorted(longest):
        start, end = (at - t0) / 1e3, (at + dur - t0) / 1e3
        print(f"  {start:9.1f} to {end:9.1f}  thread {thread:3d}  {name}")
    if args.order:
        pattern = re.compile(args.order)
        matching = sorted(
            k for k in kernels if pattern.search(k[3]) and not k[3].startswith("Eager")
        )
        print(f"\nKernels matching {args.order!r} in start order ({len(matching)}):")
        for i, (at, dur, thread, name) in enumerate(matching):
            start, end = (at - t0) / 1e3, (at + dur - t0) / 1e3
            print(f"  {i:5d} {start:9.1f} to {end:9.1f} us  thread {thread:3d}  {name}")
    if args.loops:
        print("\nWhile loops' bodies (ms from the step's start; kernels; threads):")
        for frame, (first, last, count, threads) in loop_spans(kernels).items():
            print(
                f"  {(first - t0) / 1e6:8.2f} to {(last - t0) / 1e6:8.2f}  {count:5d} kernels  "
                f"threads {','.join(map(str, sorted(threads)))}  {frame}"
            )
    if args.behind:
        print("\nWeight-gradient products made and not yet summed, most over each backward loop:")
        for frame, most in sums_behind(kernels).items():
            print(f"  {most:5d}  {frame}")
    if args.products:
        print("\nWeight-gradient products alive at once, most over each backward loop:")
        for frame, products in products_alive(memory).items():
            for product, (count, size) in sorted(products.items()):
                print(f"  {count:5d} x {size / 1024:8.1f} KiB  {product:12s} {frame}")
    if args.compare:
        least = 64 << 10
        tf_ops = collections.Counter(
            stats.get("tf_op") or "?"
            for _, is_alloc, stats in memory
            if is_alloc and stats["requested_bytes"] >= least
        )
        ours = allocations_by_op(args.case, least)
        print("\nAllocations of 64 KiB or more, TF's step against the estimate's replay:")
        for label, more, less in (("TF only", tf_ops, ours), ("replay only", ours, tf_ops)):
            extra = sorted(
                (op, n - less.get(op, 0)) for op, n in more.items() if n > less.get(op, 0)
            )
            print(f"  {label}: {len(extra)} ops")
            for op, n in extra:
                print(f"    {n} x {op}")
    if args.durations is not None:
        print_durations(kernels, modelled_durations(args.case), args.durations)
    if args.estimate:
        both, side, turns = estimate_both_ways(args.case)
        print(
            f"\nEstimate {both:.2f} MiB: {side:.2f} with concurrent kernels side by side, "
            f"{turns:.2f} with them taking turns on the cores"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
