"""JupyterLab on 127.0.0.1 and Debian's Chromium driven by Playwright.

One server for the session, in throw-away folders (notebooks, settings,
workspaces, runtime), so nothing from the machine's own Jupyter setup leaks
in and nothing is left behind.  The server loads the extension built in this
repo (``jupyter_tfmem/labextension``) ahead of any installed copy, and its
kernels import ``jupyter_tfmem`` from this repo, so the tests check the code
next to them.  A missing Chromium, Playwright or extension build is a
failure, never a skip.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILT_EXTENSION = REPO / "jupyter_tfmem" / "labextension"
EXTENSION_NAME = "jupyter-tfmem"
CHROMIUM = os.environ.get("TFMEM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
SERVER_START_TIMEOUT = 90.0

#: JupyterLab settings for a quiet, deterministic UI.
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    # No news / update pop-up over the notebook.
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # Every cell in the DOM, so outputs below the fold exist for the checks.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # The extension manager would query PyPI.
    "@jupyterlab/extensionmanager-extension/plugin": {"enabled": False},
}


@dataclass
class LabServer:
    url: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen = field(repr=False)

    def lab_url(self, path: str = "") -> str:
        """Open ``path`` in a reset workspace, so earlier tests' tabs do not come back."""
        return f"{self.url}/lab/tree/{path}?reset&token={self.token}"

    def api(self, path: str, method: str = "GET") -> Any:
        req = urllib.request.Request(
            f"{self.url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_settings(folder: Path) -> None:
    for plugin, values in LAB_SETTINGS.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _extension_search_path(base: Path) -> Path:
    """A data dir whose labextensions/ holds this repo's build of the extension."""
    package = BUILT_EXTENSION / "package.json"
    if not package.exists():
        pytest.fail(
            f"{package} is missing: build the extension first "
            "(`pip install .`, or `npm install && npm run build` in labextension/)"
        )
    data = base / "jupyter-data"
    (data / "labextensions").mkdir(parents=True)
    (data / "labextensions" / EXTENSION_NAME).symlink_to(BUILT_EXTENSION)
    return data


def _wait_until_up(server: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        if server.process.poll() is not None:
            pytest.fail(f"jupyter lab exited early:\n{server.log.read_text()[-4000:]}")
        try:
            server.api("status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                pytest.fail(
                    f"jupyter lab did not answer within {SERVER_START_TIMEOUT:.0f} s:\n"
                    f"{server.log.read_text()[-4000:]}"
                )
            time.sleep(0.25)  # polling for readiness, not standing in for a result


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "notebooks"
    settings = base / "settings"
    for folder in (root, settings, base / "workspaces", base / "runtime", base / "config"):
        folder.mkdir()
    _write_settings(settings)
    data = _extension_search_path(base)
    token = secrets.token_hex(16)
    port = _free_port()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        JUPYTER_PATH=os.pathsep.join(filter(None, [str(data), env.get("JUPYTER_PATH")])),
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        IPYTHONDIR=str(base / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        TF_CPP_MIN_LOG_LEVEL="2",
    )
    log = base / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--allow-root",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.news_url=",
    ]
    with log.open("w") as out:
        process = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    server = LabServer(f"http://127.0.0.1:{port}", token, root, log, process)
    try:
        _wait_until_up(server)
        yield server
    finally:
        # The REST shutdown also stops kernels; SIGTERM/SIGKILL only if it hangs.
        try:
            server.api("shutdown", method="POST")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    print(f"\nbrowser screenshots: {SCREENSHOTS}")
    return SCREENSHOTS


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: `apt-get install chromium` "
            "(or set TFMEM_CHROMIUM to its path)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright for Python is missing: pip install '.[test]'")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageWatch:
    """Dialogs (alert/confirm) and page errors seen while a test ran."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def lab_page(
    request: pytest.FixtureRequest, chromium: Any, lab_server: LabServer, screenshot_dir: Path
) -> Iterator[tuple[Any, PageWatch]]:
    """A fresh browser context (clipboard allowed) with a page on the lab server.

    A failing test leaves a screenshot of the page as it was, next to the others.
    """
    context = chromium.new_context(
        viewport={"width": 1400, "height": 1000},
        permissions=["clipboard-read", "clipboard-write"],
    )
    context.set_default_timeout(30_000)
    page = context.new_page()
    watch = PageWatch()

    def on_dialog(dialog: Any) -> None:
        watch.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda err: watch.errors.append(str(err)))
    try:
        yield page, watch
        if request.node.stash.get(_CALL_FAILED, False):
            shot = screenshot_dir / f"FAILED-{request.node.name}.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"\nscreenshot of the failure: {shot}")
    finally:
        context.close()
