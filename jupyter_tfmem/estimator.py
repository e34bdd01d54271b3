"""``estimate``: from a Keras model to a Footprint, without running a step.

Pipeline: resolve what the step will be (optimizer, loss, inputs) -> trace it
(engine.step) -> take Grappler's rewrite and every tensor's size as a line in
the batch size (engine.grappler) -> replay it in executor order (engine.schedule)
-> keep the lines that can be the peak, with their breakdowns -> Footprint.
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
import functools
import gc
import itertools
import math
import random
import re
import weakref
from collections.abc import Callable, Mapping, Sequence, Set
from typing import Any

from .engine.folding import is_folded
from .engine.loops import enter_frame_of, exit_frame_of
from .engine.loops import frame_of as _frame_of
from .footprint import ALLOCATOR_ROW_NAME, CATEGORIES, Footprint, LayerInfo, PeakLine, PeakScenario
from .loss_configs import losses_from_spec
from .multi_optimizers import OptimizerChoiceError, chosen_for, picks_by_function
from .optimizer_configs import optimizer_from_config
from .overhead import DEFAULT_OVERHEAD
from .shapes import label_targets, normalize_shapes, require_target_shapes

#: Batch sizes the step is traced at when an estimate names none (and for
#: batch 1, where broadcasting makes a different graph): any two distinct
#: values give the lines.
_B1, _B2 = 4, 7
#: The two batch sizes of the estimate being made: its own and the next, so
#: that the graph is the one TF runs at that batch.
_BATCHES: contextvars.ContextVar[tuple[int, int]] = contextvars.ContextVar(
    "tfmem_batches", default=(_B1, _B2)
)


def _trace_batches(batch_size: int) -> tuple[int, int]:
    return (batch_size, batch_size + 1) if batch_size >= 2 else (_B1, _B2)


def _linear(at_b1: float, at_b2: float) -> tuple[float, float]:
    """``(a, b)`` with ``a + b * n`` through the sizes at the two traced batches."""
    b1, b2 = _BATCHES.get()
    b = (at_b2 - at_b1) / (b2 - b1)
    return at_b1 - b * b1, b


#: Largest batch ``estimate`` accepts; ``Footprint.at`` extrapolates beyond it.
MAX_ESTIMATE_BATCH = 2**24

#: Keras dtype policies ``precision=`` accepts; the CLI, magics and panel offer these.
PRECISION_POLICIES: tuple[str, ...] = (
    "float32",
    "mixed_float16",
    "mixed_bfloat16",
    "float16",
    "bfloat16",
    "float64",
)

DEFAULT_OPTIMIZER = "adam"
DEFAULT_LOSS = "mean_squared_error"

#: Optimizer names ``estimate`` accepts: those ``optimizer_configs`` builds
#: from a bare name, which is what ``keras.optimizers.get`` builds and "lamb"
#: (Keras exports it as a class but cannot resolve it by name), not the
#: wrappers that need arguments.  The CLI, magics and panel offer exactly
#: these; ``tests/test_optimizer_names.py`` checks them against Keras.
OPTIMIZER_NAMES: tuple[str, ...] = (
    "sgd",
    "adam",
    "adamw",
    "rmsprop",
    "adagrad",
    "adadelta",
    "adamax",
    "nadam",
    "ftrl",
    "lion",
    "adafactor",
    "muon",
    "schedulefreeadamw",
    "lamb",
)


def estimate(
    model: Any,
    batch_size: int,
    *,
    training: bool = True,
    optimizer: Any = None,
    loss: Any = None,
    precision: str | None = None,
    input_shapes: Any = None,
    target_shapes: Any = None,
    replicas: int | None = None,
    strategy: Any = None,
    device: str | None = None,
) -> Footprint:
    """Estimate the allocator peak and the GPU total of one step of ``model``.

    ``optimizer`` and ``loss`` override the compiled ones; a model that is not
    compiled and gets no optimizer is estimated for training with Adam (and the
    footprint's notes say so).  The metrics given to ``compile`` are part of
    the training step, as in ``fit`` (updated on copies, never the model's
    own).  ``input_shapes`` (shapes without the batch dimension, one per
    input) is needed only when the model's inputs have unknown dimensions
    other than the batch.  ``target_shapes`` (one per output, without the
    batch dimension) is needed only for a loss whose targets are not shaped
    like the outputs, such as CTC's label sequences ``(max_label_length,)``;
    they are int32 for sparse and CTC losses, else of the output's dtype
    (an inference step has no targets and ignores them).
    The model is never changed.

    ``replicas`` (or a ``tf.distribute.MirroredStrategy`` as ``strategy``, whose
    ``num_replicas_in_sync`` is used) estimates data-parallel training over
    that many GPUs: ``batch_size`` is then the global batch and the footprint
    is one device's, each running ``ceil(batch_size / replicas)`` samples with a
    full copy of the weights and slots, plus the gradient all-reduce's packed
    buffer (``jupyter_tfmem.distribute``; assumptions in docs/gpu.md).

    ``device`` ("GPU" or "CPU") is the device whose executor order the replay
    follows; by default the one ``measure`` would use here (a GPU if TF sees
    one).  On a GPU TF runs every kernel inline in the order it became ready;
    on the CPU it hands kernels to its inter-op threads, so more tensors can
    be alive at once (docs/engine.md).
    """
    import keras

    from .distribute import data_parallel, gradient_bytes, replicas_from
    from .engine.metrics import MetricUpdateError
    from .shapes import stateful_batch

    _check_batch(batch_size)
    threads = _executor_threads(device)
    n_replicas = replicas_from(replicas, strategy)
    global_batch = batch_size
    batch_size = -(-int(batch_size) // n_replicas)  # what each device runs
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"estimate() needs a keras.Model, got {type(model).__name__}; "
            "pass the model object (not its output or a layer)"
        )
    if not isinstance(training, bool):
        raise TypeError("training must be True or False")
    fixed = stateful_batch(model, batch_size, n_replicas)
    notes: list[str] = []
    if fixed is not None:
        notes.append(
            f"A stateful layer ({fixed[1]!r}) keeps its state for a batch of {fixed[0]}, so "
            "Keras runs this model at that batch only; Footprint.at() refuses any other."
        )
    if not model.built and input_shapes is not None:
        model = _built_copy(model, input_shapes, notes)
    if precision is not None:
        model = _with_precision(model, precision, notes)
    x_specs = _input_specs(model, input_shapes)
    opt_name = None
    opt = None
    loss_fn = None
    y_specs = None
    if training:
        _note_custom_train_step(model, notes)
        opt, opt_name = _resolve_optimizer(model, optimizer, notes)
        opt = _loss_scaled_like_compile(model, opt)
        loss_fn, loss_desc = _resolve_loss(model, loss, notes)
        y_specs = _target_specs(model, loss_desc, x_specs, target_shapes)
    jit = getattr(model, "jit_compile", False) is True
    step_args = (model, batch_size, training, x_specs, y_specs, loss_fn, opt, opt_name, notes)
    with _quiet_tf(), _gc_paused():
        try:
            if jit:
                fp = _estimate_xla_step(*step_args, fixed=fixed is not None)
            else:
                # a stateful model runs at its own batch only, even at batch 1
                pair = (batch_size, batch_size + 1) if fixed else _trace_batches(batch_size)
                batches = _BATCHES.set(pair)
                try:
                    fp = _estimate_traced(*step_args, threads=threads, fixed=fixed is not None)
                finally:
                    _BATCHES.reset(batches)
        except (MemoryError, MetricUpdateError, OptimizerChoiceError):
            raise
        except Exception as err:
            step = "training" if training else "inference"
            detail = _first_useful_line(str(err))
            if training and re.search(r"y_true|target|compile_loss/", detail, re.I):
                given = "the target_shapes given" if target_shapes else "the outputs' shapes"
                raise ValueError(
                    f"cannot trace one training step of {model.name!r}: its loss refused "
                    f"targets of {given} ({type(err).__name__}: {detail}); pass "
                    "target_shapes=[(...)], the shape the loss expects for each output's "
                    "targets without the batch dimension (e.g. (max_label_length,) for CTC)"
                ) from err
            raise ValueError(
                f"cannot trace one {step} step of {model.name!r} "
                f"({type(err).__name__}: {detail}); estimate needs a model whose call() "
                "runs inside tf.function (TensorFlow ops, no NumPy on tensor values)"
            ) from err
        # the estimate's garbage (the traces, the stand-in optimizer) is all
        # in the two youngest generations: only _collect_young ran meanwhile
        del opt, step_args
        gc.collect(1)
    if precision is not None:
        import dataclasses

        fp = dataclasses.replace(fp, precision=keras.dtype_policies.get(precision).name)
    if n_replicas > 1:
        grads = gradient_bytes(model) if training else 0
        fp = data_parallel(fp, n_replicas, grads, global_batch)
    if fixed is not None:
        import dataclasses

        fp = dataclasses.replace(fp, fixed_batch=int(global_batch))
    return fp


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _executor_threads(device: Any) -> int:
    """Inter-op threads of the executor the replay follows; 0: every kernel inline (GPU)."""
    import os

    import tensorflow as tf

    if device is None:
        device = "GPU" if tf.config.list_physical_devices("GPU") else "CPU"
    if not isinstance(device, str) or device.upper().split(":")[0] not in ("CPU", "GPU"):
        raise ValueError(f'device must be "GPU" or "CPU", got {device!r}')
    if device.upper().startswith("GPU"):
        return 0
    threads = tf.config.threading.get_inter_op_parallelism_threads()
    if not threads:  # TF reads this variable when it makes the pool, as a default
        try:
            threads = max(0, int(os.environ.get("TF_NUM_INTEROP_THREADS", "0")))
        except ValueError:
            threads = 0
    if not threads:  # TF's default: one per schedulable core
        try:
            threads = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            threads = os.cpu_count() or 1
    return max(1, int(threads))


def _first_useful_line(message: str) -> str:
    """The line of a (Keras-wrapped) exception message that says what went wrong."""
    lines = [_ANSI.sub("", line).strip() for line in message.splitlines()]
    for line in lines:
        if line and not line.startswith(("Exception encountered", "Arguments received", "•")):
            return line[:300]
    return lines[0][:300] if lines else ""


# -- resolving what the step is ----------------------------------------------


def _check_batch(batch_size: Any) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        try:
            import numpy as np

            if isinstance(batch_size, np.integer):
                return _check_batch(int(batch_size))
        except ImportError:  # pragma: no cover
            pass
        raise TypeError(f"batch_size must be a positive integer, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if batch_size > MAX_ESTIMATE_BATCH:
        raise ValueError(
            f"batch_size {batch_size:,} is too large to estimate; use at most "
            f"{MAX_ESTIMATE_BATCH:,} (Footprint.at() can extrapolate a footprint further)"
        )


def _note_custom_train_step(model: Any, notes: list[str]) -> None:
    """Say so when ``fit`` would run the model's own ``train_step``.

    The estimate traces Keras's step (forward, loss, the gradients of every
    trainable variable, one optimizer update); a GAN's or a distillation's
    own step can hold more, or less, so the figure is only that step's.
    """
    import keras

    own = getattr(type(model), "train_step", None)
    if own is not None and own is not keras.Model.train_step:
        notes.append(
            f"{type(model).__name__} overrides train_step: estimated for Keras's standard step "
            "(forward, loss, gradients, one optimizer update), not for that method."
        )


def _resolve_optimizer(model: Any, optimizer: Any, notes: list[str]) -> tuple[Any, str]:
    import keras

    if optimizer is None:
        compiled = getattr(model, "optimizer", None) if getattr(model, "compiled", False) else None
        if compiled is None:
            notes.append("The model is not compiled: estimated for training with Adam.")
            optimizer = DEFAULT_OPTIMIZER
        else:
            optimizer = compiled
    if isinstance(optimizer, str):
        key = optimizer.strip().lower()
        unknown = ValueError(
            f"unknown optimizer {optimizer!r}; use one of {', '.join(OPTIMIZER_NAMES)} "
            "or pass a keras.optimizers.Optimizer instance"
        )
        if key not in OPTIMIZER_NAMES:
            raise unknown
        try:
            # A fixed name: an auto-generated one ("adam_7") is new on every
            # call, and TF keeps native memory (~35 KiB) for each variable
            # name it ever created eagerly, so every estimate would leak.
            fresh = optimizer_from_config({"class_name": key, "config": {"name": key}})
        except (ValueError, TypeError):  # a Keras older than the list
            raise unknown from None
        return fresh, key
    if isinstance(optimizer, keras.optimizers.Optimizer):
        return _fresh_optimizer(optimizer), type(optimizer).__name__.lower()
    raise TypeError(
        "optimizer must be a name such as 'adam' or a keras optimizer, "
        f"got {type(optimizer).__name__}"
    )


def _loss_scaled_like_compile(model: Any, optimizer: Any) -> Any:
    """The optimizer wrapped in a LossScaleOptimizer if ``compile()`` would wrap it.

    Under ``mixed_float16`` Keras's ``compile`` puts the optimizer inside a
    LossScaleOptimizer, whose step unscales every gradient, checks them all
    for inf/NaN (one bool tensor per gradient) and applies the update inside
    a ``cond``: ops that allocate, so the estimate traces them too.
    """
    import keras

    lso = keras.optimizers.LossScaleOptimizer
    if model.dtype_policy.name != "mixed_float16" or isinstance(optimizer, lso):
        return optimizer
    return lso(optimizer, name="loss_scale_optimizer")


def _fresh_optimizer(optimizer: Any) -> Any:
    """A new, unbuilt optimizer with the same configuration (never the user's)."""
    import keras

    if picks_by_function(optimizer):
        return _fresh_multi_optimizer(optimizer)
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        inner = _fresh_optimizer(optimizer.inner_optimizer)
        config = optimizer.get_config()
        config.pop("inner_optimizer", None)
        return keras.optimizers.LossScaleOptimizer(inner, **config)
    config = optimizer.get_config()
    return type(optimizer).from_config(config)


def _fresh_multi_optimizer(optimizer: Any) -> Any:
    """A ``MultiOptimizer`` on a function that picks as the user's does, from fresh copies.

    Its config cannot be loaded back (``multi_optimizers``), and the function
    returns the user's own optimizers, which the trace would build: the copy
    asks the user's function which optimizer a variable gets and hands out a
    fresh copy of that one.  The function sees the variables of the model the
    estimate traces, with the same paths as the user's; under ``precision=``
    that is a copy, and a function that picks by object identity sends every
    variable the same way.
    """
    copies: dict[int, tuple[Any, Any]] = {}

    def pick(variable: Any) -> Any:
        chosen = chosen_for(optimizer, variable)
        if id(chosen) not in copies:  # the original is kept so that its id stays unique
            copies[id(chosen)] = (chosen, _fresh_optimizer(chosen))
        return copies[id(chosen)][1]

    return type(optimizer)(pick, loss_scale_factor=optimizer.loss_scale_factor, name=optimizer.name)


def _compiled_loss_weights(model: Any) -> Any:
    """The ``loss_weights`` the model was compiled with (``None`` if none)."""
    config = getattr(getattr(model, "_compile_config", None), "config", None) or {}
    return config.get("loss_weights")


def _resolve_loss(model: Any, loss: Any, notes: list[str]) -> tuple[Any, str]:
    from keras.src.trainers.compile_utils import CompileLoss

    loss_weights = None
    if (
        loss is None
        and getattr(model, "compiled", False)
        and getattr(model, "loss", None) is not None
    ):
        loss = model.loss
        loss_weights = _compiled_loss_weights(model)
    if loss is None:
        notes.append(f"No loss given or compiled: estimated with {DEFAULT_LOSS}.")
        loss = DEFAULT_LOSS
    output_names = getattr(model, "output_names", None)
    try:
        loss = losses_from_spec(loss)  # names Keras's registry refuses, too
        compile_loss = CompileLoss(loss, loss_weights, output_names=output_names)
    except (ValueError, TypeError) as err:
        raise ValueError(f"cannot use loss {loss!r}: {err}") from None
    desc = _describe_loss(loss)
    return _LossFn(compile_loss, f"{desc} {loss_weights!r}"), desc


class _LossFn:
    def __init__(self, compile_loss: Any, key: str = "") -> None:
        self.compile_loss = compile_loss
        self.key = key  # what identifies this loss across estimates

    def __call__(self, y: Any, y_pred: Any) -> Any:
        return self.compile_loss(y, y_pred)


def _describe_loss(loss: Any) -> str:
    if isinstance(loss, str):
        return loss.lower()
    if isinstance(loss, dict):
        return " ".join(_describe_loss(v) for v in loss.values())
    if isinstance(loss, (list, tuple)):
        return " ".join(_describe_loss(v) for v in loss)
    name = getattr(loss, "name", None) or getattr(loss, "__name__", None) or type(loss).__name__
    return str(name).lower()


def _with_precision(model: Any, precision: str, notes: list[str]) -> Any:
    import keras

    try:
        policy = keras.dtype_policies.get(precision)
    except ValueError:
        raise ValueError(
            f"unknown precision {precision!r}; use a Keras dtype policy such as "
            f"{', '.join(PRECISION_POLICIES[:-1])} or {PRECISION_POLICIES[-1]}"
        ) from None
    if policy.name == model.dtype_policy.name:
        return model
    previous = keras.config.dtype_policy()
    try:
        # Layers whose config names no dtype take the global policy; inputs and
        # the container keep theirs (Sequential hands its dtype to its input).
        config = {
            k: (v if k == "dtype" else _with_dtype(v, policy.name))
            for k, v in model.get_config().items()
        }
        keras.config.set_dtype_policy(policy)
        try:
            clone = _from_own_config(model, config)
        except Exception as err:
            clone = _constructed_again(model, config)
            if clone is None:
                raise ValueError(
                    f"cannot rebuild this model under precision {precision!r} ({err}); "
                    "build it under that dtype policy yourself and pass precision=None"
                ) from None
            notes.append(
                f"{type(model).__name__}'s config cannot rebuild it, so it was made again by "
                "its constructor (with the same weights' shapes)."
            )
    finally:
        keras.config.set_dtype_policy(previous)
    _compile_like(clone, model)
    notes.append(f"Estimated under the dtype policy {policy.name}.")
    return clone


def _compile_like(clone: Any, model: Any) -> None:
    """Compile a rebuilt copy as ``model`` was, if it was.

    jit_compile decides which allocator the step runs on (XLA's buffers or
    the executor's), and loss weights are ops of the step.
    """
    if getattr(model, "compiled", False):
        clone.compile(
            optimizer=_fresh_optimizer(model.optimizer),
            loss=model.loss,
            loss_weights=_compiled_loss_weights(model),
            jit_compile=getattr(model, "jit_compile", False) is True,
        )


def _constructed_again(model: Any, config: Mapping[str, Any]) -> Any:
    """A subclassed model made again by its constructor, or ``None``.

    Keras' default config of a subclassed model holds only ``trainable`` and
    ``dtype``, so ``from_config`` fails for any constructor that takes other
    arguments, or none.  Calling the constructor with the config's keys it
    accepts (under the global policy the caller set) rebuilds such a model;
    the result counts only if it has exactly the original's weights' shapes,
    since a constructor called with its defaults could build another model.
    Which layers are frozen is copied over, layer by layer.
    """
    import inspect

    try:
        has_graph = bool(model.inputs)
    except (AttributeError, ValueError):
        has_graph = False
    if has_graph or not model.built:
        return None
    try:
        params = list(inspect.signature(type(model).__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    accepted = {p.name for p in params if p.kind in named}
    kwargs = {k: v for k, v in config.items() if k != "dtype" and (takes_any or k in accepted)}
    needed = {p.name for p in params if p.kind in named and p.default is inspect.Parameter.empty}
    if not needed <= kwargs.keys():
        return None
    import keras

    shapes = list((getattr(model, "_build_shapes_dict", None) or {}).values())
    try:
        clone = type(model)(**kwargs)
        if len(shapes) == 1:  # called once on one tensor: call the clone symbolically alike
            dtype = getattr(model, "input_dtype", None) or "float32"
            clone(keras.KerasTensor((None, *tuple(shapes[0])[1:]), dtype=dtype))
        else:
            clone.build_from_config(model.get_build_config())
        # what is frozen is not in the default config either, and decides
        # which weights get gradients and slots: parents first, as Keras
        # hands a layer's flag down to its sublayers
        layers = zip(model._flatten_layers(), clone._flatten_layers(), strict=True)
        for mine, theirs in layers:
            theirs.trainable = mine.trainable
    except Exception:
        return None
    if not clone.built or [(tuple(w.shape), w.trainable) for w in clone.weights] != [
        (tuple(w.shape), w.trainable) for w in model.weights
    ]:
        return None
    return clone


def _with_dtype(config: Any, policy: str) -> Any:
    """A layer config whose layers name no dtype policy (inputs keep theirs).

    Rebuilt under a global policy, such layers take that policy; an InputLayer
    keeps its data dtype (float32 images, int32 tokens), and so does a
    serialized tensor (a saved model's layer inputs name their dtypes).  A
    quantized layer (``model.quantize("int8")``) keeps its quantization and
    takes the policy as the one it computes in: its weights stay int8.
    """
    if isinstance(config, dict):
        if config.get("class_name") in ("InputLayer", "__keras_tensor__"):
            return config
        if "Quantized" in str(config.get("class_name", "")) and isinstance(
            config.get("config"), dict
        ):
            return {**config, "config": {**config["config"], "source_name": policy}}
        out = {}
        for key, value in config.items():
            is_policy = (
                isinstance(value, dict) and value.get("class_name", "").endswith("DTypePolicy")
            ) or (isinstance(value, str) and value in PRECISION_POLICIES)
            if key == "dtype" and is_policy and "Quantized" not in str(value):
                continue
            if key == "dtype" and isinstance(value, str) and "_from_" in value:
                out[key] = f"{value.split('_from_')[0]}_from_{policy}"  # e.g. int8_from_float32
                continue
            out[key] = _with_dtype(value, policy)
        return out
    if isinstance(config, list):
        return [_with_dtype(v, policy) for v in config]
    return config


def _from_own_config(model: Any, config: Mapping[str, Any]) -> Any:
    """A new model of ``model``'s class from ``config`` (``model``'s own, maybe edited).

    Keras finds only registered objects by name, so the user's layer classes,
    functions and ``Lambda``s are taken live from ``model``: no bytecode is
    loaded, safe mode stays on, and each function keeps its own globals.
    """
    import keras

    from .live_objects import custom_objects, with_live_lambdas

    objects = custom_objects(model)
    config = with_live_lambdas(config, model, objects)
    with keras.saving.custom_object_scope(objects):
        return type(model).from_config(config)


def _built_copy(model: Any, input_shapes: Any, notes: list[str]) -> Any:
    """A copy of an unbuilt model, built for ``input_shapes``.

    A ``Sequential`` model given no ``Input`` has no weights until it first
    sees a batch; building the user's own would give it weights, so a clone
    is built instead.  The clone's weights are fresh, but their shapes, and
    so every byte of the step, are those the user's model will get.
    """

    shapes = normalize_shapes(input_shapes, None)
    try:
        # clone_model would refuse a Lambda
        copy = _from_own_config(model, model.get_config())
        copy.build((None, *shapes[0]) if len(shapes) == 1 else [(None, *s) for s in shapes])
        _compile_like(copy, model)
    except Exception as err:
        raise ValueError(
            f"the model {model.name!r} has not been built, and no copy of it could be "
            f"built for input_shapes={shapes} ({type(err).__name__}); build it with "
            "model.build((None, ...)) or call it once on a batch first"
        ) from err
    notes.append(
        f"The model had not been built: estimated on a copy built for input shape(s) "
        f"{', '.join(str(s) for s in shapes)}; the model itself was left unbuilt."
    )
    return copy


def _input_specs(model: Any, input_shapes: Any) -> Any:
    import tensorflow as tf
    from keras import tree

    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        inputs = None
    if not inputs:
        # A subclassed model: it knows its inputs only from being built or called.
        if not model.built:
            raise ValueError(
                "the model has not been built, so its input shape is unknown; pass "
                "input_shapes=[(...)] (without the batch dimension), or call it once on a "
                "batch or build it with model.build((None, ...)) first"
            )
        build_shapes = getattr(model, "_build_shapes_dict", None) or {}
        shapes = normalize_shapes(input_shapes, None)
        if shapes is None:
            if len(build_shapes) != 1:
                raise ValueError(
                    "cannot tell this model's input shape; pass input_shapes=[(...)] "
                    "(shapes without the batch dimension)"
                )
            (shape,) = build_shapes.values()
            shapes = [tuple(shape)[1:]]
        for s in shapes:
            if any(d is None for d in s):
                raise ValueError(
                    f"input shape {s} has unknown dimensions; pass input_shapes=[(...)] "
                    "with every dimension but the batch"
                )
        dtype = tf.as_dtype(getattr(model, "input_dtype", None) or "float32")
        specs = [tf.TensorSpec((None, *s), dtype) for s in shapes]
        return specs[0] if len(specs) == 1 else specs
    shapes = normalize_shapes(input_shapes, len(inputs))
    specs = []
    for i, kt in enumerate(inputs):
        shape = tuple(kt.shape)[1:]
        if shapes is not None:
            shape = shapes[i]
        if any(d is None for d in shape):
            raise ValueError(
                f"input {kt.name!r} has unknown dimensions {tuple(kt.shape)}; pass "
                "input_shapes=[(...)] with every dimension but the batch (e.g. a sequence length)"
            )
        specs.append(tf.TensorSpec((None, *shape), tf.as_dtype(kt.dtype)))
    struct = getattr(model, "_inputs_struct", None)
    if struct is not None:
        try:
            return tree.pack_sequence_as(struct, specs)
        except Exception:  # noqa: S110 - fall back to a flat list
            pass
    return specs[0] if len(specs) == 1 else specs


def _target_specs(
    model: Any, loss_desc: str, x_specs: Any = None, target_shapes: Any = None
) -> Any:
    """The targets ``fit`` would feed: shaped like the outputs unless ``target_shapes`` says."""
    import keras
    import tensorflow as tf

    try:
        outputs = list(model.outputs)
    except (AttributeError, ValueError):
        # Subclassed: ask Keras for the output spec symbolically (no weights touched).
        sym = tf.nest.map_structure(
            lambda s: keras.KerasTensor((1, *s.shape[1:]), dtype=s.dtype.name), x_specs
        )
        outputs = tf.nest.flatten(model.compute_output_spec(sym))
    labels = label_targets(loss_desc)
    given = normalize_shapes(target_shapes, len(outputs), "target")
    require_target_shapes(loss_desc, given)
    specs = []
    for i, kt in enumerate(outputs):
        shape = tuple(kt.shape)[1:]
        if given is not None:
            dtype = tf.int32 if labels else tf.as_dtype(kt.dtype)
            specs.append(tf.TensorSpec((None, *given[i]), dtype))
        elif labels:
            specs.append(tf.TensorSpec((None, *shape[:-1]), tf.int32))
        else:
            specs.append(tf.TensorSpec((None, *shape), tf.as_dtype(kt.dtype)))
    return specs[0] if len(specs) == 1 else specs


# -- tracing and replay -----------------------------------------------------------


class _python_random_fixed:
    """Python's ``random`` seeded the same for every trace, and given back after.

    Keras 3.15's ``AugMix`` picks each chain's operations with
    ``random.choice`` while the step is traced, so every trace built another
    graph: the two batch sizes' traces of one estimate could differ, and two
    estimates of the same model gave 47.3 and 45.2 MiB (TF's own runs, each
    a fresh process with its own draw, spread 22%).  The user's random state
    is restored, so estimating does not move their next draw.
    """

    #: what the estimate's notes say when a trace drew from it
    NOTE = (
        "The model draws from Python's random module while its step is traced "
        "(Keras's AugMix picks its operations so): each process that trains it builds "
        "another graph. Estimated for one fixed draw; TF's peak varies with the draw."
    )

    def __init__(self) -> None:
        self.used = False

    def __enter__(self) -> None:
        self.state = random.getstate()
        random.seed(0)
        self.seeded = random.getstate()

    def __exit__(self, *exc: object) -> None:
        self.used = self.used or random.getstate() != self.seeded
        random.setstate(self.state)


class _gc_paused:
    """No cyclic garbage collection while the step is traced and replayed.

    Tracing a large step makes hundreds of thousands of long-lived Python
    objects, so the collector's full passes come often, and each walks every
    object the process holds (TensorFlow's and the user's too): on BERT-base
    they took 1.5 to 2 s of the estimate.  The garbage the estimate makes
    stays in the young generations: it is collected while this process
    waits for the helper process (``_collect_young``) and at the end.
    """

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: Any) -> None:
        if self._was_enabled:
            gc.enable()


def _collect_young() -> None:
    """Collect the estimate's garbage so far (while waiting for the helper process)."""
    gc.collect(0)


class _quiet_tf:
    def __enter__(self) -> None:
        import logging

        self._logger = logging.getLogger("tensorflow")
        self._level = self._logger.level
        self._logger.setLevel(logging.ERROR)

    def __exit__(self, *exc: Any) -> None:
        self._logger.setLevel(self._level)


def _with_batch_dim(specs: Any, batch: int | None) -> Any:
    import tensorflow as tf

    return tf.nest.map_structure(
        lambda s: tf.TensorSpec((batch, *s.shape[1:]), s.dtype, name=s.name), specs
    )


def _step_metrics(model: Any, training: bool, notes: list[str]) -> Any:
    """Copies of the metrics Keras's train step updates (``None`` for inference)."""
    if not training:
        return None
    from .engine.metrics import StepMetrics

    metrics = StepMetrics(model)
    for name in metrics.left_out:
        notes.append(f"Metric {name!r} cannot be copied, so its update is left out of the step.")
    return metrics


def _trace_and_infer(model, training, x_specs, y_specs, loss_fn, opt, notes, fixed=False):
    """The step's optimized graph and its tensors' shapes at the two ``_BATCHES``.

    Keras traces ``train_on_batch`` and ``predict_on_batch`` (and ``fit`` on
    data whose batches are all full) with the batch size in every shape, and
    TF's gradient functions and Grappler write a different graph then: no
    ``BroadcastGradientArgs``/``Reshape`` pairs, shapes folded to constants,
    and, in a recurrent loop, fewer tensors pushed for the backward pass (a
    tensor whose gradient needed only its shape is no longer accumulated).
    Grappler's rewrites depend on the sizes too (it folds small tensors into
    constants, and sums a large ``AddN`` in place), so the step is traced
    at the estimate's batch size and the next one, and each graph's shapes
    are read from its own trace.  If the two graphs differ, the estimate
    falls back to one graph traced with an open batch dimension, the graph
    ``fit`` runs when its last batch is partial.  A model whose batch is
    ``fixed`` (a stateful layer) is traced at its batch only, and its sizes
    stand for both batches, so every line is flat.  Returns the first trace,
    its graph, both batches' shapes, and the second batch's graph with its
    names mapped to the first's (None on the open-batch graph), from which
    XLA calls are compiled at that batch.
    """
    import tensorflow as tf

    from .engine import grappler, helper_process
    from .engine.step import VariableStub, tape_sizes, trace_step

    # the gradient sizes the tape reads at b1, given again to every other trace
    sizes: list[int] = []

    metrics = _step_metrics(model, training, notes)

    draws = _python_random_fixed()

    def trace(batch, update_from=None):
        with tape_sizes(sizes, replay=batch != b1), draws:
            traced = trace_step(
                model,
                training=training,
                x_specs=_with_batch_dim(x_specs, batch),
                y_specs=_with_batch_dim(y_specs, batch) if training else y_specs,
                loss_fn=loss_fn,
                optimizer=opt,
                update_from=update_from,
                metrics=metrics,
            )
        if draws.used and draws.NOTE not in notes:
            notes.append(draws.NOTE)
        return traced

    def retrace(batch, first):
        """The step traced at ``batch`` and Grappler's first pass over it.

        The graphs of the two batch sizes are compared after the first pass,
        and a node's shapes are the same after either pass (a pass keeps a
        node's name only where it keeps its value), so this graph's second
        pass is run only if it makes nodes of its own.
        """
        spliced = trace(batch, first) if first.update_nodes else None
        if spliced is not None:
            try:
                return spliced, grappler.first_pass(spliced.graph_def, spliced.fetches)
            except (tf.errors.OpError, ValueError):
                pass  # traced in full below
        traced = trace(batch)
        return traced, grappler.first_pass(traced.graph_def, traced.fetches)

    def both(traced):
        """Grappler's graphs after its first pass and after both (the one TF runs)."""
        first_pass = grappler.first_pass(traced.graph_def, traced.fetches)
        return grappler.restored(first_pass), grappler.second_pass(first_pass, traced.fetches)

    def shape_args(traced, optimized, batch):
        """``_inferred_shapes``' arguments, each variable as its shape and dtype
        (all the inference reads of it, and what the helper process can be sent)."""
        owned = traced.variable_placeholders
        variables = {k: VariableStub(tuple(v.shape), v.dtype) for k, v in owned.items()}
        placeholders = list(traced.input_placeholders)
        return optimized, variables, traced.call_shapes, placeholders, traced.fetches, batch

    def infer(traced, optimized, batch):
        return _inferred_shapes(*shape_args(traced, optimized, batch))

    b1, b2 = _BATCHES.get()
    helper_process.start()  # warm for the next estimate if not for this one
    first = trace(b1)
    if fixed:
        _, graph = both(first)
        props = infer(first, graph, b1)
        return first, graph, props, props, None
    # the first graph is optimized in the helper process while the second is traced
    pending = helper_process.optimize(first.graph_def, first.fetches)
    checked, graph = (None, None) if pending else both(first)
    # TF runs the graph of the batch asked for; sizes need a second batch
    # with the same graph: the next one, or else the one before (a rewrite
    # with a size threshold between them changes the graph on one side only).
    others = (b2, b1 - 1) if b2 == b1 + 1 and b1 > 2 else (b2,)
    structure = None
    for other in others:
        second, first_pass2 = retrace(other, first)
        checked2 = grappler.restored(first_pass2)
        if graph is None:
            here = functools.partial(both, first)
            checked, graph = helper_process.result_or(pending, here, _collect_young)
        if structure is None:
            structure = grappler.structure(checked)
        names = dict(zip(second.arg_names, first.arg_names, strict=False))
        names = grappler.with_derived_names(names, checked2)
        same_args = len(first.arg_names) == len(second.arg_names)
        structure2 = grappler.structure(checked2, names) if same_args else set()
        # Grappler's memory optimizer sums an AddN in place or not by how
        # full it expects the device to be, so by the batch: sizes at the
        # other batch are read from its own graph all the same.
        sums_differ = (
            same_args
            and structure != structure2
            and grappler.undo_in_place_sums(structure) == grappler.undo_in_place_sums(structure2)
        )
        if same_args and (structure == structure2 or sums_differ):
            if other != b2:
                _BATCHES.set((b1, other))  # for the rest of this estimate
            if not {n.name for n in graph.node} <= {
                names.get(n.name, n.name) for n in checked2.node
            }:
                # the second pass made nodes of its own (the arithmetic
                # optimizer's op compositions): their sizes at this batch too
                checked2 = grappler.second_pass(first_pass2, second.fetches)
                names = grappler.with_derived_names(names, checked2)
            # the two graphs' shapes, one here and one in the helper process
            args1 = shape_args(first, graph, b1)
            there = helper_process.call(_inferred_shapes, *args1)
            # keyed by the first graph's names, as the nodes are
            props2 = {names.get(k, k): v for k, v in infer(second, checked2, other).items()}
            here = functools.partial(_inferred_shapes, *args1)
            props1 = helper_process.result_or(there, here, _collect_young)
            if sums_differ:
                grappler.size_in_place_sums(graph, props2)
            return first, graph, props1, props2, (checked2, names)
    notes.append(
        "TF writes a different graph for this step at different batch sizes; estimated on "
        "the graph traced with an open batch dimension."
    )
    traced = trace(None)
    optimized = grappler.optimize(traced.graph_def, traced.fetches)
    return traced, optimized, infer(traced, optimized, b1), infer(traced, optimized, b2), None


def _inferred_shapes(optimized, variables, call_shapes, placeholders, fetches, batch):
    """Every node's output shapes and dtypes in ``optimized``, its inputs at ``batch``.

    Reads of each variable only its shape and dtype, so that the helper
    process can be sent stand-ins for the variables.
    """
    from .engine import grappler

    decided: dict[str, int] = {}
    while True:
        pruned = grappler.without_dead_branches(optimized, decided)
        sized, stand_ins = _sized(pruned, variables, call_shapes, placeholders, batch)
        try:
            props = _shapes_in(sized, stand_ins, fetches)
            break
        except ValueError as err:
            # a cond whose predicate the shapes decide: its untaken branch
            # can contradict them (TF never runs it).  Deciding one can size
            # the next one's predicate: a scan's levels are nested.
            preds = grappler.switch_predicates(pruned)
            more = grappler.evaluated_switches(sized, preds) if preds else {}
            if not more:
                raise err from None
            decided.update(more)
    if decided:
        props[grappler.DECIDED_KEY] = decided
    return props


def _sized(optimized, variables, call_shapes, placeholders, batch):
    """``optimized`` ready for shape inference at ``batch``, and what that needs besides."""
    from .engine import grappler

    plain = grappler.materialize_variables(optimized, variables)
    plain, stand_ins, batched = grappler.detach_calls(plain, call_shapes)
    consts = grappler.list_element_shapes(plain) + grappler.open_ragged_rows(plain)
    sized = grappler.with_batch(plain, list(placeholders) + batched, batch, consts)
    grappler.stack_lengths(sized)
    return sized, stand_ins


def _shapes_in(sized, stand_ins, fetches):
    """Every node's output shapes and dtypes in ``sized`` (``_sized``' result)."""
    from .engine import grappler

    props = grappler.infer_shapes(sized, fetches)
    if grappler.stored_shapes(sized, props):  # a loop traced with an open dimension
        props = grappler.infer_shapes(sized, fetches)
    if grappler.while_shapes(sized, props):  # a raw While that declares no shapes
        props = grappler.infer_shapes(sized, fetches)
    crosses = grappler.dense_crosses(sized, props)  # a sparse cross of dense inputs
    if crosses:
        if grappler.cross_shapes(sized, crosses):
            props = grappler.infer_shapes(sized, fetches)
        grappler.size_crosses(props, crosses)
    for call, outs in stand_ins.items():  # a call's outputs are its stand-ins' shapes
        props[call] = [props[o][0] if props.get(o) else (None, None) for o in outs]
    return props


def _estimate_traced(
    model,
    batch_size,
    training,
    x_specs,
    y_specs,
    loss_fn,
    opt,
    opt_name,
    notes,
    *,
    threads=0,
    fixed=False,
):
    from .engine import grappler, helper_process
    from .engine.schedule import Buffer

    if training:
        opt = _tracing_optimizer(model, opt)
    traced, optimized, props1, props2, second = _trace_and_infer(
        model, training, x_specs, y_specs, loss_fn, opt, notes, fixed
    )
    # without the branches TF never runs, as its shapes were read
    decided = props1.pop(grappler.DECIDED_KEY, {})
    props2.pop(grappler.DECIDED_KEY, None)
    optimized = grappler.without_dead_branches(optimized, decided)

    layers = list(model.layers)
    var_layer, var_category = _variable_owners(model, opt)
    opt_scope = (getattr(opt, "name", "") or "").lower() if training else None
    nodes, unknown, order, trips, consts = _build_nodes(
        optimized, props1, props2, traced, opt_scope
    )
    _note_data_bound_loops(nodes, trips, consts, notes)
    _size_xla_calls(optimized, nodes, (props1, props2), traced, notes, second)
    _size_einsum_temps(optimized, nodes, props1, props2)
    _mark_dim0_views(optimized, nodes, props1, props2)
    _mark_free_transposes(optimized, nodes, props1, props2)
    _add_reduction_transposes(optimized, nodes, props1, props2)
    if threads:
        _forward_fused_addends(optimized, nodes)
        _merge_pads_into_convolutions(optimized, nodes)
        _size_eigen_conv_buffers(nodes, props2, threads)
        _note_eigen_channels_first(optimized, notes)
        _size_eigen_matmul_copies(nodes, props1, props2)
        _add_onednn_pool_workspaces(optimized, nodes)
        _add_eigen_pool_grad_temps(nodes)
    _copy_on_read(nodes, traced)
    _fold_constants(optimized, nodes, order, batch_size)
    lagging = _hold_lagging_products(nodes, order, trips or {}, batch_size) if threads else {}
    if unknown:
        notes.append(
            f"{unknown} tensors have shapes TF cannot infer statically; counted as 0 bytes."
        )

    # Buffers that exist before the step starts.
    preset: dict[tuple[str, int], Buffer] = {}
    captured = set()
    for ph, var in traced.variable_placeholders.items():
        preset[(ph, 0)] = _variable_buffer(var, var_layer, var_category)
        captured.add(id(var))
    for ph in traced.input_placeholders:
        spec = nodes[ph].outputs[0] if ph in nodes else None
        if spec is None:
            continue
        a, b, dtype = spec
        # The caller holds the batch for the whole step.
        preset[(ph, 0)] = Buffer(a, b, dtype, "input_batch", _input_layer(layers), keep=True)
    for ph in traced.constant_placeholders:  # held by the model, before and after
        spec = nodes[ph].outputs[0] if ph in nodes and nodes[ph].outputs else None
        if spec is not None:
            preset[(ph, 0)] = Buffer(spec[0], 0.0, spec[2], "parameters", -1, persistent=True)
    # Variables the step never touches still occupy memory.
    idle = []
    all_vars = list(model.variables) + (list(opt.variables) if training else [])
    for var in all_vars:
        if id(var) not in captured:
            idle.append(_variable_buffer(var, var_layer, var_category))
    keep = [t for t in traced.outputs if t[0] in nodes and len(nodes[t[0]].outputs) > t[1]]
    creation = _creation_order(
        all_vars,
        traced.variable_placeholders,
        preset,
        idle,
        traced.made_order,
        zeros={ph for ph, role in traced.metric_roles.items() if role == "metric"},
        quantized=_quantized_variables(model),
    )
    # The batch is made once, after the model and before the optimizer's
    # slots (Keras builds those at the first step), and is held through every
    # step: TF's profile of a GRU at batch 128 holds its 4 MiB input chunk
    # when the measured step starts.  Its size grows with the batch.
    batch = [
        (("in", ph), (buf.a, buf.b), buf.category, False, None)
        for (ph, _), buf in preset.items()
        if buf.keep and not buf.persistent
    ]
    # The loss tracker is made when the model is compiled, before the batch;
    # the compiled metrics' state as Keras builds the first step, after it
    # and before the slots.
    roles = [traced.metric_roles.get(key[1]) if key[0] == "p" else None for key, *_ in creation]
    tracker = [e for e, r in zip(creation, roles, strict=True) if r == "tracker"]
    state = [e for e, r in zip(creation, roles, strict=True) if r == "metric"]
    creation = [e for e, r in zip(creation, roles, strict=True) if r is None]
    at = next((i for i, e in enumerate(creation) if e[2] == "optimizer_state"), len(creation))
    creation = creation[:at] + tracker + batch + state + creation[at:]

    # A Bidirectional layer's two loops run side by side, each able to hold
    # a window of run-ahead input projections.  TF's profile of a BiLSTM's
    # inference held the forward loop's 32 and one of the backward loop's,
    # and on both CPUs measured one window is nearer TF's runs (summed
    # |error| of the Zen 4's eight bidirectional inference steps: 122 points
    # with both windows, 75 with one; the AVX2 EPYC's five: 101 and 68;
    # docs/engine.md).  So the replay keeps the larger
    # direction's window; both are a scenario.  (The schedules are made with
    # both, so that the windows' ops keep their durations.)
    paired = _lone_windows(nodes, order, directions_only=True) if threads > 1 else {}
    both_windows = {name: nodes[name] for name in paired}
    orders, ways = _branch_orders(nodes, order, notes)
    schedules = [orders]
    costed: list = []
    executor = "tf-executor (GPU: every kernel inline)"
    if threads:
        # Op durations at the batch asked for: an optimizer's update of a big
        # variable takes as long at any batch, the gradients it races grow
        # with it (the masked embedding bag with Lion: TF's profile at batch
        # 256 runs both momentum products first, the replay with batch-32
        # durations ran one last).  ``Footprint.at(n)`` keeps this order.
        durations = _durations(nodes, props1, props2, batch_size)
        if trips:
            # A loop's body is replayed once but runs once per iteration: its
            # ops take that many times as long beside the ops outside it
            # (a gradient loop, as often as the loop it differentiates:
            # ``_loop_trips``; a loop of unknown count, as the longest).
            longest = max(trips.values())
            durations = {
                name: d * (trips.get(frame, longest) if (frame := _frame_of(name)) else 1)
                for name, d in durations.items()
            }
        # How concurrent kernels share the cores is not one way in TF
        # (engine/executor.py); with several threads both ways are replayed.
        # The footprint follows the side-by-side replay, which is nearer TF
        # on both CPUs' ground truth than the mean of the two (docs/engine.md,
        # point 3); the other one is reported in the notes when it differs.
        # Nor is which of a merged filter gradient and its input gradient runs
        # inline: TF's runtime edge order decides, which the trace does not
        # reproduce (``_merged_filters_swapped``), so both orders are replayed too.
        variants = [orders]
        if threads > 1:
            swapped = [_merged_filters_swapped(nodes, o) for o in orders]
            if swapped != orders:
                variants.append(swapped)
        schedules = [
            [_executor_events(nodes, o, durations, threads, shared, trips) for o in variant]
            for shared in ((False, True) if threads > 1 else (False,))
            for variant in variants
        ]
        executor = f"tf-executor (CPU, {threads} inter-op threads)"
        # A filter gradient's cost and a comparison's are known to a range,
        # not a point, and where such a kernel races another, which ends
        # first decides what is alive: those orders are scenarios
        # (``_cost_range_orders``).
        if threads > 1:
            costed = _cost_range_orders(nodes, variants, durations, threads, trips, schedules)
    nodes.update(paired)
    idle_bytes = sum(buf.a for buf in idle)
    names = [_LayerName(layer.name) for layer in layers]
    args = (batch_size, preset, creation, keep, idle, idle_bytes, names)
    # The helper process replays the second half of the schedules and of the
    # cost-range scenarios meanwhile.
    jobs = schedules + [events for _, events in costed]
    half = len(schedules) // 2
    theirs = [*range(half, len(schedules)), *range(len(schedules) + len(costed) // 2, len(jobs))]
    there = (
        helper_process.call(_peak_parts_of, nodes, [jobs[i] for i in theirs], *args)
        if half
        else None
    )
    if there is None:
        theirs = []
    mine = [i for i in range(len(jobs)) if i not in theirs]
    done = dict(zip(mine, _peak_parts_of(nodes, [jobs[i] for i in mine], *args), strict=True))
    if there is not None:
        here = functools.partial(_peak_parts_of, nodes, [jobs[i] for i in theirs], *args)
        done.update(zip(theirs, helper_process.result_or(there, here, _collect_young), strict=True))
    parts = [done[i] for i in range(len(schedules))]
    costed_parts = [done[i] for i in range(len(schedules), len(jobs))]
    # schedules[:half] side by side, schedules[half:] taking turns (each over the gradient orders)
    side_parts, turn_parts = (parts[:half], parts[half:]) if threads > 1 else (parts, [])
    side_schedules = schedules[:half] if threads > 1 else schedules
    lines, slack = _mean_parts(side_parts)
    if turn_parts:
        executor += "; concurrent kernels side by side"
    if len(side_parts) > 1:
        executor += "; mean of two orders of merged filter and input gradients"
    # Every schedule replayed besides the estimate's own is kept as a
    # scenario, so that ``Footprint.peak_range`` spans them at any batch.
    # Labels are unique: ``Footprint.scenario_peaks`` is keyed by them.
    scenarios = []
    if len(side_parts) > 1:
        scenarios += [
            _scenario(f"concurrent kernels side by side{said}", part)
            for said, part in zip(_ORDERS_SAID, side_parts, strict=True)
        ]
    scenarios += [
        _scenario(f"concurrent kernels taking turns{said}", part)
        for said, part in zip(_ORDERS_SAID[: len(turn_parts)], turn_parts, strict=True)
    ]
    if turn_parts:
        side, turns = (
            sum(_parts_peak(part, batch_size) for part in group) / len(group) / 2**20
            for group in (side_parts, turn_parts)
        )
        if max(side, turns) > 1.1 * min(side, turns):
            notes.append(
                f"TF's thread timing can move this step's peak: {side:,.1f} MiB with "
                f"concurrent kernels side by side (the estimate), {turns:,.1f} MiB if they "
                "take turns on the cores."
            )
    for (label, _), part in zip(costed, costed_parts, strict=True):
        scenarios.append(_scenario(label, part))
    if paired:
        (part,) = _peak_parts_of({**nodes, **both_windows}, [schedules[0]], *args)
        scenarios.append(_scenario("both directions of a bidirectional loop running ahead", part))
    lone = {k: v for k, v in _lone_windows(nodes, order).items() if k not in paired}
    if lone and threads > 1:
        # Other loops side by side (two branches' layers) each keep their
        # window in the estimate: TF's runs of an LSTM and a GRU on two inputs
        # are at 21.6 to 22.9 MiB, the replay with both windows 21.0 and with
        # one 16.9.  One window per group of loops side by side is the other end.
        (part,) = _peak_parts_of({**nodes, **lone}, [schedules[0]], *args)
        scenarios.append(_scenario("side-by-side loops running ahead one at a time", part))
    early = {
        name: dataclasses.replace(node, late_outputs=False)
        for name, node in nodes.items()
        if node.late_outputs
    }
    if early and threads > 1:
        # An Einsum that copies its product into the output's order allocates
        # the output after the product, which the replay puts at the kernel's
        # end; how long the product takes of the kernel's time is not
        # modelled, so the other end (the output with the product) is a
        # scenario.
        (part,) = _peak_parts_of({**nodes, **early}, [schedules[0]], *args)
        scenarios.append(_scenario("einsum outputs allocated with their products", part))
    data = {key[1] for key, *_ in batch}
    chosen = _data_predicates(nodes, sorted(ways[0]), data, {name for name, _ in keep})
    if chosen:
        scenarios += _data_condition_scenarios(
            nodes, chosen, ways, side_schedules, (lines, slack), notes, args
        )
    in_place = _in_place_sum_inputs(nodes, order) if threads else {}
    if in_place:
        # Where TF's executor reaches the input an in-place sum's temporary
        # waits for changes from process to process (_in_place_sum_inputs):
        # the footprint follows the graph's order, the note gives the peak
        # when that input comes last.
        late = [
            _executor_events(nodes, o, durations, threads, False, trips, late_sums=in_place)
            for o in orders
        ]
        late_part = _peak_parts(nodes, late, *args)
        scenarios.append(_scenario("in-place sums starting after all their inputs", late_part))
        late_peak = _parts_peak(late_part, batch_size) / 2**20
        peak = _parts_peak((lines, slack), batch_size) / 2**20
        if late_peak > 1.1 * peak:
            notes.append(
                f"TF sums some gradients in place, and its executor makes their inputs in an "
                f"order that changes from run to run: this step's peak is {peak:,.1f} MiB "
                f"(the estimate) when the sum starts early, up to {late_peak:,.1f} MiB when it "
                "starts after all of them."
            )
    if lagging:
        windows = [node for node in nodes.values() if node.op == LAGGING_PRODUCTS]
        kept_up = {w.name: _emptied(w) for w in windows}
        (part,) = _peak_parts_of({**nodes, **kept_up}, [schedules[0]], *args)
        label = "loop recurrence keeping up with its weight-gradient sums"
        scenarios.append(_scenario(label, part))
        peak = _parts_peak((lines, slack), batch_size) / 2**20
        held = peak - _parts_peak(part, batch_size) / 2**20
        notes.append(
            "TF's executor runs the recurrence of a backward loop whose per-step tensors are "
            f"small (at most {LAGGING_STATE_ELEMENTS} elements) ahead of the sums of its weight "
            "gradients, each iteration's product alive until its sum runs: the estimate holds "
            f"{max(lagging.values()):.0%} of the {_PARALLEL_ITERATIONS} iterations' window "
            f"({held:,.1f} MiB of this step's {peak:,.1f} MiB at its peak). How far it runs "
            "ahead changes from process to process."
        )
    behind = _sums_behind_bytes(nodes, trips or {}, lagging) if threads else 0.0
    if behind:
        ahead = [PeakLine(line.a + behind, line.b, {}, {}) for line in lines]
        scenarios.append(
            _scenario("loop recurrence run ahead of its weight-gradient sums", (ahead, slack))
        )
        peak = _parts_peak((lines, slack), batch_size) / 2**20
        if behind / 2**20 > 0.05 * peak:
            notes.append(
                "TF's executor can run a loop's recurrence up to "
                f"{_PARALLEL_ITERATIONS} iterations ahead of the sums of its weight "
                "gradients, each iteration's product alive until its sum runs (seen in "
                "TF's profiles of RNNs with small per-step tensors: batch 1 to 32 with "
                f"few units, over hundreds of steps). That would add up to {behind / 2**20:,.1f} "
                f"MiB {'more ' if lagging else ''}to this step's {peak:,.1f} MiB."
            )
    info = _layer_info(model, layers)
    named = {li.name for li in info}
    extra = sorted({name for line in lines for name in line.layers} - named)
    info += [LayerInfo(name, "", "", 0) for name in extra]
    info.append(LayerInfo(ALLOCATOR_ROW, "", "", 0))
    return Footprint(
        slack=slack,
        model_name=model.name,
        batch_size=int(batch_size),
        training=training,
        optimizer=opt_name,
        precision=model.dtype_policy.name,
        lines=lines,
        layer_info=tuple(info),
        overhead=DEFAULT_OVERHEAD,
        notes=tuple(notes),
        executor=executor,
        scenarios=tuple(scenarios),
    )


#: What the replay needs of a layer (and the helper process can be sent).
_LayerName = collections.namedtuple("_LayerName", "name")


def _peak_parts_of(nodes, schedules, *args) -> list:
    return [_peak_parts(nodes, orders, *args) for orders in schedules]


def _peak_parts(nodes, orders, batch_size, preset, creation, keep, idle, idle_bytes, layers):
    """The candidate peak lines and the allocator slack of one set of branch orders."""
    from .engine.schedule import replay, upper_hull_positions

    slack, timelines = _allocator_slack(
        nodes, orders, batch_size, preset, creation, keep, idle_bytes
    )
    snapshots = []
    for o, timeline in zip(orders, timelines, strict=True):
        positions = upper_hull_positions(timeline)
        _, snaps = replay(
            nodes, o, batch_size, preset=_copy(preset), keep=keep, record=set(positions)
        )
        snapshots += [snaps[pos] for pos in positions]

    lines = []
    for snap in snapshots:
        cats: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
        per_layer: dict[str, dict[str, list[float]]] = collections.defaultdict(
            lambda: collections.defaultdict(lambda: [0.0, 0.0])
        )
        for buf in list(snap.buffers) + idle:
            a = buf.a
            cats[buf.category][0] += a
            cats[buf.category][1] += buf.b
            lname = _layer_name(layers, buf.layer)
            per_layer[lname][buf.category][0] += a
            per_layer[lname][buf.category][1] += buf.b
        a_tot = sum(v[0] for v in cats.values())
        b_tot = sum(v[1] for v in cats.values())
        lines.append(
            PeakLine(
                a_tot,
                b_tot,
                {k: (v[0], v[1]) for k, v in cats.items()},
                {name: {k: (v[0], v[1]) for k, v in d.items()} for name, d in per_layer.items()},
            )
        )
    return tuple(lines), slack


def _parts_peak(part, n: int) -> float:
    lines, slack = part
    from .footprint import interpolate_slack

    return max(line.bytes_at(n) for line in lines) + sum(interpolate_slack(slack, n).values())


#: How a scenario's label names its merged-filter order (``_merged_filters_swapped``).
_ORDERS_SAID = ("", ", merged filter and input gradients swapped")


def _cost_range_orders(nodes, variants, durations, threads, trips, schedules) -> list:
    """Side-by-side schedules with the kernels whose cost is known to a range at each end of it.

    Filter gradients: ``executor.FILTER_GRAD_SLOWDOWN_RANGE`` is what
    ``kernel_costs.py`` measured for float32; the estimate takes 1.08, their
    geometric mean, and each end scales every filter gradient's modelled time
    (a 16-bit one's too, whose own ratio is larger:
    ``executor.filter_grad_slowdown``).  Where TF runs its own kernels and the
    channel fit times them, the ends are how far TF's in-step ratios stray
    from the fit (``executor.EIGEN_FILTER_GRAD_SCALES``). A CNN with SpectralNormalization shows
    why the ends matter: its last convolution's two gradients take about as
    long, and TF's runs peak at 44 or 60 MiB depending on whether the filter
    gradient ends before the input gradient's successors start.

    Comparisons: ``executor.COMPARISON_SLOWDOWN_RANGE``, against the float op
    on as many elements the estimate charges them as.  A language model's
    loss clips its outputs and masks the clip's gradient; TF's runs peak one
    logits-sized tensor lower when the mask ends before ``Log`` allocates
    (an RMSNorm decoder's: 297.0 or 344.4 MiB).

    Only schedules whose events differ from the estimate's own are returned,
    as ``(label, events per branch order)``.
    """
    from .engine.executor import (
        _FILTER_GRAD_SLOWDOWN,
        COMPARISON_SLOWDOWN_RANGE,
        EIGEN_FILTER_GRAD_SCALES,
        FILTER_GRAD_SLOWDOWN_RANGE,
        eigen_times_by_channels,
    )

    filters = {name for name, node in nodes.items() if "BackpropFilter" in node.op}
    onednn = _onednn_dtypes()
    eigen = any(
        nodes[name].outputs
        and eigen_times_by_channels(
            nodes[name].op, dtype := _dtype_name(nodes[name].outputs[0][2]), dtype in onednn
        )
        for name in filters
    )
    kinds = (
        (
            "filter gradients",
            filters,
            EIGEN_FILTER_GRAD_SCALES
            if eigen
            else [end / _FILTER_GRAD_SLOWDOWN for end in FILTER_GRAD_SLOWDOWN_RANGE],
        ),
        (
            "comparisons",
            {
                name
                for name, node in nodes.items()
                if _large_comparison(name, node, durations.get(name, 0.0))
            },
            COMPARISON_SLOWDOWN_RANGE,
        ),
    )
    out = []
    for what, chosen, scales in kinds:
        if not chosen:
            continue
        for scale in scales:
            timed = {name: d * scale if name in chosen else d for name, d in durations.items()}
            for said, variant, base in zip(_ORDERS_SAID, variants, schedules, strict=False):
                events = [_executor_events(nodes, o, timed, threads, False, trips) for o in variant]
                if events != base:
                    out.append((f"{what} {scale:.2g}x as long as modelled{said}", events))
    return out


def _large_comparison(name: str, node, duration: float) -> bool:
    """A comparison outside any loop that the cost model gives 1 ms or more.

    That is a read of about 4 MiB: a language model's clipped logits (4 ms
    for the masked causal LM's 15.6 MiB), which are worth racing for.
    Rescaling a loop's counter test or an optimizer's small check replays
    schedules that differ by microseconds, and each replay of a recurrent
    step costs: two stacked bidirectional GRUs' estimate took 14.8 s instead
    of 12.0 when an RMSprop ``Equal`` of 0.3 ms was rescaled too, to the
    same events.
    """
    from .engine.executor import COMPARISON_OPS

    return node.op in COMPARISON_OPS and not _frame_of(name) and duration >= 1_000_000.0


#: The data's conditions are named in the notes when their ways' peaks differ
#: by more than this share of the estimate.
_DATA_WAYS_SAID = 0.01


def _data_condition_scenarios(nodes, chosen, ways, schedules, estimate, notes, args) -> list:
    """A scenario for each way the data's conditions can go, and a note naming them.

    Each of ``schedules`` (those the estimate is the mean of) has one replay
    per way of all the step's conditions (``ways``); those that agree on the
    data's conditions are one scenario, the worst of them (an accumulation
    step's condition still goes its costlier way).
    """
    batch_size = args[0]
    peak = _parts_peak(estimate, batch_size) / 2**20
    scenarios = []
    said = []
    peaks = []
    for values in itertools.product((False, True), repeat=len(chosen)):
        agree = [all(way[p] == v for p, v in zip(chosen, values, strict=True)) for way in ways]
        picked = [[o for o, ok in zip(orders, agree, strict=True) if ok] for orders in schedules]
        part = _mean_parts(_peak_parts_of(nodes, picked, *args))
        label = ", ".join(
            f"{p[0].rpartition('/')[0] or p[0]} {str(v).lower()}"
            for p, v in zip(chosen, values, strict=True)
        )
        scenarios.append(_scenario(f"the data's conditions going: {label}", part))
        peaks.append(_parts_peak(part, batch_size) / 2**20)
        said.append(f"{peaks[-1]:,.1f} MiB with {label}")
    if max(peaks) - min(peaks) < _DATA_WAYS_SAID * peak:
        # a hinge loss's check of its labels: either way costs the same
        return scenarios
    names = ", ".join(f"`{p[0]}`" for p in chosen)
    which = (
        "A condition of this step depends"
        if len(chosen) == 1
        else (f"{len(chosen)} conditions of this step depend")
    )
    notes.append(
        f"{which} on the batch's values ({names}), so TF runs the branch "
        f"the data chooses. The estimate ({peak:,.1f} MiB) counts the costlier way: "
        f"{'; '.join(said)}."
    )
    return scenarios


def _scenario(label: str, part) -> PeakScenario:
    """One replayed schedule's peak lines and slack, as ``Footprint.peak_range`` reads them."""
    lines, slack = part
    return PeakScenario(
        label,
        tuple((line.a, line.b) for line in lines),
        tuple((m, sum(cats.get(c, 0.0) for c in CATEGORIES)) for m, cats in slack),
    )


def _mean_parts(parts):
    """Lines and slack whose footprint is, at every batch size, the mean of ``parts``'.

    The mean of two upper envelopes is the envelope of the pairwise mean
    lines (the maximum of a sum of independent choices is the sum of the
    maxima), so the breakdowns stay exact sums; the slack points share one
    ladder of batch sizes and are averaged per category.
    """
    from .engine.schedule import upper_hull_positions

    if len(parts) == 1:
        return parts[0]
    k = len(parts)

    def mean_coefs(maps):
        out: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
        for mapping in maps:
            for key, (a, b) in mapping.items():
                out[key][0] += a / k
                out[key][1] += b / k
        return {key: (a, b) for key, (a, b) in out.items()}

    lines = []
    for combo in itertools.product(*(lines for lines, _ in parts)):
        layer_names = {name for line in combo for name in line.layers}
        lines.append(
            PeakLine(
                sum(line.a for line in combo) / k,
                sum(line.b for line in combo) / k,
                mean_coefs([line.categories for line in combo]),
                {
                    name: mean_coefs([line.layers.get(name, {}) for line in combo])
                    for name in layer_names
                },
            )
        )
    ladders = [tuple(m for m, _ in slack) for _, slack in parts]
    assert all(ladder == ladders[0] for ladder in ladders)
    slack = []
    for i, m in enumerate(ladders[0]):
        cats: dict[str, float] = collections.defaultdict(float)
        for _, part_slack in parts:
            for cat, v in part_slack[i][1].items():
                cats[cat] += v / k
        slack.append((m, dict(cats)))
    # Only the pairs that are the highest at some batch size can show.
    hull = upper_hull_positions([(line.a, line.b) for line in lines])
    return tuple(lines[p] for p in hull), tuple(slack)


_XLA_STEPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _optimizer_key(opt: Any, variables: Sequence[Any] = ()) -> tuple[str, str]:
    """What identifies an optimizer's configuration across estimates (its name aside).

    A ``MultiOptimizer`` built on a function has no configuration that tells
    two functions apart, so its key is what it picks for each of ``variables``.
    """
    import json

    if picks_by_function(opt):
        picks = [(v.path, _optimizer_key(chosen_for(opt, v))) for v in variables]
        return type(opt).__name__, json.dumps(picks)
    config = {k: v for k, v in opt.get_config().items() if k != "name"}
    return type(opt).__name__, json.dumps(config, sort_keys=True, default=str)


def _xla_step_key(model, training, x_specs, y_specs, loss_fn, opt) -> tuple:
    from .engine.metrics import metrics_key

    return (
        training,
        None if opt is None else _optimizer_key(opt, model.trainable_variables),
        getattr(loss_fn, "key", None) or repr(loss_fn),
        str(x_specs),
        str(y_specs),
        tuple(id(v) for v in model.variables),
        metrics_key(model) if training else None,
    )


def _compile_xla_step(model, training, x_specs, y_specs, loss_fn, opt, batches, notes):
    """XLA's ``(temporary, output)`` bytes for the whole step at each of ``batches``.

    XLA's compiler reads the variables' shapes from the variables themselves,
    so the compiling optimizer's slots get ``Empty`` buffers (never written,
    so never resident) and are dropped before this returns.
    """
    import tensorflow as tf

    from .engine import xla
    from .engine.step import forget_gradients_since, gradient_registry_names, make_step

    registered = gradient_registry_names()
    compile_opt = None
    if training:
        compile_opt = _fresh_optimizer(opt)
        _build_without_memory(compile_opt, list(model.trainable_variables))
        xla.fill_slots(list(compile_opt.variables))
    step = make_step(
        model,
        training=training,
        loss_fn=loss_fn,
        optimizer=compile_opt,
        metrics=_step_metrics(model, training, notes),
    )
    structures = (x_specs, y_specs) if training else (x_specs,)
    sizes = [len(tf.nest.flatten(s)) for s in structures]

    def flat_step(*flat):
        # XLA's compiler takes only flat tensor arguments; a model with
        # several inputs (or outputs, for y) gets them packed back here.
        args, pos = [], 0
        for structure, size in zip(structures, sizes, strict=True):
            args.append(tf.nest.pack_sequence_as(structure, list(flat[pos : pos + size])))
            pos += size
        return step(*args)

    fn = tf.function(flat_step, jit_compile=True, autograph=False)

    def at(batch):
        return xla.step_allocations(
            fn,
            tuple(
                tf.TensorSpec((batch, *s.shape[1:]), s.dtype) for s in tf.nest.flatten(structures)
            ),
        )

    try:
        # each batch once: a fixed batch (a stateful model) is asked for twice
        sized = {b: at(b) for b in dict.fromkeys(batches)}
        return tuple(sized[b] for b in batches)
    finally:
        # Nothing may keep the compiling optimizer's slots alive after this.
        forget_gradients_since(registered)


XLA_ROW = "(XLA step buffer)"


def _estimate_xla_step(
    model, batch_size, training, x_specs, y_specs, loss_fn, opt, opt_name, notes, *, fixed=False
):
    """A ``jit_compile=True`` step: what XLA's buffer assignment asks TF's allocator for.

    Keras compiles the whole step into one XLA executable.  Besides the
    variables (updated in place) and the batch, it asks TF's allocator for one
    temporary buffer holding every activation, gradient and scratch value, and
    for its small outputs.  The step is compiled (not run) at two batch sizes;
    XLA's buffer assignment gives both sizes exactly.  The allocator model then
    adds the chunk slack, as for the executor.  A ``fixed`` batch (a stateful
    layer) is compiled at that batch only, and its buffers do not grow.
    """
    import tensorflow as tf

    from .engine.bfc import BFCModel

    # XLA's buffer sharing is not linear in the batch: compile at the batch
    # asked for (exact there) and at twice it (the slope ``at()`` follows).
    b1, b2 = int(batch_size), int(batch_size) * (1 if fixed else 2)
    key = (b1, *_xla_step_key(model, training, x_specs, y_specs, loss_fn, opt))
    try:
        per_model = _XLA_STEPS.setdefault(model, {})
    except TypeError:  # a model that cannot be weakly referenced
        per_model = {}
    if key in per_model:
        (t1, o1), (t2, o2) = per_model[key]
    else:
        (t1, o1), (t2, o2) = per_model[key] = _compile_xla_step(
            model, training, x_specs, y_specs, loss_fn, opt, (b1, b2), notes
        )
    bt = (t2 - t1) / (b2 - b1) if b2 != b1 else 0.0
    bo = (o2 - o1) / (b2 - b1) if b2 != b1 else 0.0
    temp = (t1 - bt * b1, bt)
    outs = (o1 - bo * b1, bo)

    layers = list(model.layers)
    owner_opt = _tracing_optimizer(model, opt) if training else None
    var_layer, var_category = _variable_owners(model, owner_opt)
    all_vars = list(model.variables) + (list(owner_opt.variables) if training else [])
    persistent = [_variable_buffer(v, var_layer, var_category) for v in all_vars]
    # Each input and target is a tensor of its own in TF's allocator: one
    # buffer for all of them asks for a region of another size.
    per_input = [
        s.dtype.size * math.prod(s.shape[1:])
        for s in tf.nest.flatten(x_specs) + (tf.nest.flatten(y_specs) if training else [])
    ]
    per_sample = sum(per_input)
    cats: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    per_layer: dict[str, dict[str, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(lambda: [0.0, 0.0])
    )
    for buf in persistent:
        cats[buf.category][0] += buf.a
        per_layer[_layer_name(layers, buf.layer)][buf.category][0] += buf.a
    input_row = _layer_name(layers, _input_layer(layers))
    cats["input_batch"][1] += per_sample
    per_layer[input_row]["input_batch"][1] += per_sample
    for a, b in (temp, outs):
        cats["temporaries"][0] += a
        cats["temporaries"][1] += b
        per_layer[XLA_ROW]["temporaries"][0] += a
        per_layer[XLA_ROW]["temporaries"][1] += b
    line = PeakLine(
        sum(v[0] for v in cats.values()),
        sum(v[1] for v in cats.values()),
        {k: (v[0], v[1]) for k, v in cats.items()},
        {name: {k: (v[0], v[1]) for k, v in d.items()} for name, d in per_layer.items()},
    )

    creation = _creation_order(all_vars, {}, {}, persistent)
    points = []
    for m in _slack_ladder(batch_size):
        sim = BFCModel()
        _allocate_persistent(sim, creation)
        for i, size in enumerate(per_input):
            sim.alloc(("input", i), int(size * m), "input_batch")
        for _ in range(2):  # warm-up, then the measured step
            sim.reset_peak()
            sim.alloc(("xla", "temp"), int(temp[0] + temp[1] * m), "temporaries")
            sim.alloc(("xla", "out"), int(outs[0] + outs[1] * m), "temporaries")
            sim.free(("xla", "temp"))
            sim.free(("xla", "out"))
        points.append((m, _slack_by_category(sim, line.a + line.b * m)))

    notes.append(
        "The model is compiled with jit_compile=True: the step's buffers are XLA's own "
        "buffer assignment (compiled, not run), so activations, gradients and scratch "
        f"are one buffer, shown as the {XLA_ROW} row."
    )
    info = _layer_info(model, layers)
    info.append(LayerInfo(XLA_ROW, "", "", 0))
    info.append(LayerInfo(ALLOCATOR_ROW, "", "", 0))
    return Footprint(
        slack=tuple(points),
        model_name=model.name,
        batch_size=int(batch_size),
        training=training,
        optimizer=opt_name,
        precision=model.dtype_policy.name,
        lines=(line,),
        layer_info=tuple(info),
        overhead=DEFAULT_OVERHEAD,
        notes=tuple(notes),
        executor="xla",
    )


_TRACING_OPTIMIZERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _tracing_optimizer(model: Any, fresh: Any) -> Any:
    """One built tracing optimizer per model and optimizer configuration.

    Building a Keras optimizer leaves native memory behind in TF (about 35 KiB
    per slot variable), so repeated estimates of one model (a notebook's
    selectors, a loop) reuse the optimizer they built the first time.
    """
    variables = list(model.trainable_variables)
    key = (*_optimizer_key(fresh, variables), tuple(id(v) for v in variables))
    try:
        per_model = _TRACING_OPTIMIZERS.setdefault(model, {})
    except TypeError:  # a model that cannot be weakly referenced
        _build_without_memory(fresh, variables)
        return fresh
    if key not in per_model:
        _build_without_memory(fresh, variables)
        per_model[key] = fresh
    return per_model[key]


def _build_without_memory(opt: Any, variables: list[Any]) -> None:
    """Build our own optimizer with slot variables that hold no memory.

    Tracing only needs the slots' handles, shapes and dtypes, so they are made
    as uninitialized resource variables: an estimate of a model with Adam does
    not allocate two more copies of its weights.  If an optimizer's ``build``
    needs real values, it is built normally.
    """
    import numpy as np
    from keras.src.backend.tensorflow import core
    from tensorflow.python.ops import resource_variable_ops

    original = core.Variable._initialize

    def handle_only(self: Any, value: Any) -> None:
        import tensorflow as tf

        if isinstance(value, tf.Variable):
            self._value = value
            return
        shape = getattr(self, "_shape", None)
        if shape is None:
            shape = np.shape(value() if callable(value) else value)
        self._value = resource_variable_ops.UninitializedVariable(
            shape=shape, dtype=self._dtype, name=self.name, trainable=self.trainable
        )

    core.Variable._initialize = handle_only
    try:
        opt.build(variables)
        return
    except Exception:  # noqa: S110 - fall back to real variables below
        pass
    finally:
        core.Variable._initialize = original
    for attr in ("built", "_built"):
        if hasattr(opt, attr):
            try:
                setattr(opt, attr, False)
            except AttributeError:
                pass
    opt.build(variables)


def _creation_order(
    all_vars,
    variable_placeholders,
    preset,
    idle,
    made_order=None,
    zeros: Set[str] = frozenset(),
    quantized: Mapping[int, tuple[str, int, int]] | None = None,
):
    """Persistent buffers in the order building the model and optimizer makes them.

    Each entry is ``(key, bytes, category, random_init, group)``: weight
    matrices drawn by a random initializer pass through two same-size
    temporaries first (the draw and its scaling), which is what leaves the
    allocator's chunks split the way TF's are after building.  ``group`` is
    ``(shape, dtype)`` for an optimizer slot: Keras makes the slots while
    tracing the first step, their initial values are constants that Grappler
    folds and merges, so every slot of one shape and dtype starts out in one
    shared buffer (TF's log: one 1 MiB allocation for the eight Adam slots of
    four 512x512 kernels, then seven copies in the first step).  The compiled
    metrics' state (``zeros``: their placeholders) is made in the same trace
    from zeros, and TF's log of a tagger with a per-label AUC shows its four
    200x1000 accumulators in one buffer made among the slots' zeros.
    """
    from .engine.step import _handle

    def zeros_group(var: Any, shared: bool) -> tuple | None:
        """The shared zeros buffer a slot or metric variable starts in, by shape and dtype."""
        shape = tuple(getattr(var, "shape", ()) or ())
        return (shape, _dtype_name(getattr(var, "dtype", ""))) if shared and shape else None

    ph_of = {id(var): ph for ph, var in variable_placeholders.items()}
    idle_iter = iter(enumerate(idle))
    idle_made: dict[int, int] = {}  # an idle variable -> the id its handle was made with
    out = []
    seen = set()
    roles: dict[tuple, tuple[str, int, int]] = {}  # a quantized layer's variables, by key
    for var in all_vars:
        ph = ph_of.get(id(var))
        if ph is not None and (ph, 0) in preset:
            buf = preset[(ph, 0)]
            key = ("p", ph)
            seen.add(ph)
        else:
            try:
                i, buf = next(idle_iter)
            except StopIteration:
                continue
            key = ("idle", i)
            made = getattr(_handle(var), "_id", None)
            if isinstance(made, int):
                idle_made[i] = made
        shape = tuple(getattr(var, "shape", ()) or ())
        random_init = (
            buf.category == "parameters"
            and bool(getattr(var, "trainable", False))
            and len(shape) >= 2
        )
        shared = key[0] == "p" and (buf.category == "optimizer_state" or ph in zeros)
        out.append((key, int(buf.a), buf.category, random_init, zeros_group(var, shared)))
        if quantized and id(var) in quantized:
            roles[key] = quantized[id(var)]
    for (ph, _), buf in preset.items():  # the step's own (metrics), or known only by handle
        if buf.persistent and ph not in seen:
            group = zeros_group(variable_placeholders.get(ph), ph in zeros)
            out.append((("p", ph), int(buf.a), buf.category, False, group))
    for i, buf in idle_iter:
        out.append((("idle", i), int(buf.a), buf.category, False, None))
    if made_order:
        # Variables and captured constants go in the order TF made them.
        # ``model.variables`` is mostly that order already, but a constant
        # the model captured was made while it was built, between the weights
        # (BERT's position embeddings, gathered when the layer was called on
        # ``arange``), and would otherwise come last.  So would a variable
        # the step never reads, such as a Dropout's seed state in inference,
        # which the layer makes before the weights of the layer it follows
        # (a Dropout MLP's inference: -12.1% with it last).  Entries with no
        # id keep their place after the last one that has one.
        keys, last = [], -1
        for key, *_ in out:
            at = made_order.get(key[1]) if key[0] == "p" else idle_made.get(key[1])
            last = last if at is None else at
            keys.append(last)
        out = [entry for _, _, entry in sorted(zip(keys, range(len(out)), out, strict=True))]
    if quantized:
        out = _with_quantize_history(out, roles)
    return out


def _quantized_variables(model: Any) -> dict[int, tuple[str, int, int]]:
    """What ``model.quantize("int8")`` did to each variable of a quantized layer.

    ``id(var) -> (role, layer id, bytes of the float kernel it replaced)``:
    role ``"kernel"`` for the int8 kernel (or embedding table), ``"built"``
    for the rest of the layer's variables (its bias, and the scales
    ``quantize`` added, made the same way as any variable).
    """
    import numpy as np

    out: dict[int, tuple[str, int, int]] = {}
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if getattr(layer, "quantization_mode", None) != "int8":
            continue
        kernel = getattr(layer, "_kernel", None)
        if kernel is None:
            kernel = getattr(layer, "_embeddings", None)
        if kernel is None or _dtype_name(kernel.dtype) != "int8":
            continue
        itemsize = np.dtype(layer.dtype_policy.variable_dtype).itemsize
        float_bytes = int(np.prod(kernel.shape)) * itemsize
        for var in layer.weights:
            out[id(var)] = ("kernel" if var is kernel else "built", id(layer), float_bytes)
    return out


def _with_quantize_history(creation: list, roles: Mapping[tuple, tuple[str, int, int]]) -> list:
    """``creation`` with the float kernels ``model.quantize`` replaced, drawn and freed.

    Building the model drew each float kernel (before the layer's other
    weights).  TF's allocator log of ``quantize("int8")`` on a Dense layer
    then shows: the int8 kernel made of zeros (and its scale), the float
    kernel freed (Keras quantizes it in NumPy; in some runs the kernel is
    freed first), and the quantized values converted to a tensor, copied
    into the kernel and freed.  When NumPy's array of the values happens to
    be 64-byte aligned, TF takes its buffer as it is and the kernel adopts
    it, outside TF's allocator; the replay keeps the kernel in the allocator,
    as a GPU must.  Without that history an int8 MLP's step started from
    other chunks: 14.00 MiB estimated where TF's own history replayed under
    the estimate's step gives TF's 12.91 (``benchmarks/tf_timeline.py --case
    int8_mlp_infer --replay --swap``).
    """
    kernels = {
        layer: (key, nbytes) for key, (role, layer, nbytes) in roles.items() if role == "kernel"
    }
    first: dict[int, tuple] = {}
    for key, *_ in creation:
        if key in roles:
            first.setdefault(roles[key][1], key)
    # A layer built quantized (a loaded model, a copy rebuilt from its config)
    # makes its int8 kernel first and never had a float one.
    drawn_at = {
        first[layer]: (key, nbytes)
        for layer, (key, nbytes) in kernels.items()
        if first[layer] != key
    }
    replaced = {kernel for kernel, _ in drawn_at.values()}
    out = []
    for entry in creation:
        key = entry[0]
        if key in drawn_at:
            kernel, nbytes = drawn_at[key]
            out.append((("float", kernel), nbytes, "parameters", True, None))
        out.append(entry)
        if key in replaced:
            out.append((("release", ("float", key)), 0, "parameters", False, None))
            out.append((("values", key), entry[1], "temporaries", False, None))
            out.append((("release", ("values", key)), 0, "temporaries", False, None))
    return out


#: TF's resource handle of a variable: a 200-byte tensor in a 256-byte chunk,
#: made when the variable is, right after its first value, and held as long.
HANDLE_BYTES = 200
#: The small tensors of a random initializer's seed (its casts, key and
#: counter) that TF holds while the initializer draws; half are freed before
#: the draw, half after (TF's profile of a Dense layer's glorot draw).
SEED_TEMPS = 6


def _allocate_persistent(model, creation, holders=None, m: int = 0) -> None:
    """Build-time allocations; ``holders`` maps a slot group to the key its shared buffer gets.

    An entry's bytes are a number, or ``(a, b)`` for ``a + b * m`` (the input batch).
    Each variable also gets its handle after its value, and a random draw its
    seed's small tensors around it: with neither, the chunks a small model's
    step starts from were not TF's (a two-output model +24.4%, now +11.7%;
    docs/engine.md, point 7).
    """
    # TF's first small allocations open a 2 MiB region before any weight exists.
    model.alloc(("runtime",), 1024, "temporaries")
    made = set()
    for key, nbytes, category, random_init, group in creation:
        if key[0] == "release":  # a buffer of the build's history, freed
            model.free(key[1])
            model.free((key[1], "handle"))
            continue
        if isinstance(nbytes, tuple):
            nbytes = int(nbytes[0] + nbytes[1] * m)
        handle = None if key[0] in ("in", "values") else (key, "handle")
        if holders and group in holders:
            shared = group in made
            made.add(group)
            if shared:  # a slot whose value is another's buffer has its own handle
                model.alloc(handle, HANDLE_BYTES, category)
                continue
            key = holders[group]
        if random_init:
            seeds = [(key, "seed", i) for i in range(SEED_TEMPS)]
            for seed in seeds:
                model.alloc(seed, 1, "temporaries")
            model.alloc((key, "draw"), nbytes, category)
            model.alloc((key, "scaled"), nbytes, category)
            model.alloc(key, nbytes, category)
            model.free((key, "scaled"))
            for seed in seeds[SEED_TEMPS // 2 :]:
                model.free(seed)
            model.free((key, "draw"))
            for seed in seeds[: SEED_TEMPS // 2]:
                model.free(seed)
        else:
            model.alloc(key, nbytes, category)
        if handle is not None:
            model.alloc(handle, HANDLE_BYTES, category)
    model.free(("runtime",))


def _shared_slots(nodes, order, creation) -> tuple[dict, list[tuple[str, int]]]:
    """Which slot keeps each shared buffer, and which slots copy it in the first step.

    A write to a variable whose buffer others still hold copies it first, so
    every slot of a group but the last one written (in ``order``) gets its own
    copy in the warm-up step; a slot never written keeps the buffer, and then
    all written ones copy.  In a replay with threads the last one copies too
    when its write starts while another's copy is still being made (an
    embedding table's two Adam slots: +10.9% without it, docs/engine.md).
    """
    from .engine.opsem import VARIABLE_WRITE_OPS

    members: dict[tuple, list[str]] = collections.defaultdict(list)
    for key, _, _, _, group in creation:
        if group is not None:
            members[group].append(key[1])
    group_of = {ph: g for g, phs in members.items() if len(phs) > 1 for ph in phs}
    if not group_of:
        return {}, []
    written: list[str] = []
    seen = set()
    running: dict[str, str] = {}  # a first write in flight -> its variable
    overlapped = set()  # variables whose first write started while another's ran
    for item in order:
        start, name = (True, item) if isinstance(item, str) else (item[0] == "s", item[1])
        if not start:
            running.pop(name, None)
            continue
        node = nodes[name]
        if node.op not in VARIABLE_WRITE_OPS or not node.inputs:
            continue
        ph = _resource_root(nodes, node.inputs[0][0])
        if ph in group_of and ph not in seen:
            seen.add(ph)
            written.append(ph)
            if any(group_of[other] == group_of[ph] for other in running.values()):
                overlapped.add(ph)
            if not isinstance(item, str):
                running[name] = ph
    last = {group_of[ph]: ph for ph in written}
    holders = {}
    for group, phs in members.items():
        if len(phs) > 1:
            unwritten = [ph for ph in phs if ph not in seen]
            holders[group] = ("p", unwritten[0] if unwritten else last[group])
    # The last one written keeps the buffer, unless it started while another
    # copy of it was still being made: that copy holds the buffer too, so the
    # last write copies as well and the buffer is freed.
    copies = [(ph, 0) for ph in written if holders[group_of[ph]] != ("p", ph) or ph in overlapped]
    return holders, copies


def _allocator_slack(
    nodes, orders, n, preset, creation, keep, idle_bytes
) -> tuple[tuple[tuple[int, dict[str, float]], ...], list]:
    """Bytes the BFC allocator counts beyond the requests, by category, per batch size.

    Also returns the measured step's live ``(a, b)`` after each op, per order.

    Persistent buffers are allocated first (as building the model and the
    optimizer does), then the step runs twice, as in the measuring protocol:
    a warm-up step shapes the free lists, the peak is read on the second (for
    a step with conditions, the worst sequence of branch orders).  The replay's
    order does not depend on the batch size, so its events are recorded once
    and the allocator model is rerun at a ladder of batch sizes around ``n``;
    ``Footprint.at`` interpolates between them.
    """
    steps = []  # per order: its events as the first step, as a later one, its slot holders
    timelines: list = []
    for order in orders:
        holders, copies = _shared_slots(nodes, order, creation)
        steps.append((*_raw_steps(nodes, order, n, preset, keep, copies, timelines), holders))
    # (holders, warm-up events, measured events): every pair of orders, and
    # with two orders (one condition) also a warm-up of both in turn.
    # Gradient accumulation needs the latter: its update step follows both an
    # update (the slots have their own buffers) and an accumulating step (so
    # have the accumulators); TF's update step after three accumulating ones
    # starts from 107.5 MiB of chunks where either pair alone gave 60.9.
    sequences = [(i, j) for i in range(len(steps)) for j in range(len(steps))]
    if len(steps) == 2:
        sequences += [(i, 1 - i, j) for i in range(2) for j in range(2)]
    # each sequence's steps' events, keyed by the sequence up to that step:
    # a step's events depend only on the steps before it (``_chained``)
    events: dict[tuple[int, ...], list] = {}
    runs = []
    for seq in sequences:
        chained = _chained([steps[seq[0]][0]] + [steps[k][1] for k in seq[1:]])
        for k, step_events in enumerate(chained):
            events[seq[: k + 1]] = step_events
        runs.append((seq, steps[seq[0]][2], [e for step in chained[:-1] for e in step]))
    points = []
    for m in _slack_ladder(n):
        # With several branch orders the step's peak is the worst of them.
        # The allocator's free lists carry over from one step to the next, and
        # consecutive steps may take different branches: try every sequence.
        # Sequences that start alike share the allocator's state after their
        # common warm-up steps (with a condition, 12 step replays instead of 20).
        warmed: dict[tuple[int, ...], Any] = {}
        worst = None
        for seq, holders, warm in runs:
            start = _warmed(seq[:-1], warmed, events, m, creation, holders)
            model = _allocator_after(creation, warm, events[seq], m, holders, warmed=start)
            if worst is None or model.peak > worst.peak:
                worst = model
        # What the allocator adds over the largest live request at this batch,
        # charged to categories by the chunk slack they hold at its peak.
        linear = max(a + b * m for timeline in timelines for a, b in timeline) + idle_bytes
        points.append((m, _slack_by_category(worst, linear)))
    return tuple(points), timelines


def _warmed(prefix: tuple[int, ...], states: dict, events: dict, m: int, creation, holders) -> Any:
    """The allocator model after building and the warm-up steps ``prefix``, kept in ``states``.

    ``holders`` are those of the sequence's first order, ``prefix[0]``.
    """
    from .engine.bfc import BFCModel

    if prefix not in states:
        if len(prefix) == 1:
            model = BFCModel()
            _allocate_persistent(model, creation, holders, m)
        else:
            model = _warmed(prefix[:-1], states, events, m, creation, holders).copy()
        model.run(events[prefix], m)
        states[prefix] = model
    return states[prefix]


def _raw_steps(nodes, order, n, preset, keep, shared=(), timelines=None) -> tuple[list, list]:
    """``order``'s allocator events as the first step and as a later one.

    Two things make the first step differ.  Optimizer slots that share one
    buffer (``shared``, from ``_shared_slots``) copy it at their first
    update.  A weight whose old value is still being read when its update
    runs is copied too; for a weight an op its update does not wait for
    reads, that depends on thread timing (TF's log of a four-layer MLP with
    Adam: two of four kernels, no bias), and such a weight is copied at its
    first update (``_read_while_updated``).  ``AssignVariableOp`` never
    copies: the variable takes its new value's buffer.  Both start from the
    variables' own buffers; ``_chained`` names the buffers an earlier step
    moved them to.
    """
    from .engine.schedule import replay

    params = [t for t, buf in preset.items() if buf.persistent and buf.category == "parameters"]
    first_copies = _read_while_updated(nodes, order, params) + list(shared)
    steps = []
    for step in range(2):
        events: list = []
        fresh = _copy(preset)
        for tensor, buf in fresh.items():
            if buf.persistent:
                buf.key = ("p", tensor[0])
            elif buf.keep:  # the batch: made before the steps (_estimate_traced)
                buf.key = ("in", tensor[0])
        copies = first_copies if step == 0 else ()
        timeline, _ = replay(
            nodes, order, n, preset=fresh, keep=keep, events=events, copy_first_writes=copies
        )
        if step == 0:
            # TF makes a function's constants when it creates its kernels,
            # before the first step runs an op (TF's log of a GRU: its zero
            # initial state, then the step's first transpose); the replay
            # meets each at its first reader.
            # (a stable sort: every other event keeps its place).  Its kernels
            # are made in the order of the graph's nodes, in which the
            # constants of TF's runtime folding come last (engine/folding.py).
            events.sort(key=_first_step_rank)
        steps.append(events)
    if timelines is not None:  # a later step's live bytes, op by op
        timelines.append(timeline)
    return steps[0], steps[1]


def _first_step_rank(event) -> int:
    """0 for a constant's allocation, 1 for a folded constant's, 2 for the rest."""
    if event[0] != "a" or event[1][0] != "c":
        return 2
    return 1 if is_folded(event[1][1]) else 0


def _chained(steps: list[list]) -> list[list]:
    """Steps' events run one after another: each names the variables' buffers after the ones before.

    A variable's buffer moves when a write copies it or it adopts a new
    value; one that adopts a constant (zeros to reset to) has no buffer of its
    own until it moves again.
    """
    origin: dict = {}
    moved: dict = {}  # a variable's own key -> the buffer it is in now
    out = []
    for step, events in enumerate(steps):

        def name(key, step=step):
            # a step's own buffers get keys of their own, so that one order's
            # events can follow themselves; constants are made once
            if key[0] == "p":
                return moved.get(key, key)
            return key if step == 0 or key[0] == "c" else (step, key)

        out.append([(kind, name(key), *rest) for kind, key, *rest in events if kind != "m"])
        for kind, key, *rest in events:
            if (kind == "a" and key[0] == "cow") or kind == "m":
                old, new = (key[2], key) if kind == "a" else (key, rest[0])
                if new[0] == "c" or old[0] == "c":  # it shares a constant: no buffer of its own
                    moved.pop(origin.get(old, old), None)
                    continue
                root = origin.get(old, old)
                origin[new] = root
                moved[root] = name(new)
    return out


def _read_while_updated(nodes, order, params: list) -> list:
    """The weights whose value may still be read when their first update runs.

    TF's assign kernels copy a variable whose buffer another tensor still
    holds.  A weight read only by ops its update waits for (a first layer's
    kernel: its forward product; no input gradient reads it) is never held
    then, and keeps the buffer it was built in.  One read by an op its update
    does not wait for (the input gradient's product with the kernel) may be:
    that depends on thread timing, and the replay copies it.
    """
    from .engine.opsem import ALIAS_OPS, VARIABLE_WRITE_OPS
    from .engine.schedule import started_ops

    consumers: dict = collections.defaultdict(list)
    succ: dict = collections.defaultdict(set)
    for name, node in nodes.items():
        for src in node.inputs:
            consumers[src].append(name)
            succ[src[0]].add(name)
        for ctl in node.controls:
            succ[ctl].add(name)
    ran = list(started_ops(order))
    ran_set = set(ran)
    param_of = {ph: (ph, idx) for ph, idx in params}
    first_write: dict = {}
    values: dict = collections.defaultdict(list)  # param -> the values read from it
    for name in ran:
        node = nodes[name]
        if not node.inputs or (node.op != "ReadVariableOp" and node.op not in VARIABLE_WRITE_OPS):
            continue
        param = param_of.get(_resource_root(nodes, node.inputs[0][0]))
        if param is None:
            continue
        if node.op == "ReadVariableOp":
            values[param].append((name, 0))
        else:
            first_write.setdefault(param, name)
    reads: dict = collections.defaultdict(set)
    for param, pending in values.items():
        while pending:  # the value read and its aliases
            tensor = pending.pop()
            for c in consumers[tensor]:
                if nodes[c].op in ALIAS_OPS and nodes[c].inputs[0] == tensor:
                    pending.append((c, 0))
                elif c in ran_set:
                    reads[param].add(c)
    bit = {write: 1 << i for i, write in enumerate(set(first_write.values()))}
    before: dict[str, int] = {}  # op -> the first writes that wait for it
    for name in reversed(ran):
        mask = bit.get(name, 0)
        for nxt in succ.get(name, ()):
            mask |= before.get(nxt, 0)
        before[name] = mask
    return [
        param
        for param, write in first_write.items()
        if any(not before.get(r, 0) & bit[write] for r in reads[param])
    ]


def _allocator_after(creation, warm, measured, m: int, holders=None, warmed=None) -> Any:
    """The allocator model after building, a warm-up step and the measured step at batch ``m``.

    ``warmed``, the model after the same building and warm-up, is copied
    instead of replaying them again.
    """
    from .engine.bfc import BFCModel

    if warmed is not None:
        model = warmed.copy()
    else:
        model = BFCModel()
        _allocate_persistent(model, creation, holders, m)
        model.run(warm, m)
    model.reset_peak()
    model.run(measured, m)
    return model


def _slack_by_category(sim: Any, linear: float) -> dict[str, float]:
    """The allocator model's peak over ``linear`` bytes, split by the slack each category holds."""
    excess = max(0.0, sim.peak - linear)
    shares = {cat: v for cat, v in sim.peak_slack.items() if v > 0}
    total = sum(shares.values()) or 1.0
    return {cat: excess * v / total for cat, v in shares.items()} or {"temporaries": excess}


def _copy(preset):
    import dataclasses

    return {k: dataclasses.replace(v) for k, v in preset.items()}


OTHER_ROW = "(other: loss, metrics, framework)"
ALLOCATOR_ROW = ALLOCATOR_ROW_NAME
INPUT_ROW = "(input batch)"


def _layer_name(layers: list[Any], index: int) -> str:
    if index == -2:
        return INPUT_ROW
    if 0 <= index < len(layers):
        return layers[index].name
    return OTHER_ROW


def _input_layer(layers: list[Any]) -> int:
    for i, layer in enumerate(layers):
        if type(layer).__name__ == "InputLayer":
            return i
    return -2


def _variable_buffer(var: Any, var_layer: dict, var_category: dict) -> Any:
    """The persistent buffer of a variable, charged to its owner's row and category."""
    from .engine.schedule import Buffer

    return Buffer(
        float(_var_bytes(var)),
        0.0,
        None,
        var_category.get(id(var), "parameters"),
        var_layer.get(id(var), -1),
        persistent=True,
    )


def _slack_ladder(n: int) -> list[int]:
    """Batch sizes at which the allocator model is run for ``at()``: ``n`` and every power of two.

    The allocator's slack is not smooth in the batch (a request that no longer
    fits its region opens one twice as large), so ``at()`` is exact only where
    the model was run.  Powers of two are where users put the slider; from a
    ladder of n/16, n/4, n, 4n and 16n, ``at(64)`` of a ``jit_compile``
    transformer estimated at 32 was 180.7 MiB, where the estimate at 64 is
    144.7 and TF measures 144.7.  Each point replays only the allocator
    (0.02 to 0.2 s for the zoo's models).
    """
    top = max(64, 16 * n)
    return sorted({n} | {1 << k for k in range((top - 1).bit_length() + 1)})


def _var_bytes(var: Any) -> int:
    import numpy as np
    import tensorflow as tf

    shape = tuple(int(d) for d in var.shape)
    return int(np.prod(shape, dtype=np.int64)) * tf.as_dtype(var.dtype).size


def _variable_owners(model: Any, opt: Any) -> tuple[dict[int, int], dict[int, str]]:
    """Which row of the table owns each variable, and its category."""
    owner: dict[int, int] = {}
    category: dict[int, str] = {}
    for i, layer in enumerate(model.layers):
        for var in layer.variables:
            owner.setdefault(id(var), i)
            category[id(var)] = "parameters"
    if opt is None:
        return owner, category
    trained_by = _slots_of(opt, list(model.trainable_variables))
    for var in opt.variables:
        category[id(var)] = "optimizer_state"
        trained = trained_by.get(id(var))
        if trained is not None:
            owner[id(var)] = owner.get(id(trained), -1)
    return owner, category


def _slots_of(opt: Any, trainable: list[Any]) -> dict[int, Any]:
    """Each slot variable of ``opt`` (by id) and the variable it is kept for.

    A Keras optimizer keeps each kind of slot as a list in the order of the
    variables it trains.  A ``LossScaleOptimizer`` keeps its slots in its
    inner optimizer, and a ``MultiOptimizer`` in each of its optimizers, each
    for its own share of the variables: looking at the wrapper alone put
    every slot of a ``mixed_float16`` model in the table's "other" row.
    """
    inner = [getattr(opt, "inner_optimizer", None), *(getattr(opt, "optimizers", None) or ())]
    out: dict[int, Any] = {}
    for sub in inner:
        if sub is not None and sub is not opt:
            out.update(_slots_of(sub, list(getattr(sub, "_trainable_variables", None) or [])))
    own = list(getattr(opt, "_trainable_variables", None) or trainable)
    for key, value in vars(opt).items():
        if (
            key != "_variables"  # its own counters and rates, and every slot
            and isinstance(value, list)
            and len(value) == len(own)
            and value
            and all(hasattr(v, "shape") and hasattr(v, "assign") for v in value if v is not None)
            and not any(v is w for v, w in zip(value, own, strict=True))
        ):
            for slot, trained in zip(value, own, strict=True):
                if slot is not None:
                    out[id(slot)] = trained
    return out


def _layer_info(model: Any, layers: list[Any]) -> list[LayerInfo]:
    import math

    out = []
    for layer in layers:
        try:
            shape = layer.output.shape
            shape_s = "(" + ", ".join("B" if i == 0 else str(d) for i, d in enumerate(shape)) + ")"
        except Exception:
            shape_s = ""
        params = sum(math.prod(int(d) for d in v.shape) for v in layer.weights)
        out.append(LayerInfo(layer.name, type(layer).__name__, shape_s, params))
    return out


def _build_nodes(graph_def, props1, props2, traced, opt_scope):
    """Nodes with sized outputs, the order the executor model runs them in, loop trips
    and the graph's scalar integer constants.

    The trips map each while loop's frame to its trip count (``_loop_trips``),
    read from those constants (``_int_constants``).
    """
    from .engine.grappler import nbytes
    from .engine.schedule import Node, topo_fifo_order

    unknown = 0
    op_layer = traced.op_layer
    nodes: dict[str, Node] = {}
    for nd in graph_def.node:
        inputs, controls = [], []
        for inp in nd.input:
            if inp.startswith("^"):
                controls.append(inp[1:])
                continue
            name, _, idx = inp.partition(":")
            inputs.append((name, int(idx) if idx else 0))
        outs = []
        p1 = props1.get(nd.name, [])
        p2 = props2.get(nd.name, [])
        for k in range(max(len(p1), len(p2))):
            s1 = nbytes(*p1[k]) if k < len(p1) else None
            s2 = nbytes(*p2[k]) if k < len(p2) else None
            if s1 is None or s2 is None:
                outs.append(None)
                if nd.op not in ("NoOp", "BroadcastGradientArgs"):  # tiny index vectors
                    unknown += 1
                continue
            outs.append((*_linear(s1, s2), p1[k][1]))
        node = Node(nd.name, nd.op, inputs, controls, outs)
        if nd.op == "TensorListFromTensor" and inputs:
            node.pieces = _rows(props1, props2, inputs[0])
        node.layer = _lookup_layer(nd.name, op_layer)
        node.category = _categorizer(nd.name, opt_scope)
        nodes[nd.name] = node
    consts = _int_constants(graph_def)
    trips = _size_tensor_lists(graph_def, nodes, runahead=opt_scope is None, consts=consts)
    # Ops with no recorded layer inherit it from their first input that has one.
    order = topo_fifo_order(nodes)
    for name in order:
        node = nodes[name]
        if node.layer == -1:
            for src, _ in node.inputs:
                if src in nodes and nodes[src].layer >= 0:
                    node.layer = nodes[src].layer
                    break
    for ph in traced.variable_placeholders:
        if ph in nodes:
            nodes[ph].layer = -1
    return nodes, unknown, order, trips, consts


def _rows(props1, props2, tensor: tuple[str, int]) -> int:
    """The first dimension of ``tensor`` if it does not grow with the batch, else 1.

    TensorListFromTensor makes one element per row, each allocated on its own.
    """
    dims = [
        p[tensor[1]][0] if len(p) > tensor[1] else None
        for p in (props1.get(tensor[0], []), props2.get(tensor[0], []))
    ]
    if not all(dims) or dims[0][0] != dims[1][0]:
        return 1
    return max(int(dims[0][0]), 1)


def _walk_back(nodes, name: str, through: Set[str] | tuple[str, ...], limit: int = 32) -> str:
    """Where a value comes from: follow first inputs back through ``through`` ops."""
    for _ in range(limit + 1):
        node = nodes.get(name)
        if node is None or not node.inputs or node.op not in through:
            return name
        name = node.inputs[0][0]
    return name


def _spec(nodes, tensor: tuple[str, int]) -> Any:
    """The ``(a, b, dtype)`` size of output ``tensor`` (``None`` if unknown)."""
    node = nodes.get(tensor[0])
    return node.outputs[tensor[1]] if node and tensor[1] < len(node.outputs) else None


def _shape(props, tensor: tuple[str, int]) -> Any:
    """The static shape of ``tensor`` in ``props`` (``None`` if unknown)."""
    entries = props.get(tensor[0])
    return entries[tensor[1]][0] if entries and tensor[1] < len(entries) else None


def _resource_root(nodes, name: str) -> str:
    return _walk_back(nodes, name, ("Identity", "Enter", "Switch", "Merge"))


def _is_sparse_variable_op(op: str) -> bool:
    return op.startswith(("ResourceScatter", "ResourceSparseApply")) or op in (
        "ResourceGather",
        "ResourceGatherNd",
    )


def _fold_constants(graph_def, nodes, order, batch_size: int) -> None:
    """What TF's runtime folds into constants after Grappler (``engine/folding.py``).

    Ops inside an XLA call are compiled, not folded; the call itself is not
    folded either (TF folds no function calls).
    """
    from .engine import folding

    by_name = {nd.name: nd for nd in graph_def.node}

    def attrs(name: str) -> dict[str, bytes]:
        nd = by_name.get(name)
        if nd is None:
            return {}
        return {
            k: v.SerializeToString(deterministic=True)
            for k, v in nd.attr.items()
            if not k.startswith("_")
        }

    folding.fold_constants(nodes, order, attrs, _tf_folds_op, batch_size)


@functools.lru_cache(maxsize=1024)
def _tf_folds_op(op: str) -> bool:
    """Whether TF's runtime may evaluate ``op`` ahead of time: registered,
    not stateful, with a CPU kernel (folding runs on the CPU)."""
    from tensorflow.python.framework import kernels, op_def_registry

    from .engine import xla

    if op in xla.CALL_OPS:
        return False
    op_def = op_def_registry.get(op)
    if op_def is None or op_def.is_stateful:
        return False
    return any(k.device_type == "CPU" for k in kernels.get_registered_kernels_for_op(op).kernel)


def _copy_on_read(nodes, traced) -> None:
    """Reads and updates of variables that a sparse op touches copy them.

    Once a sparse op (a scatter update of an embedding, a resource gather) has
    used a variable, TF keeps it in copy-on-read mode: no tensor may alias its
    memory, so every read allocates a full copy and every dense update writes
    into a new buffer.  The warm-up step has set the mode, so the measured step
    pays for it on every read.
    """
    sparse = set()
    for node in nodes.values():
        if _is_sparse_variable_op(node.op) and node.inputs:
            sparse.add(_resource_root(nodes, node.inputs[0][0]))
    sparse &= set(traced.variable_placeholders)
    if not sparse:
        return
    for node in nodes.values():
        if node.op not in ("ReadVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"):
            continue
        root = _resource_root(nodes, node.inputs[0][0]) if node.inputs else None
        if root not in sparse:
            continue
        if node.op == "ReadVariableOp":
            node.op = "_ReadVariableCopy"  # allocates: not an alias of the variable
        else:
            node.scratch = (float(_var_bytes(traced.variable_placeholders[root])), 0.0)


#: Integer dtypes (``DataType`` enums int32, int64) of the constant arguments
#: inlined into an XLA call's probe: shapes, block shapes and paddings, whose
#: values XLA needs to compile; a float constant is compiled as an argument.
_INDEX_DTYPES = (3, 9)


def _size_xla_calls(graph_def, nodes, props, traced, notes, second=None) -> None:
    """Give every XLA-compiled call the temporary buffer XLA assigns it.

    Each batch's size is compiled from that batch's own graph (``second``:
    the other batch's graph and its names mapped to this one's, or None when
    one graph serves both): a function traced at a batch can bake it into
    its constants (Keras's grouped Conv1D reshapes to static shapes), and
    XLA needs some constants to compile at all (``_call_constants``).
    """
    import tensorflow as tf

    from .engine import xla

    library = {f.signature.name: f for f in graph_def.library.function}
    graph_nodes = {nd.name: nd for nd in graph_def.node}
    other = None
    if second is not None:
        graph2, names2 = second
        other = (
            {nd.name: nd for nd in graph2.node},
            {f.signature.name: f for f in graph2.library.function},
            {mine: theirs for theirs, mine in names2.items()},
        )
    failed = []
    # A gradient call belongs to the layer whose forward call it differentiates.
    forward_layer = {}
    for nd in graph_def.node:
        fdef = library.get(nd.attr["f"].func.name) if nd.op in xla.CALL_OPS else None
        if fdef is not None and nd.name in nodes and "backward_function_name" in fdef.attr:
            forward_layer[fdef.attr["backward_function_name"].s.decode()] = nodes[nd.name].layer
    for nd in graph_def.node:
        if nd.op in xla.CALL_OPS and nd.attr["f"].func.name in forward_layer and nd.name in nodes:
            nodes[nd.name].layer = forward_layer[nd.attr["f"].func.name]
    for nd in graph_def.node:
        if nd.name not in nodes or not xla.is_xla_call(nd, library):
            continue
        inputs = [inp for inp in nd.input if not inp.startswith("^")]
        here = (nd, library, _call_constants(nd, graph_nodes, library))
        theirs = other[0].get(other[2].get(nd.name, nd.name)) if other is not None else None
        there = (
            (theirs, other[1], _call_constants(theirs, *other[:2])) if theirs is not None else here
        )
        sizes = []
        try:
            for per_batch, (call, lib, constants) in zip(props, (here, there), strict=True):
                fdef = lib.get(call.attr["f"].func.name)
                if fdef is None:
                    raise ValueError("function not in the graph's library")
                specs = [_input_spec(nodes, per_batch, traced, inp) for inp in inputs]
                sizes.append(xla.temp_bytes(fdef, lib, specs, constants))
        except (ValueError, TypeError, tf.errors.OpError) as err:
            failed.append(f"{nd.name} ({_first_useful_line(str(err))})")
            continue
        nodes[nd.name].scratch = _linear(sizes[0], sizes[1])
    if failed:
        notes.append(
            f"XLA could not compile {len(failed)} call(s) for sizing, so their internal "
            f"buffers are not counted: {'; '.join(failed[:3])}"
        )


def _call_constants(call, graph_nodes, library) -> dict:
    """A call's integer arguments that are constants in its graph, by position."""
    from .engine import xla

    constants = {}
    for i, inp in enumerate(inp for inp in call.input if not inp.startswith("^")):
        value = xla.constant_input(inp, graph_nodes, library)
        if value is not None and value.dtype in _INDEX_DTYPES:
            constants[i] = value
    return constants


def _input_spec(nodes, props, traced, ref: str):
    """The ``tf.TensorSpec`` of a tensor feeding a call (a variable's value for a handle)."""
    import tensorflow as tf

    src, _, idx = ref.partition(":")
    var = traced.variable_placeholders.get(_resource_root(nodes, src))
    entries = props.get(src) or []
    k = int(idx) if idx else 0
    if k < len(entries) and entries[k][1] != tf.resource:
        if entries[k][0] is None:
            raise ValueError(f"the shape of {ref} is not known")
        return tf.TensorSpec(*entries[k])
    if var is None:
        raise ValueError(f"{ref} is a resource that is not a known variable")
    return tf.TensorSpec(tuple(var.shape), tf.as_dtype(var.dtype))


def _int_constants(graph_def) -> dict[str, int]:
    """Scalar int32/int64 constants by node name (loop bounds, list slots)."""
    import tensorflow as tf

    consts = {}
    for nd in graph_def.node:
        if nd.op == "Const" and nd.attr["dtype"].type in (
            tf.int32.as_datatype_enum,
            tf.int64.as_datatype_enum,
        ):
            try:
                value = tf.make_ndarray(nd.attr["value"].tensor)
            except Exception:  # noqa: S112
                continue
            if value.shape == ():
                consts[nd.name] = int(value)
    return consts


def _counter_bound(nodes, node, consts: dict[str, int]) -> int:
    """The constant a loop condition's ``i < n`` compares its counter with, if ``node``
    is one (0 if not)."""
    if node.op not in ("Less", "LessEqual") or len(node.inputs) != 2:
        return 0
    src = _walk_back(nodes, node.inputs[1][0], ("Enter", "Identity", "Merge", "Switch"), 8)
    return max(consts.get(src, 0), 0)


def _loop_trips(nodes, consts: dict[str, int]) -> dict[str, int]:
    """Each loop frame's trip count, read from its condition's constant bound."""
    trips: dict[str, int] = {}
    for node in nodes.values():
        bound = _counter_bound(nodes, node, consts)
        frame = _frame_of(node.name) if bound else None
        if frame:
            trips[frame] = max(trips.get(frame, 0), bound)
    # A gradient loop runs as often as the loop it differentiates, but its
    # condition compares with a count the forward loop makes at run time, so
    # it has no constant bound.  TF names it after that loop
    # ("gradient_tape/<...>/rnn/while/<...>/rnn/while_grad").  Without this, a
    # model whose loops differ in length sized every backward loop's lists and
    # time by the longest loop.
    # Whole name parts only: "xm/gru/while" is not a loop of layer "m".
    forward = sorted(trips, key=len, reverse=True)
    for frame in {_frame_of(name) for name in nodes} - trips.keys():
        if frame and frame.endswith("_grad"):
            stem = "/" + frame.removesuffix("_grad")
            match = next((f for f in forward if stem.endswith("/" + f)), None)
            if match is not None:
                trips[frame] = trips[match]
    return trips


def _note_data_bound_loops(nodes, trips: dict[str, int], consts: dict[str, int], notes) -> None:
    """Say so when a while loop stops on a value the step computes, not on its counter alone.

    ``keras.ops.while_loop`` or ``tf.while_loop`` with a condition such as
    "until the change is small" runs as often as the data says.  The
    estimate sizes its lists and times its body by the bound its condition
    reads (``_loop_trips``), or by the longest loop where there is none, so
    for such a loop the estimate is an upper bound, or a guess: a refinement
    loop of at most 10 steps that stopped after a few measured 0.98 MiB
    against an estimate of 1.74.
    """
    counted, bounded = [], []
    for cond in nodes.values():
        if cond.op != "LoopCond" or not cond.inputs:
            continue
        frame = _frame_of(cond.inputs[0][0])
        if not frame or frame.endswith("_grad"):
            continue
        leaves, todo, seen = [], [cond.inputs[0][0]], set()
        while todo:
            node = nodes.get(todo.pop())
            if node is None or node.name in seen:
                continue
            seen.add(node.name)
            if node.op in ("Identity", "LogicalAnd"):
                todo += [src for src, _ in node.inputs]
            else:
                leaves.append(node)

        counters = [_counter_bound(nodes, leaf, consts) > 0 for leaf in leaves]
        if all(counters):
            continue
        (bounded if any(counters) else counted).append(frame)
    for frame in sorted(bounded):
        notes.append(
            f"The while loop '{frame}' stops on a value the step computes: estimated as "
            f"running {trips.get(frame, 1):,} times, the most its counter allows; TF runs it "
            "as often as the data says, and needs less if it stops sooner."
        )
    longest = max(trips.values(), default=1)
    for frame in sorted(counted):
        notes.append(
            f"The while loop '{frame}' stops on a value the step computes and has no bound "
            f"the estimate can read: estimated as running {longest:,} "
            f"{'time' if longest == 1 else 'times'}; its real count, and so its memory, "
            "depend on the data."
        )


#: Ops whose output is their first input's buffer, seen through where a
#: loop pushes a tensor (besides the loop plumbing ``element_root`` follows).
_PUSH_VIEWS = ("Identity", "Enter", "Switch", "ExpandDims", "Reshape", "Squeeze")


def _overwritten_slot(
    src, element_root: Callable[[str], Any], carried_next, slots, written
) -> tuple[str, int] | None:
    """The tensor a loop writes to a list slot it reads back, if ``src`` is that read.

    ``keras.ops.scan`` carries its state in a one-element TensorArray: each
    iteration reads slot 0 and writes the new state there.  The read is an
    element of another list, which a push normally adds nothing to; but this
    slot is overwritten, so the push of each read is what keeps that
    iteration's state alive for the backward pass (TF's profile of the zoo's
    scan model holds 199 of them per loop).  Returns the written element (its
    root, by ``_size_tensor_lists``'s ``element_root``), which the pushes then
    account for, or None.
    """
    if src is None or src.op != "TensorListGetItem" or not src.inputs:
        return None
    lst = element_root(src.inputs[0][0])
    if lst is None or lst.op != "Merge" or lst.name not in carried_next:
        return None
    setter = carried_next[lst.name][0]
    if slots.get(setter) is None or setter not in written:
        return None
    elem = written[setter]
    root = element_root(elem[0])
    return (root.name, elem[1]) if root is not None else None


def _size_tensor_lists(
    graph_def, nodes, runahead: bool = False, consts: dict[str, int] | None = None
) -> dict[str, int]:
    """Give loop accumulators (TensorLists) the bytes they hold after the loop.

    A while loop runs its body T times; every TensorListPushBack/SetItem keeps
    one element per iteration, which is what the backward pass of an RNN
    reads.  The replay runs each body once, so those ops' outputs are sized
    T x element.  T is read from the loop condition's constant bound.  With
    ``runahead`` (inference), body ops that do not wait for the loop's state
    are charged for the iterations that run ahead (``_runahead_ops``).
    ``consts`` are ``_int_constants(graph_def)`` if the caller has them.
    Returns each loop frame's trip count (``_loop_trips``).
    """
    from .engine.opsem import ALIAS_OPS
    from .engine.schedule import may_own_buffer

    if consts is None:
        consts = _int_constants(graph_def)
    trips = _loop_trips(nodes, consts)
    default_trip = max(trips.values(), default=1)
    list_trip: dict[int, int] = {}  # id(list's size tuple) -> its loop's trip count
    pushed: set[tuple[str, int]] = set()
    written_per_step: dict[str, tuple[float, float]] = {}  # frame -> one step's output writes
    _sequence_loop_exits(nodes)
    _ungate_loop_entries(nodes)
    # Seen in TF's log for inference (32 input projections alive in an LSTM
    # loop); in training steps it made the zoo's RNN rows worse, so it is
    # applied to inference only until training loops are understood.
    runahead_ops = _runahead_ops(nodes) if runahead else []

    def element_root(name: str) -> Any:
        return nodes.get(_walk_back(nodes, name, ("Identity", "Enter", "Switch"), len(nodes)))

    # The element each list write stores, and the constant slot of a
    # TensorListSetItem that always writes the same one.
    written: dict[str, tuple[str, int]] = {}
    slots: dict[str, int | None] = {}
    for node in nodes.values():
        if node.op == "TensorListPushBack" and len(node.inputs) >= 2:
            written[node.name] = node.inputs[1]
        elif node.op == "TensorListSetItem" and len(node.inputs) >= 3:
            written[node.name] = node.inputs[2]
            slots[node.name] = _const_slot(nodes, consts, node.inputs[1][0])

    # Which tensors an accumulator keeps one of per iteration, and what each
    # loop variable's next value is: a carried value pushed at the next
    # iteration is the tensor an accumulator already keeps, if one does.  An
    # output list (TensorListSetItem) does not count: TensorListStack copies
    # it at the loop's end and frees it, so the accumulator is what keeps
    # those buffers for the backward pass (with a static batch, Keras's GRU
    # pushes its carried state but not the new state it also writes out).
    accumulated: set[str] = set()
    carried_next: dict[str, tuple[str, int]] = {}
    for name, elem in written.items():
        if nodes[name].op == "TensorListPushBack":
            root = element_root(elem[0])
            if root is not None:
                accumulated.add(root.name)
    for node in nodes.values():
        if node.op == "Merge":
            for s_name, _ in node.inputs:
                nxt = nodes.get(s_name)
                if nxt is not None and nxt.op == "NextIteration" and nxt.inputs:
                    value = element_root(nxt.inputs[0][0])
                    if value is not None:
                        carried_next[node.name] = (value.name, nxt.inputs[0][1])
    # A tensor both pushed for the backward pass and written to an output
    # list lives as long as the accumulator keeps it (the output list's
    # references go at its TensorListStack): charge the pushes first.
    for node in sorted(nodes.values(), key=lambda n: n.op != "TensorListPushBack"):
        if node.op == "Merge":  # drop the loop's back edge
            back = [s for s, _ in node.inputs if s in nodes and nodes[s].op == "NextIteration"]
            node.back_edges = tuple(back)
            node.inputs = [(s, i) for s, i in node.inputs if s not in back]
        elem = written.get(node.name)
        if node.op == "TensorListFromTensor" and node.inputs:
            spec = _spec(nodes, node.inputs[0])
            if spec is not None and node.outputs:
                node.outputs[0] = spec  # a copy of its input, one element per row
            continue
        if elem is None:
            continue
        src = element_root(elem[0])
        # A view shares its input's buffer: a 1D convolution pushes its
        # ExpandDims of the step's input, which is still the list's element.
        viewed = nodes.get(_walk_back(nodes, elem[0], _PUSH_VIEWS, len(nodes)))
        overwritten = _overwritten_slot(viewed, element_root, carried_next, slots, written)
        # A pushed tensor is a reference, not a copy: a variable's value, a
        # loop-carried value (if kept where it was produced) or an element read
        # from another list add nothing; one tensor pushed twice counts once.
        if (
            src is None
            or viewed.op == "ReadVariableOp"
            or (viewed.op == "TensorListGetItem" and overwritten is None)
            or (src.op == "Merge" and carried_next.get(src.name, ("",))[0] in accumulated)
            or (src.name, elem[1]) in pushed
        ):
            node.outputs[0] = (0.0, 0.0, None)
            continue
        pushed.add((src.name, elem[1]))
        if src.op == "Merge" and src.name in carried_next:
            pushed.add(carried_next[src.name])  # its output-list writes share these buffers
        if overwritten is not None:
            pushed.add(overwritten)  # the same buffers, written where the pushes keep them
        spec = _spec(nodes, elem)
        if spec is None or not node.outputs:
            continue
        trip = trips.get(_frame_of(node.name) or "", default_trip)
        slot = slots.get(node.name)
        if slot is not None:
            # Keras writes every step's output to slot 0 when only the last
            # one is returned: the list then holds one element, not T.
            trip = slot + 1
        a, b, dtype = spec
        if node.op == "TensorListSetItem" and slot is None:
            frame = _frame_of(node.name) or ""
            wa, wb = written_per_step.get(frame, (0.0, 0.0))
            written_per_step[frame] = (wa + a, wb + b)
        # The replay runs the body once and has no back edge, so the bytes the
        # list holds at the loop's end are charged where it is created; the
        # push itself writes into that list.
        origin = _list_origin(nodes, node.inputs[0]) if node.inputs else None
        target = origin if origin is not None else node
        prev = target.outputs[0] if target.outputs and target.outputs[0] else (0.0, 0.0, dtype)
        # each element is an allocation of its own (TF makes it as its
        # iteration runs; the replay, where the list is charged)
        target.pieces = (target.pieces if prev[0] + prev[1] > 0 else 0) + trip
        target.fills = _frame_of(node.name)
        target.outputs[0] = (prev[0] + a * trip, prev[1] + b * trip, dtype)
        list_trip[id(target.outputs[0])] = trip
        if origin is not None:
            node.outputs[0] = (0.0, 0.0, dtype)
    # Ops of a loop body that do not wait for the loop's state (an RNN's input
    # projection x_t @ W) run ahead of it by up to parallel_iterations
    # iterations, each holding its output until the state catches up.  A
    # pushed output is counted by its accumulator already.
    ahead = [
        nodes[name]
        for name in runahead_ops
        if not any((name, i) in pushed for i in range(len(nodes[name].outputs)))
    ]
    # Those whose outputs wait for the state are held for the window; work from
    # loop constants feeding them (a kernel's cast) is read as each one runs.
    consumers = _node_consumers(nodes) if ahead else {}
    ahead_names = {node.name for node in ahead}

    def waits(name: str) -> bool:
        # read outside the run-ahead work, directly or through a view of it
        return any(
            c not in ahead_names or (nodes[c].op in ALIAS_OPS and waits(c))
            for c in consumers.get(name, ())
        )

    waiting = {node.name for node in ahead if may_own_buffer(node.op) and waits(node.name)}
    if ahead:
        _release_read_input_lists(nodes, trips, default_trip, ahead_names, consumers)
    shares = _runahead_shares([n for n in ahead if n.name in waiting], written_per_step)
    first_exits = _first_exits(nodes) if waiting else {}
    for node in ahead:
        frame = _frame_of(node.name) or ""
        k = min(_PARALLEL_ITERATIONS, trips.get(frame, default_trip))
        exit_name = first_exits.get(frame) if node.name in waiting else None
        if exit_name is not None:
            _hold_runahead(nodes, node, k, shares[frame], exit_name)
        else:
            node.outputs = [
                (o[0] * k, o[1] * k, o[2]) if o is not None else None for o in node.outputs
            ]
    # Reads of the lists, now that their sizes are known.
    for node in nodes.values():
        if node.op == "TensorListPopBack" and len(node.outputs) > 1 and node.outputs[1] is None:
            spec = _list_size(nodes, node.inputs[0]) if node.inputs else None
            if spec is not None:
                trip = list_trip.get(id(spec), default_trip) or 1
                node.outputs[1] = (spec[0] / trip, spec[1] / trip, spec[2])
        elif (
            node.op in ("TensorListStack", "ZerosLike")
            and node.inputs
            and node.outputs
            and (node.outputs[0] is None or node.outputs[0][0] + node.outputs[0][1] == 0)
        ):
            # ZerosLike of a list (a gradient's accumulator) fills every element.
            holder = _list_holder(nodes, node.inputs[0])
            if holder is not None:
                node.outputs[0] = holder.outputs[0]
                if node.op == "ZerosLike":  # a list of zero elements, each its own
                    node.pieces = holder.pieces
    return trips


def _release_read_input_lists(
    nodes, trips: dict[str, int], default_trip: int, ahead: Set[str], consumers
) -> None:
    """Free an inference loop's input list once its run-ahead readers have read it.

    ``TensorListFromTensor`` copies every step of the input into an element
    of its own, and the loop carries the list from iteration to iteration.
    The last reference to it is the last iteration's: once that iteration's
    ``TensorListGetItem`` has run, each element lives only as long as the ops
    reading it.  When the loop is no longer than the executor's window
    (``parallel_iterations``), every iteration opens at the start and reads
    its element ahead of the state, so the list goes early: TF's profile of
    a ``ConvLSTM3D`` over 6 frames (``convlstm3d_volumes_infer_b32``) frees
    four of its six 1 MiB frames as the last iteration reads its own, and
    the other two as their input convolutions end.  The replay kept the list
    to the loop's end, through the carried value's ``NextIteration`` and its
    ``Exit``; for such a list, read only by run-ahead work, those two now
    keep their order (as control inputs) but not the list.  A longer loop
    reads its last element near its end, so its list stays whole.
    """
    from .engine.opsem import ALIAS_OPS

    def readers(name: str, idx: int | None = None) -> list[str]:
        if idx is None:
            return list(consumers.get(name, ()))
        return [
            c for c in consumers.get(name, ()) if any(s == (name, idx) for s in nodes[c].inputs)
        ]

    def read_ahead(name: str, depth: int = 0) -> bool:
        """Every op reading ``name`` (through views) is run-ahead work."""
        out = readers(name)
        for c in out:
            op = nodes[c].op
            if op in ALIAS_OPS and depth < 8:
                if not read_ahead(c, depth + 1):
                    return False
            elif c not in ahead:
                return False
        return bool(out)

    for switch in nodes.values():
        if switch.op != "Switch" or len(switch.inputs) != 2:
            continue
        pred, merge = nodes.get(switch.inputs[1][0]), nodes.get(switch.inputs[0][0])
        if pred is None or pred.op != "LoopCond" or merge is None or merge.op != "Merge":
            continue
        entered = [
            nodes.get(_walk_back(nodes, s, ("Enter", "Identity"), 8)) for s, _ in merge.inputs
        ]
        if not any(n is not None and n.op == "TensorListFromTensor" for n in entered):
            continue
        body = readers(switch.name, 1)
        gets, carry = [], []
        pending = list(body)
        while pending:
            c = pending.pop()
            op = nodes[c].op
            if op == "Identity":
                pending.extend(readers(c))
            elif op == "TensorListGetItem":
                gets.append(c)
            elif op == "NextIteration":
                carry.append(c)
            else:
                gets = []
                break
        exits = readers(switch.name, 0)
        if not gets or any(nodes[e].op != "Exit" or readers(e) for e in exits):
            continue
        frame = _frame_of(gets[0])
        if trips.get(frame or "", default_trip) > _PARALLEL_ITERATIONS:
            continue
        if not all(read_ahead(g) for g in gets):
            continue
        for name in carry + exits:
            node = nodes[name]
            kept = [
                s for s in node.inputs if _walk_back(nodes, s[0], ("Identity",), 8) != switch.name
            ]
            dropped = {s for s, _ in node.inputs} - {s for s, _ in kept}
            node.inputs = kept
            node.controls.extend(s for s in dropped if s not in node.controls)
            if node.outputs and not kept:
                node.outputs = [None if o is None else (0.0, 0.0, o[2]) for o in node.outputs]


def _const_slot(nodes, consts: dict[str, int], name: str) -> int | None:
    """The constant a list index comes from, through Enters and Identities only.

    A loop counter reaches its Merge's initial value too, so Merges stop the walk.
    """
    return consts.get(_walk_back(nodes, name, ("Enter", "Identity"), 8))


#: TF's Eigen convolution gradients size their im2col buffer for a 30 MiB L3 cache.
_EIGEN_L3 = 30 << 20
_EIGEN_L2 = 256 << 10


def _eigen_dtypes() -> set[str]:
    """Dtypes whose CPU convolution gradients and products run TF's own (Eigen) kernels.

    With oneDNN on (TF's default on x86 Linux) TF hands a dtype to oneDNN
    only if this CPU has the instructions for it; the rest, and float64
    always, run Eigen.  With ``TF_ENABLE_ONEDNN_OPTS=0`` every dtype does.
    """
    return {"float16", "bfloat16", "float32", "float64"} - _onednn_dtypes()


def _onednn_dtypes() -> set[str]:
    """Dtypes TF hands to oneDNN here: none where oneDNN is off (``onednn_on``)."""
    import os

    flags = _cpu_flags()
    if not onednn_on(flags, os.environ.get("TF_ENABLE_ONEDNN_OPTS")):
        return set()
    return onednn_dtypes(flags)


#: ``/proc/cpuinfo`` flags any one of which makes TF turn oneDNN on by default
#: on Linux (``DefaultOneDnnPolicy`` in ``tensorflow/core/util/port.cc``).
ONEDNN_DEFAULT_FLAGS = frozenset(
    {"avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"}
)


def onednn_on(flags: frozenset[str] | None, setting: str | None) -> bool:
    """Whether TF runs its oneDNN kernels on a CPU with these flags.

    ``TF_ENABLE_ONEDNN_OPTS`` (``setting``) decides if it is ``0``/``1``/
    ``false``/``true``; unset, TF's Linux x86 builds turn oneDNN on only for
    CPUs with the neural-network instructions of ``ONEDNN_DEFAULT_FLAGS``
    (Intel from Cascade Lake, AMD from Zen 4).  On an AMD EPYC with AVX2
    alone TF runs Eigen's kernels: its max pool keeps no workspace, and its
    gradient makes an int64 argmax instead.  ``None`` (flags unknown) counts
    as on.
    """
    value = (setting or "").strip().lower()
    if value in ("0", "false", "1", "true"):
        return value in ("1", "true")
    return flags is None or bool(flags & ONEDNN_DEFAULT_FLAGS)


def onednn_dtypes(flags: frozenset[str] | None) -> set[str]:
    """The dtypes TF's oneDNN kernels take on a CPU with these ``/proc/cpuinfo`` flags.

    TF asks the CPU (``IsDataTypeSupportedByOneDNNOnThisCPU`` in
    ``tensorflow/core/util/util.cc``, oneDNN v3 builds): float32 always,
    bfloat16 with AVX-512F or AVX-NE-CONVERT, float16 with AVX-512BW and
    AVX512-FP16 or AMX-FP16, or with AVX-NE-CONVERT.  The same model then
    allocates differently on two CPUs: a float16 transformer's products take
    float32 copies of their operands under Eigen and none under oneDNN
    (52.0 MiB measured on a Xeon with AVX512-FP16 against 60.7 on an EPYC
    without it).  ``None`` (flags unknown) keeps float32 and bfloat16.
    """
    if flags is None:
        return {"float32", "bfloat16"}
    out = {"float32"}
    if "avx512f" in flags or "avx_ne_convert" in flags:
        out.add("bfloat16")
    half = "avx512bw" in flags and ("avx512_fp16" in flags or "amx_fp16" in flags)
    if half or "avx_ne_convert" in flags:
        out.add("float16")
    return out


@functools.cache
def _cpuinfo(field: str) -> str | None:
    """The first CPU's ``field`` in ``/proc/cpuinfo`` (``None`` where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == field:
                    return value.strip()
    except OSError:
        pass
    return None


def _cpu_flags() -> frozenset[str] | None:
    """This CPU's feature flags (``None`` where ``/proc/cpuinfo`` gives none)."""
    flags = _cpuinfo("flags")
    return None if flags is None else frozenset(flags.split())


def _cpu_vendor() -> str | None:
    """This CPU's ``vendor_id``, e.g. ``GenuineIntel`` (``None`` where there is none)."""
    return _cpuinfo("vendor_id")


#: Products run by ``BaseBatchMatMulOp`` (MatMul is one of its registrations).
_EIGEN_MATMULS = ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")


def _size_eigen_matmul_copies(nodes, props1, props2) -> None:
    """Give CPU products the copies of their operands TF's own kernel makes.

    TF's CPU kernel (``BaseBatchMatMulOp::Compute`` in ``matmul_op_impl.h``)
    allocates its output first, then:

    - in a half-precision dtype oneDNN does not take, float32 copies of both
      operands and of the output: it multiplies in float32 and converts
      back.  TF's log for a float16 transformer shows an 8 MiB float32 copy
      next to the 4 MiB float16 output of its feed-forward product;
    - where an operand's dtype is not the output's (Keras's int8 ``Dense``
      multiplies int8 by int8 into int32), a copy of that operand in the
      output's dtype, for Eigen's contraction.  TF's log for an int8 MLP
      shows a 4 MiB int32 copy of each 1,024 x 1,024 int8 kernel, made
      outside any op's name, while its product runs.
    """
    import tensorflow as tf

    eigen = _eigen_dtypes() & {"float16", "bfloat16"}
    for name, node in nodes.items():
        if node.op not in _EIGEN_MATMULS or not node.outputs or node.outputs[0] is None:
            continue
        if len(node.inputs) < 2:
            continue
        out_dtype = _dtype_name(node.outputs[0][2])
        if out_dtype in eigen:
            tensors = [node.inputs[0], node.inputs[1], (name, 0)]
            sizes = []
            for props in (props1, props2):
                shapes = [_shape(props, t) for t in tensors]
                if any(s is None for s in shapes):
                    break
                sizes.append([4.0 * math.prod(s) for s in shapes])
            if len(sizes) == 2:
                node.post_temps = tuple(_linear(s1, s2) for s1, s2 in zip(*sizes, strict=True))
            continue
        in_specs = [_spec(nodes, t) for t in node.inputs[:2]]
        copies = []
        for spec in in_specs:
            if spec is None or _dtype_name(spec[2]) == out_dtype:
                continue
            if not tf.as_dtype(spec[2]).is_integer:  # only integer products were logged
                continue
            scale = _dtype_size(node.outputs[0][2]) / _dtype_size(spec[2])
            copies.append((spec[0] * scale, spec[1] * scale))
        if copies and all(s is not None for s in in_specs):
            node.post_temps = (*node.post_temps, *copies)


#: Max pools oneDNN rewrites on the CPU, and the gradient that reads their workspace.
_POOL_GRADS = {"MaxPool": "MaxPoolGrad", "MaxPool3D": "MaxPool3DGrad"}


def _add_onednn_pool_workspaces(graph_def, nodes) -> None:
    """Give each oneDNN max pool its argmax workspace: an output for its gradient,
    or a temporary where it has none.

    TF's oneDNN layout pass pairs a ``MaxPool`` with the ``MaxPoolGrad`` that
    reads its output and switches the forward kernel to training mode: it
    then allocates a second output, oneDNN's argmax workspace (one byte per
    output element for windows under 256 elements, four otherwise), which
    lives until the gradient has run.  TF's log for a float32 CNN shows a
    1 MiB workspace next to each 4 MiB pool output (and 256 KiB next to a
    512 KiB bfloat16 one).  Eigen's pools (float64, a dtype this CPU has no
    oneDNN kernels for, oneDNN off) and GPUs recompute the argmax instead.
    A pool without a gradient (inference) runs oneDNN in training mode all
    the same (``mkl_maxpooling_op.cc``: only int8 pools run forward-inference),
    so TF's log shows the workspace there too, made after the output and
    freed when the kernel ends: a 16x16 window over a (32, 64, 64, 8) batch
    peaks at 12.0 MiB, where the pool without it would make 8.0.
    """
    import tensorflow as tf

    onednn = {"float16", "float32", "bfloat16"} - _eigen_dtypes()
    grads: dict[str, list] = collections.defaultdict(list)
    for node in nodes.values():
        if node.op in _POOL_GRADS.values() and len(node.inputs) >= 2:
            grads[node.inputs[1][0]].append(node)
    for nd in graph_def.node:
        name = nd.name
        node = nodes.get(name)
        grad_op = _POOL_GRADS.get(nd.op)
        if grad_op is None or node is None or len(node.outputs) != 1 or node.outputs[0] is None:
            continue
        users = [g for g in grads.get(name, ()) if g.op == grad_op and g.inputs[1] == (name, 0)]
        a, b, dtype = node.outputs[0]
        if _dtype_name(dtype) not in onednn:
            continue
        itemsize = tf.as_dtype(dtype).size
        per_element = 1 if math.prod(nd.attr["ksize"].list.i) < 256 else 4
        scale = per_element / itemsize
        if not users:  # made all the same, and freed when the kernel ends
            node.post_temps = (*node.post_temps, (a * scale, b * scale))
            continue
        node.outputs.append((a * scale, b * scale, tf.uint8))
        for grad in users:
            grad.inputs.append((name, 1))


def _add_eigen_pool_grad_temps(nodes) -> None:
    """Give Eigen's max pool gradients the argmax they recompute, and let them write in place.

    ``MaxPoolingGradOp`` on the CPU (the kernel for dtypes oneDNN does not
    take: float64 always) recomputes the pool: a copy of the pool's output
    (in that output's own buffer when nothing else needs it) and an int64
    argmax of the same shape, both held while it runs; its result goes into
    the pool's input when that is its last use (``forward_input_or_allocate_
    temp({1}, ...)`` and ``forward_input_or_allocate_output({0}, 0, ...)`` in
    TF's ``maxpooling_op.cc``; TF's log in ``tests/test_tf_rules.py``).
    """
    import tensorflow as tf

    eigen = _eigen_dtypes()
    for node in nodes.values():
        if node.op != "MaxPoolGrad" or len(node.inputs) < 3 or not node.outputs:
            continue
        pooled = _spec(nodes, node.inputs[1])
        if node.outputs[0] is None or pooled is None or _dtype_name(pooled[2]) not in eigen:
            continue
        a, b, dtype = pooled
        scale = 8 / tf.as_dtype(dtype).size
        # the copy may take over input 1; earlier temporaries keep what they had
        unset = [None] * (len(node.pre_temps) - len(node.pre_temp_inputs))
        node.pre_temp_inputs = (*node.pre_temp_inputs, *unset, 1, None)
        node.pre_temps = (*node.pre_temps, (a, b), (a * scale, b * scale))
        node.forwards = {0: (0,)}


def _dtype_name(dtype: Any) -> str:
    return getattr(dtype, "name", str(dtype))


def _dtype_size(dtype: Any) -> int:
    """Bytes per element of ``dtype`` (a name or a TF dtype); 0 if it has no fixed size."""
    import tensorflow as tf

    try:
        return int(tf.as_dtype(_dtype_name(dtype)).size)
    except (TypeError, ValueError):
        return 0


#: ``EIGEN_MAX_ALIGN_BYTES`` in TF's x86 builds.  Timed on TF 2.21 here: a
#: (256, k) float32 tensor cut into rows (``unstack``, ``split``, ``x[i]``,
#: ``x[i:j]``, ``tf.slice``) keeps the whole tensor alive behind one row when a
#: row is 64 or 128 bytes, and a row of its own when it is 16, 32, 48 or 96.
_VIEW_ALIGN = 64

#: Kernels that cut their input along dimension 0 without copying when each
#: row is a whole number of aligned blocks (``IsInnerDimsSizeAligned`` in
#: TF's ``unpack_op.cc``, ``split_op.cc``, ``split_v_op.cc``, ``slice_op.cc``
#: and ``strided_slice_op.cc``): the op and the input the rows are cut from.
_DIM0_VIEW_OPS = {"Unpack": 0, "Split": 1, "SplitV": 0, "Slice": 0, "StridedSlice": 0}


def _traced_shapes(props1, props2, tensor: tuple[str, int]) -> list[tuple[int, ...]] | None:
    """``tensor``'s shape at the two traced batch sizes, or ``None`` if either is unknown."""
    got = []
    for props in (props1, props2):
        entry = props.get(tensor[0], [])
        if tensor[1] >= len(entry) or entry[tensor[1]][0] is None:
            return None
        shape = tuple(entry[tensor[1]][0])
        if any(d < 0 for d in shape):
            return None
        got.append(shape)
    return got


def _const_values(consts: dict[str, Any], name: str) -> list | None:
    """The flattened values of the ``Const`` node ``name`` (from ``consts``), if it is one."""
    import tensorflow as tf

    nd = consts.get(name)
    if nd is None:
        return None
    try:
        return tf.make_ndarray(nd.attr["value"].tensor).reshape(-1).tolist()
    except Exception:
        return None


def _mark_dim0_views(graph_def, nodes, props1, props2) -> None:
    """Make each op that hands out rows of its input a view of that input's buffer.

    The rows share the input's buffer, so it lives until the last row's last
    reader: an unrolled RNN's ``unstack`` of the previous layer's stacked
    outputs holds all of them until the backward pass reaches the first step.
    """
    consts = {nd.name: nd for nd in graph_def.node if nd.op == "Const"}
    for nd in graph_def.node:
        src = _DIM0_VIEW_OPS.get(nd.op)
        node = nodes.get(nd.name)
        if src is None or node is None or len(node.inputs) <= src:
            continue
        ins = _traced_shapes(props1, props2, node.inputs[src])
        outs = _traced_shapes(props1, props2, (nd.name, 0))
        dtype = props1.get(nd.name, [(None, None)])[0][1]
        if ins is None or outs is None or dtype is None or dtype.size == 0:
            continue
        if _identity_slice(nd, node, ins, outs, consts):
            node.view_of = src  # TF's slice kernels hand out the input itself
            continue
        if not all(len(s) >= 2 and s[0] > 0 for s in ins):
            continue
        if nd.op == "Unpack":
            axis = nd.attr["axis"].i
            if axis % len(ins[0]) != 0:
                continue
        elif nd.op in ("Split", "SplitV"):
            dim = _const_values(consts, node.inputs[0 if nd.op == "Split" else 2][0])
            if dim is None or len(dim) != 1 or dim[0] % len(ins[0]) != 0:
                continue
        else:
            cut = list(outs)
            if nd.op == "StridedSlice":
                masks = {k: nd.attr[k].i for k in ("ellipsis_mask", "new_axis_mask")}
                shrink = nd.attr["shrink_axis_mask"].i
                if any(masks.values()) or shrink not in (0, 1) or not _unit_strides(node, consts):
                    continue
                if shrink:
                    cut = [(1, *o) for o in outs]
            if any(c[1:] != i[1:] for c, i in zip(cut, ins, strict=True)):
                continue  # another dimension is cut too: the kernel copies
        if all((math.prod(s[1:]) * dtype.size) % _VIEW_ALIGN == 0 for s in ins):
            node.view_of = src


def _identity_slice(nd, node, ins, outs, consts) -> bool:
    """Whether a slice takes all of its input (``is_identity`` in TF's slice kernels).

    ``Slice`` and ``StridedSlice`` then set their output to the input's
    tensor and allocate nothing: Keras' int4 ``Dense`` cuts its unpacked
    kernel to the layer's rows with ``x[:rows, ...]``, all of them.
    """
    if nd.op not in ("Slice", "StridedSlice") or ins != outs:
        return False
    if nd.op == "Slice":
        return True
    if nd.attr["shrink_axis_mask"].i or nd.attr["new_axis_mask"].i:
        return False
    return _unit_strides(node, consts)


def _unit_strides(node, consts) -> bool:
    """Whether a ``StridedSlice``'s strides are a known constant of all ones."""
    strides = _const_values(consts, node.inputs[3][0]) if len(node.inputs) > 3 else None
    return bool(strides) and all(s == 1 for s in strides)


def _mark_free_transposes(graph_def, nodes, props1, props2) -> None:
    """A transpose that keeps the order of every dimension bigger than 1 is a reshape.

    TF's ``TransposeOp`` then hands out its input's buffer
    (``NonSingletonDimensionsAlign`` in ``transpose_op.cc``): Keras'
    ``Permute((2, 1, 3))`` of a (batch, 64, 1, 256) tensor copies nothing.
    One that moves the innermost dimension copies element by element, and
    its time is charged per element (``executor.ELEMENT_MOVE_BYTES``).
    """
    from .engine.executor import ELEMENT_MOVE_BYTES

    consts = {nd.name: nd for nd in graph_def.node if nd.op == "Const"}
    for nd in graph_def.node:
        node = nodes.get(nd.name)
        if nd.op not in ("Transpose", "ConjugateTranspose") or node is None:
            continue
        perm = _const_values(consts, node.inputs[1][0]) if len(node.inputs) > 1 else None
        shapes = _traced_shapes(props1, props2, node.inputs[0])
        spec = _spec(nodes, node.inputs[0])
        if perm is None or shapes is None or spec is None:
            continue
        if nd.op == "ConjugateTranspose" and getattr(spec[2], "is_complex", False):
            continue  # a conjugate transpose of complex values computes
        if all(
            len(perm) == len(shape)
            and [a for a in range(len(shape)) if shape[a] != 1]
            == [a for a in perm if shape[a] != 1]
            for shape in shapes
        ):
            node.view_of = 0
        elif all(
            len(perm) == len(shape)
            and [a for a in range(len(shape)) if shape[a] != 1][-1:]
            != [a for a in perm if shape[a] != 1][-1:]
            for shape in shapes
        ):
            node.element_cost_bytes = ELEMENT_MOVE_BYTES


#: Kernels built on TF's ``ReductionOp`` (``reduction_ops_common.h``).
_REDUCTIONS = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm"})


def _reduction_runs(shape: tuple[int, ...], axes: set[int]) -> int:
    """How many dimensions ``ReductionHelper::Simplify`` leaves: unit dimensions
    dropped, neighbours that are both reduced or both kept merged."""
    runs, last = 0, None
    for axis, size in enumerate(shape):
        if size == 1:
            continue
        kind = axis in axes
        if kind != last:
            runs += 1
            last = kind
    return runs


def _add_reduction_transposes(graph_def, nodes, props1, props2) -> None:
    """A reduction TF cannot do in place first copies its input, transposed.

    ``ReductionOp`` reduces in place only when the input, simplified, has at
    most three dimensions (all reduced; the first or the second of two; the
    first and third, or the middle one, of three).  Any other pattern (a
    GroupNormalization's moments over height, width and the channels of a
    group: kept, reduced, kept, reduced) makes it ``allocate_temp`` a
    transposed copy of the whole input, with the reduced dimensions last.
    """
    consts = {nd.name: nd for nd in graph_def.node if nd.op == "Const"}
    for nd in graph_def.node:
        node = nodes.get(nd.name)
        if nd.op not in _REDUCTIONS or node is None or len(node.inputs) < 2:
            continue
        axes = _const_values(consts, node.inputs[1][0])
        shapes = _traced_shapes(props1, props2, node.inputs[0])
        spec = _spec(nodes, node.inputs[0])
        if axes is None or shapes is None or spec is None or not all(shapes):
            continue
        if all(_reduction_runs(s, {a % len(s) for a in axes}) > 3 for s in shapes):
            node.pre_temps = (*node.pre_temps, (spec[0], spec[1]))


#: Convolutions TF's Eigen CPU kernels run in NHWC only.
_NHWC_ONLY_ON_EIGEN = (
    "Conv2D",
    "_FusedConv2D",
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "Conv3D",
    "Conv3DBackpropInputV2",
    "Conv3DBackpropFilterV2",
)


def _note_eigen_channels_first(graph_def, notes: list[str]) -> None:
    """Say so where TF cannot run the step on this CPU: channels-first convolutions on Eigen.

    Where oneDNN is off (``onednn_on``: an AVX2-only CPU, or
    ``TF_ENABLE_ONEDNN_OPTS=0``) or does not take the dtype, TF's Eigen
    convolutions refuse NCHW ("only supports NHWC"): a ``channels_first``
    model fails at its first step there, in inference as in training, though
    it runs on a GPU.  The estimate is still given (for the GPU, or another
    CPU); the note keeps it from reading as a promise for this one.
    """
    import tensorflow as tf

    eigen = _eigen_dtypes()
    for nd in graph_def.node:
        if nd.op not in _NHWC_ONLY_ON_EIGEN or nd.attr["data_format"].s not in (b"NCHW", b"NCDHW"):
            continue
        if tf.as_dtype(nd.attr["T"].type).name in eigen:
            notes.append(
                "TF runs this CPU's convolutions with its own (Eigen) kernels, which take "
                "channels-last data only: this model's channels_first convolutions will fail "
                "here (they run on a GPU, or with oneDNN on: TF_ENABLE_ONEDNN_OPTS=1)."
            )
            return


def _merge_pads_into_convolutions(graph_def, nodes) -> None:
    """A ``Pad`` read only by a VALID convolution is done inside oneDNN's kernel.

    TF's oneDNN layout pass merges the two into ``_MklPadWithConv2D`` (or
    ``_MklPadWithFusedConv2D``) for float32 and bfloat16 when the pad's
    output has no other reader, so the padded copy is never allocated.  In
    training the filter gradient reads it too, and TF pads as usual.
    """
    consumers = _node_consumers(nodes)  # a Pad has one output
    by_name = {nd.name: nd for nd in graph_def.node}
    onednn = _onednn_dtypes() & {"float32", "bfloat16"}
    for nd in graph_def.node:
        node = nodes.get(nd.name)
        if nd.op != "Pad" or node is None or not node.inputs or not node.outputs:
            continue
        spec = node.outputs[0]
        if spec is None or _dtype_name(spec[2]) not in onednn:
            continue
        readers = consumers.get(nd.name, [])
        if len(readers) != 1:
            continue
        conv = by_name.get(readers[0])
        if (
            conv is not None
            and conv.op in ("Conv2D", "_FusedConv2D")
            and conv.attr["padding"].s == b"VALID"
            and nodes[conv.name].inputs[:1] == [(nd.name, 0)]
        ):
            node.view_of = 0


#: Grappler's contractions with fused element-wise ops (on CPU, only with
#: oneDNN on): the inputs after the two operands are the fused ops' arguments,
#: one per ``BiasAdd`` or ``Add``, in ``fused_ops`` order.
_FUSED_CONTRACTIONS = frozenset({"_FusedConv2D", "_FusedConv3D", "_FusedMatMul"})


def _forward_fused_addends(graph_def, nodes) -> None:
    """Let a contraction with a fused ``Add`` write its result into the addend.

    oneDNN runs the fused add as a "sum" post-op on the output, so its kernel
    first tries ``forward_input_to_output_with_shape`` on the addend
    (``mkl_conv_ops.cc``, ``mkl_matmul_op_fused.cc``) and only copies it into
    a new output when someone else still holds it.
    """
    for nd in graph_def.node:
        node = nodes.get(nd.name)
        if nd.op not in _FUSED_CONTRACTIONS or node is None:
            continue
        fused = [op.decode() for op in nd.attr["fused_ops"].list.s]
        if "Add" not in fused:
            continue
        addend = 2 + sum(op in ("BiasAdd", "Add") for op in fused[: fused.index("Add")])
        if addend < len(node.inputs):
            node.forwards = {0: (addend,)}


def _size_einsum_temps(graph_def, nodes, props1, props2) -> None:
    """Give each Einsum the operand copies its kernel makes (engine/einsum.py)."""
    from .engine.einsum import einsum_output_late, einsum_temporaries

    for nd in graph_def.node:
        node = nodes.get(nd.name)
        if nd.op != "Einsum" or node is None or not node.outputs or node.outputs[0] is None:
            continue
        itemsize = node.outputs[0][2].size
        equation = nd.attr["equation"].s.decode()
        node.equation = equation
        per_batch = []
        for props in (props1, props2):
            per_batch.append(
                einsum_temporaries(
                    equation,
                    [_shape(props, src) for src in node.inputs],
                    _shape(props, (nd.name, 0)),
                )
            )
        t1, t2 = per_batch
        if t1 is None or t2 is None or len(t1) != len(t2):
            continue
        node.pre_temps = tuple(
            _linear(e1 * itemsize, e2 * itemsize) for e1, e2 in zip(t1, t2, strict=True)
        )
        node.late_outputs = einsum_output_late(
            equation, [_shape(props1, src) for src in node.inputs], _shape(props1, (nd.name, 0))
        )


def _size_eigen_conv_buffers(nodes, props, threads: int) -> None:
    """Give CPU convolution gradients the column buffer their Eigen kernels allocate.

    Both kernels unfold images into a column buffer of ``shard x output
    pixels x kernel size`` elements while they run (``Conv2DCustomBackprop
    FilterOp`` and ``...InputOp`` in TF's ``conv_grad_filter_ops.cc`` and
    ``conv_grad_input_ops.h``).  The filter gradient always unfolds ``shard``
    images at a time, ``shard`` sized to fill a 30 MiB L3 cache and not
    capped by the batch.  The input gradient does so only when one image's
    work is under a 256 KiB L2 cache per thread; above that it runs one
    parallel contraction per image and unfolds one image at a time.  TF's
    log shows 20.4 MiB of it per op for a float16 CNN, two at once on two
    threads, and 27.1 and 13.7 MiB for two float64 filter gradients.
    """
    import tensorflow as tf

    dtypes = _eigen_dtypes()
    for node in nodes.values():
        if node.op not in ("Conv2DBackpropInput", "Conv2DBackpropFilter") or not node.outputs:
            continue
        spec = node.outputs[0]
        if spec is None or len(node.inputs) < 3:
            continue
        dtype = tf.as_dtype(spec[2])
        if dtype.name not in dtypes:
            continue
        dy = _shape(props, node.inputs[2])
        # the kernel's shape: an input of the input gradient, the output of the filter's
        filt = _shape(props, node.inputs[1] if node.op == "Conv2DBackpropInput" else (node.name, 0))
        if dy is None or filt is None or len(dy) != 4 or len(filt) != 4:
            continue
        out_pixels = dy[1] * dy[2]
        kernel = filt[0] * filt[1] * filt[2]
        out_depth = filt[3]
        work = out_pixels * out_depth + kernel * out_depth + out_pixels * kernel
        size = dtype.size
        if work <= 0:
            continue
        one_at_a_time = node.op == "Conv2DBackpropInput" and (
            dy[0] == 1 or work // threads >= _EIGEN_L2 // size
        )
        shard = 1 if one_at_a_time else -(-(_EIGEN_L3 // size) // work)
        extra = float(shard * out_pixels * kernel * size)
        a, b = node.scratch or (0.0, 0.0)
        node.scratch = (a + extra, b)


def _durations(nodes, props1, props2, n: int) -> dict[str, float]:
    """Each op's rough duration at batch ``n`` (for the CPU executor's order)."""
    from .engine.einsum import einsum_flops
    from .engine.executor import (
        EIGEN_FEW_CHANNEL_PADS,
        few_channel_slowdown,
        filter_grad_slowdown,
        op_duration,
        pool_grad_slowdown,
        reduction_slowdown,
    )

    vendor = _cpu_vendor()
    slowdown = reduction_slowdown(vendor)
    onednn, flags = _onednn_dtypes(), _cpu_flags()

    def nbytes(specs, m: int, width: int | None = None) -> float:
        total = 0.0
        for spec in specs:
            if spec is None:
                continue
            size = _dtype_size(spec[2]) if width else 0
            scale = width / size if 0 < size < width else 1.0
            total += (spec[0] + spec[1] * m) * scale
        return total

    out = {}
    batches = _BATCHES.get()
    for name, node in nodes.items():
        costs = []
        width = node.element_cost_bytes
        in_specs = [_spec(nodes, src) for src in node.inputs]
        # only convolutions' and pooling gradients' durations read the dtype:
        # whether oneDNN runs it (an unknown dtype as float32) picks their kernel
        first = node.outputs[0] if node.outputs else None
        dtype = _dtype_name(first[2]) if first is not None else ""
        on_onednn = (dtype or "float32") in onednn
        kernel = None
        if node.op == "Conv2DBackpropFilter":
            kernel = _shape(props1, (name, 0))
        elif node.op in EIGEN_FEW_CHANNEL_PADS and len(node.inputs) > 1:
            kernel = _shape(props1, node.inputs[1])
        filters = filter_grad_slowdown(node.op, dtype, on_onednn, flags, kernel)
        pools = pool_grad_slowdown(node.op, on_onednn)
        channels = few_channel_slowdown(node.op, dtype, on_onednn, kernel, vendor)
        for props, m in zip((props1, props2), batches, strict=True):
            ins = [_shape(props, src) for src in node.inputs]
            outs = [entry[0] for entry in props.get(name, [])]
            flops = None
            if node.equation is not None:
                flops = einsum_flops(node.equation, ins, outs[0] if outs else None)
            costs.append(
                op_duration(
                    node.op,
                    outs,
                    ins,
                    nbytes(node.outputs, m, width),
                    nbytes(in_specs, m, width),
                    slowdown,
                    filters,
                    pools,
                    channels,
                    flops=flops,
                )
            )
        a, b = _linear(*costs)
        out[name] = max(0.0, a + b * n) if max(costs) > 0 else 0.0
    return out


def _executor_events(
    nodes,
    order: list[str],
    durations,
    threads: int,
    shared_cores: bool = False,
    trips=None,
    *,
    late_sums: Mapping[str, list[str]] | None = None,
) -> list[tuple[str, str]]:
    """``order``'s ops as TF's CPU executor starts and ends them (engine/executor.py).

    Loops run as chunks of their iterations (engine/loops.py) when ``trips``
    gives their counts.  ``late_sums`` (``_in_place_sum_inputs``) replays each
    in-place sum's temporary variable as if it waited for every input it sums,
    as when the one input it waits for comes last.
    """
    from .engine.executor import simulate
    from .engine.loops import chunked

    pos = {name: i for i, name in enumerate(order)}
    deps = {
        name: [d for d in [s for s, _ in nodes[name].inputs] + nodes[name].controls if d in pos]
        for name in order
    }
    for var, summed in (late_sums or {}).items():
        deps[var] = [*deps[var], *(d for d in summed if d in pos)]
    merged = _onednn_bias_grad_merges(nodes, order)
    if merged:
        # One kernel yields both: the bias gradient is ready when the filter
        # gradient ends, and the filter gradient takes the time of both.
        durations = dict(durations)
        for bias, filt in merged.items():
            deps[bias] = [*deps[bias], filt]
            durations[filt] = durations.get(filt, 0.0) + durations.get(bias, 0.0)
            durations[bias] = 0.0

    def run(names, deps, durations):
        return simulate(names, deps, durations, threads, shared_cores=shared_cores)

    events = chunked(nodes, order, deps, durations, trips or {}, run)
    return events if events is not None else run(order, deps, durations)


def _in_place_sum_inputs(nodes, order: list[str]) -> dict[str, list[str]]:
    """Each in-place sum's ``TemporaryVariable`` and the ops whose outputs it sums.

    Grappler's memory optimizer makes the temporary wait for one of the
    sum's inputs (the first in its topological order) and nothing else.
    TF's executor reaches that input after an arbitrary number of the
    others: the ready successors of an op with more than eight out-edges
    come in the order of a hash set of edge pointers (``EdgeSet``,
    tensorflow/core/graph/edgeset.h), which changes from process to process.
    Every input made before the temporary exists waits, alive, for its
    ``AssignAdd``.
    """
    from .engine.grappler import IN_PLACE_SUM, in_place_accumulation

    summed: dict[str, list[str]] = collections.defaultdict(list)
    for name in order:
        node = nodes[name]
        accumulation = in_place_accumulation(name, node.op)
        if accumulation is not None and len(node.inputs) > 1:
            summed[accumulation[0] + IN_PLACE_SUM].append(node.inputs[1][0])
    return {
        var: inputs
        for var, inputs in summed.items()
        if var in nodes and nodes[var].op == "TemporaryVariable"
    }


_PRODUCT_OPS = ("MatMul", "_MklMatMul", "BatchMatMulV2", "_MklBatchMatMulV2")


def _summed_loop_products(nodes):
    """``(frame, product)`` per weight-gradient product a loop sums into a loop-carried total."""
    for name, node in nodes.items():
        frame = _frame_of(name)
        if frame is None or node.op not in ("AddN", "AddV2", "Add") or len(node.inputs) < 2:
            continue
        roots = [
            nodes.get(_walk_back(nodes, src, ("Identity", "Switch"), 8)) for src, _ in node.inputs
        ]
        if not any(r is not None and r.op == "Merge" for r in roots):
            continue  # not a loop-carried total
        for (src, idx), root in zip(node.inputs, roots, strict=True):
            product = nodes.get(src)
            if root is None or root.op == "Merge" or product is None:
                continue
            if product.op not in _PRODUCT_OPS:
                continue
            out = product.outputs[idx] if idx < len(product.outputs) else None
            if out is not None and out[1] == 0:  # a weight's, not the batch's
                yield frame, product


def _sums_behind_bytes(
    nodes, trips: Mapping[str, int], held: Mapping[str, float] | None = None
) -> float:
    """Bytes a loop holds if its recurrence runs ``_PARALLEL_ITERATIONS`` ahead of its sums.

    A backward loop sums each iteration's weight-gradient product into a
    loop-carried total (``AddN(total, product)``).  Once the loop body's
    small kernels have run often enough for TF's executor to count them as
    inexpensive (its cost estimate falls below 8,000 cycles after about 90
    runs), it runs the recurrence inline and queues the expensive sums,
    which wait until the window of parallel iterations is full.  TF's
    profiles show that window full of products for two BiGRUs at batch 1,
    two LSTMs at batch 8 and an LSTM over 500 steps at batch 32, and no lag
    for a GRU tagger at batch 32 or an LSTM at batch 64 (docs/engine.md).
    ``held`` gives, per frame, the share of the window the replay already
    holds (``_hold_lagging_products``); this is the rest, the bound's excess.
    """
    if not trips:
        return 0.0
    held = held or {}
    default_trip = max(trips.values())
    # A Bidirectional layer's two loops run side by side; other loops, one
    # after another: the bound is the largest layer's.
    by_layer: dict[str, float] = collections.defaultdict(float)
    for frame, product in _summed_loop_products(nodes):
        k = min(_PARALLEL_ITERATIONS, trips.get(frame, default_trip))
        more = k - 1 - max(k * held[frame] - 1, 0.0) if frame in held else k - 1
        if more > 0:
            by_layer[_bidirectional_layer(frame) or frame] += product.outputs[0][0] * more
    return max(by_layer.values(), default=0.0)


#: Per-step tensors of at most this many elements: a backward loop's
#: recurrence runs ahead of its weight-gradient sums in TF (docs/engine.md).
LAGGING_STATE_ELEMENTS = 512
#: The share of the ``parallel_iterations`` window of products then held, by
#: the CPU's vendor (``/proc/cpuinfo``'s ``vendor_id``): the median of where
#: TF's measured peaks lie between keeping up (0) and the whole window (1),
#: 0.6 over five cases on two AMD EPYCs (session 48), 0.99 over the same
#: five on an Intel Xeon (session 54), where reductions over the batch are
#: the slower too (``executor.REDUCTION_SLOWDOWN``).  Another vendor gets
#: Intel's, as the reduction slowdown does.
LAGGING_SHARE = {"AuthenticAMD": 0.6, "GenuineIntel": 1.0}
#: The op of a node holding them (no kernel: it takes no time in the replay).
LAGGING_PRODUCTS = "_LaggingProducts"
_STATE_OPS = ("Mul", "Sigmoid", "Tanh", "SigmoidGrad", "TanhGrad", "AddV2")


def _loop_state_elements(nodes, batch_size: int) -> dict[str, float]:
    """Per loop frame, the median element count of its elementwise outputs: its per-step state."""
    sizes: dict[str, list[float]] = collections.defaultdict(list)
    for name, node in nodes.items():
        out = node.outputs[0] if node.op in _STATE_OPS and node.outputs else None
        if out is not None and (frame := _frame_of(name)) is not None:
            sizes[frame].append((out[0] + out[1] * batch_size) / _dtype_size(out[2]))
    return {frame: sorted(found)[len(found) // 2] for frame, found in sizes.items()}


def lagging_share(vendor: str | None) -> float:
    """The share of its window a small-state backward loop holds on ``vendor``'s CPUs."""
    from .engine.executor import by_vendor

    return by_vendor(LAGGING_SHARE, vendor)


def _hold_lagging_products(
    nodes, order: list[str], trips: Mapping[str, int], batch_size: int
) -> dict[str, float]:
    """Hold part of the window of weight-gradient products in loops whose state is small.

    On the three CPUs measured, every backward loop whose per-step tensors
    have at most ``LAGGING_STATE_ELEMENTS`` elements (batch 1 to 8, 16 to 128
    units) held its recurrence ahead of its sums: TF's peaks lie between
    the replay that keeps up and the one holding 31 more products of each,
    at 0.28 to 1.16 of the way on two AMD EPYCs (median 0.6), 0.40 to 1.31
    on an Intel Xeon (median 0.99); larger states mostly keep up
    (docs/engine.md).  Such loops hold ``lagging_share`` of the window
    until the loop ends (``_hold_runahead``),
    its node placed in ``order`` after the product's.  Returns the share
    held per frame.
    """
    if not trips:
        return {}
    default_trip = max(trips.values())
    first_exits = _first_exits(nodes)
    states = _loop_state_elements(nodes, batch_size)
    held: dict[str, float] = {}
    share = lagging_share(_cpu_vendor())
    for frame, product in list(_summed_loop_products(nodes)):
        exit_name = first_exits.get(frame)
        if not 0 < states.get(frame, 0.0) <= LAGGING_STATE_ELEMENTS or exit_name is None:
            continue
        k = min(_PARALLEL_ITERATIONS, trips.get(frame, default_trip))
        window = _hold_runahead(nodes, product, k, (share, share), exit_name, LAGGING_PRODUCTS)
        if window is not None:
            order.insert(order.index(product.name) + 1, window)
            held[frame] = share
    return held


def _merged_filters_swapped(nodes, order: list[str]) -> list[str]:
    """``order`` with each merged filter gradient and its input gradient the other way round.

    The simulation takes the ready successors of an op in ``order``; the
    executor runs the last expensive one inline and queues the others.  In
    TF the order is that of the output gradient's out-edges in the graph its
    runtime builds, after oneDNN's merge has moved them
    (``benchmarks/ready_order.py``): the filter gradient runs inline in the
    siamese model and the U-Net, the input gradient in the nested model.
    The estimate's own Grappler run does not give the runtime's edge order,
    so it replays both orders; this one is the second.  Each pair is swapped
    from where the graph has it: since Grappler sees TF's names (session 53)
    the graph often has the filter gradient first already, and moving it
    first replayed the graph's order twice (session 61: a strided CNN whose
    profiled runs ran the filter gradient inline in both layers where the
    graph ran the input gradient).
    """
    filters = set(_onednn_bias_grad_merges(nodes, order).values())
    if not filters:
        return order
    input_grad_of: dict[tuple, str] = {}
    for name in order:
        node = nodes[name]
        if node.op == "Conv2DBackpropInput" and len(node.inputs) > 2:
            input_grad_of.setdefault(tuple(node.inputs[2]), name)
    position = {name: i for i, name in enumerate(order)}
    before: dict[str, str] = {}  # the later of a pair -> the earlier, to put just before it
    for filt in filters:
        inp = input_grad_of.get(tuple(nodes[filt].inputs[2]))
        if inp is not None:
            first, second = sorted((filt, inp), key=position.__getitem__)
            before[first] = second
    if not before:
        return order
    moved = set(before.values())
    out: list[str] = []
    for name in order:
        if name in moved:
            continue
        if name in before:
            out.append(before[name])
        out.append(name)
    return out


def _onednn_bias_grad_merges(nodes, order: list[str]) -> dict[str, str]:
    """Each ``BiasAddGrad`` that TF's oneDNN layout pass runs inside a filter gradient.

    The pass (``mkl_layout_pass.cc``, float32 only) merges a ``BiasAddGrad``
    with the ``Conv2DBackpropFilter`` whose output-gradient input it reads into
    one kernel that returns both (``_MklNativeConv2DBackpropFilterWithBias`` in
    TF's profile).  Memory is the same, but the ready list when that output
    gradient is made loses an expensive op, and the list decides which kernel
    the executor runs inline and which it queues.
    """
    if "float32" in _eigen_dtypes():
        return {}
    filters = {}
    for name in order:
        node = nodes[name]
        if node.op == "Conv2DBackpropFilter" and len(node.inputs) > 2:
            filters.setdefault(tuple(node.inputs[2]), name)
    merged: dict[str, str] = {}  # bias gradient -> filter gradient; one bias per filter
    for name in order:
        node = nodes[name]
        if node.op != "BiasAddGrad" or not node.inputs or not node.outputs:
            continue
        spec = node.outputs[0]
        filt = filters.get(tuple(node.inputs[0]))
        if filt is None or filt in merged.values():
            continue
        if spec is not None and _dtype_name(spec[2]) == "float32":
            merged[name] = filt
    return merged


#: Above this many independent conditions the replay runs every branch at once.
_MAX_CONDITIONS = 2


def _branch_orders(
    nodes, order: list[str], notes: list[str]
) -> tuple[list[list[str]], list[dict[tuple[str, int], bool]]]:
    """The replay order for each way the step's conditions can go, and those ways.

    TF runs one branch of a ``cond`` (a Switch's untaken output is dead and
    so is everything fed by it, up to the Merge), but which one changes from
    step to step: gradient accumulation updates the weights on one step in
    ``gradient_accumulation_steps``, and a model may choose by its data.
    Each assignment of the step's predicates gets its own order; the
    footprint is the worst of them.  Loop Switches (fed by LoopCond) are not
    conditions.
    """
    from .engine.grappler import is_dead

    switches: dict[str, tuple[str, int]] = {}
    for name in order:
        node = nodes[name]
        if node.op == "Switch" and len(node.inputs) == 2:
            pred = node.inputs[1]
            if pred[0] in nodes and nodes[pred[0]].op != "LoopCond":
                switches[name] = pred
    preds = sorted(set(switches.values()))
    if not preds:
        return [order], [{}]
    if len(preds) > _MAX_CONDITIONS:
        notes.append(f"{len(preds)} conditions: both branches of each are counted as if they ran.")
        return [order], [{}]
    orders = []
    ways = []
    for values in itertools.product((False, True), repeat=len(preds)):
        taken = dict(zip(preds, values, strict=True))
        ways.append(taken)
        dead: set[str] = set()
        dead_tensors: set[tuple[str, int]] = set()
        for name in order:
            node = nodes[name]
            data_dead = [src in dead_tensors or src[0] in dead for src in node.inputs]
            if is_dead(node.op, data_dead, any(c in dead for c in node.controls)):
                dead.add(name)
            elif name in switches:  # output 0 flows when the predicate is false
                dead_tensors.add((name, 0 if taken[switches[name]] else 1))
        orders.append([name for name in order if name not in dead])
    return orders, ways


def _data_predicates(nodes, preds, data: Set[str], outputs: Set[str]) -> list[tuple[str, int]]:
    """The predicates among ``preds`` the forward pass computes from the step's batch (``data``).

    Which way such a condition goes depends on what the user feeds, not on
    the step count, so the estimate cannot know it: it counts the costlier
    way, and the other ways are scenarios.  Predicates read from the
    gradients (a loss-scale optimizer's "all finite", an optimizer's NaN
    guard) are not the model's choice: they go one way unless training
    diverges.  So a predicate counts only if the step's outputs (the loss,
    the predictions) are computed from it, and the walk to the batch does
    not enter the backward pass.
    """
    if not preds:
        return []
    forward: set[str] = set()
    stack = list(outputs)
    while stack:
        name = stack.pop()
        if name in forward or name not in nodes:
            continue
        forward.add(name)
        stack += [src for src, _ in nodes[name].inputs]
    found = []
    for pred in preds:
        if pred[0] not in forward:
            continue
        seen: set[str] = set()
        stack = [pred[0]]
        while stack:
            name = stack.pop()
            if name in seen or name not in nodes or name.startswith("gradient_tape/"):
                continue
            seen.add(name)
            if name in data:
                found.append(pred)
                break
            stack += [src for src, _ in nodes[name].inputs]
    return found


#: Keras runs its RNN loops with ``tf.while_loop(parallel_iterations=32)``.
_PARALLEL_ITERATIONS = 32

#: Ops that allocate nothing of their own, so running ahead costs nothing.
_NO_ALLOC = ("Identity", "Enter", "Switch", "Merge", "Exit", "NextIteration", "Const", "Shape")


def _hold_runahead(
    nodes, node, k: int, share: tuple[float, float], exit_name: str, op: str = "_RunAheadWindow"
) -> str | None:
    """Hold a run-ahead op's later iterations until its loop ends.

    The replay runs the body once, so the op's consumer frees its output
    after one pass; in TF the later iterations' outputs wait for the state
    until the window slides past them, at the loop's end for the last ``k``.
    The op keeps its own iteration's outputs; a window node it starts holds
    the others' share (``_runahead_shares``), one allocation per iteration,
    and the loop's first Exit reads it, so it is freed as the loop ends.
    Returns the window node's name, or None when it would hold nothing.
    """
    from .engine.schedule import Node

    outs = [o for o in node.outputs if o is not None]
    if not outs:
        return None
    a, b = _output_bytes(node)  # a Split's outputs all wait
    held = (a * max(k * share[0] - 1, 0.0), b * max(k * share[1] - 1, 0.0), outs[0][2])
    if held[0] + held[1] <= 0:
        return None
    window = Node(f"{node.name}/_runahead_window", op, [], [node.name], [held])
    window.category, window.layer = node.category, node.layer
    window.pieces = max(1, round(k * share[1 if b > 0 else 0]) - 1)
    nodes[window.name] = window
    nodes[exit_name].inputs.append((window.name, 0))
    return window.name


_DIRECTION = re.compile(r"/(?:forward|backward)_[^/]*/")


def _bidirectional_layer(frame: str) -> str | None:
    """The frame with its direction taken out, if it is one direction of a Bidirectional layer."""
    layer = _DIRECTION.sub("/", frame)
    return layer if layer != frame else None


def _same_bidirectional(frame: str, other: str) -> bool:
    layer = _bidirectional_layer(frame)
    return layer is not None and layer == _bidirectional_layer(other)


def _lone_windows(nodes, order: list[str], directions_only: bool = False) -> dict[str, Any]:
    """Run-ahead windows emptied so that, of loops that run side by side, only one holds its own.

    Two loops run side by side when neither reads what the other computes
    (a bidirectional layer's directions, or two branches' layers); a stacked
    layer's loops wait for the layer below.  Of each such group, the loop
    with the largest window keeps it.  ``directions_only`` groups only the
    two directions of one Bidirectional layer.  Returns copies of the other
    windows with no bytes, by name (empty when no two windowed loops run
    side by side).
    """
    windows: dict[str, list] = {}
    for node in nodes.values():
        if node.op == "_RunAheadWindow":
            frame = _frame_of(node.name)
            if frame:
                windows.setdefault(frame, []).append(node)
    if len(windows) < 2:
        return {}
    upstream: dict[str, frozenset[str]] = {}
    after: dict[str, set[str]] = {frame: set() for frame in windows}
    for name in order:
        node = nodes[name]
        up: set[str] = set()
        for src, _ in node.inputs:
            up |= upstream.get(src, frozenset())
            if (f := _frame_of(src)) in windows:
                up.add(f)
        for src in node.controls:
            up |= upstream.get(src, frozenset())
        frame = _frame_of(name)
        if frame in after:
            after[frame] |= up - {frame}
        upstream[name] = frozenset(up)

    def size(frame: str) -> tuple[float, float, str]:
        held = [w.outputs[0] for w in windows[frame]]
        return (sum(o[1] for o in held), sum(o[0] for o in held), frame)

    def beside_of(frame: str) -> list[str]:
        return [
            g
            for g in windows
            if g != frame
            and g not in after[frame]
            and frame not in after[g]
            and (not directions_only or _same_bidirectional(g, frame))
        ]

    return {
        window.name: _emptied(window)
        for frame in windows
        if any(size(g) > size(frame) for g in beside_of(frame))
        for window in windows[frame]
    }


def _emptied(window):
    """A copy of a run-ahead window node that holds no bytes."""
    import copy

    empty = copy.copy(window)
    empty.outputs = [(0.0, 0.0, window.outputs[0][2])]
    return empty


def _output_bytes(node) -> tuple[float, float]:
    """An op's outputs together, as ``(a, b)``."""
    outs = [o for o in node.outputs if o is not None]
    return sum(o[0] for o in outs), sum(o[1] for o in outs)


def _first_exits(nodes) -> dict[str, str]:
    """Each loop frame's first Exit by name (all of them wait for its last iteration)."""
    first: dict[str, str] = {}
    for name, node in nodes.items():
        frame = exit_frame_of(name) if node.op == "Exit" else None
        if frame is not None and (frame not in first or name < first[frame]):
            first[frame] = name
    return first


def _runahead_shares(ahead: list, written_per_step: dict) -> dict[str, tuple[float, float]]:
    """Per loop frame, the share of its run-ahead work charged ``k`` times over.

    The replay charges a loop's output lists in full where they are created
    and the run-ahead ops ``k`` times (``k`` the iterations open at once), as
    if both were alive together.  In TF they are not: while iterations
    ``j .. j+k-1`` hold their run-ahead work (P bytes each), the lists hold
    the ``j`` outputs written so far (O bytes each), so the loop's most is
    ``max(k P + (T-k) O, T O)``, not ``k P + T O``: ``k min(P, O)`` less.
    TF's profile of an LSTM decoder over 40 steps at batch 64 peaks at the
    loop's start with 32 input projections and none of its outputs.  Taken
    off the window held for the ops in ``ahead``, as a share of their bytes,
    per coefficient (``_hold_runahead``).
    """
    ran: dict[str, tuple[float, float]] = {}
    for node in ahead:
        frame = _frame_of(node.name) or ""
        a, b = _output_bytes(node)
        ra, rb = ran.get(frame, (0.0, 0.0))
        ran[frame] = (ra + a, rb + b)
    shares = {}
    for frame, (pa, pb) in ran.items():
        oa, ob = written_per_step.get(frame, (0.0, 0.0))
        shares[frame] = (
            max(pa - oa, 0.0) / pa if pa > 0 else 1.0,
            max(pb - ob, 0.0) / pb if pb > 0 else 1.0,
        )
    return shares


def _runahead_ops(nodes) -> list[str]:
    """Loop-body ops that do not depend on the loop's state and feed ops that do.

    A loop variable is state unless its next value is itself (passed through)
    or itself plus a constant (a counter).  TF's executor starts an iteration
    as soon as its counter is ready, so these ops run ahead of the state.
    """

    def root(name: str) -> str:
        return _walk_back(nodes, name, ("Identity", "Switch"), 8)

    state: set[str] = set()
    for node in nodes.values():
        if node.op != "Merge":
            continue
        for src, _ in node.inputs:
            nxt = nodes.get(src)
            if nxt is None or nxt.op != "NextIteration" or not nxt.inputs:
                continue
            value = nodes.get(root(nxt.inputs[0][0]))
            if value is None or value.name == node.name:
                continue  # passed through unchanged
            if value.op in ("Add", "AddV2") and any(root(s) == node.name for s, _ in value.inputs):
                continue  # a counter
            state.add(node.name)
    if not state:
        return []
    depends: set[str] = set(state)
    changed = True
    order = list(nodes)
    while changed:  # fixpoint over the graph, back edges included
        changed = False
        for name in order:
            if name in depends:
                continue
            node = nodes[name]
            if node.op == "Exit":
                continue
            if any(src in depends for src, _ in node.inputs):
                depends.add(name)
                changed = True
    consumers = _node_consumers(nodes)
    out = []
    for name, node in nodes.items():
        if _frame_of(name) is None or name in depends or node.op in _NO_ALLOC:
            continue
        if any(c in depends for c in consumers.get(name, ())):
            out.append(name)
    # A view that waits (a 1D convolution's Squeeze back from 2D) holds the
    # buffer of the op it views: TF's profile of two ConvLSTM1D layers holds
    # the input convolutions of up to 10 iterations at once.
    from .engine.opsem import ALIAS_OPS
    from .engine.schedule import may_own_buffer

    for name in list(out):
        if nodes[name].op not in ALIAS_OPS:
            continue
        root = _walk_back(nodes, name, ALIAS_OPS, len(nodes))
        node = nodes.get(root)
        if (
            node is not None
            and _frame_of(root) == _frame_of(name)
            and root not in depends
            and root not in out
            and may_own_buffer(node.op)
            and node.op not in _NO_ALLOC
        ):
            out.append(root)
    # An op computed from loop constants alone (a mixed-precision cell's cast
    # of its kernel) runs in each of those iterations as soon as it opens,
    # before the data it is combined with exists: TF's profile of two
    # float16 LSTMs holds 32 casts of each kernel while the embedding runs.
    invariant = _loop_invariant_ops(nodes, consumers)
    ahead = set(out)
    changed = True
    while changed:
        changed = False
        for name in invariant:
            node = nodes[name]
            if name in ahead or name in depends or node.op in _NO_ALLOC:
                continue
            if any(c in ahead for c in consumers.get(name, ())):
                ahead.add(name)
                out.append(name)
                changed = True
    return out


def _node_consumers(nodes) -> dict[str, list[str]]:
    """The ops that read each op's outputs, by name (data inputs only)."""
    consumers: dict[str, list[str]] = collections.defaultdict(list)
    for node in nodes.values():
        for src, _ in node.inputs:
            consumers[src].append(node.name)
    return consumers


def _loop_invariant_ops(nodes, consumers) -> set[str]:
    """Loop-body ops whose inputs are the same in every iteration.

    Those are constants and the loop's constant ``Enter``s (an ``Enter`` that
    feeds a ``Merge`` is a loop variable), and ops of the body computed from
    them only.
    """
    invariant = {
        name
        for name, node in nodes.items()
        if node.op == "Const"
        or (
            node.op == "Enter"
            and not any(nodes[c].op == "Merge" for c in consumers.get(name, ()) if c in nodes)
        )
    }
    changed = True
    while changed:
        changed = False
        for name, node in nodes.items():
            if name in invariant or _frame_of(name) is None or node.op == "Merge":
                continue
            if node.inputs and all(src in invariant for src, _ in node.inputs):
                invariant.add(name)
                changed = True
    return invariant


def _ungate_loop_entries(nodes) -> None:
    """Take off the gates Grappler's lowering of a ``While`` adds and TF's runtime lacks.

    Grappler's lowering (run here on the unlowered graph) gates every
    ``Enter`` on a ``LoopControlInputs`` NoOp that waits for all of the
    loop's inputs, and the condition's and body's ops on an
    ``input_control_node`` that waits for all of an iteration's loop
    variables.  The graph TF runs has neither (the partition graphs of a
    ``RunMetadata`` with graph collection on, for an inference and a
    training step): TF lowers the ``While`` after Grappler, and the trace's
    ``While`` has no control inputs, so each op waits for its data alone.
    So a loop's work that does not read its input sequence starts with the
    step: TF's profile of ``TimeDistributed(LSTM)`` over 20 words runs its
    loops' first recurrent products (the zero state times the recurrent
    kernel) before their input lists exist, and its peak holds 15 of them
    (docs/engine.md, session 55).

    Two gates stay.  A ``LoopControlInputs`` input that is not one of the
    loop's entries is a control input of the ``While`` itself.  And an
    ``Enter`` of a list the loop fills keeps its gate: the replay charges
    the list's elements at that ``Enter`` (``_list_origin``), where TF
    makes each as its iteration writes it, and the loop's inputs being
    ready is the nearest the graph has to the loop starting.
    """
    gates = {
        name
        for name, node in nodes.items()
        if node.op == "NoOp" and ("/LoopControlInputs" in name or "/input_control_node" in name)
    }
    if not gates:
        return
    entered: dict[str, set[str]] = collections.defaultdict(set)
    for name, node in nodes.items():
        if node.op == "Enter" and node.inputs and (frame := enter_frame_of(name)) is not None:
            entered[frame].add(node.inputs[0][0])
    for gate in [g for g in gates if "/LoopControlInputs" in g]:
        frame = gate.rpartition("/LoopControlInputs")[0]
        own = [c for c in nodes[gate].controls if c not in entered[frame]]
        if own:
            nodes[gate].controls[:] = own
            gates.discard(gate)
    lists = {name for name, node in nodes.items() if node.op in _LIST_MAKERS}
    for name, node in nodes.items():
        if not node.controls or (node.op != "Enter" and _frame_of(name) is None):
            continue
        if node.op == "Enter" and _walk_back(nodes, node.inputs[0][0], ("Identity",)) in lists:
            continue
        node.controls[:] = [c for c in node.controls if c not in gates]


def _sequence_loop_exits(nodes) -> None:
    """Make each loop's Exits wait for its body, as iterating does.

    The replay runs a loop's body once and has no back edge, so an Exit would
    otherwise be ready as soon as its Switch ran, and the backward pass could
    start before the forward loop pushed anything: the accumulators would then
    stay full through the whole backward pass.  In TF the Exits fire only when
    the condition turns false, after every iteration's NextIteration.
    """
    merge_next: dict[str, list[str]] = collections.defaultdict(list)
    for node in nodes.values():
        if node.op == "Merge":
            for src, _ in node.inputs:
                if src in nodes and nodes[src].op == "NextIteration":
                    merge_next[node.name].append(src)
    loops: dict[str, dict[str, list[str]]] = collections.defaultdict(
        lambda: {"next": [], "exit": []}
    )
    switch_loop: dict[str, str] = {}
    for node in nodes.values():
        if node.op == "Switch" and len(node.inputs) == 2:
            data, pred = node.inputs
            if pred[0] in nodes and nodes[pred[0]].op == "LoopCond":
                switch_loop[node.name] = pred[0]
                loops[pred[0]]["next"].extend(merge_next.get(data[0], ()))
    for node in nodes.values():
        if node.op == "Exit" and node.inputs and node.inputs[0][0] in switch_loop:
            loops[switch_loop[node.inputs[0][0]]]["exit"].append(node.name)
    for loop in loops.values():
        for name in loop["exit"]:
            extra = [n for n in loop["next"] if n not in nodes[name].controls]
            nodes[name].controls.extend(extra)
        # A list the body pops (a backward loop reading its accumulator) gives
        # up one element per iteration; run once, the pop would free the whole
        # list as soon as the loop is entered, which in TF's log happens while
        # the later layers' backward loops still run.  Its next value waits for
        # the body's other loop values, so the list lives until the loop ends.
        lists = [n for n in loop["next"] if _is_list(nodes[n])]
        state = [n for n in loop["next"] if n not in lists]
        for name in lists:
            nodes[name].controls.extend(s for s in state if s not in nodes[name].controls)


def _is_list(node) -> bool:
    """A node whose first output is a TensorList (a variant handle)."""
    spec = node.outputs[0] if node.outputs else None
    return spec is not None and _dtype_name(spec[2]) == "variant"


#: Ops that make an empty TensorList for a loop to fill.
_LIST_MAKERS = ("EmptyTensorList", "TensorListReserve")


def _list_origin(nodes, tensor, depth: int = 0):
    """Where the TensorList flowing into ``tensor`` enters its loop.

    Grappler may merge identical list-creating ops of two loops into one; each
    loop still fills its own copy, so the bytes are charged at the loop's own
    Enter (which then allocates instead of aliasing), or at the creating op.
    """
    node = nodes.get(tensor[0])
    if node is None or depth > 16:
        return None
    if node.op in (*_LIST_MAKERS, "_ListEnter"):
        return node
    if node.inputs and node.op in ("Enter", "Identity", "Merge", "Switch", "NextIteration"):
        found = _list_origin(nodes, node.inputs[0], depth + 1)
        if node.op == "Enter" and found is not None and found.op != "_ListEnter":
            node.op = "_ListEnter"
            return node
        return found
    return None


def _list_size(nodes, tensor):
    """The bytes a TensorList holds, following it back through loop plumbing."""
    node = _list_holder(nodes, tensor)
    return node.outputs[0] if node is not None else None


def _list_holder(nodes, tensor, depth: int = 0):
    """The op whose output is charged a TensorList's bytes (``_size_tensor_lists``)."""
    node = nodes.get(tensor[0])
    if node is None or depth > 16:
        return None
    if node.op in (
        "TensorListPushBack",
        "TensorListSetItem",
        "TensorListFromTensor",
        *_LIST_MAKERS,
    ):
        spec = node.outputs[0] if node.outputs else None
        return node if spec and (spec[0] or spec[1]) else None
    if node.inputs and node.op in (
        "Enter",
        "Exit",
        "Identity",
        "Merge",
        "Switch",
        "NextIteration",
        "TensorListPushBack",
        "TensorListSetItem",
    ):
        for src in node.inputs[:1]:
            found = _list_holder(nodes, src, depth + 1)
            if found is not None:
                return found
    return None


def _lookup_layer(name: str, op_layer: dict[str, int]) -> int:
    parts = name.split("/")
    if parts and parts[0] == "gradient_tape":
        parts = parts[1:]
    # Grappler prefixes new nodes with its optimizer's name; drop leading parts.
    for start in range(min(3, len(parts))):
        for end in range(len(parts), start, -1):
            key = "/".join(parts[start:end])
            hit = op_layer.get(key)
            if hit is not None and hit >= 0:
                return hit
    return -1


def _categorizer(name: str, opt_scope: str | None):
    """The category function of an op's outputs (a partial, so nodes can be pickled)."""
    backward = "gradient_tape/" in name or name.startswith("gradients/")
    in_opt = bool(opt_scope) and (
        name.lower().startswith(opt_scope + "/") or name.lower().startswith("loss_scale_optimizer/")
    )
    return functools.partial(_category, in_opt, backward)


def _category(in_opt: bool, backward: bool, _idx: int, b: float) -> str:
    if in_opt:
        return "temporaries"
    if backward:
        return "temporaries" if b > 0 else "gradients"
    return "activations" if b > 0 else "temporaries"
