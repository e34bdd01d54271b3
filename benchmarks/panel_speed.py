"""How long one panel update takes when the batch-size slider or the GPU menu moves.

The panel promises updates well under 50 ms end to end on the kernel side, because
they only re-read the Footprint (``Footprint.at``), never trace the model.
This prints the time per update for a real model with many layers (ResNet50
at 64x64, built from code with random weights) and for one re-estimate (a
selector change), which does trace.  Run: ``python benchmarks/panel_speed.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout, installed or not


def main(argv: list[str]) -> int:
    import keras

    import jupyter_tfmem
    from jupyter_tfmem.gpus import CATALOG
    from jupyter_tfmem.panel import FootprintPanel

    model = keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    start = time.perf_counter()
    fp = jupyter_tfmem.estimate(model, 32)
    traced = time.perf_counter() - start

    def reestimate(**kwargs):
        return jupyter_tfmem.estimate(model, 32, **kwargs)

    panel = FootprintPanel(fp, reestimate, gpu=CATALOG[0])
    panel.export_button.value = True  # the export box re-renders too: the worst case

    panel.batch_text.value = 1024  # typing a batch stretches the slider's range
    slider = []
    for batch in [1, 2, 3, 5, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024] * 3:
        t0 = time.perf_counter()
        panel.batch_slider.value = batch
        slider.append(time.perf_counter() - t0)
    gpu = []
    for card in list(CATALOG) * 3:
        t0 = time.perf_counter()
        panel.gpu_select.value = card
        gpu.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    panel.optimizer_select.value = "sgd"
    selector = time.perf_counter() - t0

    def ms(values: list[float]) -> str:
        return (
            f"median {1000 * statistics.median(values):.1f} ms, "
            f"max {1000 * max(values):.1f} ms over {len(values)} updates"
        )

    print(f"model: {model.name}, {len(fp.layers)} table rows, {len(fp.lines)} peak lines")
    print(f"first estimate (traces the step): {traced:.1f} s")
    print(f"batch-size slider: {ms(slider)}")
    print(f"GPU menu:          {ms(gpu)}")
    print(f"optimizer change (re-estimates): {selector:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
