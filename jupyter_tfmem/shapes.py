"""Shapes a user gives for a model's inputs or targets (without the batch
dimension), and the batch a stateful model is bound to.

Shared by ``estimate`` and ``measure`` so that both accept and refuse the
same things with the same words; it imports nothing heavy, as
``measurement`` must not.
"""

from __future__ import annotations

import re
from typing import Any

#: the largest size a shape given as text may have (a typo guard, not TF's limit)
MAX_DIM = 2**24


def parse_shape(text: str, flag: str) -> tuple[int, ...]:
    """A shape without the batch as typed after ``flag``: ``128``, ``224,224,3``, ``224x224x3``."""
    parts = [p for p in re.split(r"[,x\s]+", text.strip().strip("()[]").lower()) if p]
    if not parts or not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ValueError(
            f"{flag} wants sizes without the batch dimension, such as 128 or "
            f"224,224,3; got {text!r}"
        )
    dims = tuple(int(p) for p in parts)
    if any(d < 1 or d > MAX_DIM for d in dims):
        raise ValueError(f"{flag} sizes must be between 1 and {MAX_DIM:,}; got {text!r}")
    return dims


def label_targets(loss_name: str) -> bool:
    """Whether a loss takes integer class ids as targets, not tensors like the outputs.

    The sparse cross-entropies and CTC, and two whose names do not say it:
    Keras's generalised cross-entropy (``categorical_generalized_cross_entropy``,
    despite "categorical") and its circle loss, each one id per example.
    """
    name = loss_name.lower()
    if "sparse" in name or "ctc" in name or "generalizedcrossentropy" in name.replace("_", ""):
        return True
    # a word: a user's "semicircle_fit" is not Keras's circle loss
    return re.search(r"\bcircle\b", name) is not None


def require_target_shapes(loss_name: str, target_shapes: Any) -> None:
    """A CTC loss cannot take targets shaped like the outputs: ask for its label length."""
    if target_shapes is None and "ctc" in loss_name.lower():
        raise ValueError(
            "a CTC loss's targets are label sequences, not shaped like the outputs: "
            "pass target_shapes=[(max_label_length,)]"
        )


def normalize_shapes(
    shapes: Any, expected: int | None, what: str = "input"
) -> list[tuple[int, ...]] | None:
    """``(128,)`` for one tensor or ``[(128,), (3,)]`` for several; no batch dimension."""
    if shapes is None:
        return None
    if isinstance(shapes, (str, bytes)) or not hasattr(shapes, "__iter__"):
        raise TypeError(f"{what}_shapes must be a shape such as (128,) or a list of shapes")
    shapes = list(shapes)
    if shapes and all(isinstance(d, int) for d in shapes):
        shapes = [tuple(shapes)]
    out = []
    for s in shapes:
        if isinstance(s, (str, bytes)) or (not isinstance(s, int) and not hasattr(s, "__iter__")):
            raise TypeError(f"{what} shape {s!r} must be a tuple of sizes such as (128,)")
        s = (s,) if isinstance(s, int) else tuple(s)
        if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in s):
            raise ValueError(f"{what} shape {s} must be positive integers (no batch dimension)")
        out.append(s)
    if expected is not None and len(out) != expected:
        kind = ("input" if what == "input" else "output") + ("" if expected == 1 else "s")
        raise ValueError(f"the model has {expected} {kind} but {len(out)} {what} shapes were given")
    return out


def fixed_batch(model: Any) -> tuple[int, str] | None:
    """The batch a stateful layer's state fixes, and that layer's name (None if none).

    A stateful RNN keeps its last state in variables shaped ``(batch,
    units)``, and Keras refuses to run it at any other batch.
    """
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if getattr(layer, "stateful", False) is not True:
            continue
        for state in getattr(layer, "states", None) or ():
            dims = tuple(state.shape)
            if dims and dims[0] is not None:
                return int(dims[0]), layer.name
    return None


def stateful_batch(model: Any, batch_size: int, replicas: int = 1) -> tuple[int, str] | None:
    """``fixed_batch(model)``, after checking that ``batch_size`` (per device,
    over ``replicas``) is that batch: a ValueError says which to ask for."""
    fixed = fixed_batch(model)
    if fixed is not None and batch_size != fixed[0]:
        each = " on each device" if replicas > 1 else ""
        raise ValueError(
            f"{model.name!r} has a stateful layer ({fixed[1]!r}) whose state fixes the batch "
            f"at {fixed[0]}{each}: use batch_size={fixed[0] * replicas} (for another batch, "
            "build the model with batch_shape=(n, ...))"
        )
    return fixed


def default_batch(model: Any, default: int, replicas: int = 1) -> int:
    """The batch to estimate when none is asked for: a stateful model's own
    (over ``replicas`` devices), since it runs at no other; else ``default``."""
    fixed = fixed_batch(model)
    return fixed[0] * replicas if fixed is not None else default
