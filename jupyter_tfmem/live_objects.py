"""The user's own classes and functions, handed back when a live model is rebuilt.

Estimating under another precision rebuilds the model from its config
(``estimator._with_precision``).  A config names the user's layer classes
and activation functions, which Keras finds only if they were registered,
and holds a ``Lambda``'s function as bytecode, which Keras loads only with
safe mode off and then runs against the wrong globals (a notebook's ``tf``
or ``ops`` are not there).  The model in hand has all of these as live
objects, so the rebuild takes them from it instead: nothing is loaded from
bytecode, and the user's objects are only read.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

#: The config keys of a ``Lambda`` that may hold a function, and the
#: attribute each is read back from.
_LAMBDA_FUNCTIONS = {"function": "function", "output_shape": "_output_shape", "mask": "mask"}


def _layers(model: Any) -> list[Any]:
    try:
        return list(model._flatten_layers(include_self=True, recursive=True))
    except (AttributeError, TypeError):
        return [model]


def _user_defined(obj: Any) -> bool:
    return not str(getattr(obj, "__module__", "") or "").startswith(("keras", "tensorflow"))


def custom_objects(model: Any) -> dict[str, Any]:
    """The classes and named functions of ``model``'s layers that Keras does not define.

    Keyed as a config names them: a class by its name and its registered
    name, a function by its name.  Where two different functions share a
    name, the first layer's is kept.
    """
    import keras

    found: dict[str, Any] = {}
    for layer in _layers(model):
        cls = type(layer)
        if _user_defined(cls):
            found.setdefault(cls.__name__, cls)
            found.setdefault(keras.saving.get_registered_name(cls), cls)
        for value in vars(layer).values():
            if (
                isinstance(value, types.FunctionType)
                and value.__name__ != "<lambda>"
                and _user_defined(value)
            ):
                found.setdefault(value.__name__, value)
    return found


def with_live_lambdas(config: Any, model: Any, objects: dict[str, Any]) -> Any:
    """``config`` with each ``Lambda``'s serialized function made a reference to the live one.

    The functions are added to ``objects`` (the custom objects the rebuild
    runs under) under names no user object can have.
    """
    import keras

    lambdas = {
        layer.name: layer for layer in _layers(model) if isinstance(layer, keras.layers.Lambda)
    }

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, Mapping):
            return node
        out = {k: walk(v) for k, v in node.items()}
        inner = out.get("config")
        if out.get("class_name") == "Lambda" and isinstance(inner, Mapping):
            layer = lambdas.get(inner.get("name"))
            if layer is not None:
                out["config"] = _referring(dict(inner), layer, objects)
        return out

    return walk(config)


def _referring(config: dict[str, Any], layer: Any, objects: dict[str, Any]) -> dict[str, Any]:
    for key, attr in _LAMBDA_FUNCTIONS.items():
        live = getattr(layer, attr, None)
        if key in config and callable(live) and not isinstance(live, type):
            token = f"tfmem>{layer.name}>{key}"
            objects[token] = live
            config[key] = {
                "module": "builtins",
                "class_name": "function",
                "config": token,
                "registered_name": "function",
            }
    return config
