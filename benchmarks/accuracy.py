"""Accuracy benchmark: the estimator and two everyday baselines against measured peaks.

    python benchmarks/accuracy.py                      # whole zoo, writes docs/accuracy.md
    python benchmarks/accuracy.py --cases mlp_infer    # a subset, printed only
    python benchmarks/accuracy.py --remeasure          # refresh the cached ground truth
    python benchmarks/accuracy.py --truth-cpu "Intel(R) Xeon(R) Processor"
    python benchmarks/accuracy.py --as-vendor GenuineIntel --docs /tmp/a.md

Each case is measured by ``jupyter_tfmem.measurement.measure_builder``: the
median of ``--runs`` fresh processes, each building the model itself.  Measured
peaks are cached in ``benchmarks/results/measured.json`` keyed by case, TF
version and CPU model, so the estimator can be re-benchmarked in seconds, and
one machine's ground truth is kept when the benchmark runs on another (only
the current CPU's records are used).  ``--truth-cpu`` scores the same
estimates against another CPU's cached records as well, leaving out the
16-bit cases, whose kernels (and estimates) follow the CPU's instructions;
``--as-vendor`` estimates as if on a CPU of that ``vendor_id`` (the cost
model's reduction slowdown follows the vendor), so a constant chosen for one
CPU can be scored on both without that CPU at hand.  Estimates and
baselines are computed in one separate child process, so this process never
imports TensorFlow and stays clean.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import functools
import importlib.metadata
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from jupyter_tfmem.measurement import Measurement, measure_builder  # noqa: E402
from jupyter_tfmem.views.text import RANGE_SHOWN  # noqa: E402
from jupyter_tfmem.zoo import CASES, ZooCase, get_case  # noqa: E402

CACHE = HERE / "results" / "measured.json"
#: Measurements under --env switches: kept apart from the figures the docs use.
VARIANTS_CACHE = HERE / "results" / "measured_variants.json"
DOCS = ROOT / "docs" / "accuracy.md"
MIB = 2**20


# --------------------------------------------------------------------------
# Ground truth (cached).
# --------------------------------------------------------------------------


def tf_version() -> str:
    """The installed TensorFlow version, read without importing TensorFlow."""
    return importlib.metadata.version("tensorflow")


def cache_key(case: str, env: dict[str, str], cpu: str | None = None) -> str:
    """Cache key: case + TF version + CPU model (+ any environment switches measured under).

    Which kernels TF runs, and so what it allocates, depends on the CPU's
    instructions (a float16 transformer's peak is 60.7 MiB on an AMD EPYC and
    52.0 on a Xeon with AVX512-FP16), so each CPU has ground truth of its own.
    """
    key = f"{case}@tf{tf_version()}@{cpu or cpu_model()}"
    if env:
        key += "+" + ",".join(f"{k}={v}" for k, v in sorted(env.items()))
    return key


def load_cache(path: Path = CACHE) -> dict[str, Any]:
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {}


def save_cache(cache: dict[str, Any], path: Path = CACHE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(sorted(cache.items())), indent=1, sort_keys=False)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)


def measure_case(case: ZooCase, runs: int, env: dict[str, str]) -> dict[str, Any]:
    """Measure one case in ``runs`` fresh processes; the record that goes into the cache."""
    started = time.perf_counter()
    result = measure_builder(
        case.name,
        case.batch_size,
        training=case.training,
        optimizer=case.optimizer,
        loss=case.loss,
        precision=case.precision,
        runs=runs,
        env=env or None,
        target_shapes=case.target_shapes,
    )
    record = result.to_dict()
    record["wall_seconds"] = round(time.perf_counter() - started, 2)
    record["measured_on"] = _dt.date.today().isoformat()
    record["env"] = env
    record["cpu"] = cpu_model()
    return record


def ensure_measured(
    cases: list[ZooCase], runs: int, jobs: int, remeasure: bool, env: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Cached records for ``cases`` with at least ``runs`` fresh processes each, on this CPU.

    A case cached with fewer runs is topped up: the missing runs are measured
    and the median is taken over all of them, so raising ``--runs`` costs only
    the new processes.  ``remeasure`` discards this CPU's records first; other
    CPUs' records are kept and not used (``cache_key``).  A case TF cannot
    run here (a ``channels_first`` CNN on a CPU without oneDNN) is left out
    of the result with a printed reason, and the other cases go on.
    """
    cache_path = VARIANTS_CACHE if env else CACHE
    cache = load_cache(cache_path)
    if remeasure:
        for c in cases:
            cache.pop(cache_key(c.name, env), None)
    todo = [(c, runs - len(cache.get(cache_key(c.name, env), {}).get("runs", ()))) for c in cases]
    todo = [(c, k) for c, k in todo if k > 0]

    def work(item: tuple[ZooCase, int]) -> tuple[ZooCase, dict[str, Any] | str]:
        case, missing = item
        print(f"  measuring {case.name} ({missing} fresh processes)...", flush=True)
        try:
            return case, measure_case(case, missing, env)
        except Exception as exc:  # the case's own failure, reported below
            return case, f"{type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for case, record in pool.map(work, todo):
            if isinstance(record, str):
                lines = [line.strip() for line in record.splitlines() if line.strip()]
                # TF's message is the line before its "[[{{node ...}}]]"
                at = max((i for i, line in enumerate(lines) if line.startswith("[[")), default=0)
                errors = (line for line in reversed(lines) if "Error" in line)
                reason = lines[at - 1] if at else next(errors, lines[-1])
                print(f"  {case.name}: not measured here ({reason[:300]})", flush=True)
                continue
            key = cache_key(case.name, env)
            if key in cache:
                record = merge_records(cache[key], record)
            cache[key] = record
            save_cache(cache, cache_path)  # keep what is done if a later case fails
            print(
                f"  {case.name}: median {record['peak_bytes'] / MIB:.1f} MiB of "
                f"{len(record['runs'])} runs, spread {record['spread']:.1%}, "
                f"{record['wall_seconds']:.0f} s",
                flush=True,
            )
    return {c.name: cache[k] for c in cases if (k := cache_key(c.name, env)) in cache}


def cached_elsewhere(
    cases: list[ZooCase], cpu: str, env: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """The cached records from ``cpu`` of those ``cases`` that have one.

    Cases added to the zoo after that CPU was last available have none; they
    are left out of its page by name rather than keeping the page from being
    rewritten at all.
    """
    cache = load_cache(VARIANTS_CACHE if env else CACHE)
    keys = {c.name: cache_key(c.name, env, cpu) for c in cases}
    return {name: cache[key] for name, key in keys.items() if key in cache}


#: The count of processes in the note ``measure`` writes.
_PROCESSES = re.compile(r"\b\d+ fresh process\(es\)")


def merge_records(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """One record over the runs of both: the median and range of all of them."""
    merged = Measurement.from_dict(new)
    merged = dataclasses.replace(
        merged,
        runs=tuple(old["runs"]) + merged.runs,
        seconds=tuple(old.get("seconds", ())) + merged.seconds,
        peak_bytes=round(statistics.median(tuple(old["runs"]) + merged.runs)),
    )
    record = merged.to_dict()
    # ``measure``'s note counts its own processes; the merged record holds both runs' sets.
    record["notes"] = [
        _PROCESSES.sub(f"{len(merged.runs)} fresh process(es)", note)
        for note in record.get("notes", [])
    ]
    record["wall_seconds"] = round(old.get("wall_seconds", 0) + new["wall_seconds"], 2)
    dates = sorted({old.get("measured_on", ""), new["measured_on"]} - {""})
    record["measured_on"] = " and ".join(dates)
    record["env"] = new["env"]
    record["cpu"] = new.get("cpu")
    return record


# --------------------------------------------------------------------------
# Estimates and baselines, in a child process.
# --------------------------------------------------------------------------


#: Environment variable through which ``--as-vendor`` reaches the estimate process.
VENDOR_VAR = "TFMEM_BENCH_CPU_VENDOR"
#: ... and ``--as-flags``.
FLAGS_VAR = "TFMEM_BENCH_CPU_FLAGS"


def is_16bit(case: ZooCase) -> bool:
    """Whether a zoo case computes in float16 or bfloat16 (its name says so)."""
    return any(tag in case.name for tag in ("float16", "mixed16", "bf16"))


def estimate_worker(names: list[str], out: str) -> None:
    """Child process: build each case, run the estimator and the baselines on it."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(HERE))
    from baselines import BASELINES

    from jupyter_tfmem import estimator as _estimator

    vendor = os.environ.get(VENDOR_VAR)
    if vendor:
        _estimator._cpu_vendor = lambda: vendor
    flags = os.environ.get(FLAGS_VAR)
    if flags is not None:
        _estimator._cpu_flags = lambda: frozenset(flags.split(","))

    try:
        from jupyter_tfmem import estimate

        estimate_error = None
    except ImportError as exc:  # the estimator is written in parallel with this benchmark
        estimate = None
        estimate_error = f"{type(exc).__name__}: {exc}"

    import keras

    results: dict[str, Any] = {}
    for name in names:
        case = get_case(name)
        # Layer and variable names decide the order of equal-ready ops in the
        # graph Grappler returns (``batch_normalization_10`` sorts before
        # ``batch_normalization_2``), in TF's executor as in the replay.  Each
        # measuring process builds its model first; fresh names here give the
        # estimate the same graph order TF ran.
        keras.backend.clear_session()
        model = case.builder()
        row: dict[str, Any] = {}
        for label, rule in BASELINES.items():
            row[label] = rule(
                model, case.batch_size, training=case.training, optimizer=case.optimizer
            )
        if estimate is None:
            row["estimate_error"] = estimate_error
        else:
            started = time.perf_counter()
            try:
                footprint = estimate(
                    model,
                    case.batch_size,
                    training=case.training,
                    optimizer=case.make_optimizer(),
                    loss=case.loss,
                    precision=case.precision,
                    target_shapes=case.target_shapes,
                )
                row["estimate"] = int(footprint.peak_bytes)
                row["estimate_range"] = [int(v) for v in footprint.peak_range]
                row["scenarios"] = dict(footprint.scenario_peaks)
            except Exception as exc:
                row["estimate_error"] = f"{type(exc).__name__}: {exc}"[:300]
            row["estimate_seconds"] = round(time.perf_counter() - started, 3)
        results[name] = row
        print(f"  estimated {name}", file=sys.stderr, flush=True)
    Path(out).write_text(json.dumps(results), encoding="utf-8")


def run_estimates(
    names: list[str],
    env: dict[str, str] | None = None,
    vendor: str | None = None,
    flags: list[str] | None = None,
) -> dict[str, Any]:
    """Estimates from a child process, under the environment the cases were measured in.

    With ``flags`` (another CPU's ``/proc/cpuinfo`` flags) the child estimates
    as on that CPU, and TF in it turns oneDNN on or off as it would there,
    since its graph passes follow that switch too.
    """
    child = {**os.environ, **(env or {}), **({VENDOR_VAR: vendor} if vendor else {})}
    if flags is not None:
        from jupyter_tfmem.estimator import onednn_on

        child[FLAGS_VAR] = ",".join(flags)
        if "TF_ENABLE_ONEDNN_OPTS" not in (env or {}):
            child["TF_ENABLE_ONEDNN_OPTS"] = "1" if onednn_on(frozenset(flags), None) else "0"
    with tempfile.TemporaryDirectory(prefix="tfmem-bench-") as tmp:
        out = os.path.join(tmp, "estimates.json")
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--estimate-worker",
            "--cases",
            ",".join(names),
            "--out",
            out,
        ]
        proc = subprocess.run(
            cmd,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            env=child,
        )
        if proc.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"estimate process failed:\n{proc.stderr[-3000:]}")
        return json.loads(Path(out).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------
# Report.
# --------------------------------------------------------------------------


def rel_error(estimate: float | None, measured: float) -> float | None:
    if estimate is None or not measured:
        return None
    return (estimate - measured) / measured


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1%}"


def summarize(errors: list[float | None]) -> str:
    values = [abs(e) for e in errors if e is not None]
    if not values:
        return "no estimates"
    return (
        f"median |error| {statistics.median(values):.1%}, "
        f"worst |error| {max(values):.1%} over {len(values)} cases "
        f"({sum(v > 0.10 for v in values)} over 10%, {sum(v > 0.15 for v in values)} over 15%)"
    )


def build_rows(
    cases: list[ZooCase], measured: dict[str, Any], estimates: dict[str, Any]
) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        meas = Measurement.from_dict(measured[case.name])
        est_row = estimates.get(case.name, {})
        est = est_row.get("estimate")
        low, high = est_row.get("estimate_range") or (est, est)
        rows.append(
            {
                "case": case.name,
                "batch": case.batch_size,
                "step": _step_label(case),
                "estimate": est,
                "estimate_error": est_row.get("estimate_error"),
                "measured": meas.peak_bytes,
                "low": meas.low,
                "high": meas.high,
                "spread": meas.spread,
                "runs": len(meas.runs),
                "error": rel_error(est, meas.peak_bytes),
                "in_range": None if est is None else meas.contains(est),
                "est_low": low,
                "est_high": high,
                "range_error": _range_error(low, high, meas.peak_bytes),
                "estimate_seconds": est_row.get("estimate_seconds"),
                "measure_seconds": measured[case.name].get("wall_seconds"),
                "cs231n": est_row.get("cs231n"),
                "cs231n_error": rel_error(est_row.get("cs231n"), meas.peak_bytes),
                "stackoverflow": est_row.get("stackoverflow"),
                "stackoverflow_error": rel_error(est_row.get("stackoverflow"), meas.peak_bytes),
            }
        )
    return rows


def _range_error(low: float | None, high: float | None, measured: float) -> float | None:
    """Error of ``peak_range``'s nearer end: 0 when TF's median is inside it."""
    if low is None or high is None:
        return None
    if low <= measured <= high:
        return 0.0
    return rel_error(low if measured < low else high, measured)


def _step_label(case: ZooCase) -> str:
    suffix = f" {case.precision}" if case.precision else ""
    if not case.training:
        return "inference" + suffix
    opt = case.optimizer
    if isinstance(opt, dict):
        name = str(opt.get("class_name", "")).lower()
        if opt.get("config", {}).get("momentum"):
            name += "+momentum"
        if opt.get("config", {}).get("gradient_accumulation_steps"):
            name += f"+accumulate {opt['config']['gradient_accumulation_steps']}"
        return f"train {name}{suffix}"
    return f"train {opt}{suffix}"


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / MIB:.1f}"


def _yes_no(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


def _secs(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


HEADER = [
    "case",
    "batch",
    "step",
    "estimate MiB",
    "measured MiB (median)",
    "range MiB",
    "runs",
    "spread",
    "error",
    "in range",
    "estimate's range MiB",
    "median in it",
    "estimate s",
    "measure s",
    "CS231n error",
    "SO error",
]


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for r in rows:
        out.append(
            [
                r["case"],
                str(r["batch"]),
                r["step"],
                _mib(r["estimate"]),
                _mib(r["measured"]),
                f"{_mib(r['low'])} to {_mib(r['high'])}",
                str(r["runs"]),
                f"{r['spread']:.1%}",
                _pct(r["error"]),
                _yes_no(r["in_range"]),
                f"{_mib(r['est_low'])} to {_mib(r['est_high'])}",
                _yes_no(None if r["range_error"] is None else r["range_error"] == 0),
                _secs(r["estimate_seconds"]),
                _secs(r["measure_seconds"]),
                _pct(r["cs231n_error"]),
                _pct(r["stackoverflow_error"]),
            ]
        )
    return out


def summary_lines(rows: list[dict[str, Any]]) -> list[str]:
    in_range = [r["in_range"] for r in rows if r["in_range"] is not None]
    # An estimate inside TF's own range is as good as the ground truth
    # allows; the worst error outside it is what the model still gets wrong.
    outside = [(abs(r["error"]), r["case"]) for r in rows if r["in_range"] is False]
    worst_outside = max(outside, default=None)
    lines = [
        f"jupyter_tfmem.estimate: {summarize([r['error'] for r in rows])}"
        + (f"; inside the measured range in {sum(in_range)} of {len(in_range)}" if in_range else "")
        + (
            f"; worst |error| outside it {worst_outside[0]:.1%} ({worst_outside[1]})"
            if worst_outside
            else ""
        ),
        *range_lines(rows),
        f"CS231n rule of thumb: {summarize([r['cs231n_error'] for r in rows])}",
        f"Stack Overflow get_model_memory_usage: "
        f"{summarize([r['stackoverflow_error'] for r in rows])}",
    ]
    missing = sorted({r["estimate_error"] for r in rows if r["estimate_error"]})
    lines.extend(f"estimate unavailable: {m}" for m in missing)
    return lines


def range_lines(rows: list[dict[str, Any]]) -> list[str]:
    """How often ``peak_range`` holds TF's median, and how wide it is where the views show it."""
    ranged = [r for r in rows if r["range_error"] is not None]
    if not ranged:
        return []
    inside = sum(r["range_error"] == 0 for r in ranged)
    worst = max(ranged, key=lambda r: abs(r["range_error"]))
    widths = sorted(
        ((r["est_high"] - r["est_low"]) / r["estimate"], r["case"])
        for r in ranged
        if r["estimate"] and r["est_high"] - r["est_low"] > RANGE_SHOWN * r["estimate"]
    )
    line = (
        f"estimate's peak_range: TF's median inside it in {inside} of {len(ranged)}; "
        f"its nearer end: {summarize([r['range_error'] for r in ranged])}, "
        f"worst {worst['case']}"
    )
    if widths:
        line += (
            f"; shown (wider than {RANGE_SHOWN:.0%} of the estimate) for {len(widths)} cases, "
            f"median width {statistics.median(w for w, _ in widths):.0%} of the estimate, "
            f"widest {widths[-1][0]:.0%} ({widths[-1][1]})"
        )
    return [line]


def print_report(rows: list[dict[str, Any]]) -> None:
    from tabulate import tabulate

    print(tabulate(table_rows(rows), headers=HEADER, disable_numparse=True))
    print()
    for line in summary_lines(rows):
        print(line)


@functools.cache
def cpu_model() -> str:
    """The CPU's model name: measurements from another CPU are not this one's ground truth.

    Virtual machines may show one name ("AMD EPYC") for CPUs of different
    generations, and TF turns oneDNN on by default only on some of them
    (``estimator.onednn_on``): a CPU where it stays off is named so, since
    its kernels, and what they allocate, are Eigen's.
    """
    from jupyter_tfmem.estimator import _cpu_flags, onednn_on

    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return name if onednn_on(_cpu_flags(), None) else f"{name} (oneDNN off)"


def cpu_vendor_of(cpu: str) -> str | None:
    """The ``vendor_id`` of a CPU by its model name, where the name says it.

    ``--as-cpu`` estimates as on another CPU, and the cost model's reduction
    slowdown and a small-state loop's run-ahead follow the vendor: without
    it the estimate would take the vendor of the machine it runs on.
    """
    for mark, vendor in (("AMD", "AuthenticAMD"), ("Intel", "GenuineIntel")):
        if mark in cpu:
            return vendor
    return None


def machine_description(cpu: str | None = None) -> str:
    """This machine (``cpu``: the model of the one measured, if another) as the docs name it."""
    cpu = cpu or cpu_model()
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 2**20:.0f} GiB RAM"
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}"


def report_sections(summary: list[str], table: list[list[str]], header: list[str]) -> list[str]:
    """The Summary and Per case sections every accuracy page has, as Markdown lines."""
    from tabulate import tabulate

    return [
        "## Summary",
        "",
        *[f"- {line}" for line in summary],
        "",
        "## Per case",
        "",
        tabulate(table, headers=header, tablefmt="github", disable_numparse=True),
        "",
    ]


#: Measurements before the note named the CPU's own default say the build's;
#: they were all made where TF turns oneDNN on (the AVX2 EPYC's have their own
#: key and the newer note), so a page mixing both says it once.
_ONEDNN_NOTES = {
    "oneDNN: TF default (on for x86 Linux builds)": "oneDNN: TF default (on on this CPU)"
}


def write_docs(
    rows: list[dict[str, Any]],
    command: str,
    measured: dict[str, Any],
    path: Path = DOCS,
    env: dict[str, str] | None = None,
    as_cpu: tuple[str, list[str]] | None = None,
    left_out: list[str] | None = None,
    left_out_why: str = "TF could not run them here",
) -> None:
    """The accuracy page; ``as_cpu`` is (the CPU whose ground truth it is, its flags),
    ``left_out`` the cases asked for that have no ground truth, for ``left_out_why``."""
    devices = sorted({m.get("device", "?") for m in measured.values()})
    notes = sorted(
        {
            _ONEDNN_NOTES.get(n, n)
            for m in measured.values()
            for n in m.get("notes", [])
            if n.startswith("oneDNN")
        }
    )
    # a topped-up record says "<first day> and <last day>"
    dates = sorted(
        {day for m in measured.values() for day in m.get("measured_on", "?").split(" and ")}
    )
    text = [
        "# Accuracy",
        "",
        "Estimated peak (`jupyter_tfmem.estimate(...).peak_bytes`) against the peak of TF's",
        "own allocator over one steady-state step (`jupyter_tfmem.measure`: fresh process,",
        "BFC allocator, warm-up steps until the optimizer has applied an update (one",
        "step unless a loss scale skips it), `reset_memory_stats`, one step, read `peak`),",
        "median of several fresh processes (`runs`); with gradient accumulation over k steps, the",
        "peak over a whole cycle of k steps. The measured range is shown next to every",
        "error: an estimate inside it is as good as the ground truth allows. Estimates",
        "follow the CPU executor (the device measured here).",
        "",
        "Written by `benchmarks/accuracy.py`; do not edit by hand.",
        "",
        f"- Command: `{command}`",
        f"- Date: {_dt.date.today().isoformat()} (measured on {', '.join(dates)})",
        f"- Machine: {machine_description(as_cpu[0] if as_cpu else None)}",
        *(
            [
                f"- Estimated on {cpu_model()} as if on that machine (its CPU flags: "
                f"{', '.join(f'`{f}`' for f in as_cpu[1])}). TF's own graph passes in "
                "the estimating process still see this CPU's instructions, so a 16-bit "
                "case's row may differ from an estimate made there"
            ]
            if as_cpu
            else []
        ),
        *(
            [
                f"- Environment (measured and estimated in): "
                f"{', '.join(f'`{k}={v}`' for k, v in sorted(env.items()))}"
            ]
            if env
            else []
        ),
        *(
            [f"- Left out, {left_out_why}: {', '.join(f'`{n}`' for n in left_out)}"]
            if left_out
            else []
        ),
        f"- TensorFlow {tf_version()}, Keras {importlib.metadata.version('keras')}, "
        f"Python {platform.python_version()}; device {', '.join(devices)}; " + "; ".join(notes),
        "",
        *report_sections(summary_lines(rows), table_rows(rows), HEADER),
        "Error is (estimate - measured median) / measured median. *estimate s* is the time",
        "of one `estimate` call on a built model; *measure s* is the wall time of all",
        "measuring processes for the case (each imports TensorFlow and builds the model).",
        "*estimate's range* is `Footprint.peak_range`: the lowest and highest peak over the",
        "schedules TF's executor can take (concurrent kernels side by side or taking turns,",
        "the two orders of merged filter and input gradients, in-place sums starting late, a",
        "loop running ahead of its sums); *median in it* says whether TF's median falls",
        "inside. The views show the range when it is wider than "
        f"{RANGE_SHOWN:.0%} of the estimate.",
        "The baselines are described in `benchmarks/baselines.py`; the zoo in",
        "`jupyter_tfmem/zoo.py`.",
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text), encoding="utf-8")


# --------------------------------------------------------------------------


#: ``--truth-cpu`` lists every case up to this many, else only those over 10%
OTHER_CPU_LISTED = 30


def print_other_cpu(
    cpu: str, cases: list[ZooCase], estimates: dict[str, Any], env: dict[str, str]
) -> None:
    """The estimates' summary against another CPU's cached ground truth."""
    cache = load_cache(VARIANTS_CACHE if env else CACHE)
    scored = [c for c in cases if cache_key(c.name, env, cpu) in cache and not is_16bit(c)]
    print(f"\nagainst {cpu}'s ground truth ({len(scored)} cases without 16-bit kernels):")
    if not scored:
        print("  none of these cases is measured there: run accuracy.py on that CPU")
        return
    measured = {c.name: cache[cache_key(c.name, env, cpu)] for c in scored}
    rows = build_rows(scored, measured, estimates)
    print(f"  {summarize([r['error'] for r in rows])}")
    # every case of a short list; of a long one, those off by over 10%
    listed = [r for r in rows if r["error"] is not None]
    if len(listed) > OTHER_CPU_LISTED:
        listed = [r for r in listed if abs(r["error"]) > 0.10]
        print(f"  the {len(listed)} cases off by more than 10%:")
    for r in sorted(listed, key=lambda r: -abs(r["error"])):
        print(
            f"    {r['case']:40s} TF {r['measured'] / MIB:9.2f} MiB ({r['low'] / MIB:.2f} to "
            f"{r['high'] / MIB:.2f}, {r['runs']} runs)  estimate {r['estimate'] / MIB:9.2f}  "
            f"{r['error'] * 100:+6.1f}%"
        )


def parse_env(items: list[str]) -> dict[str, str]:
    env = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--env takes NAME=VALUE, got {item!r}")
        env[key] = value
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case names (default: the whole zoo)")
    parser.add_argument(
        "--runs",
        type=int,
        default=7,
        help="fresh processes per case (cached cases with fewer are topped up)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="cases measured at once")
    parser.add_argument("--remeasure", action="store_true", help="ignore cached measurements")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment to measure and estimate in (cached separately, no docs)",
    )
    parser.add_argument(
        "--docs",
        help="write the Markdown table here "
        "(default: docs/accuracy.md for a full, default-environment run)",
    )
    parser.add_argument(
        "--truth-cpu",
        action="append",
        default=[],
        metavar="CPU",
        help="also score against this CPU model's cached ground truth (16-bit cases left out)",
    )
    parser.add_argument(
        "--as-vendor",
        metavar="VENDOR_ID",
        help="estimate as if on a CPU of this vendor, e.g. GenuineIntel (no docs by default)",
    )
    parser.add_argument(
        "--as-cpu",
        metavar="CPU",
        help="score against this CPU model's cached ground truth instead of measuring here, "
        "estimating as on it (its vendor from its name unless --as-vendor says; needs "
        "--as-flags; docs only with --docs; cases it has no record of are left out and named)",
    )
    parser.add_argument(
        "--as-flags",
        metavar="FLAGS",
        help="comma-separated /proc/cpuinfo flags of the CPU to estimate as on, e.g. "
        "avx2,avx512f,avx512bw,avx512_vnni,avx512_bf16",
    )
    parser.add_argument("--measure-only", action="store_true", help="skip the estimates")
    parser.add_argument(
        "--save-estimates",
        metavar="PATH",
        help="also write each case's estimate, range and every schedule's peak as JSON "
        "(to score another choice of point estimate without estimating again)",
    )
    parser.add_argument("--estimate-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    names = args.cases.split(",") if args.cases else list(CASES)
    try:
        cases = [get_case(n.strip()) for n in names if n.strip()]
    except ValueError as exc:
        parser.error(str(exc))
    if args.estimate_worker:
        estimate_worker([c.name for c in cases], args.out)
        return 0
    if args.runs < 1 or args.jobs < 1:
        parser.error("--runs and --jobs must be at least 1")
    env = parse_env(args.env)

    if bool(args.as_cpu) != bool(args.as_flags):
        parser.error("--as-cpu and --as-flags go together")
    flags = [f.strip() for f in args.as_flags.split(",") if f.strip()] if args.as_flags else None
    cache_path = VARIANTS_CACHE if env else CACHE
    print(f"ground truth for {len(cases)} case(s) (cache: {cache_path.relative_to(ROOT)})")
    if args.as_cpu:
        measured = cached_elsewhere(cases, args.as_cpu, env)
        if not measured:
            parser.error(f"no case asked for has ground truth from {args.as_cpu!r} in the cache")
        why = f"not measured on {args.as_cpu}"
    else:
        measured = ensure_measured(cases, args.runs, args.jobs, args.remeasure, env)
        why = "TF could not run them here"
    unmeasured = [c.name for c in cases if c.name not in measured]
    if unmeasured:
        print(f"left out, {why}: {', '.join(unmeasured)}")
        cases = [c for c in cases if c.name in measured]
    if args.measure_only:
        estimates: dict[str, Any] = {}
    else:
        print("estimating in a child process...", flush=True)
        vendor = args.as_vendor or (cpu_vendor_of(args.as_cpu) if args.as_cpu else None)
        estimates = run_estimates([c.name for c in cases], env, vendor, flags)
        if args.save_estimates:
            Path(args.save_estimates).write_text(json.dumps(estimates, indent=1), encoding="utf-8")
    rows = build_rows(cases, measured, estimates)
    print()
    print_report(rows)
    if not args.measure_only:
        for cpu in args.truth_cpu:
            print_other_cpu(cpu, cases, estimates, env)

    default_docs = not args.cases and not env and not args.as_vendor and not args.as_cpu
    docs = Path(args.docs) if args.docs else (DOCS if default_docs else None)
    if docs is not None and not args.measure_only:
        command = "python benchmarks/accuracy.py " + shlex.join(
            argv if argv is not None else sys.argv[1:]
        )
        as_cpu = (args.as_cpu, flags) if args.as_cpu and flags else None
        write_docs(rows, command.strip(), measured, docs, env, as_cpu, unmeasured, why)
        print(f"\nwrote {docs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
