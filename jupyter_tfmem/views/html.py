"""HTML views of a Footprint: the static report and the pieces the panel shows.

Inline styles only, no ``<style>`` or script: JupyterLab sanitises HTML from
untrusted notebooks and keeps inline styles, so a reopened notebook and
GitHub's viewer show the same report.  Every piece of text goes through
``html.escape``; layer and model names are untrusted.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from ..footprint import CATEGORIES
from .format import format_bytes, format_gib, format_share
from .text import (
    category_rows,
    headline_sentences,
    layer_table,
    measurement_sentence,
    memory_notes,
    table_categories,
    table_cells,
    table_headers,
)

if TYPE_CHECKING:
    from ..footprint import Footprint
    from ..gpus import Gpu

#: One colour per category, in ``CATEGORIES`` order (readable on light and dark themes).
CATEGORY_COLORS: dict[str, str] = dict(
    zip(
        CATEGORIES,
        ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#9c755f"),
        strict=True,
    )
)

_CELL = "padding:2px 8px;text-align:left;border-bottom:1px solid rgba(128,128,128,0.3)"
_NUM = _CELL + ";text-align:right;white-space:nowrap"
_TEXT = _CELL + ";white-space:nowrap"  # the table scrolls sideways rather than wrap


def headline_html(fp: Footprint, gpu: Gpu | None = None) -> str:
    """Total, fits or not on the card, and the largest batch that fits."""
    first, second = headline_sentences(fp, gpu)
    color = ""
    if gpu is not None:
        fits = fp.total_bytes <= gpu.memory_bytes
        color = ";color:#2e7d32" if fits else ";color:#c62828"
    return (
        f'<div style="font-size:1.1em;font-weight:bold">{escape(first)}</div>'
        f'<div style="margin-top:2px{color}">{escape(second)}</div>'
    )


def category_bar_html(fp: Footprint, gpu: Gpu | None = None) -> str:
    """A stacked bar of the categories against the card's memory, with a legend.

    The bar's full width is the larger of the card and the total, so an
    estimate that does not fit visibly runs past the card.
    """
    cats = fp.categories
    card = gpu.memory_bytes if gpu is not None else 0
    scale = max(card, fp.total_bytes, 1)
    segments = []
    for cat in CATEGORIES:
        b = cats[cat].bytes
        if b <= 0:
            continue
        width = 100.0 * b / scale
        tip = f"{cats[cat].label}: {format_bytes(b)}"
        segments.append(
            f'<div title="{escape(tip)}" style="display:inline-block;height:16px;'
            f'width:{width:.3f}%;background-color:{CATEGORY_COLORS[cat]}"></div>'
        )
    bar = (
        '<div style="white-space:nowrap;overflow:hidden;width:100%;height:16px;'
        'background-color:rgba(128,128,128,0.15);border:1px solid rgba(128,128,128,0.5)">'
        + "".join(segments)
        + "</div>"
    )
    card_row = ""
    if gpu is not None:
        width = 100.0 * card / scale
        card_row = (
            f'<div style="white-space:nowrap;font-size:0.85em;margin-top:2px">'
            f'<div style="display:inline-block;width:{width:.3f}%;'
            f'border-top:3px solid rgba(128,128,128,0.8)"></div></div>'
            f'<div style="font-size:0.85em">{escape(gpu.name)}: '
            f"{escape(format_gib(card))} of memory"
            + (
                f", {escape(format_bytes(card - fp.total_bytes))} free"
                if card >= fp.total_bytes
                else f", {escape(format_bytes(fp.total_bytes - card))} short"
            )
            + "</div>"
        )
    legend = []
    for (label, b, share, grows), cat in zip(category_rows(fp), CATEGORIES, strict=True):
        tag = "grows with batch" if grows else "fixed"
        legend.append(
            f'<span style="display:inline-block;margin:2px 12px 2px 0;white-space:nowrap">'
            f'<span style="display:inline-block;width:10px;height:10px;'
            f'background-color:{CATEGORY_COLORS[cat]}"></span> '
            f"{escape(label)} {escape(format_bytes(b))} ({escape(format_share(share))}, "
            f"<i>{escape(tag)}</i>)</span>"
        )
    return (
        f"<div>{bar}{card_row}"
        f'<div style="font-size:0.85em;margin-top:4px">{"".join(legend)}</div></div>'
    )


def layer_table_html(fp: Footprint, order: str = "model") -> str:
    """The per-layer table as an HTML table (same rows as the Markdown one)."""
    headers = table_headers(fp)
    n_text = 3  # Layer, Class, Output shape are text; the rest are numbers
    styles = [_TEXT] * n_text + [_NUM] * (len(headers) - n_text)
    head = "".join(
        f'<th style="{style}">{escape(h)}</th>' for style, h in zip(styles, headers, strict=True)
    )
    cats = table_categories(fp)
    body = []
    for row in layer_table(fp, order):
        cells = table_cells(fp, row, cats)
        style = ""
        if row.kind == "total":
            style = ' style="font-weight:bold"'
        elif row.kind == "other":
            style = ' style="font-style:italic"'
        tds = "".join(
            f'<td style="{style}">{escape(c)}</td>' for style, c in zip(styles, cells, strict=True)
        )
        body.append(f"<tr{style}>{tds}</tr>")
    return (
        '<div style="overflow-x:auto;max-width:100%">'
        '<table style="border-collapse:collapse;font-size:0.9em">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def notes_html(fp: Footprint, gpu: Gpu | None = None) -> str:
    """Where does this memory live: the three questions, answered with this model's numbers."""
    items = "".join(
        f'<li style="margin-bottom:4px"><b>{escape(q)}</b> {escape(a)}</li>'
        for q, a in memory_notes(fp, gpu)
    )
    extra = ""
    if fp.notes:
        extra = (
            '<div style="font-size:0.9em"><b>Notes from the estimator:</b><ul>'
            + "".join(f"<li>{escape(str(n))}</li>" for n in fp.notes)
            + "</ul></div>"
        )
    return f"<ul style='margin:0;padding-left:1.2em'>{items}</ul>{extra}"


def measurement_html(fp: Footprint, measurement: Any = None) -> str:
    """The estimate-vs-measured line, or nothing without a measurement."""
    if measurement is None:
        return ""
    return f'<div style="margin:4px 0">{escape(measurement_sentence(fp, measurement))}</div>'


def footprint_to_html(fp: Footprint, gpu: Gpu | None = None, measurement: Any = None) -> str:
    """The whole report as one static HTML block (the notebook's saved fallback)."""
    return (
        '<div class="jupyter-tfmem-report">'
        f'<div style="font-weight:bold">Memory footprint of {escape(str(fp.model_name))}</div>'
        f"{headline_html(fp, gpu)}{measurement_html(fp, measurement)}"
        f'<div style="margin:6px 0">{category_bar_html(fp, gpu)}</div>'
        f"<details open><summary><b>Per layer</b></summary>{layer_table_html(fp)}</details>"
        f"<details open><summary><b>Where does this memory live?</b></summary>"
        f"{notes_html(fp, gpu)}</details>"
        "</div>"
    )
