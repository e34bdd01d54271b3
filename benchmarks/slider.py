"""The batch-size slider's figures: ``Footprint.at(m)`` against TF's peak measured at ``m``.

    python benchmarks/slider.py                 # every pair; writes docs/accuracy-slider.md
    python benchmarks/slider.py --cases mlp_sgd # pairs whose base or moved case is named

The panel's slider and ``max_batch_size`` do not trace again: they read
``Footprint.at(m)`` from the estimate made at the batch the user asked for.
For every zoo case that differs from another only in its batch size (``x``
and ``x_b128``), this estimates ``x`` at its own batch, moves it to the other
case's batch with ``at()``, and compares that with the other case's measured
peak (cached by ``accuracy.py``) and with a fresh estimate at that batch.  A
gap between ``at()`` and the fresh estimate is what the slider loses by not
tracing again.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import importlib.metadata
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from accuracy import (  # noqa: E402
    cache_key,
    load_cache,
    machine_description,
    rel_error,
    report_sections,
    summarize,
    tf_version,
)

from jupyter_tfmem.zoo import CASES, ZooCase  # noqa: E402

DOCS = ROOT / "docs" / "accuracy-slider.md"
MIB = 2**20
HEADER = [
    "moved case",
    "from batch",
    "to batch",
    "at() MiB",
    "fresh estimate MiB",
    "measured MiB",
    "at() error",
    "fresh error",
    "at() - fresh",
]


def batch_pairs(cases: dict[str, ZooCase]) -> list[tuple[ZooCase, ZooCase]]:
    """(base, moved): cases alike in everything but the batch, named ``base`` and ``base_bN``."""
    pairs = []
    for name, case in cases.items():
        match = re.fullmatch(r"(.+)_b(\d+)", name)
        base = cases.get(match.group(1)) if match else None
        if base is None or base.batch_size == case.batch_size:
            continue
        same = dataclasses.replace(
            case, name=base.name, batch_size=base.batch_size, description=base.description
        )
        if same == base:
            pairs.append((base, case))
    return pairs


def run(pairs: list[tuple[ZooCase, ZooCase]], measured: dict[str, Any]) -> list[dict[str, Any]]:
    bases: dict[str, Any] = {}
    rows = []
    for base, moved in pairs:
        record = measured.get(cache_key(moved.name, {}))
        if record is None:
            print(f"  {moved.name}: not measured (run accuracy.py first), skipped", flush=True)
            continue
        if base.name not in bases:
            bases[base.name] = base.estimate()
        started = time.perf_counter()
        at = bases[base.name].at(moved.batch_size).peak_bytes
        at_seconds = time.perf_counter() - started
        fresh = moved.estimate().peak_bytes
        peak = record["peak_bytes"]
        row = {
            "case": moved.name,
            "from": base.batch_size,
            "to": moved.batch_size,
            "at": at,
            "fresh": fresh,
            "measured": peak,
            "at_error": rel_error(at, peak),
            "fresh_error": rel_error(fresh, peak),
            "at_seconds": at_seconds,
        }
        rows.append(row)
        print(
            f"  {moved.name:34s} {base.batch_size:>5} -> {moved.batch_size:<5} "
            f"at {at / MIB:8.1f}  fresh {fresh / MIB:8.1f}  measured {peak / MIB:8.1f}  "
            f"at() {row['at_error']:+.1%}  fresh {row['fresh_error']:+.1%}",
            flush=True,
        )
    return rows


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            r["case"],
            str(r["from"]),
            str(r["to"]),
            f"{r['at'] / MIB:.1f}",
            f"{r['fresh'] / MIB:.1f}",
            f"{r['measured'] / MIB:.1f}",
            f"{r['at_error']:+.1%}",
            f"{r['fresh_error']:+.1%}",
            f"{(r['at'] - r['fresh']) / r['fresh']:+.1%}",
        ]
        for r in rows
    ]


def summary_lines(rows: list[dict[str, Any]]) -> list[str]:
    same = sum(r["at"] == r["fresh"] for r in rows)
    return [
        f"`at()`: {summarize([r['at_error'] for r in rows])}",
        f"fresh estimate at the moved batch: {summarize([r['fresh_error'] for r in rows])}",
        f"`at()` equal to the fresh estimate to the byte in {same} of {len(rows)}",
    ]


def write_docs(rows: list[dict[str, Any]], command: str) -> None:
    text = [
        "# Accuracy of the batch-size slider",
        "",
        "The panel's slider, `max_batch_size` and `Footprint.at(m)` move an estimate to",
        "another batch size without tracing again: tensor sizes are linear in the batch,",
        "and the allocator model was run at the estimated batch and at every power of two",
        "up to 16 times it (interpolated between). For every zoo case that differs from",
        "another only in its batch, the other case's estimate is moved to its batch and",
        "compared with its measured peak (the same ground truth as",
        "[accuracy.md](accuracy.md)) and with a fresh estimate at that batch. A gap",
        "between `at()` and the fresh estimate comes from a graph Grappler writes",
        "differently at the other batch, which `at()` does not see.",
        "",
        "Written by `benchmarks/slider.py`; do not edit by hand.",
        "",
        f"- Command: `{command}`",
        f"- Date: {_dt.date.today().isoformat()}",
        f"- Machine: {machine_description()}",
        f"- TensorFlow {tf_version()}, Keras {importlib.metadata.version('keras')}, "
        f"Python {platform.python_version()}",
        "",
        *report_sections(summary_lines(rows), table_rows(rows), HEADER),
    ]
    DOCS.write_text("\n".join(text), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", default="", help="comma-separated zoo cases (base or moved); default: every pair"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    pairs = batch_pairs(CASES)
    if args.cases:
        wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
        unknown = wanted - set(CASES)
        if unknown:
            parser.error(f"unknown zoo cases: {', '.join(sorted(unknown))}")
        pairs = [(b, m) for b, m in pairs if b.name in wanted or m.name in wanted]
        if not pairs:
            parser.error("none of those cases has a batch-size twin in the zoo")
    rows = run(pairs, load_cache())
    print()
    for line in summary_lines(rows):
        print(line)
    if not args.cases and rows and len(rows) == len(pairs):
        write_docs(rows, "python benchmarks/slider.py")
        print(f"wrote {DOCS}")
    elif not args.cases:
        # the ground truth is per CPU: a part of it does not make the page
        print(f"{DOCS} not written: {len(rows)} of {len(pairs)} pairs measured on this CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
