"""The MIME bundle a ``%tfmem`` output carries.

A live kernel shows the widget; everything else that opens the saved
notebook (JupyterLab without the kernel, nbconvert, GitHub) falls back to
the JupyterLab renderer's JSON, the HTML, the Markdown or the text, which
all describe the same Footprint.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .data import MIME_TYPE
from .html import footprint_to_html
from .text import footprint_report_markdown, footprint_to_text

if TYPE_CHECKING:
    from ..footprint import Footprint
    from ..gpus import Gpu

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def mime_bundle(
    fp: Footprint, gpu: Gpu | None = None, widget: Any = None, measurement: Any = None
) -> dict[str, Any]:
    """Every static rendering of ``fp``, plus the widget's view when one is given.

    ``gpu`` decides the "fits / does not fit" line of the static renderings;
    the JSON stays card-independent (the renderer has its own card picker).
    ``measurement`` (of the same step as ``fp``) adds estimate vs measured.
    """
    data = fp.to_dict()
    json.dumps(data, allow_nan=False)  # fail here, not in the front end, on a bad number
    bundle: dict[str, Any] = {
        MIME_TYPE: data,
        "text/html": footprint_to_html(fp, gpu, measurement),
        "text/markdown": footprint_report_markdown(fp, gpu, measurement),
        "text/plain": footprint_to_text(fp, gpu, measurement),
    }
    if widget is not None:
        view = widget._repr_mimebundle_() or {}
        if WIDGET_VIEW_MIME in view:
            bundle[WIDGET_VIEW_MIME] = view[WIDGET_VIEW_MIME]
    return bundle
