"""Views read a Footprint and never compute memory; hostile names must not break them.

Rendering goes through a real Markdown parser (markdown-it-py, which Keras
pulls in through rich) so "the table is not broken" is checked, not assumed.
"""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser

import ipywidgets as widgets
import pytest
from conftest import HOSTILE_NAME, make_footprint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from jupyter_tfmem.footprint import CATEGORIES, CATEGORY_LABELS, LayerInfo, PeakLine, PeakScenario
from jupyter_tfmem.gpus import custom_gpu, parse_gpu
from jupyter_tfmem.views.data import MIME_TYPE
from jupyter_tfmem.views.format import format_bytes, format_gib, format_share
from jupyter_tfmem.views.html import footprint_to_html, layer_table_html
from jupyter_tfmem.views.mime import WIDGET_VIEW_MIME, mime_bundle
from jupyter_tfmem.views.text import (
    clean_text,
    escape_markdown,
    footprint_report_markdown,
    footprint_to_markdown,
    footprint_to_text,
    layer_table,
    memory_notes,
    table_categories,
)

MD = MarkdownIt("commonmark").enable("table")


class _TableReader(HTMLParser):
    """Cells of every table row, and every tag seen (to spot injected markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _read_html(html: str) -> _TableReader:
    reader = _TableReader()
    reader.feed(html)
    return reader


def _rendered_table(markdown: str) -> _TableReader:
    return _read_html(MD.render(markdown))


def _named(name: str) -> object:
    """A footprint whose second layer has ``name``."""
    fp = make_footprint()
    lines = []
    for line in fp.lines:
        layers = dict(line.layers)
        layers[name] = layers.pop("dense")
        lines.append(PeakLine(line.a, line.b, line.categories, layers))
    infos = (fp.layer_info[0], LayerInfo(name, "Dense", "(B, 10)", 500))
    return dataclasses.replace(fp, lines=tuple(lines), layer_info=infos, model_name=name)


# -- Markdown --------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        HOSTILE_NAME,
        "a|b|c",
        "tick`s`",
        "back\\slash|",
        "<script>alert(1)</script>",
        "line\r\nbreak\ttab",
        "$x^2$ & *stars* _under_ [link](http://x)",
        "# heading",
        "1. list",
        "_private_ __dunder__ snake_case_",
    ],
)
def test_markdown_table_survives_hostile_layer_names(name):
    fp = _named(name)
    md = footprint_to_markdown(fp)
    table = _rendered_table(md)
    n_cols = len(table.rows[0])
    assert all(len(row) == n_cols for row in table.rows), md
    # the name comes back verbatim (control characters become spaces) in its own cell
    expected = re.sub(r"[\x00-\x1f]+", " ", name).strip()
    assert table.rows[2][0] == expected
    assert set(table.tags) <= {"table", "thead", "tbody", "tr", "th", "td"}
    # one physical line per row: header, separator, layers, totals
    assert len(md.splitlines()) == 2 + len(layer_table(fp))


def test_markdown_table_has_totals_row_equal_to_the_peak(toy_footprint):
    table = _rendered_table(toy_footprint.to_markdown())
    header, *rows = table.rows
    assert header[:4] == ["Layer", "Class", "Output shape", "Params"]
    assert header[-2:] == ["Total", "Share"]
    assert rows[-1][0].startswith("Total")
    assert rows[-1][header.index("Total")] == format_bytes(toy_footprint.peak_bytes)
    assert rows[-1][-1] == "100.0%"
    names = [r[0] for r in rows]
    assert names[: len(toy_footprint.layers)] == [r.name for r in toy_footprint.layers]


def test_table_rows_add_up_to_the_peak_in_every_column():
    for batch in (1, 7, 32, 4096):
        fp = make_footprint(batch)
        rows = layer_table(fp)
        body, total = rows[:-1], rows[-1]
        assert sum(r.total for r in body) == total.total == fp.peak_bytes
        for cat in table_categories(fp):
            assert sum(r.bytes.get(cat, 0) for r in body) == fp.categories[cat].bytes
        assert sum(r.share for r in body) == pytest.approx(1.0)


def test_table_columns_do_not_change_with_batch_size():
    # the toy's peak moves from the backward line (small batches) to the forward line
    small, large = make_footprint(1), make_footprint(4096)
    assert small._line is not large._line
    assert table_categories(small) == table_categories(large)
    header = _rendered_table(footprint_to_markdown(small)).rows[0]
    assert header == _rendered_table(footprint_to_markdown(large)).rows[0]


def test_layer_orders(toy_footprint):
    by_total = [r.name for r in layer_table(toy_footprint, "total") if r.kind == "layer"]
    totals = [r.total for r in toy_footprint.layers]
    assert by_total == [r.name for r in sorted(toy_footprint.layers, key=lambda r: -r.total)]
    assert sorted(totals, reverse=True) == [
        next(r.total for r in toy_footprint.layers if r.name == n) for n in by_total
    ]
    with pytest.raises(ValueError, match="order must be one of"):
        layer_table(toy_footprint, "alphabetical")


def test_escape_markdown_keeps_ordinary_text_readable():
    assert escape_markdown("(B, 16, 16, 8)") == "(B, 16, 16, 8)"
    assert escape_markdown("1.50 KiB") == "1.50 KiB"
    assert escape_markdown("a|b") == "a\\|b"
    assert escape_markdown("x\ny") == "x y"
    assert escape_markdown("dense_1") == "dense_1"


def test_report_markdown_has_headline_categories_table_and_notes(toy_footprint):
    t4 = parse_gpu("T4")
    report = footprint_report_markdown(toy_footprint, t4)
    html = MD.render(report)
    assert format_bytes(toy_footprint.total_bytes) in html
    assert "Fits on a T4 16 GB" in html
    assert f"Largest batch that fits: {toy_footprint.max_batch_size(t4.memory_bytes)}" in html
    for label in CATEGORY_LABELS.values():
        assert label in html
    assert "Where does this memory live?" in html
    assert toy_footprint.to_markdown() in report  # the same table, not a look-alike
    tiny = custom_gpu(toy_footprint.total_bytes - 1)
    assert "Does not fit" in footprint_report_markdown(toy_footprint, tiny)


def test_repr_markdown_without_a_card_quotes_reference_cards(toy_footprint):
    report = toy_footprint._repr_markdown_()
    a100 = parse_gpu("A100-80")
    assert f"A100 80 GB: {toy_footprint.max_batch_size(a100.memory_bytes)}" in report


def test_report_markdown_escapes_the_model_name(hostile_footprint):
    html = MD.render(hostile_footprint._repr_markdown_())
    reader = _read_html(html)
    assert "img" not in reader.tags and "script" not in reader.tags
    assert "<img" not in html


def test_category_growth_labels_follow_the_footprint(toy_footprint):
    table = _rendered_table(footprint_report_markdown(toy_footprint))
    # first table in the report is the categories table
    rows = {r[0]: r for r in table.rows if r and r[0] in CATEGORY_LABELS.values()}
    for cat, c in toy_footprint.categories.items():
        assert rows[CATEGORY_LABELS[cat]][-1] == ("grows" if c.grows_with_batch else "fixed")


# -- plain text ------------------------------------------------------------------
def test_text_is_one_line_per_row_even_with_newlines_in_names(hostile_footprint):
    text = footprint_to_text(hostile_footprint)
    assert "bad name" in text and "bad\nname" not in text
    assert format_bytes(hostile_footprint.total_bytes) in text
    assert hostile_footprint.to_text() == text


# -- HTML --------------------------------------------------------------------------
def test_html_escapes_every_name(hostile_footprint):
    html = footprint_to_html(hostile_footprint, parse_gpu("L4"))
    reader = _read_html(html)
    assert "img" not in reader.tags and "script" not in reader.tags
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert hostile_footprint._repr_html_() == footprint_to_html(hostile_footprint)


def test_html_table_matches_the_markdown_table(toy_footprint):
    html_rows = _read_html(layer_table_html(toy_footprint)).rows
    md_rows = _rendered_table(toy_footprint.to_markdown()).rows
    assert html_rows == md_rows


def test_html_says_fits_or_not(toy_footprint):
    big = footprint_to_html(toy_footprint, custom_gpu(toy_footprint.total_bytes))
    small = footprint_to_html(toy_footprint, custom_gpu(toy_footprint.total_bytes - 1))
    assert "Fits on a" in big and "Does not fit" not in big
    assert "Does not fit" in small


# -- notes ---------------------------------------------------------------------------
def test_memory_notes_use_this_models_numbers(toy_footprint):
    notes = dict(memory_notes(toy_footprint))
    assert len(notes) == 3
    grows = notes["What grows with the batch size?"]
    n = toy_footprint.batch_size
    assert f"batch {2 * n} needs {format_bytes(toy_footprint.at(2 * n).total_bytes)}" in grows
    per_sample = toy_footprint.at(n + 1).total_bytes - toy_footprint.total_bytes
    assert format_bytes(per_sample) in grows
    for cat, c in toy_footprint.categories.items():
        if c.bytes and c.grows_with_batch:
            assert f"{c.label.lower()} {format_bytes(c.bytes)}" in grows.split("do not")[0]
    where = notes["What is on the GPU, and what stays in host memory?"]
    assert format_bytes(toy_footprint.peak_bytes) in where
    assert "cuda_context" in where
    misc = notes['What is the "misc"?']
    assert format_bytes(toy_footprint.categories["input_batch"].bytes) in misc
    assert format_bytes(toy_footprint.overhead_bytes) in misc


# -- the peak's range over TF's schedules ------------------------------------------
def with_scenarios(fp, *shares: float, label: str = "taking turns"):
    """``fp`` with one constant scenario per share of its peak (1.3: 30% above it)."""
    scenarios = tuple(
        PeakScenario(f"{label} {i}", ((share * fp.peak_bytes, 0.0),), ((1, 0.0),))
        for i, share in enumerate(shares)
    )
    return dataclasses.replace(fp, scenarios=scenarios)


def test_peak_range_spans_the_scenarios_and_the_estimate(toy_footprint):
    assert toy_footprint.peak_range == (toy_footprint.peak_bytes,) * 2
    fp = with_scenarios(toy_footprint, 0.8, 1.3)
    low, high = fp.peak_range
    assert low == round(0.8 * fp.peak_bytes) and high == round(1.3 * fp.peak_bytes)
    # only below, or only above: the estimate is the other end
    assert with_scenarios(toy_footprint, 0.9).peak_range[1] == toy_footprint.peak_bytes
    assert with_scenarios(toy_footprint, 1.2).peak_range[0] == toy_footprint.peak_bytes
    # the constants stay put while the batch-dependent estimate grows past them
    big = fp.at(100 * fp.batch_size)
    assert big.peak_range == (round(0.8 * fp.peak_bytes), big.peak_bytes)


def test_scenario_slack_is_interpolated_like_the_estimates():
    sc = PeakScenario("s", ((100.0, 1.0), (0.0, 3.0)), ((4, 10.0), (16, 30.0)))
    assert sc.bytes_at(2) == 100 + 2 + 10  # held flat below the first point
    assert sc.bytes_at(8) == 100 + 8 + 20  # halfway in log2(batch)
    assert sc.bytes_at(64) == 3 * 64 + 30  # the other line, held flat above
    with pytest.raises(ValueError, match="at least one peak line"):
        PeakScenario("empty", ())


def test_a_wide_range_is_said_in_the_headline_the_verdict_and_the_notes(toy_footprint):
    narrow = with_scenarios(toy_footprint, 0.98, 1.02)
    assert "TF's thread timing" not in footprint_to_text(narrow)
    assert len(memory_notes(narrow)) == 3

    fp = with_scenarios(toy_footprint, 0.7, 1.5)
    low, high = fp.peak_range
    text = footprint_to_text(fp)
    assert f"anywhere from {format_bytes(low)} to {format_bytes(high)}" in text
    why = dict(memory_notes(fp))["Why is the peak a range?"]
    assert f"taking turns 1: {format_bytes(high)}" in why
    # a card the estimate fits but the top of the range does not, and the reverse
    tight = custom_gpu(fp.total_bytes + (high - fp.peak_bytes) // 2)
    assert "but not at the top of TF's range" in footprint_to_text(fp, tight)
    short = custom_gpu(fp.total_bytes - (fp.peak_bytes - low) // 2)
    assert "though the bottom of TF's range" in footprint_to_text(fp, short)
    roomy = custom_gpu(fp.overhead_bytes + 2 * high)
    assert "TF's range" not in footprint_to_text(fp, roomy).split("\n")[1]


def test_the_largest_batch_at_the_top_of_the_range(toy_footprint):
    # a schedule holding what 32 more samples take, at every batch: about 32 fewer fit
    extra = toy_footprint.at(64).peak_bytes - toy_footprint.at(32).peak_bytes
    ahead = PeakScenario("ahead", tuple((line.a + extra, line.b) for line in toy_footprint.lines))
    fp = dataclasses.replace(toy_footprint, scenarios=(ahead,))
    card = custom_gpu(fp.at(64).total_bytes)
    memory = card.memory_bytes
    plain, top = fp.max_batch_size(memory), fp.max_batch_size(memory, schedule="top")
    assert plain == toy_footprint.max_batch_size(memory) >= 64
    assert 0 < top < plain

    def top_of(n):
        return fp.at(n).peak_range[1] + fp.overhead_bytes

    assert top_of(top) <= memory < top_of(top + 1)
    assert f"Largest batch that fits: {plain} ({top} at the top of TF's range)." in (
        footprint_to_text(fp.at(top), card)
    )
    # without other schedules both are the same, and the sentence says one number
    assert toy_footprint.max_batch_size(memory, schedule="top") == plain
    assert "top of TF's range" not in footprint_to_text(toy_footprint, card)
    with pytest.raises(ValueError, match='"estimate" or "top"'):
        fp.max_batch_size(memory, schedule="worst")


def test_scenario_labels_are_escaped(toy_footprint):
    fp = with_scenarios(toy_footprint, 1.5, label=HOSTILE_NAME)
    html = footprint_to_html(fp)
    assert "Why is the peak a range?" in html
    assert "img" not in _read_html(html).tags
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    data = json.loads(json.dumps(fp.to_dict()))
    assert data["scenarios"][0]["label"] == f"{HOSTILE_NAME} 0"
    assert data["peak_range"] == list(fp.peak_range)


# -- MIME bundle -----------------------------------------------------------------
def test_mime_bundle_carries_every_static_rendering(hostile_footprint):
    gpu = parse_gpu("H100")
    bundle = mime_bundle(hostile_footprint, gpu)
    assert set(bundle) == {MIME_TYPE, "text/html", "text/markdown", "text/plain"}
    assert bundle[MIME_TYPE] == hostile_footprint.to_dict()
    json.dumps(bundle)  # a notebook stores it as JSON
    assert bundle["text/html"] == footprint_to_html(hostile_footprint, gpu)
    assert bundle["text/markdown"] == footprint_report_markdown(hostile_footprint, gpu)


def test_mime_bundle_adds_the_widget_view(toy_footprint):
    box = widgets.VBox([])
    bundle = mime_bundle(toy_footprint, widget=box)
    assert bundle[WIDGET_VIEW_MIME]["model_id"] == box.model_id
    assert "text/html" in bundle


# -- formatting --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.00 KiB"),
        (1536, "1.50 KiB"),
        (int(1.234 * 2**30), "1.23 GiB"),
        (15 * 2**20, "15.0 MiB"),
        (300 * 2**20, "300 MiB"),
        (2**20 - 1, "1.00 MiB"),
        (-2048, "-2.00 KiB"),
    ],
)
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_format_share_and_gib():
    assert format_share(0.5) == "50.0%"
    assert format_share(0.0001) == "<0.1%"
    assert format_share(0) == "0.0%"
    assert format_gib(16 * 2**30) == "16 GiB"
    assert format_gib(12.5 * 2**30) == "12.5 GiB"


def test_every_category_has_a_label():
    assert set(CATEGORY_LABELS) == set(CATEGORIES)


def test_unattributed_memory_gets_a_row_but_rounding_does_not(toy_footprint):
    # the toy's input batch belongs to no layer
    other = [r for r in layer_table(toy_footprint) if r.kind == "other"]
    assert (
        len(other) == 1
        and other[0].bytes["input_batch"] == toy_footprint.categories["input_batch"].bytes
    )
    # two layers of 10.4 bytes each: rows say 10 + 10, the category says 21
    layers = {"a": {"parameters": (10.4, 0.0)}, "b": {"parameters": (10.4, 0.0)}}
    line = PeakLine(20.8, 0.0, {"parameters": (20.8, 0.0)}, layers)
    fp = dataclasses.replace(
        toy_footprint,
        lines=(line,),
        layer_info=(LayerInfo("a", "Dense", "(B, 1)", 1), LayerInfo("b", "Dense", "(B, 1)", 1)),
    )
    kinds = [r.kind for r in layer_table(fp)]
    assert kinds == ["layer", "layer", "total"]
    assert layer_table(fp)[-1].total == fp.peak_bytes == 21


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_any_layer_name_renders_as_itself_in_one_cell(name):
    fp = _named(name)
    table = _rendered_table(footprint_to_markdown(fp))
    assert all(len(row) == len(table.rows[0]) for row in table.rows)
    assert set(table.tags) <= {"table", "thead", "tbody", "tr", "th", "td"}
    # markdown-it also strips the spaces around a cell's text and maps NUL to U+FFFD
    assert table.rows[2][0] == clean_text(name).replace("\x00", "\ufffd").strip()


def test_a_fixed_batch_footprint_offers_no_other_batch_in_any_view():
    """A stateful model runs at one batch: no view may move it or quote another."""
    from jupyter_tfmem.views.text import headline_sentences

    fp = dataclasses.replace(make_footprint(32), fixed_batch=32)
    with pytest.raises(ValueError, match="fixed_batch 8 must be the batch_size, 32"):
        dataclasses.replace(make_footprint(32), fixed_batch=8)
    with pytest.raises(ValueError, match="runs at batch 32 only"):
        fp.at(64)
    assert fp.to_dict()["fixed_batch"] == 32 and make_footprint().to_dict()["fixed_batch"] is None
    big, small = custom_gpu(fp.total_bytes), custom_gpu(fp.total_bytes - 1)
    assert (fp.max_batch_size(big.memory_bytes), fp.max_batch_size(small.memory_bytes)) == (32, 0)
    q1 = memory_notes(fp, big)[0][1]
    assert "runs at batch 32 only" in q1
    assert "per extra sample" not in q1 and "Largest batch" not in q1
    assert "per extra sample" in memory_notes(make_footprint(32), big)[0][1]
    fits, short = headline_sentences(fp, big)[1], headline_sentences(fp, small)[1]
    assert fits.startswith("Fits on") and short.startswith("Does not fit")
    assert "Largest batch" not in fits + short and "Not even batch 1" not in short
    cards = headline_sentences(fp)[1]
    assert cards.startswith("Batch 32, the only one it runs, fits on ")
    assert re.search(r"T4 16 GB: (yes|no), ", cards)
    # every view renders
    assert "runs at batch 32 only" in footprint_to_html(fp, big)
    assert fp.to_markdown() == footprint_to_markdown(fp)
