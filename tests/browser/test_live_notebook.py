"""The whole flow: run ``%tfmem`` in JupyterLab, use the panel, save, reopen later.

The magic's one output carries the ipywidgets panel and the report's JSON.
While its kernel lives, the panel shows and its slider changes the total;
once the kernel is gone (the notebook reopened later, with a new kernel that
never saw the widget), the same output shows the static report instead of
"model not found".
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from jupyter_tfmem.views.data import MIME_TYPE

from .lab_helpers import (
    KERNEL_START_TIMEOUT,
    REPORT,
    open_notebook,
    screenshot,
    wait_for_idle_kernel,
    write_notebook,
)

pytestmark = pytest.mark.browser

MODEL_CELL = """\
import keras

model = keras.Sequential(
    [
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(16, 3, activation="relu", name="conv"),
        keras.layers.GlobalAveragePooling2D(name="pool"),
        keras.layers.Dense(10, name="logits"),
    ],
    name="tiny_cnn",
)"""

HEADLINE = re.compile(r"for one training step of tiny_cnn at batch (\d+)")
ANY_HEADLINE = re.compile(r"for one (?:training|inference) step of .+ at batch (\d+)")
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.ipynb"


def headline(panel, pattern: re.Pattern = HEADLINE):
    return panel.locator(".widget-html", has_text=pattern).first


def saved_reports(path: Path) -> list[dict]:
    """The report JSON of every output in a saved notebook."""
    saved = json.loads(path.read_text())
    return [
        out["data"][MIME_TYPE]
        for cell in saved["cells"]
        for out in cell.get("outputs", [])
        if MIME_TYPE in out.get("data", {})
    ]


def save_and_stop_kernels(page, lab_server) -> None:
    page.get_by_role("menuitem", name="File", exact=True).click()
    page.get_by_role("menuitem", name=re.compile("^Save Notebook")).first.click()
    expect(page.locator(".lm-TabBar-tab.jp-mod-dirty")).to_have_count(0)
    for session in lab_server.api("sessions"):
        lab_server.api(f"sessions/{session['id']}", method="DELETE")


def run_all(page) -> None:
    wait_for_idle_kernel(page)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name=re.compile("^Run All Cells")).click()


def test_panel_then_saved_report(lab_page, lab_server, screenshot_dir):
    page, watch = lab_page
    cells = [
        nbformat.v4.new_code_cell(MODEL_CELL),
        nbformat.v4.new_code_cell("%load_ext jupyter_tfmem"),
        nbformat.v4.new_code_cell("%tfmem model --batch 8"),
    ]
    path = lab_server.root / "live_panel.ipynb"
    write_notebook(path, cells, kernel=True)

    open_notebook(page, lab_server.lab_url(path.name), path.name)
    run_all(page)

    # The live panel replaces the static report while the kernel lives.
    output = page.locator(".jp-tfmem-output.jp-tfmem-mod-live")
    expect(output).to_have_count(1, timeout=KERNEL_START_TIMEOUT)
    slider = output.locator(".widget-slider")
    expect(slider).to_be_visible()
    expect(output.locator(REPORT)).to_be_hidden()
    before = headline(output).text_content()
    assert HEADLINE.search(before).group(1) == "8"
    screenshot(page, screenshot_dir, "live-panel-batch-8")

    # Move the ipywidgets slider with the keyboard, as a person can.
    slider.locator(".noUi-handle").focus()
    page.keyboard.press("End")
    expect(headline(output)).not_to_have_text(re.compile(r"at batch 8 \("))
    after = headline(output).text_content()
    batch = int(HEADLINE.search(after).group(1))
    assert batch > 8
    assert after.split(" for one ")[0] != before.split(" for one ")[0]  # the total moved
    screenshot(page, screenshot_dir, f"live-panel-batch-{batch}")

    # Save, stop the kernel, and come back later.
    save_and_stop_kernels(page, lab_server)
    data = saved_reports(path)
    assert len(data) == 1

    open_notebook(page, lab_server.lab_url(path.name), path.name)
    report = page.locator(REPORT)
    expect(report).to_be_visible(timeout=KERNEL_START_TIMEOUT)
    expect(report.locator(".jp-tfmem-total")).to_have_attribute(
        "data-bytes", str(data[0]["total_bytes"])
    )
    expect(report.locator(".jp-tfmem-model")).to_have_text("tiny_cnn")
    layer_names = report.locator(".jp-tfmem-layer-name").all_text_contents()
    assert {"conv", "pool", "logits"} <= set(layer_names)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    screenshot(page, screenshot_dir, "reopened-report", report)
    assert watch.dialogs == []


def test_quickstart_example(lab_page, lab_server, screenshot_dir):
    """The example notebook users start from: run it all, use a panel, reopen it."""
    page, watch = lab_page
    assert QUICKSTART.exists(), f"{QUICKSTART} is missing"
    path = lab_server.root / "quickstart.ipynb"
    shutil.copy(QUICKSTART, path)

    open_notebook(page, lab_server.lab_url(path.name), path.name)
    run_all(page)
    expect(page.locator(".jp-Notebook-ExecutionIndicator").first).to_have_attribute(
        "data-status", "idle", timeout=KERNEL_START_TIMEOUT
    )
    live = page.locator(".jp-tfmem-output.jp-tfmem-mod-live")
    expect(live.first).to_be_visible(timeout=KERNEL_START_TIMEOUT)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    panel = live.first
    before = headline(panel, ANY_HEADLINE).text_content()
    start = ANY_HEADLINE.search(before).group(1)
    panel.locator(".widget-slider .noUi-handle").focus()
    page.keyboard.press("End")
    expect(headline(panel, ANY_HEADLINE)).not_to_have_text(re.compile(rf"at batch {start} \("))
    after = headline(panel, ANY_HEADLINE).text_content()
    assert after.split(" for one ")[0] != before.split(" for one ")[0]  # the total moved
    screenshot(page, screenshot_dir, "quickstart-panel", panel)

    save_and_stop_kernels(page, lab_server)
    data = saved_reports(path)
    assert data, "the quickstart shows no tfmem report"
    open_notebook(page, lab_server.lab_url(path.name), path.name)
    reports = page.locator(REPORT)
    expect(reports).to_have_count(len(data), timeout=KERNEL_START_TIMEOUT)
    for i, report in enumerate(data):
        shown = reports.nth(i)
        expect(shown).to_be_visible()
        expect(shown.locator(".jp-tfmem-total")).to_have_attribute(
            "data-bytes", str(report["total_bytes"])
        )
    screenshot(page, screenshot_dir, "quickstart-reopened", reports.first)
    assert watch.dialogs == []
