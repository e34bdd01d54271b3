"""The ipywidgets panel, driven the way the front end drives it: by setting widget values."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from conftest import make_footprint

from jupyter_tfmem.footprint import Footprint, PeakLine, PeakScenario
from jupyter_tfmem.gpus import custom_gpu, parse_gpu
from jupyter_tfmem.panel import OPTIMIZER_NAMES, PRECISION_POLICIES, FootprintPanel
from jupyter_tfmem.views.data import MIME_TYPE
from jupyter_tfmem.views.format import format_bytes
from jupyter_tfmem.views.html import layer_table_html
from jupyter_tfmem.views.mime import WIDGET_VIEW_MIME


def scaled(fp: Footprint, k: float, **changes) -> Footprint:
    """The same model with every byte multiplied by ``k`` (a stand-in for a re-estimate)."""

    def scale(coef):
        return (coef[0] * k, coef[1] * k)

    lines = tuple(
        PeakLine(
            line.a * k,
            line.b * k,
            {c: scale(v) for c, v in line.categories.items()},
            {n: {c: scale(v) for c, v in cats.items()} for n, cats in line.layers.items()},
        )
        for line in fp.lines
    )
    return dataclasses.replace(fp, lines=lines, **changes)


@pytest.fixture
def t4():
    return parse_gpu("T4")


class Recorder:
    """A reestimate callback that records what the panel looked like while it ran."""

    def __init__(self, panel_ref, result=None, error=None):
        self.panel_ref = panel_ref
        self.result = result
        self.error = error
        self.calls = []
        self.seen = []

    def __call__(self, **kwargs):
        panel = self.panel_ref()
        self.calls.append(kwargs)
        self.seen.append(
            {
                "busy": panel.busy,
                "status": panel.status.value,
                "slider_disabled": panel.batch_slider.disabled,
                "selectors_disabled": panel.precision_select.disabled,
                "fit_disabled": panel.fit_button.disabled,
            }
        )
        if self.error is not None:
            raise self.error
        return self.result(**kwargs)


def exported(panel) -> str:
    """The text of the export box, as a browser shows it (entities decoded)."""
    match = re.fullmatch(r"<textarea [^>]*>(.*)</textarea>", panel.export_text.value, re.S)
    assert match, panel.export_text.value[:200]
    return html.unescape(match.group(1))


def make_panel(fp=None, result=None, error=None, **kwargs):
    holder = {}
    recorder = Recorder(lambda: holder["panel"], result, error)
    panel = FootprintPanel(fp or make_footprint(), recorder, **kwargs)
    holder["panel"] = panel
    return panel, recorder


# -- the slider -----------------------------------------------------------------
def test_slider_changes_headline_table_bar_and_notes(t4):
    panel, _ = make_panel(gpu=t4)
    before = {w: getattr(panel, w).value for w in ("headline", "table", "bar", "notes")}
    panel.batch_slider.value = 100
    assert panel.footprint == make_footprint().at(100)
    for name, old in before.items():
        assert getattr(panel, name).value != old, name
    assert format_bytes(panel.footprint.total_bytes) in panel.headline.value
    assert "at batch 100" in panel.headline.value
    assert panel.batch_text.value == 100
    assert panel.table.value == layer_table_html(panel.footprint)


def test_slider_across_peak_lines_keeps_the_table_columns():
    panel, _ = make_panel()
    panel.batch_slider.value = 1
    header_small = panel.table.value.split("</thead>")[0]
    panel.batch_text.value = 4000
    assert panel.table.value.split("</thead>")[0] == header_small
    assert panel.footprint._line is not make_footprint(1)._line


def test_slider_never_calls_the_estimator():
    panel, recorder = make_panel()
    for n in (1, 2, 64, 1000):
        panel.batch_text.value = n
    assert recorder.calls == []
    assert panel.footprint.batch_size == 1000


def test_largest_that_fits_button_moves_the_slider_to_the_limit():
    fp = scaled(make_footprint(), 2000)  # so that memory limits the batch
    gpu = parse_gpu("T4")
    panel, recorder = make_panel(fp, gpu=gpu)
    fit = fp.max_batch_size(gpu.memory_bytes)
    assert fit > panel.batch_slider.max  # out of the slider's first range
    panel.fit_button.click()
    assert panel.batch_slider.value == fit < panel.batch_slider.max
    assert panel.footprint == fp.at(fit)
    assert "Fits on a T4" in panel.headline.value
    panel.batch_slider.value = fit + 1
    assert "Does not fit on a T4" in panel.headline.value
    assert f"Largest batch that fits: {fit}." in panel.headline.value
    assert recorder.calls == []


def test_typed_batch_size_stretches_the_slider():
    panel, _ = make_panel()
    assert panel.batch_slider.max == 4 * 32
    panel.batch_text.value = 5000
    assert panel.batch_slider.value == 5000 <= panel.batch_slider.max
    assert panel.footprint == make_footprint().at(5000)
    panel.batch_slider.value = 7
    assert panel.batch_text.value == 7
    assert "at batch 7 " in panel.headline.value


def test_largest_that_fits_when_nothing_fits_or_memory_never_runs_out():
    fp = make_footprint()
    panel, _ = make_panel(fp, gpu=custom_gpu(fp.overhead_bytes))  # only the overhead fits
    panel.fit_button.click()
    assert "Not even batch 1 fits" in panel.status.value
    assert panel.batch_slider.value == fp.batch_size
    line = PeakLine(1000.0, 0.0, {"parameters": (1000.0, 0.0)}, {})
    flat = dataclasses.replace(fp, lines=(line,))
    panel, _ = make_panel(flat, gpu=parse_gpu("T4"))
    panel.fit_button.click()
    assert "does not limit the batch size" in panel.status.value


# -- the GPU selector ------------------------------------------------------------
def test_gpu_selector_changes_headline_and_largest_batch(t4):
    fp = scaled(make_footprint(), 2000)
    panel, recorder = make_panel(fp, gpu=t4)
    h100 = parse_gpu("H100")
    panel.gpu_select.value = h100
    assert panel.gpu == h100
    assert "H100 80 GB" in panel.headline.value
    fit = fp.max_batch_size(h100.memory_bytes)
    assert f"Largest batch that fits: {fit}." in panel.headline.value
    panel.fit_button.click()
    assert panel.batch_slider.value == fit
    assert recorder.calls == []


def test_gpu_selector_lists_the_catalog_and_a_custom_size(t4):
    panel, _ = make_panel(gpu=t4)
    labels = [label for label, _ in panel.gpu_select.options]
    for name in (
        "T4 16 GB",
        "L4 24 GB",
        "RTX 3090 24 GB",
        "RTX 4090 24 GB",
        "V100 16 GB",
        "V100 32 GB",
        "A100 40 GB",
        "A100 80 GB",
        "H100 80 GB",
        "H200 141 GB",
    ):
        assert any(label.startswith(name) for label in labels)
    assert labels[-1].startswith("Custom")


def test_custom_size(t4):
    panel, _ = make_panel(gpu=t4)
    assert panel.custom_gib.layout.display == "none"
    panel.gpu_select.value = "custom"
    assert panel.custom_gib.layout.display is None
    panel.custom_gib.value = 0.25  # 256 MiB < the toy's 300 MiB of device overhead
    assert panel.gpu.memory_bytes == 2**28
    assert "Does not fit" in panel.headline.value
    assert "Not even batch 1 fits." in panel.headline.value
    panel.custom_gib.value = 2
    assert "Fits on a Custom 2 GiB" in panel.headline.value


# -- selectors that re-estimate ------------------------------------------------------
def test_optimizer_selector_reestimates_with_a_busy_indicator():
    base = make_footprint()
    panel, recorder = make_panel(
        base, result=lambda **kw: scaled(base, 3, optimizer=kw["optimizer"])
    )
    headline, table = panel.headline.value, panel.table.value
    panel.batch_slider.value = 40
    panel.optimizer_select.value = "sgd"
    assert recorder.calls == [{"optimizer": "sgd", "precision": "float32", "training": True}]
    (during,) = recorder.seen
    assert during["busy"] and during["slider_disabled"] and during["selectors_disabled"]
    assert during["fit_disabled"]
    assert "Re-estimating" in during["status"] and "sgd" in during["status"]
    assert not panel.busy and not panel.batch_slider.disabled
    assert panel.status.value == ""
    assert panel.footprint == scaled(base, 3, optimizer="sgd").at(40)  # slider kept
    assert panel.headline.value != headline and panel.table.value != table
    assert "optimizer sgd" in panel.headline.value


def test_precision_and_mode_selectors_reestimate():
    base = make_footprint()
    panel, recorder = make_panel(
        base,
        result=lambda **kw: scaled(
            base,
            0.5,
            precision=kw["precision"],
            training=kw["training"],
            optimizer=kw["optimizer"] if kw["training"] else None,
        ),
    )
    panel.precision_select.value = "mixed_float16"
    panel.mode_select.value = False
    assert recorder.calls[-2:] == [
        {"optimizer": "adam", "precision": "mixed_float16", "training": True},
        {"optimizer": "adam", "precision": "mixed_float16", "training": False},
    ]
    assert "inference step" in panel.headline.value
    assert panel.optimizer_select.disabled  # no optimizer in inference
    panel.mode_select.value = True
    assert not panel.optimizer_select.disabled


def test_failed_reestimate_shows_the_error_and_restores_the_selector():
    base = make_footprint()
    panel, recorder = make_panel(base, error=ValueError("<b>no</b> such policy"))
    headline = panel.headline.value
    panel.precision_select.value = "float64"
    assert len(recorder.calls) == 1
    assert "Could not re-estimate" in panel.status.value
    assert "&lt;b&gt;no&lt;/b&gt; such policy" in panel.status.value
    assert panel.precision_select.value == "float32"
    assert panel.headline.value == headline and panel.footprint == base
    assert not panel.busy and not panel.precision_select.disabled
    assert len(recorder.calls) == 1  # restoring the selector did not re-estimate again


def test_without_a_callback_the_selectors_are_disabled():
    panel = FootprintPanel(make_footprint())
    for w in (panel.optimizer_select, panel.precision_select, panel.mode_select):
        assert w.disabled
    assert "fixed" in panel.status.value


def test_selector_choices():
    panel, _ = make_panel()
    assert [v for _, v in panel.optimizer_select.options] == list(OPTIMIZER_NAMES)
    assert list(panel.precision_select.options) == list(PRECISION_POLICIES)
    assert panel.optimizer_select.value == "adam"


# -- table, export, notes ---------------------------------------------------------
def test_markdown_export_equals_to_markdown():
    panel, _ = make_panel()
    assert panel.export_text.layout.display == "none"
    panel.export_button.value = True
    assert panel.export_text.layout.display is None
    assert exported(panel) == panel.footprint.to_markdown() == panel.markdown()
    panel.batch_text.value = 77
    assert exported(panel) == make_footprint().at(77).to_markdown()
    panel.export_button.value = False
    assert panel.export_text.layout.display == "none"


def test_row_order_selector():
    toy = make_footprint()
    small_first = dataclasses.replace(toy, layer_info=toy.layer_info[::-1])  # dense, conv
    panel, _ = make_panel(small_first)
    assert panel.table.value.index(">dense<") < panel.table.value.index(">conv<")
    panel.order_select.value = "total"
    assert panel.table.value.index(">conv<") < panel.table.value.index(">dense<")
    assert panel.table.value == layer_table_html(panel.footprint, "total")
    panel.order_select.value = "params"
    assert panel.table.value.index(">conv<") < panel.table.value.index(">dense<")


def test_hostile_names_are_escaped_everywhere(hostile_footprint):
    panel = FootprintPanel(hostile_footprint, title="<script>x</script>")
    for w in (panel.title, panel.headline, panel.bar, panel.table, panel.notes):
        assert "<img" not in w.value and "<script" not in w.value
    assert "&lt;script&gt;" in panel.title.value


def test_notes_answer_the_three_questions_with_current_numbers():
    panel, _ = make_panel()
    panel.batch_slider.value = 100
    notes = panel.notes.value
    assert "What grows with the batch size?" in notes
    assert "What is on the GPU, and what stays in host memory?" in notes
    assert "misc" in notes
    fp = make_footprint(100)
    assert f"batch 200 needs {format_bytes(fp.at(200).total_bytes)}" in notes


def test_the_peaks_range_follows_the_slider_and_the_card():
    # a schedule holding a constant half of today's peak more, as a loop
    # running ahead does: shown at batch 32, negligible at a large batch
    base = make_footprint()
    extra = base.peak_bytes // 2
    ahead = PeakScenario("ahead", tuple((line.a + extra, line.b) for line in base.lines), ())
    fp = dataclasses.replace(base, slack=(), scenarios=(ahead,))
    high = fp.peak_bytes + extra
    card = custom_gpu(fp.total_bytes + extra // 2)
    panel, _ = make_panel(fp, gpu=card)
    assert f"to {format_bytes(high)}" in panel.headline.value
    assert "but not at the top of TF&#x27;s range" in panel.headline.value
    assert f"ahead: {format_bytes(high)}" in panel.notes.value
    panel.batch_text.value = 10000  # past the slider, which stretches
    assert extra < 0.05 * panel.footprint.peak_bytes
    assert "anywhere from" not in panel.headline.value
    assert "Why is the peak a range?" not in panel.notes.value


def test_largest_at_the_top_of_the_range_button():
    # a second schedule needing 30% more: the card fits a smaller batch at its top
    base = dataclasses.replace(scaled(make_footprint(), 2000), slack=())
    turns = PeakScenario("turns", tuple((line.a * 1.3, line.b * 1.3) for line in base.lines), ())
    fp = dataclasses.replace(base, scenarios=(turns,))
    t4 = parse_gpu("T4")
    panel, recorder = make_panel(fp, gpu=t4)
    assert panel.fit_top_button.layout.display != "none"
    fit = fp.max_batch_size(t4.memory_bytes)
    fit_top = fp.max_batch_size(t4.memory_bytes, schedule="top")
    assert 1 < fit_top < fit
    panel.fit_top_button.click()
    assert panel.batch_slider.value == fit_top
    assert "Fits on a T4" in panel.headline.value
    assert "but not at the top" not in panel.headline.value
    panel.fit_button.click()
    assert panel.batch_slider.value == fit
    assert "but not at the top of TF&#x27;s range" in panel.headline.value
    assert recorder.calls == []
    # disabled with the other controls while a re-estimate runs
    panel._set_busy(True)
    assert panel.fit_top_button.disabled
    panel._set_busy(False)
    # a re-estimate without a range hides it; one without a model never shows it
    panel._reestimate_fn = lambda **kwargs: base
    panel.precision_select.value = "mixed_float16"
    assert panel.fit_top_button.layout.display == "none"
    plain = FootprintPanel(base, gpu=t4)
    assert plain.fit_top_button.layout.display == "none"


def test_bar_labels_each_category_with_its_batch_dependence():
    panel, _ = make_panel()
    for c in panel.footprint.categories.values():
        tag = "grows with batch" if c.grows_with_batch else "fixed"
        pattern = re.escape(f"{c.label} {format_bytes(c.bytes)} (") + r"[^,]*, <i>" + tag
        assert re.search(pattern, panel.bar.value), c.label


def test_measurement_line():
    class M:
        peak_bytes = 400_000
        runs = (390_000, 400_000, 420_000)
        device = "CPU:0"

    fp = make_footprint()
    panel = FootprintPanel(fp, measurement=M())
    err = 100 * (fp.peak_bytes - 400_000) / 400_000
    assert f"estimate {err:+.1f}%" in panel.measured.value
    assert "CPU:0" in panel.measured.value
    assert "Estimate vs measured" in panel._repr_mimebundle_()["text/markdown"]
    panel.batch_slider.value = 3  # the comparison stays at the measured batch size
    assert f"batch {fp.batch_size}" in panel.measured.value
    # the saved copy shows batch 3, which was not measured: no comparison there
    bundle = panel._repr_mimebundle_()
    assert "Estimate vs measured" not in bundle["text/markdown"] + bundle["text/html"]


def test_display_bundle_has_widget_and_static_fallback(t4):
    panel, _ = make_panel(gpu=t4)
    panel.batch_slider.value = 9
    bundle = panel._repr_mimebundle_()
    assert bundle[WIDGET_VIEW_MIME]["model_id"] == panel.widget.model_id
    assert bundle[MIME_TYPE] == panel.footprint.to_dict()
    assert bundle[MIME_TYPE]["batch_size"] == 9
    assert "Fits on a T4" in bundle["text/html"]


# -- with the real estimator ---------------------------------------------------------
def test_real_model_selectors_and_slider():
    import keras

    import jupyter_tfmem

    model = keras.Sequential(
        [keras.Input((32,)), keras.layers.Dense(64, name="hidden"), keras.layers.Dense(8)],
        name="real",
    )

    def reestimate(**kw):
        return jupyter_tfmem.estimate(model, 16, **kw)

    fp = jupyter_tfmem.estimate(model, 16)
    panel = FootprintPanel(fp, reestimate, gpu=parse_gpu("T4"))
    adam_state = panel.footprint.categories["optimizer_state"].bytes
    panel.optimizer_select.value = "sgd"
    assert panel.footprint.optimizer == "sgd"
    assert panel.footprint.categories["optimizer_state"].bytes < adam_state
    panel.batch_text.value = 256
    assert panel.footprint.batch_size == 256
    assert "at batch 256" in panel.headline.value
    assert "hidden" in panel.table.value
    panel.mode_select.value = False
    assert panel.footprint.training is False
    assert panel.footprint.categories["gradients"].bytes == 0
    panel.export_button.value = True
    assert exported(panel) == panel.footprint.to_markdown()


def test_a_fixed_batch_disables_every_batch_control():
    """A stateful model's footprint has no other batch (``at`` refuses one)."""
    fp = dataclasses.replace(make_footprint(32), fixed_batch=32)
    panel = FootprintPanel(fp, gpu=parse_gpu("T4"))
    controls = (panel.batch_slider, panel.batch_text, panel.fit_button, panel.fit_top_button)
    assert all(w.disabled for w in controls)
    assert "fixes this model's batch at 32" in panel.batch_slider.tooltip
    assert "runs at batch 32 only" in panel.notes.value
    assert not FootprintPanel(make_footprint(32)).batch_slider.disabled
