"""Subprocess entry of ``measure``: one fresh process, one model, one measured step.

Run as ``python -m jupyter_tfmem._measure_worker SPEC.json RESULT.json``.  The
spec says where the model comes from (a ``.keras`` file the parent wrote, a zoo
case, or a ``module:function`` builder) and which step to run; the result is
written to a file, not stdout, so that prints from user code or TF cannot
corrupt it.

The allocator environment must be set before TensorFlow is imported, which is
why this module sets it at the top and imports TF only inside ``main``.
"""

from __future__ import annotations

import os

# Before any TensorFlow import: the CPU then uses the BFC allocator, as GPUs do.
os.environ["TF_CPU_ALLOCATOR_USE_BFC"] = "true"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gc
import importlib
import json
import sys
import time
import traceback
from typing import Any

from jupyter_tfmem.loss_configs import losses_from_spec
from jupyter_tfmem.measurement import DEFAULT_LOSS, DEFAULT_OPTIMIZER, until_applied, warm_up
from jupyter_tfmem.optimizer_configs import optimizer_from_config
from jupyter_tfmem.shapes import label_targets, normalize_shapes, require_target_shapes

#: Integer inputs without an Embedding to bound them get tokens in [0, this).
SMALL_INT_RANGE = 2


def _resolve_callable(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(f"builder path {path!r} is not of the form 'module:function'")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{path!r} is not callable")
    return obj


def _rebuild_from_file(
    keras: Any,
    path: str,
    compile_saved: bool,
    precision: str | None = None,
    optimizer: dict[str, Any] | None = None,
) -> Any:
    """The saved model rebuilt from its config, its weights made by its initializers.

    This is what the measuring protocol does (build from code, then step), and
    it keeps every variable in TF's allocator: weights loaded from a file are
    assigned from NumPy, and TF may adopt an aligned NumPy buffer without a
    copy (outside the allocator), or re-home it and fragment the pool.
    Weight values do not change how much memory a step needs.

    With ``precision``, every layer's own dtype policy is taken out of the
    config, so that the layers take the global policy, as the estimate's
    rebuild does (``estimator._with_dtype``).  Rewriting the config, rather
    than cloning a first build, builds the weights once: a second build
    leaves the first one's freed chunks in TF's allocator, and the step's
    tensors then fit otherwise (a bilinear upsampling model's bfloat16 step:
    9.97 MiB against 14.01 built once).
    """
    import zipfile

    from jupyter_tfmem.estimator import _with_dtype

    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
    compile_config = config.pop("compile_config", None)
    if optimizer is not None and compile_config is not None:
        # The saved one cannot be loaded here (a MultiOptimizer's function);
        # the parent sent the same choice as a config that can.
        compile_config = {**compile_config, "optimizer": optimizer}
    if precision is not None:
        own = config.get("config") or {}
        config["config"] = {
            k: (v if k == "dtype" else _with_dtype(v, precision)) for k, v in own.items()
        }
    with keras.saving.custom_object_scope({}):
        model = keras.saving.deserialize_keras_object(config, safe_mode=False)
        if compile_saved and compile_config is not None:
            _compile_as_saved(keras, model, compile_config)
    return model


def _compile_as_saved(keras: Any, model: Any, compile_config: dict[str, Any]) -> None:
    """``compile()`` with the saved arguments, as the user's own code called it.

    Keras's ``compile_from_config`` also builds the optimizer's slots at once,
    which the user's ``compile()`` leaves to the first training step: slots
    made before the batch (or, in inference, slots never made) change where
    TF's allocator puts everything after them.  A dense residual model's XLA
    inference measured 22.05 MiB so, and 20.54 built from code.  A model
    that overrides ``compile()`` is left uncompiled, as Keras leaves it.
    """
    if type(model).compile is not keras.Model.compile:
        return
    model.compile(**keras.saving.deserialize_keras_object(compile_config, safe_mode=False))


def _load_model(keras: Any, spec: dict[str, Any], notes: list[str]) -> Any:
    source = spec["source"]
    precision = spec.get("precision")
    kind = source["kind"]
    if kind == "file":
        for module_name in spec.get("imports") or ():
            importlib.import_module(module_name)
        # Inference too: the compile config carries jit_compile, which decides
        # whether predict_on_batch runs as one XLA executable.
        compile_saved = bool(source.get("compiled"))
        # A model takes its own dtype policy from the global one when it is
        # built, and its config does not record it: rebuilt under float32, a
        # mixed-precision Functional model autocasts differently (its
        # Embedding gathers from a bfloat16 copy of the table instead of
        # casting the float32 rows it gathered).  So it is rebuilt under the
        # policy the user's model has (or the one asked for).
        policy = precision or source.get("policy")
        if policy is not None:
            keras.config.set_dtype_policy(policy)
        # The file was written by our own parent from the user's in-memory model,
        # so Lambda layers in it are the user's own code.
        replaced = spec.get("optimizer") if source.get("replace_saved_optimizer") else None
        model = _rebuild_from_file(keras, source["path"], compile_saved, precision, replaced)
        notes.append("rebuilt from its saved config with fresh weights (values change no memory)")
        if precision is not None:
            notes.append(f"layers rebuilt under dtype policy {precision!r}")
        return model
    if precision is not None:
        keras.mixed_precision.set_global_policy(precision)
        notes.append(f"built under global dtype policy {precision!r}")
    if kind == "zoo":
        from jupyter_tfmem.zoo import get_case

        return get_case(source["name"]).builder()
    if kind == "callable":
        return _resolve_callable(source["path"])()
    raise ValueError(f"unknown model source {kind!r}")


def _compile(keras: Any, model: Any, spec: dict[str, Any], notes: list[str]) -> None:
    """Compile for training: the model's own compile config unless the spec overrides it."""
    optimizer = spec.get("optimizer")
    loss = spec.get("loss")
    if getattr(model, "compiled", False):
        if optimizer is None and loss is None:
            notes.append("compiled with the model's own compile config")
            return
        # Keep everything else the model was compiled with (metrics, loss
        # weights, jit_compile); only the overridden parts change.
        config = keras.saving.deserialize_keras_object(model.get_compile_config() or {})
        if optimizer is not None:
            config["optimizer"] = optimizer_from_config(optimizer)
            notes.append("optimizer overridden; rest of the model's compile config kept")
        if loss is not None:
            config["loss"] = losses_from_spec(loss)
            notes.append("loss overridden; rest of the model's compile config kept")
        model.compile(**config)
        return
    if optimizer is None:
        optimizer = DEFAULT_OPTIMIZER
        notes.append(f"no optimizer given and model not compiled: used {DEFAULT_OPTIMIZER!r}")
    else:  # a name or a config; Keras cannot build every name ("lamb")
        optimizer = optimizer_from_config(optimizer)
    if loss is None:
        loss = DEFAULT_LOSS
        notes.append(f"no loss given and model not compiled: used {DEFAULT_LOSS!r} per output")
    else:
        loss = losses_from_spec(loss)
    model.compile(optimizer=optimizer, loss=loss)


def _loss_name(loss: Any) -> str:
    if loss is None:
        return ""
    if isinstance(loss, str):
        return loss
    name = getattr(loss, "name", None) or getattr(loss, "__name__", None)
    if not name and hasattr(loss, "fn"):
        name = getattr(loss.fn, "__name__", "")
    return f"{type(loss).__name__} {name or ''}"


def _losses_per_output(model: Any, n_outputs: int) -> list[Any]:
    loss = getattr(model, "loss", None)
    if isinstance(loss, (list, tuple)):
        return list(loss) + [None] * (n_outputs - len(loss))
    if isinstance(loss, dict):
        names = list(getattr(model, "output_names", []) or [])
        return [loss.get(name) for name in names] if len(names) == n_outputs else [None] * n_outputs
    return [loss] * n_outputs


def _input_specs(model: Any, shapes: list[list[int]] | None) -> list[tuple[tuple[Any, ...], str]]:
    """(shape with a None batch, dtype) per input; ``shapes`` fills in unknown dimensions."""
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        inputs = None
    if inputs:
        specs = [(tuple(t.shape), str(t.dtype)) for t in inputs]
        if shapes is not None:
            if len(shapes) != len(specs):
                raise ValueError(
                    f"the model has {len(specs)} inputs but {len(shapes)} input shapes were given"
                )
            specs = [((None, *s), dtype) for s, (_, dtype) in zip(shapes, specs, strict=True)]
        return specs
    if shapes is not None:
        return [((None, *s), "float32") for s in shapes]
    built = getattr(model, "_build_shapes_dict", None)
    if built:
        return [((None, *tuple(shape)[1:]), "float32") for shape in built.values()]
    raise ValueError(
        "cannot tell the model's input shapes: build it first "
        "(call it on a batch or use keras.Input), or pass input_shapes"
    )


def _pack_inputs(model: Any, flat: list[Any]) -> Any:
    """Nest the inputs as the model declared them (dicts of named inputs, lists)."""
    struct = getattr(model, "_inputs_struct", None)
    if struct is not None:
        from keras import tree

        try:
            return tree.pack_sequence_as(struct, flat)
        except (TypeError, ValueError):
            pass
    return flat[0] if len(flat) == 1 else flat


def _output_specs(keras: Any, model: Any, inputs: list[Any]) -> list[tuple[tuple[Any, ...], str]]:
    try:
        outputs = model.outputs
    except (AttributeError, ValueError):
        outputs = None
    if not outputs or any(d is None for t in outputs for d in tuple(t.shape)[1:]):
        symbolic = [keras.KerasTensor(shape, dtype=dtype) for shape, dtype in inputs]
        outputs = keras.tree.flatten(model.compute_output_spec(_pack_inputs(model, symbolic)))
    return [(tuple(t.shape), str(t.dtype)) for t in outputs]


def _vocab_bound(model: Any) -> int | None:
    sizes = []
    stack = [model]
    seen: set[int] = set()
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        dim = getattr(layer, "input_dim", None)
        if type(layer).__name__ == "Embedding" and isinstance(dim, int):
            sizes.append(dim)
        stack.extend(getattr(layer, "layers", None) or [])
        stack.extend(getattr(layer, "_layers", None) or [])
    return min(sizes) if sizes else None


def _concrete(shape: tuple[Any, ...], batch_size: int, what: str) -> list[int]:
    dims = [batch_size, *shape[1:]]
    if any(d is None for d in dims):
        raise ValueError(f"{what} has an unknown dimension {shape}; give the model fixed shapes")
    return [int(d) for d in dims]


def _make_batch(
    tf: Any,
    keras: Any,
    model: Any,
    batch_size: int,
    training: bool,
    input_shapes: list[list[int]] | None,
    notes: list[str],
    target_shapes: list[list[int]] | None = None,
) -> tuple[Any, Any]:
    """Random inputs (and targets) made by TF ops, so they live in TF's allocator."""
    specs = _input_specs(model, input_shapes)
    vocab = _vocab_bound(model)
    xs = []
    for shape, dtype in specs:
        dims = _concrete(shape, batch_size, "an input")
        tf_dtype = tf.as_dtype(dtype)
        if tf_dtype.is_floating:
            xs.append(tf.random.uniform(dims, dtype=tf_dtype))
        elif tf_dtype.is_integer:
            high = vocab if vocab else SMALL_INT_RANGE
            draw_dtype = tf.int64 if tf_dtype.size == 8 else tf.int32
            tokens = tf.random.uniform(dims, 0, high, dtype=draw_dtype)
            xs.append(tokens if tf_dtype == draw_dtype else tf.cast(tokens, tf_dtype))
            notes.append(
                f"integer input drawn in [0, {high})"
                + (" (smallest Embedding input_dim)" if vocab else "")
            )
        elif tf_dtype.is_bool:
            xs.append(tf.random.uniform(dims) < 0.5)
        elif tf_dtype == tf.string:
            # one word per element, from a thousand: a model that looks up or
            # splits its own text gets words, most of them out of its vocabulary
            words = tf.random.uniform(dims, 0, 1000, dtype=tf.int32)
            xs.append(tf.strings.join(["w", tf.strings.as_string(words)]))
            notes.append("string input: one random word per element")
        else:
            raise ValueError(f"cannot make random inputs of dtype {dtype}")
    x = _pack_inputs(model, xs)
    if not training:
        return x, None
    out_specs = _output_specs(keras, model, specs)
    losses = _losses_per_output(model, len(out_specs))
    target_shapes = normalize_shapes(target_shapes, len(out_specs), "target")
    ys = []
    for i, ((shape, dtype), loss) in enumerate(zip(out_specs, losses, strict=True)):
        dims = _concrete(shape, batch_size, "an output")
        name = _loss_name(loss).lower()
        require_target_shapes(name, target_shapes)
        labels = label_targets(name)
        if target_shapes is not None:
            # class ids; CTC's 0 is its blank, so its labels start at 1
            given = [batch_size, *target_shapes[i]]
            if labels:
                low = 1 if "ctc" in name else 0
                ys.append(tf.random.uniform(given, low, max(dims[-1], low + 1), dtype=tf.int32))
            else:
                out_dtype = tf.as_dtype(dtype)
                draw = out_dtype if out_dtype.is_floating else tf.float32
                ys.append(tf.random.uniform(given, dtype=draw))
        elif labels:
            ys.append(tf.random.uniform(dims[:-1], 0, max(dims[-1], 1), dtype=tf.int32))
        else:
            # Same dtype as the output, as the estimator assumes (float16 under
            # a mixed policy whose last layer is not float32).
            out_dtype = tf.as_dtype(dtype)
            ys.append(
                tf.random.uniform(dims, dtype=out_dtype if out_dtype.is_floating else tf.float32)
            )
    y = ys[0] if len(ys) == 1 else ys
    return x, y


def _onednn_note() -> str:
    from .estimator import _cpu_flags, onednn_on

    value = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    if value is None:
        state = "on" if onednn_on(_cpu_flags(), None) else "off"
        return f"oneDNN: TF default ({state} on this CPU)"
    return f"oneDNN: TF_ENABLE_ONEDNN_OPTS={value}"


def _configure_gpus(
    tf: Any, gpus: list[Any], device: str, pool_mib: int | None, notes: list[str]
) -> int | None:
    """Memory growth on every GPU, or a fixed pool of ``pool_mib`` on the measured one.

    Growth makes the allocator's peak independent of the card's size.  A fixed
    pool is for overhead calibration: without growth TF's BFC allocator takes
    its whole ``memory_limit`` as its first region, so the driver's figure for
    the process minus the pool is exactly what lies outside TF's allocator (with
    growth the pool is somewhere between the peak and twice it, regions double).
    Returns the pool size in bytes when it is fixed.
    """
    index = None
    if pool_mib is not None and device.upper().startswith("GPU"):
        index = int(device.split(":")[-1] or 0)
    for i, gpu in enumerate(gpus):
        if i == index:
            tf.config.set_logical_device_configuration(
                gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=int(pool_mib))]
            )
            notes.append(f"fixed allocator pool of {int(pool_mib)} MiB on {device} (calibration)")
        else:
            tf.config.experimental.set_memory_growth(gpu, True)
    return None if index is None else int(pool_mib) * 2**20


def run(spec: dict[str, Any], phase: list[str] | None = None) -> dict[str, Any]:
    """Load, compile, warm up, reset the allocator's peak, run one step, read the peak.

    A model trained with gradient accumulation runs a whole accumulation cycle
    instead of one step, since the update step and the others differ.

    ``phase[0]`` tracks how far it got, so that a failure can say what to fix.
    """
    phase = phase if phase is not None else ["start"]
    started = time.perf_counter()
    import keras
    import tensorflow as tf

    notes: list[str] = [_onednn_note()]
    gpus = tf.config.list_physical_devices("GPU")
    device = spec.get("device") or ("GPU:0" if gpus else "CPU:0")
    pool_bytes = _configure_gpus(tf, gpus, device, spec.get("gpu_pool_mib"), notes)
    batch_size = int(spec["batch_size"])
    training = bool(spec["training"])

    with tf.device(device):
        phase[0] = "load"
        model = _load_model(keras, spec, notes)
        phase[0] = "compile"
        if training:
            _compile(keras, model, spec, notes)
            opt = model.optimizer
            name = type(opt).__name__
            inner = getattr(opt, "inner_optimizer", None)
            if inner is not None:  # compile() wrapped it for mixed_float16
                name += f"({type(inner).__name__})"
            notes.append(f"optimizer {name}; jit_compile={getattr(model, 'jit_compile', None)}")
        elif getattr(model, "compiled", False):
            notes.append(f"jit_compile={getattr(model, 'jit_compile', None)}")
        phase[0] = "batch"
        x, y = _make_batch(
            tf,
            keras,
            model,
            batch_size,
            training,
            spec.get("input_shapes"),
            notes,
            spec.get("target_shapes"),
        )
        phase[0] = "step"

        def step() -> None:
            if training:
                model.train_on_batch(x, y)
            else:
                model.predict_on_batch(x)

        # warm-up: traces the function, builds optimizer slots, applies an update
        warm_steps, updated = warm_up(step, model, training)
        if not updated:
            notes.append(f"warm-up: the optimizer applied no update in {warm_steps} steps")
        elif warm_steps > 1:
            notes.append(f"warm-up: the optimizer applied its first update in step {warm_steps}")
        # With gradient accumulation only one step in k updates the weights,
        # and the steps differ in what they allocate: read the peak over a
        # whole cycle of k steps, the one a training run is bound to reach.
        cycle = 1
        if training:
            cycle = max(1, int(getattr(model.optimizer, "gradient_accumulation_steps", 0) or 1))
            if cycle > 1:
                notes.append(f"peak over {cycle} steps (gradient_accumulation_steps={cycle})")

        def measured_step() -> tuple[int, dict[str, int], float]:
            gc.collect()
            tf.config.experimental.reset_memory_stats(device)
            before = tf.config.experimental.get_memory_info(device)["current"]
            step_started = time.perf_counter()
            for _ in range(cycle):
                step()
            seconds = (time.perf_counter() - step_started) / cycle
            return before, tf.config.experimental.get_memory_info(device), seconds

        # A cycle of accumulating steps is read as it comes: the estimate
        # replays every sequence of its branches (docs/engine.md, point 7).
        (before, info, step_seconds), runs, applied = until_applied(
            measured_step, model, training and cycle == 1
        )
        if not applied:
            notes.append(f"measured step: the optimizer applied no update in {runs} steps")
        elif runs > 1:
            notes.append(f"measured step: the loss scale skipped {runs - 1} update(s) before it")

    device_used, device_used_source = None, ""
    if device.upper().startswith("GPU"):
        from jupyter_tfmem.driver import process_device_used_bytes

        # The pool never shrinks, so what the driver reports now includes the
        # step's peak; with a fixed pool it is exactly pool + what lies outside it.
        device_used, device_used_source = process_device_used_bytes(os.getpid())

    return {
        "device_used_bytes": device_used,
        "device_used_source": device_used_source,
        "device_pool_bytes": pool_bytes,
        "peak_bytes": int(info["peak"]),
        "current_before": int(before),
        "current_after": int(info["current"]),
        "device": device,
        "tf_version": tf.__version__,
        "keras_version": keras.__version__,
        "step_seconds": step_seconds,
        "seconds": time.perf_counter() - started,
        "notes": sorted(set(notes), key=notes.index),
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point: read the spec file, run, write the result file."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(
            "usage: python -m jupyter_tfmem._measure_worker SPEC.json RESULT.json", file=sys.stderr
        )
        return 2
    with open(args[0], encoding="utf-8") as fh:
        spec = json.load(fh)
    phase = ["start"]
    try:
        result = run(spec, phase)
    except Exception as exc:
        # The parent turns this into a TypeError/RuntimeError; the traceback
        # still goes to stderr for the tail it quotes.
        traceback.print_exc()
        result = {"error": type(exc).__name__, "message": str(exc)[:2000], "phase": phase[0]}
        with open(args[1], "w", encoding="utf-8") as fh:
            json.dump(result, fh)
        return 3
    with open(args[1], "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
