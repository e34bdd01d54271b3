"""The live ipywidgets panel of one Footprint.

The batch-size slider and the GPU selector only re-read the Footprint
(``Footprint.at`` and ``max_batch_size``): the peak is a handful of straight
lines in the batch size, so an update costs milliseconds and never traces the
model again.  Optimizer, precision and training/inference change the graph
itself, so they go back to the estimator through the ``reestimate`` callback,
with a busy indicator while it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as widgets

from .estimator import OPTIMIZER_NAMES, PRECISION_POLICIES
from .footprint import MAX_BATCH_SIZE_CAP, Footprint
from .gpus import Gpu, custom_gpu, default_gpu, gpu_choices
from .views.html import (
    category_bar_html,
    headline_html,
    layer_table_html,
    measurement_html,
    notes_html,
)
from .views.mime import mime_bundle
from .views.text import ORDERS, shows_range

Reestimate = Callable[..., Footprint]

_CUSTOM = "custom"
_DEFAULT_OPTIMIZER = "(model's or default)"


class FootprintPanel:
    """Headline, category bar, controls, per-layer table, Markdown export and notes.

    ``reestimate(optimizer=, precision=, training=)`` returns a new Footprint
    for the same model; without it the optimizer, precision and mode
    selectors are disabled.  ``measurement`` (from ``jupyter_tfmem.measure``
    on the same settings) adds an estimate-vs-measured line.
    """

    def __init__(
        self,
        footprint: Footprint,
        reestimate: Reestimate | None = None,
        *,
        gpu: Gpu | None = None,
        title: str | None = None,
        measurement: Any = None,
    ) -> None:
        self._base = footprint
        self.footprint = footprint
        self._reestimate_fn = reestimate
        self._measured_fp = footprint
        self._measurement = measurement
        self._syncing = False
        self.busy = False
        self._settings = self._settings_of(footprint)

        choices = gpu_choices()
        start_gpu = gpu if gpu is not None else default_gpu()
        if start_gpu not in choices:
            choices = [start_gpu, *choices]
        self.gpu = start_gpu

        name = title if title is not None else footprint.model_name
        self.title = widgets.HTML(self._title_html(name, footprint))
        self.headline = widgets.HTML()
        self.bar = widgets.HTML()
        self.batch_slider = widgets.IntSlider(
            value=footprint.batch_size,
            min=1,
            max=self._slider_max(footprint.batch_size),
            description="Batch size",
            continuous_update=True,
            readout=False,
            style={"description_width": "initial"},
            layout=widgets.Layout(width="340px"),
        )
        # any batch size, typed; the slider's range stretches to follow it
        self.batch_text = widgets.BoundedIntText(
            value=footprint.batch_size,
            min=1,
            max=MAX_BATCH_SIZE_CAP,
            layout=widgets.Layout(width="110px"),
        )
        self.fit_button = widgets.Button(
            description="Largest that fits",
            tooltip="Move the slider to the largest batch that fits on the chosen GPU",
            layout=widgets.Layout(width="150px"),
        )
        # shown only where TF's schedules spread the peak (Footprint.peak_range)
        self.fit_top_button = widgets.Button(
            description="Largest at range top",
            tooltip=(
                "Move the slider to the largest batch that fits on the chosen GPU "
                "whichever schedule TF's threads take (the top of the peak's range)"
            ),
            layout=widgets.Layout(width="170px"),
        )
        self.gpu_select = widgets.Dropdown(
            options=[(g.label, g) for g in choices] + [("Custom size…", _CUSTOM)],
            value=start_gpu,
            description="GPU",
            layout=widgets.Layout(width="300px"),
        )
        self.custom_gib = widgets.BoundedFloatText(
            value=round(start_gpu.memory_bytes / 2**30, 2),
            min=0.01,
            max=1e6,
            step=1,
            description="GiB",
            layout=widgets.Layout(width="160px", display="none"),
        )
        opt_options = self._optimizer_options(footprint.optimizer)
        self.optimizer_select = widgets.Dropdown(
            options=opt_options,
            value=self._optimizer_value(footprint.optimizer),
            description="Optimizer",
            layout=widgets.Layout(width="260px"),
        )
        precisions = list(PRECISION_POLICIES)
        if footprint.precision not in precisions:
            precisions.insert(0, footprint.precision)
        self.precision_select = widgets.Dropdown(
            options=precisions,
            value=footprint.precision,
            description="Precision",
            layout=widgets.Layout(width="260px"),
        )
        self.mode_select = widgets.ToggleButtons(
            options=[("Training", True), ("Inference", False)],
            value=footprint.training,
            style={"button_width": "90px"},
        )
        self.status = widgets.HTML()
        self.order_select = widgets.Dropdown(
            options=[(label, key) for key, label in ORDERS.items()],
            value="model",
            description="Rows",
            layout=widgets.Layout(width="260px"),
        )
        self.table = widgets.HTML()
        self.export_button = widgets.ToggleButton(
            value=False,
            description="Markdown",
            icon="copy",
            tooltip="Show the per-layer table as Markdown, to copy",
        )
        self.export_text = widgets.HTML(layout=widgets.Layout(width="100%", display="none"))
        self.notes = widgets.HTML()
        self.measured = widgets.HTML()

        if reestimate is None:
            for w in (self.optimizer_select, self.precision_select, self.mode_select):
                w.disabled = True
            self.status.value = (
                "<i>Optimizer, precision and mode are fixed: this panel has no model to "
                "re-estimate.</i>"
            )
        elif not footprint.training:
            self.optimizer_select.disabled = True
        if footprint.fixed_batch is not None:
            # a stateful layer's state is shaped for this batch: there is no other
            for w in (self.batch_slider, self.batch_text, self.fit_button, self.fit_top_button):
                w.disabled = True
            self.batch_slider.tooltip = (
                f"A stateful layer fixes this model's batch at {footprint.fixed_batch}"
            )

        self.batch_slider.observe(self._on_batch, names="value")
        self.batch_text.observe(self._on_batch_text, names="value")
        self.fit_button.on_click(self._on_fit)
        self.fit_top_button.on_click(lambda _button: self._on_fit(schedule="top"))
        self.gpu_select.observe(self._on_gpu, names="value")
        self.custom_gib.observe(self._on_custom, names="value")
        for w in (self.optimizer_select, self.precision_select, self.mode_select):
            w.observe(self._on_setting, names="value")
        self.order_select.observe(lambda _change: self._render_table(), names="value")
        self.export_button.observe(self._on_export, names="value")

        controls = widgets.VBox(
            [
                widgets.HBox(
                    [
                        self.batch_slider,
                        self.batch_text,
                        self.fit_button,
                        self.fit_top_button,
                        self.gpu_select,
                        self.custom_gib,
                    ]
                ),
                widgets.HBox([self.mode_select, self.optimizer_select, self.precision_select]),
                self.status,
            ]
        )
        table_box = widgets.VBox(
            [
                widgets.HBox([self.order_select, self.export_button]),
                self.export_text,
                self.table,
            ]
        )
        details = widgets.Accordion(
            children=[table_box, self.notes],
            titles=("Per layer", "Where does this memory live?"),
        )
        details.selected_index = 0
        self.widget = widgets.VBox(
            [self.title, self.headline, self.bar, self.measured, controls, details]
        )
        self._show_fit_top()
        self._render()

    # -- what the user sees ---------------------------------------------------
    def markdown(self) -> str:
        """The Markdown the export shows: ``Footprint.to_markdown()`` at the current settings."""
        return self.footprint.to_markdown()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # the saved copy shows the measurement only if it is of the step shown
        same_step = self.footprint == self._measured_fp
        measurement = self._measurement if same_step else None
        return mime_bundle(self.footprint, self.gpu, widget=self.widget, measurement=measurement)

    # -- rendering --------------------------------------------------------------
    def _render(self, table: bool = True) -> None:
        fp, gpu = self.footprint, self.gpu
        self.headline.value = headline_html(fp, gpu)
        self.bar.value = category_bar_html(fp, gpu)
        self.notes.value = notes_html(fp, gpu)
        self.measured.value = self._measured_html()
        if table:
            self._render_table()

    def _show_fit_top(self) -> None:
        # judged at the batch the model was estimated at, so it does not blink
        # with the slider: it changes only with a re-estimate
        self.fit_top_button.layout.display = None if shows_range(self._base) else "none"

    def _render_table(self) -> None:
        self.table.value = layer_table_html(self.footprint, self.order_select.value)
        if self.export_button.value:
            self._fill_export()

    def _fill_export(self) -> None:
        # a read-only textarea: select-all and copy take exactly the Markdown
        text = self.markdown()
        rows = min(30, text.count("\n") + 2)
        self.export_text.value = (
            f'<textarea readonly wrap="off" rows="{rows}" spellcheck="false" '
            'style="width:100%;font-family:monospace;font-size:0.85em;white-space:pre">'
            f"{escape(text)}</textarea>"
        )

    def _measured_html(self) -> str:
        # always against the footprint that was measured, whatever the slider says
        return measurement_html(self._measured_fp, self._measurement)

    # -- events --------------------------------------------------------------
    def _on_batch(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        self.batch_text.value = int(change["new"])
        self.footprint = self._base.at(int(change["new"]))
        self._render()

    def _on_batch_text(self, change: dict[str, Any]) -> None:
        value = int(change["new"])
        if value > self.batch_slider.max:
            self.batch_slider.max = value + value // 4
        self.batch_slider.value = value  # renders, unless it already shows this batch

    def _on_gpu(self, change: dict[str, Any]) -> None:
        if change["new"] == _CUSTOM:
            self.custom_gib.layout.display = None
            self._set_gpu(custom_gpu(int(self.custom_gib.value * 2**30)))
        else:
            self.custom_gib.layout.display = "none"
            self._set_gpu(change["new"])

    def _on_custom(self, change: dict[str, Any]) -> None:
        if self.gpu_select.value == _CUSTOM and change["new"] and change["new"] > 0:
            self._set_gpu(custom_gpu(int(change["new"] * 2**30)))

    def _set_gpu(self, gpu: Gpu) -> None:
        self.gpu = gpu
        # the table and its Markdown do not depend on the card
        self._render(table=False)

    def _on_fit(self, _button: Any = None, schedule: str = "estimate") -> None:
        fit = self._base.max_batch_size(self.gpu.memory_bytes, schedule=schedule)
        if fit == 0:
            self.status.value = f"<i>Not even batch 1 fits on a {escape(self.gpu.name)}.</i>"
            return
        if fit >= MAX_BATCH_SIZE_CAP:
            self.status.value = "<i>Memory does not limit the batch size on this card.</i>"
            return
        self.batch_text.value = fit

    def _on_export(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self._fill_export()
            self.export_text.layout.display = None
        else:
            self.export_text.layout.display = "none"

    def _on_setting(self, change: dict[str, Any]) -> None:
        if self._syncing or self._reestimate_fn is None:
            return
        wanted = {
            "optimizer": self._optimizer_arg(self.optimizer_select.value),
            "precision": self.precision_select.value,
            "training": bool(self.mode_select.value),
        }
        self.optimizer_select.disabled = not wanted["training"]
        self._set_busy(True, wanted)
        try:
            new = self._reestimate_fn(**wanted)
        except Exception as exc:  # show it in the panel; a widget callback has no cell
            self._restore_settings()
            self._set_busy(False)
            self.status.value = (
                f'<span style="color:#c62828">Could not re-estimate: '
                f"{escape(type(exc).__name__)}: {escape(str(exc))}</span>"
            )
            return
        self._base = new
        self._settings = wanted
        self.footprint = new.at(self.batch_slider.value)
        self._set_busy(False)
        self.status.value = ""
        self._show_fit_top()
        self._render()

    def _set_busy(self, busy: bool, wanted: dict[str, Any] | None = None) -> None:
        self.busy = busy
        for w in (
            self.batch_slider,
            self.batch_text,
            self.fit_button,
            self.fit_top_button,
            self.gpu_select,
            self.precision_select,
            self.mode_select,
        ):
            w.disabled = busy
        self.optimizer_select.disabled = busy or not self.mode_select.value
        if busy and wanted is not None:
            mode = "training" if wanted["training"] else "inference"
            self.status.value = (
                '<span style="color:#1565c0">Re-estimating '
                f"({escape(mode)}, precision {escape(str(wanted['precision']))}"
                + (f", optimizer {escape(str(wanted['optimizer']))}" if wanted["training"] else "")
                + "): the model is traced again, this can take a few seconds…</span>"
            )

    def _restore_settings(self) -> None:
        self._syncing = True
        try:
            self.optimizer_select.value = self._optimizer_value(self._settings["optimizer"])
            self.precision_select.value = self._settings["precision"]
            self.mode_select.value = self._settings["training"]
        finally:
            self._syncing = False

    # -- helpers ---------------------------------------------------------------
    @staticmethod
    def _settings_of(fp: Footprint) -> dict[str, Any]:
        return {"optimizer": fp.optimizer, "precision": fp.precision, "training": fp.training}

    @staticmethod
    def _optimizer_options(current: str | None) -> list[tuple[str, str]]:
        options = [(name, name) for name in OPTIMIZER_NAMES]
        if current is None:
            options.insert(0, (_DEFAULT_OPTIMIZER, _DEFAULT_OPTIMIZER))
        elif current.lower() not in OPTIMIZER_NAMES:
            options.insert(0, (current, current))
        return options

    @staticmethod
    def _optimizer_value(current: str | None) -> str:
        if current is None:
            return _DEFAULT_OPTIMIZER
        return current.lower() if current.lower() in OPTIMIZER_NAMES else current

    @staticmethod
    def _optimizer_arg(value: str) -> str | None:
        return None if value == _DEFAULT_OPTIMIZER else value

    @staticmethod
    def _slider_max(batch: int) -> int:
        # around the batch the user asked about, so small steps stay reachable;
        # "Largest that fits" stretches the range when the limit is further out
        return int(max(64, 4 * batch))

    @staticmethod
    def _title_html(name: str, fp: Footprint) -> str:
        extra = ""
        if name != fp.model_name:
            extra = f" <span style='opacity:0.7'>(Keras name {escape(str(fp.model_name))})</span>"
        return (
            f'<div style="font-size:1.15em"><b>GPU memory of {escape(str(name))}</b>{extra}</div>'
        )
