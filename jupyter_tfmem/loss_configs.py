"""Losses from their names and configs, including those ``keras.losses.get`` refuses.

Keras 3.15 exports ``CategoricalGeneralizedCrossEntropy`` and its function
``categorical_generalized_cross_entropy`` from ``keras.losses`` without
listing them in the registry ``get`` and ``deserialize`` read: ``compile``
refuses the name ("Could not interpret loss identifier"), and deserializing
the class's own config gives back the string ``"CategoricalGeneralizedCrossEntropy"``.
``measure`` sends the loss to its child process as a name or a config, so
without this a model compiled with that loss could not be measured, and
``estimate(loss=...)`` or ``tfmem --loss`` could not take its name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["loss_from_spec", "losses_from_spec"]


def loss_from_spec(spec: Any) -> Any:
    """The loss ``spec`` names: a name, a ``{"class_name", "config"}`` dict, or a loss.

    A name Keras accepts is returned as it is (``compile`` takes it); the
    name (the class's or its snake-case one) or config of a loss class
    ``keras.losses`` exports that the registry does not list is built from
    that class.  Anything else gets Keras's own ``ValueError``.
    """
    import keras

    if isinstance(spec, str):
        try:
            keras.losses.get(spec)
        except ValueError:
            found = _exported_loss(spec)
            if found is None:
                raise
            return found()
        return spec
    if not isinstance(spec, Mapping):
        return spec
    built = keras.losses.deserialize(dict(spec))
    if isinstance(built, str):  # the registry did not know the class: Keras returns its name
        found = _exported_loss(str(spec.get("class_name")))
        if found is not None:
            return found.from_config(dict(spec.get("config") or {}))
        return keras.losses.get(dict(spec))  # raises Keras's "could not interpret"
    return built


def losses_from_spec(spec: Any) -> Any:
    """``loss_from_spec`` for every loss in ``spec``: one, a list, or a dict by output name."""
    if spec is None:
        return None
    if isinstance(spec, (list, tuple)):
        return [losses_from_spec(item) for item in spec]
    if isinstance(spec, Mapping) and "class_name" not in spec:
        return {key: losses_from_spec(item) for key, item in spec.items()}
    return loss_from_spec(spec)


def _exported_loss(name: str) -> Any:
    """The loss class ``keras.losses`` exports as ``name``, by class or snake-case name.

    The class, not the function of the same name: Keras's
    ``categorical_generalized_cross_entropy`` function has no default for its
    ``q``, the class does.  ``None`` if there is none.
    """
    import keras

    for attr, obj in vars(keras.losses).items():
        if (
            isinstance(obj, type)
            and issubclass(obj, keras.losses.Loss)
            and obj is not keras.losses.Loss
            and name in (attr, _snake(attr))
        ):
            return obj
    return None


def _snake(name: str) -> str:
    """``CategoricalGeneralizedCrossEntropy`` -> ``categorical_generalized_cross_entropy``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
