"""``pip install .`` builds the extension and JupyterLab sees it enabled.

This checks the environment the tests run in, so it needs the package
installed (``.ci/test`` does ``pip install .[test]``; for development,
``pip install -e .`` then ``jupyter labextension develop --overwrite .``).
"""

from __future__ import annotations

import re
import subprocess
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_labextension_list_shows_it_enabled():
    proc = subprocess.run(
        [sys.executable, "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    listing = ANSI.sub("", proc.stdout + proc.stderr)
    line = next((ln for ln in listing.splitlines() if "jupyter-tfmem" in ln), None)
    assert line is not None, (
        "jupyter-tfmem is not installed for JupyterLab: `pip install .`, or for development "
        "`pip install -e .` then `jupyter labextension develop --overwrite .`\n" + listing
    )
    assert re.search(r"jupyter-tfmem v\S+ enabled\s+OK", line), line
