"""Optimizers from their configs, including those ``keras.optimizers.get`` refuses.

Keras 3.15's ``optimizers.get`` and ``optimizers.deserialize`` only know the
optimizers in their own registry, and ``Lamb`` is not in it: deserializing a
``Lamb``'s own config gives back the string ``"Lamb"``.  ``measure`` sends the
optimizer to its child process as a config, so without this a model trained
with Lamb could be estimated but not measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["optimizer_from_config"]


def optimizer_from_config(spec: Any) -> Any:
    """The optimizer ``spec`` names: a string, a config dict or an optimizer.

    A name or config of a class in ``keras.optimizers`` that the registry
    does not list ("lamb", any case) is built from that class; anything that
    is still not an optimizer gets Keras's own ``ValueError``.
    """
    import keras

    if isinstance(spec, str):
        spec = {"class_name": spec, "config": {}}
    if not isinstance(spec, Mapping):
        return keras.optimizers.get(spec)
    built = keras.optimizers.deserialize(dict(spec))  # it lower-cases class_name in place
    if not isinstance(built, keras.optimizers.Optimizer):
        cls = _optimizer_class(str(spec.get("class_name")))
        if cls is not None:
            built = cls.from_config(dict(spec.get("config") or {}))
    if not isinstance(built, keras.optimizers.Optimizer):
        return keras.optimizers.get(dict(spec))  # raises Keras's "could not interpret"
    return built


def _optimizer_class(name: str) -> Any:
    """The optimizer class ``keras.optimizers`` exports as ``name``, in any case."""
    import keras

    for attr, obj in vars(keras.optimizers).items():
        if (
            attr.lower() == name.lower()
            and isinstance(obj, type)
            and issubclass(obj, keras.optimizers.Optimizer)
        ):
            return obj
    return None
