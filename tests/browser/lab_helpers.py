"""What a person does in JupyterLab, as Playwright steps shared by the browser tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import Locator, Page, expect

from jupyter_tfmem.footprint import Footprint
from jupyter_tfmem.views.text import (
    headline_sentences,
    layer_table,
    range_note,
    shows_range,
    table_cells,
)

KERNEL_START_TIMEOUT = 90_000  # ms; TensorFlow's import alone takes seconds
REPORT = ".jp-tfmem-report"


def write_notebook(path: Path, cells: list[Any], kernel: bool) -> None:
    """Save a notebook; without ``kernel`` it names no kernelspec at all."""
    nb = nbformat.v4.new_notebook(cells=cells)
    if kernel:
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb))


def open_notebook(page: Page, url: str, name: str) -> None:
    """Open a notebook and wait until its cells are on the page."""
    page.goto(url)
    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=60_000)
    expect(page.get_by_role("tab", name=re.compile(re.escape(name)))).to_be_visible()


def choose_no_kernel(page: Page) -> None:
    """Answer JupyterLab's kernel dialog with "No Kernel"."""
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible(timeout=30_000)
    dialog.get_by_role("button", name="No Kernel").click()
    expect(dialog).to_have_count(0)
    expect(page.locator(".jp-Toolbar-kernelName").first).to_have_text(re.compile("No Kernel"))


def wait_for_idle_kernel(page: Page, name: str = "Python 3") -> None:
    """Wait until the notebook's kernel has started and is idle.

    Running cells earlier makes JupyterLab ask for a kernel instead.
    """
    expect(page.locator(".jp-Toolbar-kernelName").first).to_contain_text(
        name, timeout=KERNEL_START_TIMEOUT
    )
    expect(page.locator(".jp-Notebook-ExecutionIndicator").first).to_have_attribute(
        "data-status", "idle", timeout=KERNEL_START_TIMEOUT
    )


def run_command(page: Page, label: str) -> None:
    """Run a command from the palette, as a person would type it."""
    page.get_by_role("menuitem", name="View", exact=True).click()
    page.get_by_role("menuitem", name=re.compile("Activate Command Palette")).click()
    palette = page.locator(".lm-CommandPalette-input").first
    expect(palette).to_be_visible()
    palette.fill(label)
    item = page.locator(".lm-CommandPalette-item", has_text=label).first
    expect(item).to_be_visible()
    page.keyboard.press("Enter")


def read_clipboard(page: Page) -> str:
    return page.evaluate("navigator.clipboard.readText()")


def write_clipboard(page: Page, text: str) -> None:
    page.evaluate("text => navigator.clipboard.writeText(text)", text)


def expect_report_at(report: Locator, fp: Footprint) -> None:
    """The rendered report shows exactly Python's numbers, sentences and table for ``fp``.

    "Why is the peak a range?" is there exactly when Python's notes have it.
    """
    expect(report).to_have_attribute("data-batch-size", str(fp.batch_size))
    live = report.locator(".jp-tfmem-live")
    expect(live).to_have_attribute("data-batch-size", str(fp.batch_size))
    for cls, value in (
        ("jp-tfmem-total", fp.total_bytes),
        ("jp-tfmem-peak", fp.peak_bytes),
        ("jp-tfmem-overhead", fp.overhead_bytes),
    ):
        stat = live.locator(f".{cls}")
        expect(stat).to_have_attribute("data-bytes", str(value))
        expect(stat.locator(".jp-tfmem-stat-bytes")).to_have_text(f"{value:,} bytes")
    assert live.locator(".jp-tfmem-sentence").text_content() == headline_sentences(fp)[0]
    why = live.locator(".jp-tfmem-range-note")
    if shows_range(fp):
        assert why.text_content() == f"Why is the peak a range? {range_note(fp)}"
    else:
        expect(why).to_have_count(0)
    for cat, c in fp.categories.items():
        item = live.locator(f'.jp-tfmem-legend-item[data-category="{cat}"]')
        expect(item).to_have_attribute("data-bytes", str(c.bytes))
    want_rows = [table_cells(fp, row) for row in layer_table(fp)]
    got_rows = live.locator(".jp-tfmem-layers tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert got_rows == want_rows, f"table at batch {fp.batch_size}:\n{got_rows}\n!=\n{want_rows}"
    shown = live.locator(".jp-tfmem-markdown").text_content()
    want = fp.to_markdown()
    assert shown == want, f"Markdown at batch {fp.batch_size}:\n{shown}\n!=\n{want}"


def screenshot(page: Page, folder: Path, name: str, target: Locator | None = None) -> Path:
    """The whole window, or ``target`` scrolled into view (notebooks scroll inside)."""
    path = folder / f"{name}.png"
    if target is None:
        page.screenshot(path=str(path), full_page=True)
    else:
        target.screenshot(path=str(path))
    return path
