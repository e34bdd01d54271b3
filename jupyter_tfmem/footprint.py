"""The Footprint: the one data model every view reads.

A step's memory is a sum of tensors whose sizes are all ``a + b * batch``
(shapes are linear in the batch dimension), so the allocator's peak over a
fixed op order is the maximum of a few straight lines.  The engine keeps only
the lines that can be the maximum for some batch size (the upper envelope),
each with its own breakdown by category and by layer.  ``at()`` then answers
for any batch size with a handful of multiplications, and the JupyterLab
renderer does the same arithmetic in the browser from ``to_dict()``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Categories in display order.  "device_overhead" is outside TF's allocator.
CATEGORIES: tuple[str, ...] = (
    "parameters",
    "gradients",
    "optimizer_state",
    "activations",
    "input_batch",
    "temporaries",
    "device_overhead",
)

CATEGORY_LABELS: dict[str, str] = {
    "parameters": "Parameters",
    "gradients": "Gradients",
    "optimizer_state": "Optimizer state",
    "activations": "Activations",
    "input_batch": "Input batch",
    "temporaries": "Temporaries",
    "device_overhead": "Device overhead",
}

#: The per-layer table's row for what the allocator counts beyond the requests.
ALLOCATOR_ROW_NAME = "(allocator rounding and fragmentation)"

#: Largest batch size ``max_batch_size`` reports when memory never runs out.
MAX_BATCH_SIZE_CAP = 2**31 - 1

Coef = tuple[float, float]  # (a, b): bytes = a + b * batch_size


@dataclasses.dataclass(frozen=True)
class PeakLine:
    """One candidate peak moment of the step, as a line in the batch size.

    ``categories`` and ``layers`` split ``(a, b)`` so that they sum to it.
    """

    a: float
    b: float
    categories: Mapping[str, Coef]
    layers: Mapping[str, Mapping[str, Coef]]

    def bytes_at(self, batch_size: int) -> float:
        return self.a + self.b * batch_size


@dataclasses.dataclass(frozen=True)
class PeakScenario:
    """The same step's peak under another schedule TF's executor can take.

    Which of two concurrent kernels runs first, whether they share the cores
    or take turns, and how far a loop runs ahead of its sums are decided by
    thread timing, which changes from process to process (docs/engine.md).
    The estimate follows one schedule; each scenario keeps another one's
    peak as lines in the batch size (``(a, b)`` pairs) and its allocator
    slack as ``(batch, bytes)`` points, so ``Footprint.peak_range`` moves
    along the batch axis as cheaply as ``peak_bytes`` does.
    """

    label: str
    lines: tuple[Coef, ...]
    slack: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        if not self.lines:
            raise ValueError(f"scenario {self.label!r} needs at least one peak line")

    def bytes_at(self, batch_size: int) -> float:
        top = max(a + b * batch_size for a, b in self.lines)
        return top + interpolate_log2(self.slack, batch_size)


@dataclasses.dataclass(frozen=True)
class LayerInfo:
    """What a layer is, independent of the batch size."""

    name: str
    class_name: str
    output_shape: str  # with "B" standing for the batch dimension
    params: int
    calls: int = 1


@dataclasses.dataclass(frozen=True)
class OverheadItem:
    """A constant a GPU needs outside TF's allocator, with where it comes from."""

    name: str
    bytes: int
    source: str


@dataclasses.dataclass(frozen=True)
class CategoryBytes:
    bytes: int
    grows_with_batch: bool
    label: str = ""


@dataclasses.dataclass(frozen=True)
class LayerRow:
    name: str
    class_name: str
    output_shape: str
    params: int
    bytes: Mapping[str, int]
    total: int
    share: float  # of peak_bytes, 0..1


@dataclasses.dataclass(frozen=True)
class Footprint:
    """Estimated memory of one training or inference step at one batch size.

    Build it with :func:`jupyter_tfmem.estimate`; move along the batch axis with
    :meth:`at`.  Every number a view shows comes from here.
    """

    model_name: str
    batch_size: int
    training: bool
    optimizer: str | None
    precision: str
    lines: tuple[PeakLine, ...]
    layer_info: tuple[LayerInfo, ...]
    overhead: tuple[OverheadItem, ...] = ()
    notes: tuple[str, ...] = ()
    executor: str = "tf-executor"
    #: BFC slack by category at a few batch sizes, ``((batch, {cat: bytes}), ...)``;
    #: between them it is interpolated linearly in log2(batch), outside held flat.
    slack: tuple[tuple[int, Mapping[str, float]], ...] = ()
    #: Data-parallel replicas (devices) the global ``batch_size`` is split over.
    #: Every figure is per device, at ``device_batch_size``; ``lines`` and
    #: ``slack`` are in the per-device batch.  1: a single device.
    replicas: int = 1
    #: Other schedules of the same step (``PeakScenario``), in the per-device batch.
    scenarios: tuple[PeakScenario, ...] = ()
    #: The only batch the model runs at (a stateful RNN's state fixes it), or
    #: ``None``.  Its lines are flat: nothing was traced at another batch.
    fixed_batch: int | None = None

    def __post_init__(self) -> None:
        _check_batch_size(self.batch_size)
        check_replicas(self.replicas)
        if not self.lines:
            raise ValueError("a Footprint needs at least one peak line")
        labels = [s.label for s in self.scenarios]
        if len(set(labels)) != len(labels):
            raise ValueError(f"scenario labels must be unique, got {labels}")
        if self.fixed_batch is not None and self.fixed_batch != self.batch_size:
            raise ValueError(
                f"fixed_batch {self.fixed_batch} must be the batch_size, {self.batch_size}"
            )

    # -- the numbers -----------------------------------------------------
    @property
    def device_batch_size(self) -> int:
        """Samples each device runs: the global batch split over the replicas, rounded up.

        A global batch that does not divide evenly leaves some replicas one
        sample more; the largest share is the one that must fit.
        """
        return -(-int(self.batch_size) // self.replicas)

    @property
    def _line(self) -> PeakLine:
        n = self.device_batch_size
        return max(self.lines, key=lambda line: line.bytes_at(n))

    def _slack_at(self, n: int) -> dict[str, float]:
        return interpolate_slack(self.slack, n)

    @property
    def peak_bytes(self) -> int:
        """Peak of TF's allocator over one steady-state step (per device)."""
        n = self.device_batch_size
        slack = self._slack_at(n)
        return round(self._line.bytes_at(n) + sum(slack.get(c, 0.0) for c in CATEGORIES))

    @property
    def peak_range(self) -> tuple[int, int]:
        """Lowest and highest allocator peak over the schedules TF can take (per device).

        ``peak_bytes`` is always inside it; the two are equal when the step
        has one schedule (one inter-op thread, XLA, or no concurrent kernels
        whose order matters).  The notes say which schedule gives each end.
        """
        peaks = [self.peak_bytes, *self.scenario_peaks.values()]
        return min(peaks), max(peaks)

    @property
    def total_range(self) -> tuple[int, int]:
        """``peak_range`` plus the device overhead: what must fit on the card, per schedule."""
        low, high = self.peak_range
        return low + self.overhead_bytes, high + self.overhead_bytes

    @property
    def scenario_peaks(self) -> dict[str, int]:
        """Each other schedule's allocator peak at this batch, by label (per device)."""
        n = self.device_batch_size
        return {s.label: round(s.bytes_at(n)) for s in self.scenarios}

    @property
    def overhead_bytes(self) -> int:
        return sum(item.bytes for item in self.overhead)

    @property
    def total_bytes(self) -> int:
        """``peak_bytes`` plus what a GPU holds outside TF's allocator."""
        return self.peak_bytes + self.overhead_bytes

    @property
    def categories(self) -> dict[str, CategoryBytes]:
        line = self._line
        n = self.device_batch_size
        slack = self._slack_at(n)
        out: dict[str, CategoryBytes] = {}
        for cat in CATEGORIES:
            if cat == "device_overhead":
                out[cat] = CategoryBytes(self.overhead_bytes, False, CATEGORY_LABELS[cat])
                continue
            a, b = line.categories.get(cat, (0.0, 0.0))
            value = a + b * n + slack.get(cat, 0.0)
            out[cat] = CategoryBytes(round(value), b > 0, CATEGORY_LABELS[cat])
        return out

    @property
    def layers(self) -> list[LayerRow]:
        line = self._line
        n = self.device_batch_size
        peak = max(self.peak_bytes, 1)
        rows = []
        slack = self._slack_at(n)
        for info in self.layer_info:
            if info.name == ALLOCATOR_ROW_NAME:
                by_cat = {cat: round(v) for cat, v in slack.items() if v}
            else:
                coefs = line.layers.get(info.name, {})
                by_cat = {cat: round(a + b * n) for cat, (a, b) in coefs.items() if a or b}
            total = sum(by_cat.values())
            rows.append(
                LayerRow(
                    name=info.name,
                    class_name=info.class_name,
                    output_shape=info.output_shape.replace("B", str(n)),
                    params=info.params,
                    bytes=by_cat,
                    total=total,
                    share=total / peak,
                )
            )
        return rows

    @property
    def grows_with_batch(self) -> dict[str, bool]:
        return {cat: c.grows_with_batch for cat, c in self.categories.items()}

    def at(self, batch_size: int) -> Footprint:
        """The same model at another batch size, without tracing again.

        ``batch_size`` means what ``estimate`` took: the global batch, split
        over ``replicas`` devices as before.  A model with a ``fixed_batch``
        has no other batch to move to.
        """
        _check_batch_size(batch_size)
        if self.fixed_batch is not None and int(batch_size) != self.fixed_batch:
            raise ValueError(
                f"{self.model_name!r} runs at batch {self.fixed_batch} only (a stateful "
                f"layer's state fixes it), so it has no footprint at batch {batch_size}; "
                "build the model with batch_shape=(n, ...) and estimate that"
            )
        return dataclasses.replace(self, batch_size=int(batch_size))

    def with_overhead(self, items: Sequence[OverheadItem]) -> Footprint:
        """The same footprint with another device overhead (e.g. ``calibrate_overhead``'s).

        Only ``total_bytes`` and the device overhead category change: the
        overhead lies outside TF's allocator, so ``peak_bytes`` stays.  ``at()``
        keeps the new overhead, since it is a constant of the card, not the batch.
        """
        if isinstance(items, OverheadItem):
            items = (items,)
        items = tuple(items)
        for item in items:
            if not isinstance(item, OverheadItem):
                raise TypeError(
                    f"overhead items must be OverheadItem (see calibrate_overhead), "
                    f"not {type(item).__name__}"
                )
            if isinstance(item.bytes, bool) or not isinstance(item.bytes, int) or item.bytes < 0:
                raise ValueError(f"overhead {item.name!r} must be a whole number of bytes >= 0")
        return dataclasses.replace(self, overhead=items)

    def max_batch_size(self, memory_bytes: int | float, *, schedule: str = "estimate") -> int:
        """Largest batch whose ``total_bytes`` fits in ``memory_bytes`` (0 if none).

        ``schedule="top"`` sizes for the top of ``peak_range`` (plus the
        device overhead) instead: the batch that fits whichever schedule
        TF's threads take, not only the estimate's.  With ``replicas`` > 1
        this is the largest global batch whose per-device share fits a card
        of ``memory_bytes``.  A model with a ``fixed_batch`` fits at that
        batch or not at all.
        """
        if isinstance(memory_bytes, bool) or not isinstance(memory_bytes, (int, float)):
            raise TypeError("memory_bytes must be a number of bytes, e.g. 16 * 2**30")
        if math.isnan(memory_bytes) or memory_bytes < 0:
            raise ValueError("memory_bytes must be a non-negative number of bytes")
        if schedule == "estimate":

            def fits(n: int) -> bool:
                return self.at(n).total_bytes <= memory_bytes
        elif schedule == "top":

            def fits(n: int) -> bool:
                return self.at(n).total_range[1] <= memory_bytes
        else:
            raise ValueError(f'schedule must be "estimate" or "top", got {schedule!r}')
        if self.fixed_batch is not None:
            return self.fixed_batch if fits(self.fixed_batch) else 0
        if not fits(1):
            return 0
        # Every schedule's peak grows with the batch: double, then bisect.
        lo, hi = 1, 2
        while hi < MAX_BATCH_SIZE_CAP and fits(hi):
            lo, hi = hi, min(hi * 2, MAX_BATCH_SIZE_CAP)
        if hi == MAX_BATCH_SIZE_CAP and fits(hi):
            return MAX_BATCH_SIZE_CAP
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid
        return lo

    # -- views -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        from .views.data import footprint_to_dict

        return footprint_to_dict(self)

    def to_markdown(self) -> str:
        from .views.text import footprint_to_markdown

        return footprint_to_markdown(self)

    def to_text(self) -> str:
        from .views.text import footprint_to_text

        return footprint_to_text(self)

    def _repr_markdown_(self) -> str:
        from .views.text import footprint_report_markdown

        return footprint_report_markdown(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Our own MIME type (rendered by the JupyterLab extension) with fallbacks."""
        from .views.mime import mime_bundle

        return mime_bundle(self)

    def _repr_html_(self) -> str:
        from .views.html import footprint_to_html

        return footprint_to_html(self)

    def __repr__(self) -> str:
        return (
            f"Footprint(model={self.model_name!r}, batch_size={self.batch_size}, "
            f"training={self.training}, "
            + (f"replicas={self.replicas}, " if self.replicas != 1 else "")
            + f"peak_bytes={self.peak_bytes}, "
            f"total_bytes={self.total_bytes})"
        )


def interpolate_slack(
    points: Sequence[tuple[int, Mapping[str, float]]], n: int
) -> dict[str, float]:
    """Allocator slack at batch ``n``: linear in log2(batch) between known points."""
    if not points:
        return {}
    if n >= points[-1][0]:  # the last point itself, not the end of an interval
        return dict(points[-1][1])
    i, t = _log2_position([m for m, _ in points], n)
    if t is None:
        return dict(points[i][1])
    s0, s1 = points[i][1], points[i + 1][1]
    # category order fixed so sums are reproducible to the last bit
    cats = [c for c in CATEGORIES if c in s0 or c in s1]
    return {c: s0.get(c, 0.0) + t * (s1.get(c, 0.0) - s0.get(c, 0.0)) for c in cats}


def interpolate_log2(points: Sequence[tuple[int, float]], n: int) -> float:
    """One number known at a few batch sizes, at batch ``n``, as ``interpolate_slack``."""
    if not points:
        return 0.0
    i, t = _log2_position([m for m, _ in points], n)
    if t is None:
        return float(points[i][1])
    v0, v1 = points[i][1], points[i + 1][1]
    return v0 + t * (v1 - v0)


def _log2_position(batches: Sequence[int], n: int) -> tuple[int, float | None]:
    """Where ``n`` falls among increasing ``batches``: ``(i, t)``, ``n`` at ``t`` of the way
    from ``batches[i]`` to ``batches[i + 1]`` in log2; ``t`` None outside, held at ``batches[i]``.

    The first interval that holds ``n`` is taken, so a batch on an inner point is
    reached with ``t == 1``; the renderer (labextension/src/report.ts) does the same.
    """
    if n <= batches[0]:
        return 0, None
    for i, (n0, n1) in enumerate(itertools.pairwise(batches)):
        if n0 <= n <= n1:
            return i, (math.log2(n) - math.log2(n0)) / (math.log2(n1) - math.log2(n0))
    return len(batches) - 1, None


def _check_batch_size(batch_size: Any) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        if hasattr(batch_size, "__index__"):
            return
        raise TypeError(f"batch_size must be a positive integer, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def check_replicas(replicas: Any) -> int:
    """``replicas`` as a positive int, or a TypeError/ValueError saying what is wanted."""
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        if hasattr(replicas, "__index__") and not isinstance(replicas, bool):
            replicas = int(replicas.__index__())
        else:
            raise TypeError(
                f"replicas must be a whole number of devices such as 2, got {replicas!r}"
            )
    if replicas < 1:
        raise ValueError(
            f"replicas must be at least 1 (the number of GPUs the batch is split over), "
            f"got {replicas}"
        )
    return int(replicas)
