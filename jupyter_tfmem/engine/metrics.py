"""The metrics a Keras train step updates, as fresh copies the trace can update.

Keras's ``train_step`` tracks the loss (a ``Mean``) and, at its end, updates
every metric given to ``compile`` with the batch's targets and predictions.
Those updates read the model's outputs and can make tensors as large: TF's
allocator peaks 147 MiB higher for a 16 x 128-token, 8,000-word language
model compiled with ``metrics=["accuracy"]`` than without (131 MiB), so a
step traced without them is not the step ``fit`` runs.

The trace updates copies, made from each metric's config: the user's metric
objects keep their variables and are never built by an estimate (Keras
builds ``compile``'s metrics lazily, on the first batch).
"""

from __future__ import annotations

import copy
from typing import Any

import tensorflow as tf


class MetricUpdateError(ValueError):
    """A compiled metric cannot be updated with the model's outputs (nor can ``fit``)."""


class StepMetrics:
    """The loss tracker and the compiled metrics of one traced train step."""

    def __init__(self, model: Any) -> None:
        import keras
        from keras.src.trainers.compile_utils import CompileMetrics

        self.loss = keras.metrics.Mean(name="loss")
        compiled = getattr(model, "_compile_metrics", None)
        self.compiled = None
        #: metrics that could not be copied, so the trace leaves them out
        self.left_out: list[str] = []
        if compiled is not None:
            outputs = len(compiled.output_names or ())
            self.compiled = CompileMetrics(
                self._fresh(compiled._user_metrics, outputs),
                self._fresh(compiled._user_weighted_metrics, outputs),
                output_names=compiled.output_names,
            )

    def _fresh(self, metrics: Any, outputs: int = 0) -> Any:
        """``metrics`` with every Metric object replaced by a new one of the same config.

        One left out is dropped from its list, except from a list of one entry
        per output (of ``outputs`` > 1), where ``None`` keeps the others' places.
        """
        import keras

        if isinstance(metrics, dict):
            return {k: self._fresh(v) for k, v in metrics.items()}
        if isinstance(metrics, (list, tuple)):
            fresh = [self._fresh(m) for m in metrics]
            if outputs > 1 and len(fresh) == outputs:
                return fresh
            return [m for m in fresh if m is not None]
        if not isinstance(metrics, keras.metrics.Metric):
            return metrics  # a name or a function: Keras makes a new object from it
        try:
            return type(metrics).from_config(metrics.get_config())
        except (TypeError, ValueError, NotImplementedError, KeyError):
            pass
        try:
            return copy.deepcopy(metrics)
        except Exception:  # any failure means: it cannot be copied
            self.left_out.append(getattr(metrics, "name", type(metrics).__name__))
            return None

    def roles(self) -> dict[int, tuple[Any, str]]:
        """Each variable of these metrics by ``id``: ``(variable, "tracker" or "metric")``.

        Keras makes the loss tracker when the model is compiled and the
        compiled metrics' state as it builds the first step (before the
        optimizer's slots); the estimate places their buffers so.
        """
        found = {id(v): (v, "tracker") for v in self.loss.variables}
        if self.compiled is not None:
            found.update({id(v): (v, "metric") for v in self.compiled.variables})
        return found

    def track_loss(self, loss: Any, x: Any) -> None:
        """The loss tracker's update, where Keras makes it (before the loss is scaled)."""
        batch = tf.shape(next(t for t in tf.nest.flatten(x) if t is not None))[0]
        self.loss.update_state(loss, sample_weight=batch)

    def update(self, y: Any, y_pred: Any) -> list[Any]:
        """Update the compiled metrics, as ``compute_metrics`` does; the step's results."""
        if self.compiled is None:
            return [self.loss.result()]
        try:
            if not self.compiled.built:
                # Building picks each metric's variant from the shapes and
                # makes its variables: eagerly, not as ops of the traced step.
                with tf.init_scope():
                    self.compiled.build(y, y_pred)
            self.compiled.update_state(y, y_pred)
        except (ValueError, TypeError) as err:
            detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise MetricUpdateError(
                f"a metric given to compile() cannot be updated with this model's outputs "
                f"({detail}); fit() would fail the same way: compile with metrics that fit "
                "the outputs"
            ) from err
        return [self.loss.result(), self.compiled.result()]


def metrics_key(model: Any) -> str:
    """What identifies the model's compiled metrics across estimates (no object addresses)."""
    compiled = getattr(model, "_compile_metrics", None)
    if compiled is None:
        return "loss"
    return f"loss {_named(compiled._user_metrics)} {_named(compiled._user_weighted_metrics)}"


def _named(metrics: Any) -> str:
    """``metrics`` written with each object as its class and name (no address)."""
    if isinstance(metrics, dict):
        return "{" + ", ".join(f"{k!r}: {_named(v)}" for k, v in metrics.items()) + "}"
    if isinstance(metrics, (list, tuple)):
        return "[" + ", ".join(_named(m) for m in metrics) + "]"
    if isinstance(metrics, str) or metrics is None:
        return repr(metrics)
    config = getattr(metrics, "get_config", None)
    try:
        detail = config() if config else getattr(metrics, "__name__", "")
    except Exception:  # a config that cannot be read
        detail = getattr(metrics, "name", "")
    return f"{type(metrics).__name__}({detail!r})"
