"""Markdown and plain-text views of a Footprint.

The per-layer table is built once here (``layer_table``) and rendered by the
Markdown, text and HTML views and by the panel, so they cannot disagree.
Layer and model names are untrusted: a name like ``a|b`` or ``<img ...>``
must not break a table or inject markup, so every cell goes through
``escape_markdown`` (Markdown) or ``html.escape`` (HTML).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tabulate import tabulate

from ..footprint import CATEGORIES, CATEGORY_LABELS, MAX_BATCH_SIZE_CAP
from .format import (
    format_bytes,
    format_count,
    format_gib,
    format_share,
    format_signed_percent,
)

if TYPE_CHECKING:
    from ..footprint import Footprint
    from ..gpus import Gpu

#: Allocator categories; device overhead lives outside TF's allocator, so it
#: is not in the per-layer table (it belongs to no layer).
ALLOCATOR_CATEGORIES: tuple[str, ...] = tuple(c for c in CATEGORIES if c != "device_overhead")

#: Cards quoted when a report is rendered without a chosen GPU.
REFERENCE_GPUS: tuple[str, ...] = ("T4 16 GB", "A100 40 GB", "A100 80 GB", "H100 80 GB")

ORDERS: dict[str, str] = {
    "model": "Model order",
    "total": "Largest first",
    "params": "Most parameters first",
}

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
# Text without any of these needs no escaping (the common case: names like conv2d_3).
_NEEDS_ESCAPE_RE = re.compile(
    r"[\x00-\x1f\x7f\u2028\u2029\\`*\[\]<>|~$&]"  # control characters, specials
    r"|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"  # an underscore at a word's edge
    r"|^[#+\-=!]|^\d+[.)](?:\s|$)|^\s|\s$"  # line starts; whitespace to strip
)
# CommonMark lets any ASCII punctuation be backslash-escaped; these are the
# ones that start markup anywhere, split a table cell or start math in JupyterLab.
_MARKDOWN_SPECIAL_RE = re.compile(r"([\\`*\[\]<>|~$&])")
# An underscore inside a word (dense_1) never starts emphasis in CommonMark.
_EDGE_UNDERSCORE_RE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# ... and these only at the start of a line (headings, lists, block quotes).
_MARKDOWN_LEADING_RE = re.compile(r"^([#+\-=!]|\d+(?=[.)](?:\s|$)))")


def clean_text(text: object) -> str:
    """One line of text: control characters (newlines, tabs, escapes) become spaces."""
    return _CONTROL_RE.sub(" ", str(text)).strip()


def escape_markdown(text: object) -> str:
    """Text that renders literally inside a Markdown paragraph or table cell."""
    text = str(text)
    if _NEEDS_ESCAPE_RE.search(text) is None:
        return text
    escaped = _MARKDOWN_SPECIAL_RE.sub(r"\\\1", clean_text(text))
    escaped = _EDGE_UNDERSCORE_RE.sub(r"\\_", escaped)
    match = _MARKDOWN_LEADING_RE.match(escaped)
    if match is None:
        return escaped
    if match.group(1)[0].isdigit():  # "1. x" would start a list: escape the dot
        end = match.end()
        return escaped[:end] + "\\" + escaped[end:]
    return "\\" + escaped


# -- the shared per-layer table ------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TableRow:
    """One row of the per-layer table; ``kind`` is "layer", "other" or "total"."""

    name: str
    class_name: str
    output_shape: str
    params: int | None
    bytes: Mapping[str, int]
    total: int
    share: float
    kind: str = "layer"


def table_categories(fp: Footprint) -> list[str]:
    """Allocator categories that are non-zero on some peak line.

    Taken over all lines, not just the current one, so the columns do not
    jump when the batch-size slider crosses from one peak moment to another.
    """
    used = set()
    for line in fp.lines:
        for cat, (a, b) in line.categories.items():
            if a or b:
                used.add(cat)
        for coefs in line.layers.values():
            for cat, (a, b) in coefs.items():
                if a or b:
                    used.add(cat)
    return [cat for cat in ALLOCATOR_CATEGORIES if cat in used]


def layer_table(fp: Footprint, order: str = "model") -> list[TableRow]:
    """Layer rows, then what belongs to no layer (e.g. the input batch), then the total.

    The total row is the allocator peak, so shares add up to 100%.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {sorted(ORDERS)}, got {order!r}")
    cats = table_categories(fp)
    rows = [
        TableRow(r.name, r.class_name, r.output_shape, r.params, dict(r.bytes), r.total, r.share)
        for r in fp.layers
    ]
    if order == "total":
        rows.sort(key=lambda r: -r.total)
    elif order == "params":
        rows.sort(key=lambda r: -r.params if r.params is not None else 0)
    peak = fp.peak_bytes
    fp_cats = fp.categories
    other_bytes = {cat: fp_cats[cat].bytes - sum(r.bytes.get(cat, 0) for r in rows) for cat in cats}
    other_total = peak - sum(r.total for r in rows)
    out = list(rows)
    # each cell is rounded to whole bytes on its own, so a few bytes may not add up;
    # only a remainder beyond that rounding is memory that belongs to no layer
    slack = len(rows) * (len(cats) + 1) // 2 + 1
    if max((abs(v) for v in (other_total, *other_bytes.values())), default=0) > slack:
        out.append(
            TableRow(
                "(not in a layer)",
                "",
                "",
                None,
                other_bytes,
                other_total,
                other_total / peak if peak else 0.0,
                "other",
            )
        )
    out.append(
        TableRow(
            "Total (allocator peak)",
            "",
            "",
            sum(r.params for r in rows),
            {cat: fp_cats[cat].bytes for cat in cats},
            peak,
            1.0 if peak else 0.0,
            "total",
        )
    )
    return out


def table_headers(fp: Footprint) -> list[str]:
    cats = table_categories(fp)
    return [
        "Layer",
        "Class",
        "Output shape",
        "Params",
        *(CATEGORY_LABELS[c] for c in cats),
        "Total",
        "Share",
    ]


def table_cells(fp: Footprint, row: TableRow, cats: list[str] | None = None) -> list[str]:
    """A row as display strings (not escaped: each renderer escapes its own way).

    Pass ``cats`` (``table_categories(fp)``) when rendering many rows.
    """
    if cats is None:
        cats = table_categories(fp)
    return [
        row.name,
        row.class_name,
        row.output_shape,
        "" if row.params is None else format_count(row.params),
        *(format_bytes(row.bytes[c]) if row.bytes.get(c) else "" for c in cats),
        format_bytes(row.total),
        format_share(row.share),
    ]


def _column_alignment(fp: Footprint) -> tuple[str, ...]:
    n_cats = len(table_categories(fp))
    return ("left", "left", "left", *("right",) * (n_cats + 3))


def footprint_to_markdown(fp: Footprint, order: str = "model") -> str:
    """The per-layer table as GitHub-flavoured Markdown, for copying into an issue or a doc."""
    cats = table_categories(fp)
    rows = [[escape_markdown(c) for c in table_cells(fp, r, cats)] for r in layer_table(fp, order)]
    headers = [escape_markdown(h) for h in table_headers(fp)]
    return tabulate(
        rows,
        headers=headers,
        tablefmt="github",
        disable_numparse=True,
        colalign=_column_alignment(fp),
    )


# -- the headline, shared by every view -------------------------------------
@dataclasses.dataclass(frozen=True)
class Summary:
    """The numbers of the headline, read from a Footprint and a card."""

    model_name: str
    batch_size: int
    mode: str  # "training step" / "inference step"
    settings: str  # "optimizer adam, precision float32"
    total_bytes: int
    peak_bytes: int
    overhead_bytes: int
    gpu_name: str | None
    gpu_bytes: int | None
    fits: bool | None
    max_batch: int | None


def summarize(fp: Footprint, gpu: Gpu | None = None) -> Summary:
    settings = []
    if fp.training:
        settings.append(f"optimizer {fp.optimizer or 'default'}")
    settings.append(f"precision {fp.precision}")
    if fp.replicas > 1:
        # Same words as the JupyterLab renderer's (labextension/src/view.ts).
        settings.append(f"data parallel over {fp.replicas} devices, per-device figures")
    return Summary(
        model_name=fp.model_name,
        batch_size=fp.batch_size,
        mode="training step" if fp.training else "inference step",
        settings=", ".join(settings),
        total_bytes=fp.total_bytes,
        peak_bytes=fp.peak_bytes,
        overhead_bytes=fp.overhead_bytes,
        gpu_name=gpu.name if gpu else None,
        gpu_bytes=gpu.memory_bytes if gpu else None,
        fits=(fp.total_bytes <= gpu.memory_bytes) if gpu else None,
        max_batch=fp.max_batch_size(gpu.memory_bytes) if gpu else None,
    )


def headline_sentences(fp: Footprint, gpu: Gpu | None = None) -> list[str]:
    """The headline as plain sentences; renderers escape and emphasise."""
    s = summarize(fp, gpu)
    out = [
        f"{format_bytes(s.total_bytes)} for one {s.mode} of {clean_text(s.model_name)} "
        f"at batch {s.batch_size} ({s.settings}): {format_bytes(s.peak_bytes)} at the peak "
        f"of TF's allocator + {format_bytes(s.overhead_bytes)} outside it."
    ]
    spread = range_sentence(fp)
    if spread:
        out[0] += " " + spread
    if gpu is not None:
        out.append(fit_sentence(fp, gpu))
    else:
        out.append(reference_cards_sentence(fp))
    return out


#: ``peak_range`` is shown when it spans more than this share of the peak.
RANGE_SHOWN = 0.05


def shows_range(fp: Footprint) -> bool:
    low, high = fp.peak_range
    return high - low > RANGE_SHOWN * fp.peak_bytes


def range_sentence(fp: Footprint) -> str:
    """The peak's range over TF's schedules, or "" when it is too narrow to matter."""
    if not shows_range(fp):
        return ""
    low, high = fp.peak_range
    return (
        f"TF's thread timing can put that peak anywhere from {format_bytes(low)} "
        f"to {format_bytes(high)} (why: see the notes)."
    )


def range_note(fp: Footprint) -> str:
    """Why the peak is a range: the estimate's schedule and each other one's peak."""
    others = "; ".join(
        f"{label}: {format_bytes(peak)}" for label, peak in fp.scenario_peaks.items()
    )
    return (
        "TF's executor runs independent kernels on several threads, and which runs first, "
        "whether they share the cores and how far a loop runs ahead change from process to "
        f"process. The estimate ({format_bytes(fp.peak_bytes)}) follows the schedule nearest "
        f"TF's measured peaks on the zoo; the other schedules give {others}."
    )


def fit_sentence(fp: Footprint, gpu: Gpu) -> str:
    s = summarize(fp, gpu)
    assert s.gpu_bytes is not None
    card = f"{clean_text(gpu.name)} ({format_gib(s.gpu_bytes)})"
    low, high = fp.total_range
    if s.fits:
        verdict = f"Fits on a {card}, {format_bytes(s.gpu_bytes - s.total_bytes)} to spare"
        if shows_range(fp) and high > s.gpu_bytes:
            verdict += f", but not at the top of TF's range ({format_bytes(high)})"
    else:
        verdict = f"Does not fit on a {card}: {format_bytes(s.total_bytes - s.gpu_bytes)} short"
        if shows_range(fp) and low <= s.gpu_bytes:
            verdict += f", though the bottom of TF's range ({format_bytes(low)}) would fit"
    verdict += "."
    if fp.fixed_batch is not None:  # the verdict is about its only batch
        return verdict
    largest = max_batch_phrase(s.max_batch)
    if s.max_batch and s.max_batch < MAX_BATCH_SIZE_CAP:
        top = fp.max_batch_size(s.gpu_bytes, schedule="top")
        if top != s.max_batch:
            largest = largest.removesuffix(".") + f" ({top} at the top of TF's range)."
    return f"{verdict} {largest}"


def max_batch_phrase(max_batch: int | None) -> str:
    if max_batch is None:
        return ""
    if max_batch == 0:
        return "Not even batch 1 fits."
    if max_batch >= MAX_BATCH_SIZE_CAP:
        return "Memory does not limit the batch size here."
    return f"Largest batch that fits: {max_batch}."


def reference_cards_sentence(fp: Footprint) -> str:
    from ..gpus import parse_gpu

    parts = []
    for name in REFERENCE_GPUS:
        gpu = parse_gpu(name)
        fit = fp.max_batch_size(gpu.memory_bytes)
        parts.append(f"{name}: {('yes' if fit else 'no') if fp.fixed_batch else fit}")
    if fp.fixed_batch is not None:
        return f"Batch {fp.fixed_batch}, the only one it runs, fits on " + ", ".join(parts) + "."
    return "Largest batch that fits: " + ", ".join(parts) + "."


def measurement_sentence(fp: Footprint, measurement: Any) -> str:
    """Estimate vs a ``jupyter_tfmem.measure`` result, with the runs' spread next to the error.

    Both are TF allocator peaks; the device overhead is not part of either.
    """
    peak = int(measurement.peak_bytes)
    runs = [int(r) for r in (getattr(measurement, "runs", None) or ())]
    spread = ""
    if len(runs) > 1:
        spread = f", {len(runs)} runs from {format_bytes(min(runs))} to {format_bytes(max(runs))}"
    device = getattr(measurement, "device", "") or ""
    where = f" on {clean_text(device)}" if device else ""
    mode = "training" if fp.training else "inference"
    err = (fp.peak_bytes - peak) / peak if peak else 0.0
    return (
        f"Estimate vs measured (TF allocator peak, batch {fp.batch_size}, {mode}{where}): "
        f"estimated {format_bytes(fp.peak_bytes)}, measured {format_bytes(peak)} "
        f"(median{spread}); estimate {format_signed_percent(err)}."
    )


# -- categories ------------------------------------------------------------
def category_rows(fp: Footprint) -> list[tuple[str, int, float, bool]]:
    """(label, bytes, share of total, grows with batch) for each category."""
    total = max(fp.total_bytes, 1)
    return [
        (c.label or CATEGORY_LABELS[cat], c.bytes, c.bytes / total, c.grows_with_batch)
        for cat, c in fp.categories.items()
    ]


def _categories_markdown(fp: Footprint) -> str:
    rows = [
        [
            escape_markdown(label),
            format_bytes(b),
            escape_markdown(format_share(share)),
            "grows" if grows else "fixed",
        ]
        for label, b, share, grows in category_rows(fp)
    ]
    rows.append(["Total", format_bytes(fp.total_bytes), "100.0%", ""])
    return tabulate(
        rows,
        headers=["Category", "Bytes", "Share", "With batch size"],
        tablefmt="github",
        disable_numparse=True,
        colalign=("left", "right", "right", "left"),
    )


# -- where does this memory live ------------------------------------------
def _listing(fp: Footprint, cats: list[str]) -> str:
    c = fp.categories
    parts = [f"{c[cat].label.lower() or cat} {format_bytes(c[cat].bytes)}" for cat in cats]
    return ", ".join(parts) if parts else "nothing"


def memory_notes(fp: Footprint, gpu: Gpu | None = None) -> list[tuple[str, str]]:
    """Answers to the three questions of the CS231n rule of thumb, with this model's numbers.

    A fourth says why the peak is a range, when ``peak_range`` is shown.

    Plain text (question, answer) pairs; the renderers escape them.
    """
    c = fp.categories
    n = fp.batch_size
    growing = [cat for cat, v in c.items() if v.grows_with_batch and v.bytes]
    fixed = [cat for cat, v in c.items() if not v.grows_with_batch and v.bytes]
    grow_sum = sum(c[cat].bytes for cat in growing)
    fixed_sum = sum(c[cat].bytes for cat in fixed)

    if fp.fixed_batch is not None:
        q1 = (
            f"This model runs at batch {n} only: a stateful layer keeps its state for that "
            f"batch, so there is no other batch size to compare. At batch {n}: "
            f"{_listing(fp, growing + fixed)} ({format_bytes(grow_sum + fixed_sum)} together)."
        )
    elif growing:
        per_sample = fp.at(n + 1).total_bytes - fp.total_bytes
        doubled = fp.at(2 * n)
        q1 = (
            f"At batch {n}, these grow with the batch size: {_listing(fp, growing)} "
            f"({format_bytes(grow_sum)} together, about {format_bytes(per_sample)} per extra "
            f"sample). These do not: {_listing(fp, fixed)} ({format_bytes(fixed_sum)} together). "
            f"So batch {2 * n} needs {format_bytes(doubled.total_bytes)}, not twice "
            f"{format_bytes(fp.total_bytes)}."
        )
    else:
        q1 = (
            f"Nothing in this estimate grows with the batch size; all "
            f"{format_bytes(fixed_sum)} is fixed."
        )
    if gpu is not None and fp.fixed_batch is None:
        q1 += " " + max_batch_phrase(fp.max_batch_size(gpu.memory_bytes)).replace(
            "Largest batch that fits", f"Largest batch on a {clean_text(gpu.name)}"
        )

    in_allocator = [cat for cat in ALLOCATOR_CATEGORIES if c[cat].bytes]
    overhead_items = ", ".join(f"{clean_text(o.name)} {format_bytes(o.bytes)}" for o in fp.overhead)
    q2 = (
        f"On the GPU: all {format_bytes(fp.total_bytes)} of this estimate. Inside TF's "
        f"allocator ({format_bytes(fp.peak_bytes)} at the peak): {_listing(fp, in_allocator)}. "
        f"Outside it: {format_bytes(fp.overhead_bytes)}"
        + (f" ({overhead_items})" if overhead_items else "")
        + ". TF places variables, gradients, optimizer slots and every op with a GPU kernel "
        "on the GPU, so nearly everything is there. Host RAM holds the dataset and the "
        "input pipeline (decoding, augmentation, shuffle and prefetch buffers): each batch "
        f"waiting in a prefetch buffer takes about {format_bytes(c['input_batch'].bytes)} "
        "there; this estimate does not count host memory. Without "
        "tf.config.experimental.set_memory_growth, TF reserves almost the whole card at "
        "start-up, so nvidia-smi shows it full whatever the model needs."
    )

    q3 = (
        f"Here the misc is: the input batch, {format_bytes(c['input_batch'].bytes)} (one "
        f"batch on the device, not the dataset); temporaries, "
        f"{format_bytes(c['temporaries'].bytes)} (scratch tensors that ops create and "
        "free within the step, such as the element-wise intermediates of the gradient and "
        f"optimizer update); and device overhead, {format_bytes(c['device_overhead'].bytes)} "
        "(CUDA context and libraries, outside TF's allocator). Augmentation in tf.data runs "
        "on the CPU and costs host memory; augmentation layers inside the model count as "
        "their activations."
    )
    answers = [
        ("What grows with the batch size?", q1),
        ("What is on the GPU, and what stays in host memory?", q2),
        ('What is the "misc"?', q3),
    ]
    if shows_range(fp):
        answers.append(("Why is the peak a range?", range_note(fp)))
    return answers


# -- whole reports ---------------------------------------------------------
def footprint_report_markdown(
    fp: Footprint, gpu: Gpu | None = None, measurement: Any = None
) -> str:
    """Headline, categories, per-layer table and notes: a report readable without a kernel."""
    head = headline_sentences(fp, gpu)
    parts = [
        f"### Memory footprint of {escape_markdown(fp.model_name)}",
        "",
        f"**{escape_markdown(head[0])}**",
        "",
        escape_markdown(head[1]),
        "",
    ]
    if measurement is not None:
        parts += [escape_markdown(measurement_sentence(fp, measurement)), ""]
    parts += [
        _categories_markdown(fp),
        "",
        "#### Per layer",
        "",
        footprint_to_markdown(fp),
        "",
        "#### Where does this memory live?",
        "",
    ]
    for question, answer in memory_notes(fp, gpu):
        parts.append(f"- **{escape_markdown(question)}** {escape_markdown(answer)}")
    if fp.notes:
        parts += ["", "#### Notes from the estimator", ""]
        parts += [f"- {escape_markdown(note)}" for note in fp.notes]
    return "\n".join(parts) + "\n"


def footprint_to_text(fp: Footprint, gpu: Gpu | None = None, measurement: Any = None) -> str:
    """Plain text for terminals and logs: the headline, the categories and the table."""
    head = headline_sentences(fp, gpu)
    if measurement is not None:
        head.append(measurement_sentence(fp, measurement))
    cats = tabulate(
        [
            [label, format_bytes(b), format_share(share), "grows" if grows else "fixed"]
            for label, b, share, grows in category_rows(fp)
        ]
        + [["Total", format_bytes(fp.total_bytes), "100.0%", ""]],
        headers=["Category", "Bytes", "Share", "With batch size"],
        tablefmt="simple",
        disable_numparse=True,
        colalign=("left", "right", "right", "left"),
    )
    cats_used = table_categories(fp)
    rows = [[clean_text(c) for c in table_cells(fp, r, cats_used)] for r in layer_table(fp)]
    table = tabulate(
        rows,
        headers=table_headers(fp),
        tablefmt="simple",
        disable_numparse=True,
        colalign=_column_alignment(fp),
    )
    return "\n".join([*head, "", cats, "", table]) + "\n"
