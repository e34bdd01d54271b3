"""The start of a fresh-process driver that runs a zoo case's step as ``measure`` does.

The scripts that watch TF run a step (``graph_match.py``, ``tf_order.py``,
``tf_timeline.py``) each run it in a fresh process, so that nothing built
before is in TF's allocator or graph dumps.  ``ZOO_STEP`` is the common start
of those processes' code: it reads the case name from ``sys.argv[1]``, builds
and compiles the model under the case's dtype policy and the batch the
measurement uses, and defines ``step()``, one ``train_on_batch`` (or
``predict_on_batch``), and ``warm_up()``, the steps ``measure`` runs before
the one it reads.  Each script appends what it does around the steps.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ZOO_STEP = textwrap.dedent(
    """
    import sys
    import tensorflow as tf
    import keras
    from jupyter_tfmem import _measure_worker as worker, measurement
    from jupyter_tfmem.zoo import get_case

    case = get_case(sys.argv[1])
    if case.precision:
        keras.config.set_dtype_policy(case.precision)
    model = case.builder()
    if case.training:  # as the measuring worker compiles it (an XLA case keeps jit_compile)
        worker._compile(keras, model, {"optimizer": case.optimizer, "loss": case.loss}, [])
    targets = [list(t) for t in case.target_shapes] if case.target_shapes else None
    x, y = worker._make_batch(
        tf, keras, model, case.batch_size, case.training, None, [], targets
    )


    def step():
        if case.training:
            return model.train_on_batch(x, y)
        return model.predict_on_batch(x)


    def warm_up():
        return measurement.warm_up(step, model, case.training)
    """
)


def run_fresh(driver: str, *args: str, doing: str, **env: str) -> None:
    """Run ``driver`` with ``args`` in a fresh process that imports this checkout.

    A fresh process, so that nothing built before is in TF's allocator or its
    function cache; ``env`` adds environment variables (TF's logging is off).
    """
    full = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), full.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", driver, *args], env=full, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{doing} failed:\n{done.stderr[-2000:]}")
