"""jupyter_tfmem: how much GPU memory a TensorFlow/Keras model needs, and why.

The core (``estimate``, ``measure``, ``Footprint``) imports no Jupyter module;
the magics and the panel load only through ``%load_ext jupyter_tfmem``.
"""

from __future__ import annotations

from typing import Any

from .footprint import CATEGORIES, Footprint

__version__ = "0.1.0"

__all__ = [
    "CATEGORIES",
    "Footprint",
    "Measurement",
    "__version__",
    "calibrate_overhead",
    "estimate",
    "measure",
]


def estimate(model: Any, batch_size: int, **kwargs: Any) -> Footprint:
    """Estimate one training (or inference) step's memory; see ``estimator.estimate``."""
    from .estimator import estimate as _estimate

    return _estimate(model, batch_size, **kwargs)


def measure(model: Any, batch_size: int, **kwargs: Any) -> Any:
    """Run real steps in a fresh process and read TF's allocator peak; see ``measurement``."""
    from .measurement import measure as _measure

    return _measure(model, batch_size, **kwargs)


def calibrate_overhead(measurement: Any, allocator_bytes: int | None = None) -> Any:
    """This GPU's overhead from one ``measure`` run; see ``overhead.calibrate_overhead``.

    ``estimate(model, 32).with_overhead(calibrate_overhead(measure(model, 32)))``
    gives a ``total_bytes`` that uses the card's own figure instead of the
    documented constants.
    """
    from .overhead import calibrate_overhead as _calibrate

    return _calibrate(measurement, allocator_bytes)


def __getattr__(name: str) -> Any:
    if name == "Measurement":
        from .measurement import Measurement

        return Measurement
    raise AttributeError(name)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_tfmem``: register ``%tfmem`` and ``%%tfmem``."""
    from .magics import load_ipython_extension as _load

    _load(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyter-tfmem"}]
