"""A saved, untrusted notebook with a hostile report, opened without any kernel.

Whatever the browser shows must be Python's ``Footprint.at(n)`` for the batch
size on the slider, the Markdown copy must be ``Footprint.at(n).to_markdown()``,
and a layer or schedule named ``<img src=x onerror=alert(1)>`` must stay text.
"""

from __future__ import annotations

import dataclasses

import nbformat
import pytest
from conftest import HOSTILE_NAME, make_footprint
from playwright.sync_api import expect

from jupyter_tfmem.views.data import MIME_TYPE
from jupyter_tfmem.views.mime import mime_bundle

from .lab_helpers import (
    REPORT,
    choose_no_kernel,
    expect_report_at,
    open_notebook,
    read_clipboard,
    run_command,
    screenshot,
    write_clipboard,
    write_notebook,
)
from .test_report_math import with_schedules

pytestmark = pytest.mark.browser

COMMAND_LABEL = "Copy tfmem report as Markdown"


def test_saved_hostile_report_renders_without_kernel(lab_page, lab_server, screenshot_dir):
    page, watch = lab_page
    # Another schedule named like the layer: "Why is the peak a range?" quotes it
    # up to batch 32 and goes away at 1000 (expect_report_at checks both).
    fp = with_schedules(make_footprint(batch_size=32, hostile=True))
    bundle = mime_bundle(fp)
    assert MIME_TYPE in bundle
    output = nbformat.v4.new_output("display_data", data=bundle)
    cells = [
        nbformat.v4.new_markdown_cell("A report saved earlier; no kernel is running."),
        nbformat.v4.new_code_cell("%tfmem model --batch 32", outputs=[output]),
    ]
    write_notebook(lab_server.root / "saved_report.ipynb", cells, kernel=False)

    open_notebook(page, lab_server.lab_url("saved_report.ipynb"), "saved_report.ipynb")
    choose_no_kernel(page)
    report = page.locator(REPORT)
    expect(report).to_have_count(1)
    expect(report).to_be_visible()

    # The hostile names are text, and nothing they contain ran or was parsed.
    expect(report.locator(".jp-tfmem-model")).to_have_text(HOSTILE_NAME, use_inner_text=False)
    names = report.locator(".jp-tfmem-layers .jp-tfmem-layer-name").all_text_contents()
    assert HOSTILE_NAME in names
    why = report.locator(".jp-tfmem-range-note").text_content()
    assert f"the other schedules give {HOSTILE_NAME}: " in why
    assert report.locator("img").count() == 0
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("[onerror]").count() == 0

    # At the saved batch size, then after moving the slider as a person would.
    expect_report_at(report, fp)
    screenshot(page, screenshot_dir, "saved-report-batch-32")
    slider = report.locator("input.jp-tfmem-slider")
    slider.focus()
    page.keyboard.press("Home")
    expect_report_at(report, fp.at(1))
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    expect_report_at(report, fp.at(5))
    assert fp.at(5).total_bytes != fp.total_bytes  # the slider really changed the total

    number = report.locator("input.jp-tfmem-batch-input")
    number.fill("1000")
    number.press("Enter")
    expect_report_at(report, fp.at(1000))
    expect(slider).to_have_value("512")  # clamped to the slider's end, the report is not
    screenshot(page, screenshot_dir, "saved-report-batch-1000")

    # "Copy as Markdown" on the report copies the table at the batch size shown.
    write_clipboard(page, "sentinel")
    report.get_by_role("button", name="Copy as Markdown").click()
    expect(report.locator(".jp-tfmem-copy-status")).to_have_text("Copied.")
    copied = read_clipboard(page)
    assert copied == fp.at(1000).to_markdown()
    assert "\\<img src=x onerror=alert(1)\\>\\|bad name" in copied

    # The palette command copies the active cell's report at its current batch size.
    slider.focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    expect_report_at(report, fp.at(2))
    page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").first.click()
    write_clipboard(page, "sentinel")
    run_command(page, COMMAND_LABEL)
    expect(page.locator(".jp-Notification-Toast, .Toastify__toast").first).to_be_visible()
    assert read_clipboard(page) == fp.at(2).to_markdown()

    screenshot(page, screenshot_dir, "saved-report-after-copy")
    assert watch.dialogs == [], watch.dialogs
    assert not [e for e in watch.errors if "tfmem" in e.lower()], watch.errors


def test_malformed_report_shows_a_message(lab_page, lab_server):
    page, watch = lab_page
    bad = {MIME_TYPE: {"batch_size": "<img src=x onerror=alert(2)>", "lines": []}}
    # A report that is fine but for one of its other schedules.
    bad_scenario = make_footprint().to_dict()
    bad_scenario["scenarios"] = [{"label": "<img src=x onerror=alert(3)>", "lines": []}]
    cells = [
        nbformat.v4.new_code_cell(
            "",
            outputs=[
                nbformat.v4.new_output("display_data", data=bad),
                nbformat.v4.new_output("display_data", data={MIME_TYPE: bad_scenario}),
            ],
        )
    ]
    write_notebook(lab_server.root / "bad_report.ipynb", cells, kernel=False)
    open_notebook(page, lab_server.lab_url("bad_report.ipynb"), "bad_report.ipynb")
    choose_no_kernel(page)
    error = page.locator(".jp-tfmem-error")
    expect(error).to_have_count(2)
    expect(error.first).to_contain_text("could not show this report")
    expect(error.nth(1)).to_have_text(
        'jupyter_tfmem could not show this report: scenario 0 "lines" should be a list '
        "of at least one [a, b]."
    )
    expect(page.locator(REPORT).locator(".jp-tfmem-live")).to_have_count(0)
    assert page.locator('img[src="x"]').count() == 0
    assert watch.dialogs == []


def test_a_stateful_models_report_has_no_batch_to_move_to(lab_page, lab_server):
    """``fixed_batch``: the slider, the number and the reset are disabled, and say why."""
    page, watch = lab_page
    fp = dataclasses.replace(make_footprint(batch_size=8), fixed_batch=8)
    output = nbformat.v4.new_output("display_data", data=mime_bundle(fp))
    cells = [nbformat.v4.new_code_cell("%tfmem stateful --batch 8", outputs=[output])]
    write_notebook(lab_server.root / "stateful_report.ipynb", cells, kernel=False)
    open_notebook(page, lab_server.lab_url("stateful_report.ipynb"), "stateful_report.ipynb")
    choose_no_kernel(page)
    report = page.locator(REPORT)
    expect(report).to_have_count(1)
    expect_report_at(report, fp)
    for control in ("input.jp-tfmem-slider", "input.jp-tfmem-batch-input", ".jp-tfmem-reset"):
        expect(report.locator(control)).to_be_disabled()
        expect(report.locator(control)).to_have_attribute(
            "title", "A stateful layer fixes this model's batch at 8"
        )
    assert watch.dialogs == [] and not [e for e in watch.errors if "tfmem" in e.lower()]
