"""Keras ``MultiOptimizer``s built on a function: no config or child process carries one.

A ``MultiOptimizer`` on an ``OptimizerMap`` round-trips through its config
like any optimizer.  One on a function does not: Keras refuses to load a
lambda, and a function defined in a notebook cannot be imported elsewhere.
The estimator and the measuring parent therefore ask the function
themselves, variable by variable; this module holds what both need.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["OptimizerChoiceError", "chosen_for", "multi_optimizer_spec", "picks_by_function"]


class OptimizerChoiceError(TypeError):
    """A ``MultiOptimizer``'s function gave a variable no optimizer (nor would ``fit``)."""


def picks_by_function(optimizer: Any) -> bool:
    """Whether ``optimizer`` is a ``MultiOptimizer`` on a function, not an ``OptimizerMap``."""
    import keras

    multi = getattr(keras.optimizers, "MultiOptimizer", None)
    if multi is None or not isinstance(optimizer, multi):
        return False
    return not isinstance(getattr(optimizer, "_optimizer_map", None), keras.optimizers.OptimizerMap)


def chosen_for(optimizer: Any, variable: Any) -> Any:
    """The optimizer ``optimizer``'s function gives ``variable``; an error if it gives none."""
    import keras

    chosen = optimizer._optimizer_map(variable)
    if not isinstance(chosen, keras.optimizers.Optimizer):
        raise OptimizerChoiceError(
            f"the MultiOptimizer's function returned {type(chosen).__name__} for "
            f"{getattr(variable, 'path', variable)!r}; it must return an optimizer"
        )
    return chosen


def multi_optimizer_spec(
    default: Mapping[str, Any], patterns: Mapping[str, Mapping[str, Any]], **config: Any
) -> dict[str, Any]:
    """A ``MultiOptimizer`` on an ``OptimizerMap`` as a config ``keras.optimizers.get`` loads.

    Each optimizer is a config too (``{"module", "class_name", "config"}``); the
    ``module`` keys are what lets Keras find ``OptimizerMap``, which it does
    not register by name.  ``patterns`` maps variable-path patterns to the
    optimizer their variables get; the others get ``default``.
    """
    return {
        "module": "keras.optimizers",
        "class_name": "MultiOptimizer",
        "config": {
            "optimizer_map": {
                "module": "keras.optimizers",
                "class_name": "OptimizerMap",
                "config": {"default_optimizer": dict(default), "optimizer_map": dict(patterns)},
            },
            **config,
        },
    }
