"""The two estimates people use today, written from their published descriptions.

They are the yardstick the estimator must beat (../shared/seed-question.md):

* ``cs231n_rule``: the Stanford CS231n rule of thumb.  Activations of every
  layer, doubled for their gradients when training; parameters times 3 or
  more (parameters, gradients, and an optimizer cache per slot); the input
  batch as the "miscellaneous"; all counted at 4 bytes a value.  For inference
  the rule says a layer's activations can be dropped once the next layer has
  them, read here as: the largest (inputs + outputs) of any one layer.
* ``so_model_memory``: the ``get_model_memory_usage`` function passed around on
  Stack Overflow.  Each layer's output counted once per sample, times the
  batch, plus all parameters, at 4 bytes a value; it ignores the step
  (training and inference get the same number).

Both walk the Keras model only; neither runs it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

BYTES_PER_VALUE = 4

#: Parameter copies the rule counts: parameters + gradients + one cache per slot.
_PARAM_COPIES = {"sgd": 2, "sgd_momentum": 3, "rmsprop": 3, "adagrad": 3, "adam": 4, "adamw": 4}


def _elements(shape: Any) -> int:
    """Values per sample: the product of the non-batch dimensions."""
    dims = [d for d in tuple(shape)[1:] if d is not None]
    return math.prod(dims) if dims else 1


def _node_tensors(node: Any, attr: str) -> list[Any]:
    tensors = getattr(node, attr, None)
    if tensors is None:
        return []
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    return [t for t in tensors if hasattr(t, "shape")]


def _calls(model: Any) -> Iterator[tuple[Any, list[Any], list[Any]]]:
    """(layer, input tensors, output tensors) per call of each layer, nested models opened."""
    for layer in getattr(model, "layers", []):
        if hasattr(layer, "layers") and getattr(layer, "layers", None):
            yield from _calls(layer)
            continue
        nodes = getattr(layer, "_inbound_nodes", None) or []
        if not nodes:
            try:
                yield layer, [], [layer.output]
            except (AttributeError, ValueError):
                continue
            continue
        for node in nodes:
            yield layer, _node_tensors(node, "input_tensors"), _node_tensors(node, "outputs")


def _is_input_layer(layer: Any) -> bool:
    return type(layer).__name__ == "InputLayer"


def _optimizer_key(optimizer: Any) -> str:
    if optimizer is None:
        return "adam"
    if isinstance(optimizer, str):
        return optimizer.lower()
    if isinstance(optimizer, dict):
        name = str(optimizer.get("class_name", "")).lower()
        if name == "sgd" and optimizer.get("config", {}).get("momentum"):
            return "sgd_momentum"
        return name
    name = type(optimizer).__name__.lower()
    if name == "sgd" and float(getattr(optimizer, "momentum", 0.0) or 0.0) > 0:
        return "sgd_momentum"
    return name


def _input_values(model: Any) -> int:
    # a subclassed model has no symbolic inputs or layer outputs to walk:
    # the recipes see only its parameters, as they would in a user's hands
    return sum(_elements(t.shape) for t in getattr(model, "inputs", None) or ())


def cs231n_rule(
    model: Any, batch_size: int, *, training: bool = True, optimizer: Any = None
) -> int:
    """Bytes by the CS231n rule of thumb (see the module docstring)."""
    params = model.count_params()
    misc = _input_values(model) * batch_size
    if training:
        activations = 0
        for layer, _, outputs in _calls(model):
            if not _is_input_layer(layer):
                activations += sum(_elements(t.shape) for t in outputs)
        copies = _PARAM_COPIES.get(_optimizer_key(optimizer), 3)
        values = 2 * activations * batch_size + copies * params + misc
    else:
        widest = 0
        for layer, inputs, outputs in _calls(model):
            if _is_input_layer(layer):
                continue
            live = sum(_elements(t.shape) for t in (*inputs, *outputs))
            widest = max(widest, live)
        values = widest * batch_size + params + misc
    return int(values * BYTES_PER_VALUE)


def so_model_memory(
    model: Any, batch_size: int, *, training: bool = True, optimizer: Any = None
) -> int:
    """Bytes by the Stack Overflow ``get_model_memory_usage`` recipe (mode ignored)."""
    del training, optimizer  # the recipe does not look at them
    per_sample = 0
    for _, _, outputs in _calls(model):
        per_sample += sum(_elements(t.shape) for t in outputs)
    params = model.count_params()
    return int((per_sample * batch_size + params) * BYTES_PER_VALUE)


BASELINES = {"cs231n": cs231n_rule, "stackoverflow": so_model_memory}
