"""JSON-ready form of a Footprint: the contract of ``to_dict`` and the MIME bundle.

The browser renderer recomputes totals for any batch size from ``lines`` and
``slack`` exactly as :meth:`Footprint.at` does: pick the line with the largest
``a + b * batch``; a category or layer is ``a + b * batch`` on that line; then
add the allocator slack, interpolated linearly in log2(batch) between the
``slack`` points (held flat outside them), per category, to the category and
to the "(allocator rounding and fragmentation)" layer row.

``peak_range`` is the lowest and highest allocator peak over the schedules
TF's executor can take.  At another batch it is recomputed from ``scenarios``:
each scenario's peak is its largest ``a + b * batch`` over ``lines`` plus its
``slack`` (bytes at a few batch sizes, interpolated as above), rounded; the
range is the smallest and largest of those and ``peak_bytes``.  A report
without ``scenarios`` has one schedule: the range is ``peak_bytes`` twice.

``batch_size`` is the global batch; with ``replicas`` > 1 (data parallelism)
every figure is one device's, and the arithmetic above runs at the device's
share ``ceil(batch / replicas)`` (``device_batch_size``), as ``Footprint.at``
does.  A report without ``replicas`` means 1.

``fixed_batch`` (null when absent) is the only batch the model runs at, a
stateful layer's: its lines are flat, and the renderer shows that batch only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..footprint import CATEGORIES, CATEGORY_LABELS

if TYPE_CHECKING:
    from ..footprint import Footprint

MIME_TYPE = "application/vnd.jupyter-tfmem+json"
SCHEMA_VERSION = 1


def footprint_to_dict(fp: Footprint) -> dict[str, Any]:
    cats = fp.categories
    return {
        "schema_version": SCHEMA_VERSION,
        "model_name": fp.model_name,
        "batch_size": fp.batch_size,
        "replicas": fp.replicas,
        "device_batch_size": fp.device_batch_size,
        "fixed_batch": fp.fixed_batch,
        "training": fp.training,
        "optimizer": fp.optimizer,
        "precision": fp.precision,
        "executor": fp.executor,
        "peak_bytes": fp.peak_bytes,
        "peak_range": list(fp.peak_range),
        "overhead_bytes": fp.overhead_bytes,
        "total_bytes": fp.total_bytes,
        "categories": {
            cat: {
                "label": CATEGORY_LABELS[cat],
                "bytes": cats[cat].bytes,
                "grows_with_batch": cats[cat].grows_with_batch,
            }
            for cat in CATEGORIES
        },
        "layers": [
            {
                "name": row.name,
                "class_name": row.class_name,
                "output_shape": row.output_shape,
                "output_shape_template": info.output_shape,
                "params": row.params,
                "bytes": dict(row.bytes),
                "total": row.total,
                "share": row.share,
            }
            for row, info in zip(fp.layers, fp.layer_info, strict=True)
        ],
        "lines": [
            {
                "a": line.a,
                "b": line.b,
                "categories": {k: list(v) for k, v in line.categories.items()},
                "layers": {
                    name: {k: list(v) for k, v in coefs.items()}
                    for name, coefs in line.layers.items()
                },
            }
            for line in fp.lines
        ],
        "slack": [{"batch_size": n, "categories": dict(cats)} for n, cats in fp.slack],
        "scenarios": [
            {
                "label": sc.label,
                "lines": [[a, b] for a, b in sc.lines],
                "slack": [{"batch_size": n, "bytes": v} for n, v in sc.slack],
            }
            for sc in fp.scenarios
        ],
        "overhead": [{"name": o.name, "bytes": o.bytes, "source": o.source} for o in fp.overhead],
        "notes": list(fp.notes),
    }
