"""Ground truth: the allocator's peak over one real step, in fresh processes.

``measure`` never runs anything on the user's model.  It writes a copy to a
temporary ``.keras`` file, and each run loads that copy in a new Python
process (``jupyter_tfmem._measure_worker``) where TensorFlow starts with the BFC
allocator on the CPU, the allocator GPUs use.  A fresh process matters: a
process that built other models first keeps their leftovers allocated.  The
peak varies from run to run (executor order, BFC chunk splitting), so several
runs are taken and the median is reported with the range.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .multi_optimizers import chosen_for, multi_optimizer_spec, picks_by_function
from .shapes import normalize_shapes, stateful_batch

__all__ = [
    "DEFAULT_LOSS",
    "DEFAULT_OPTIMIZER",
    "Measurement",
    "measure",
    "measure_builder",
]

#: What an uncompiled model is trained with when no optimizer/loss is given; the
#: estimator uses the same defaults so that both describe the same step.
DEFAULT_OPTIMIZER = "adam"
DEFAULT_LOSS = "mean_squared_error"
#: Seconds one measuring process may take before it is killed.
DEFAULT_TIMEOUT = 600.0
#: Overhead calibration pool: the largest measured peak times this, plus ...
CALIBRATION_HEADROOM = 1.25
#: ... this many MiB (room for run-to-run movement of small models' peaks).
CALIBRATION_EXTRA_MIB = 64
#: How much of a crashed worker's stderr ends up in the RuntimeError.
_STDERR_TAIL_CHARS = 3000
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Measurement:
    """The allocator's peak over one steady-state step, over several fresh processes.

    ``peak_bytes`` is the median of ``runs``; compare estimates against it and
    read ``spread`` next to every error, since the ground truth itself moves.
    """

    peak_bytes: int
    runs: tuple[int, ...]
    current_before: int
    device: str
    batch_size: int
    training: bool
    notes: tuple[str, ...] = ()
    seconds: tuple[float, ...] = ()
    tf_version: str = ""
    #: On a GPU: device memory the driver counts for the measuring process, read
    #: in a calibration run whose allocator pool was fixed at ``device_pool_bytes``.
    #: ``None`` on a CPU, or when the driver could not be asked (``notes`` say why).
    device_used_bytes: int | None = None
    #: TF's allocator pool in that calibration run; what lies outside it is
    #: ``device_used_bytes - device_pool_bytes`` (see ``calibrate_overhead``).
    device_pool_bytes: int | None = None

    @property
    def low(self) -> int:
        """The smallest peak seen."""
        return min(self.runs)

    @property
    def high(self) -> int:
        """The largest peak seen."""
        return max(self.runs)

    @property
    def spread(self) -> float:
        """(max - min) / median: how far the ground truth itself moved between runs."""
        if not self.peak_bytes:
            return 0.0
        return (self.high - self.low) / self.peak_bytes

    def contains(self, nbytes: float) -> bool:
        """Whether ``nbytes`` lies inside the measured range (as good as the truth allows)."""
        return self.low <= nbytes <= self.high

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        data = dataclasses.asdict(self)
        data["runs"] = list(self.runs)
        data["notes"] = list(self.notes)
        data["seconds"] = list(self.seconds)
        data["low"] = self.low
        data["high"] = self.high
        data["spread"] = self.spread
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Measurement:
        """Inverse of ``to_dict`` (derived keys are ignored)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in fields}
        for key in ("runs", "notes", "seconds"):
            kwargs[key] = tuple(kwargs.get(key, ()))
        return cls(**kwargs)


#: Warm-up steps allowed for the optimizer to apply its first update.  A
#: dynamic loss scale starts at 2**15 and halves on each overflow, so 16 steps
#: bring it below 1.
MAX_WARMUP_STEPS = 16


def warm_up(step: Callable[[], Any], model: Any, training: bool) -> tuple[int, bool]:
    """Run ``step`` until the optimizer has applied an update.

    Returns how many steps ran and whether an update was applied (always
    true for inference, where one step is enough).

    The measured step should be one a training run keeps repeating.  Under
    ``mixed_float16`` Keras wraps the optimizer in a ``LossScaleOptimizer``
    whose first step often overflows at the initial scale and skips the
    update.  Until one is applied, the weights and slots still sit in the
    buffers they were built in, and the next step peaks lower than the steps
    that follow an applied update (a two-block transformer at batch 32 on the
    CPU: 54 MiB after a skipped warm-up, 61 to 66 MiB after an applied one).
    The optimizer's ``iterations`` counts applied updates only, so it tells
    the two apart (``until_applied``).
    """
    _, steps, updated = until_applied(step, model, training)
    return steps, updated


def until_applied(
    measured_step: Callable[[], Any], model: Any, training: bool
) -> tuple[Any, int, bool]:
    """Run ``measured_step`` (reset the peak, step, read it) until its step applied an update.

    Returns the last run's result, how many runs it took, and whether the
    last one applied the update.  A loss scale that let the warm-up's update
    through can skip the next one: a ``mixed_float16`` MLP's first step
    applied its update at the initial scale of 2**15, and the next four
    overflowed, each halving it.  A skipped step does less than the steps a
    training run repeats, so it is not the step to read.  ``training``
    false (inference, or a cycle of accumulating steps) runs it once.
    """
    optimizer = getattr(model, "optimizer", None) if training else None
    if getattr(optimizer, "iterations", None) is None:
        return measured_step(), 1, True
    for runs in range(1, MAX_WARMUP_STEPS + 1):
        start = int(optimizer.iterations.numpy())
        result = measured_step()
        if int(optimizer.iterations.numpy()) > start:
            return result, runs, True
    return result, MAX_WARMUP_STEPS, False


def _check_common(batch_size: Any, runs: Any, timeout: Any) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")


def _serialize_optimizer(optimizer: Any, model: Any = None) -> Any:
    if optimizer is None or isinstance(optimizer, str):
        return optimizer
    if isinstance(optimizer, Mapping):
        return dict(optimizer)
    import keras

    if picks_by_function(optimizer):
        return _multi_optimizer_as_map(optimizer, model)
    if isinstance(optimizer, keras.optimizers.Optimizer):
        return keras.optimizers.serialize(optimizer)
    raise TypeError(
        f"optimizer must be a name such as 'adam', a Keras optimizer or its config dict, "
        f"not {type(optimizer).__name__}"
    )


def _multi_optimizer_as_map(optimizer: Any, model: Any) -> dict[str, Any]:
    """The config of a ``MultiOptimizer`` on an ``OptimizerMap`` that picks as ``optimizer``'s
    function does for ``model``'s variables.

    A function does not cross into the measuring process (Keras refuses to load
    a lambda, and a function defined in a notebook cannot be imported there),
    so it is asked here, once per trainable variable, and its answers are
    written as one pattern per optimizer of the variables' exact paths.  The
    user's optimizers are only read.
    """
    import re

    import keras

    if model is None or not getattr(model, "trainable_variables", None):
        raise TypeError(
            "a MultiOptimizer built on a function can only be measured with the model it "
            "picks for (measure(model, ...)); build it on a keras.optimizers.OptimizerMap instead"
        )
    chosen: dict[int, tuple[Any, list[str]]] = {}
    for variable in model.trainable_variables:
        pick = chosen_for(optimizer, variable)
        chosen.setdefault(id(pick), (pick, []))[1].append(variable.path)
    groups = sorted(chosen.values(), key=lambda group: -len(group[1]))
    default, _ = groups[0]
    patterns = {
        "|".join(re.escape(path) for path in paths): keras.optimizers.serialize(pick)
        for pick, paths in groups[1:]
    }
    return multi_optimizer_spec(
        keras.optimizers.serialize(default),
        patterns,
        loss_scale_factor=optimizer.loss_scale_factor,
        name=optimizer.name,
    )


def _serialize_loss(loss: Any) -> Any:
    if loss is None or isinstance(loss, str):
        return loss
    if isinstance(loss, (list, tuple)):
        return [_serialize_loss(item) for item in loss]
    if isinstance(loss, Mapping) and "class_name" not in loss:
        return {str(key): _serialize_loss(item) for key, item in loss.items()}
    if isinstance(loss, Mapping):
        return dict(loss)
    import keras

    try:
        data = keras.losses.serialize(loss)
        json.dumps(data)
    except Exception as exc:
        raise TypeError(
            f"cannot pass loss {loss!r} to the measuring process ({exc}); "
            "give it by name (e.g. 'mean_squared_error') or as a registered Keras Loss"
        ) from exc
    return data


def _child_env(extra: Mapping[str, str] | None, device: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if extra:
        env.update({str(k): str(v) for k, v in extra.items()})
    env["TF_CPU_ALLOCATOR_USE_BFC"] = "true"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # The child imports the same jupyter_tfmem as this process and the modules
    # next to the user's working directory, but nothing else this process may
    # have pushed onto sys.path at run time.
    paths = [os.getcwd()]
    if _PACKAGE_ROOT.name not in ("site-packages", "dist-packages"):
        # Running from a source tree: the child must import this very copy.
        paths.insert(0, str(_PACKAGE_ROOT))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if device is not None and device.upper().startswith("CPU"):
        env["CUDA_VISIBLE_DEVICES"] = "-1"
    return env


def _run_worker(
    spec: dict[str, Any], workdir: str, index: int, timeout: float | None, env: dict[str, str]
) -> dict[str, Any]:
    spec_path = os.path.join(workdir, f"spec{index}.json")
    result_path = os.path.join(workdir, f"result{index}.json")
    with open(spec_path, "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    cmd = [sys.executable, "-m", "jupyter_tfmem._measure_worker", spec_path, result_path]
    try:
        proc = subprocess.run(
            cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(
            f"measuring run {index + 1} did not finish within {timeout:g} s; "
            "pass a larger timeout= or a smaller batch_size"
        ) from exc
    tail = (proc.stderr or "")[-_STDERR_TAIL_CHARS:]
    result: dict[str, Any] = {}
    if os.path.exists(result_path):
        with open(result_path, encoding="utf-8") as fh:
            result = json.load(fh)
    if "error" in result:
        message = f"{result['error']}: {result['message']}"
        if result.get("phase") == "load" and spec["source"]["kind"] == "file":
            raise TypeError(
                f"the measuring process could not load the saved copy of the model "
                f"({message}). Register custom classes with "
                "@keras.saving.register_keras_serializable in an importable module and "
                "pass imports=['that_module'], or use measure_builder('module:function', ...)"
            )
        raise RuntimeError(
            f"measuring run {index + 1} failed while in phase {result.get('phase')!r}: "
            f"{message}\nEnd of its stderr:\n{tail}"
        )
    if proc.returncode != 0 or "peak_bytes" not in result:
        raise RuntimeError(
            f"measuring run {index + 1} crashed (exit code {proc.returncode}). "
            f"End of its stderr:\n{tail}"
        )
    return result


def calibration_pool_mib(peak_bytes: int) -> int:
    """Pool (MiB) for the overhead calibration run: the largest peak seen plus headroom.

    Large enough that the run's peak (which moves a few percent between runs)
    fits, small enough to fit on the card next to the overhead being measured.
    """
    return math.ceil(peak_bytes * CALIBRATION_HEADROOM / 2**20) + CALIBRATION_EXTRA_MIB


def _calibrate(
    spec: dict[str, Any],
    peaks: Sequence[int],
    timeout: float | None,
    env: dict[str, str],
    workdir: str,
    notes: list[str],
) -> tuple[int | None, int | None]:
    """One more fresh process with a fixed pool; the driver's figure for it."""
    calib = dict(spec, gpu_pool_mib=calibration_pool_mib(max(peaks)))
    try:
        result = _run_worker(calib, workdir, len(peaks), timeout, env)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        notes.append(f"device overhead not calibrated: the fixed-pool run failed ({first})")
        return None, None
    used, pool = result.get("device_used_bytes"), result.get("device_pool_bytes")
    if used is None or pool is None:
        reason = result.get("device_used_source") or "the driver reported nothing"
        notes.append(f"device overhead not calibrated: {reason}")
        return None, None
    notes.append(
        f"device overhead calibrated: driver ({result.get('device_used_source')}) reports "
        f"{used} bytes for a process whose TF pool was fixed at {pool} bytes"
    )
    return int(used), int(pool)


def _collect(
    spec: dict[str, Any],
    runs: int,
    timeout: float | None,
    env: Mapping[str, str] | None,
    workdir: str,
    calibrate: bool = True,
) -> Measurement:
    child_env = _child_env(env, spec.get("device"))
    results = [_run_worker(spec, workdir, i, timeout, child_env) for i in range(runs)]
    peaks = tuple(r["peak_bytes"] for r in results)
    notes: list[str] = []
    for result in results:
        notes.extend(n for n in result["notes"] if n not in notes)
    notes.append(
        f"{runs} fresh process(es), BFC allocator, peak of one step that applied an update"
        " after a warm-up that applied one"
    )
    device_used = device_pool = None
    if calibrate and str(results[0]["device"]).upper().lstrip("/").startswith(
        ("GPU", "DEVICE:GPU")
    ):
        device_used, device_pool = _calibrate(
            dict(spec, device=results[0]["device"]), peaks, timeout, child_env, workdir, notes
        )
    return Measurement(
        peak_bytes=round(statistics.median(peaks)),
        runs=peaks,
        current_before=int(statistics.median_low([r["current_before"] for r in results])),
        device=results[0]["device"],
        batch_size=int(spec["batch_size"]),
        training=bool(spec["training"]),
        notes=tuple(notes),
        seconds=tuple(round(r["seconds"], 3) for r in results),
        tf_version=results[0]["tf_version"],
        device_used_bytes=device_used,
        device_pool_bytes=device_pool,
    )


def _base_spec(
    batch_size: int,
    training: bool,
    optimizer: Any,
    loss: Any,
    precision: str | None,
    device: str | None,
    model: Any = None,
) -> dict[str, Any]:
    if precision is not None and not isinstance(precision, str):
        raise TypeError(
            f"precision must be a dtype policy name such as 'mixed_float16', "
            f"not {type(precision).__name__}"
        )
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'CPU:0' or 'GPU:0', not {device!r}")
    return {
        "batch_size": batch_size,
        "training": bool(training),
        "optimizer": _serialize_optimizer(optimizer, model) if training else None,
        "loss": _serialize_loss(loss) if training else None,
        "precision": precision,
        "device": device,
    }


def _json_shapes(shapes: Any, what: str = "input") -> list[list[int]] | None:
    """``normalize_shapes``' answer as JSON lists, for the worker's spec."""
    out = normalize_shapes(shapes, None, what)
    return None if out is None else [list(s) for s in out]


def _check_model(model: Any, input_shapes: list[list[int]] | None) -> None:
    try:
        import keras
    except ImportError as exc:  # pragma: no cover - keras is a dependency
        raise TypeError("measure() needs Keras installed") from exc
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"measure() takes a keras.Model, not {type(model).__name__}; "
            "for a saved file use keras.models.load_model(path) first"
        )
    if not getattr(model, "built", False):
        raise ValueError(
            "the model is not built yet: call it on a batch or build it "
            "with keras.Input shapes before measuring"
        )
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        inputs = None
    if input_shapes is not None:
        if inputs and len(inputs) != len(input_shapes):
            raise ValueError(
                f"the model has {len(inputs)} inputs but "
                f"{len(input_shapes)} input shapes were given"
            )
        return
    for tensor in inputs or ():
        if any(dim is None for dim in tuple(tensor.shape)[1:]):
            raise ValueError(
                f"input {getattr(tensor, 'name', '')!r} has an unknown dimension "
                f"{tuple(tensor.shape)}; pass input_shapes=[(...)] with every dimension "
                "but the batch (e.g. a sequence length)"
            )


def _save_copy(model: Any, path: str) -> None:
    try:
        model.save(path)
    except Exception as exc:
        raise TypeError(
            f"cannot copy {type(model).__name__} into a fresh process: saving it failed "
            f"({type(exc).__name__}: {exc}). Give custom layers get_config() and "
            "@keras.saving.register_keras_serializable in an importable module and pass "
            "imports=['that_module'], or measure a builder function with "
            "measure_builder('module:function', ...)"
        ) from exc


def measure(
    model: Any,
    batch_size: int,
    *,
    training: bool = True,
    optimizer: Any = None,
    loss: Any = None,
    precision: str | None = None,
    runs: int = 3,
    device: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    input_shapes: Any = None,
    target_shapes: Any = None,
    imports: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    calibrate: bool = True,
) -> Measurement:
    """Measure one training (or inference) step of a copy of ``model`` in fresh processes.

    The model is saved to a temporary ``.keras`` file (deleted afterwards) and
    never run here, so its weights, optimizer and compile state stay as they
    were.  A compiled model trains with its own compile config unless
    ``optimizer``/``loss`` override it; an uncompiled one with
    ``DEFAULT_OPTIMIZER`` and ``DEFAULT_LOSS`` (the estimator's defaults too).
    ``input_shapes`` (without the batch dimension, one per input) fills in
    unknown dimensions, and ``target_shapes`` gives targets not shaped like
    the outputs (CTC's label sequences), as in ``estimate``.
    ``imports`` names modules the child must import to load custom classes;
    ``env`` adds environment variables for the child (e.g. oneDNN switches).
    On a GPU, ``calibrate`` runs one more process with a fixed allocator pool
    and records what the driver counts for it (``device_used_bytes``), so that
    ``calibrate_overhead`` can replace the documented overhead constants with
    this card's own figure; pass ``False`` to skip that run.  On a CPU it does nothing.
    """
    _check_common(batch_size, runs, timeout)
    shapes = _json_shapes(input_shapes)
    _check_model(model, shapes)
    stateful_batch(model, int(batch_size))
    compiled_with = getattr(model, "optimizer", None) if getattr(model, "compiled", False) else None
    unloadable = training and picks_by_function(compiled_with)
    if unloadable and optimizer is None:
        optimizer = compiled_with
    spec = _base_spec(batch_size, training, optimizer, loss, precision, device, model)
    spec["imports"] = [str(m) for m in imports]
    spec["input_shapes"] = shapes
    spec["target_shapes"] = _json_shapes(target_shapes, "target")
    with tempfile.TemporaryDirectory(prefix="tfmem-measure-") as workdir:
        path = os.path.join(workdir, "model.keras")
        _save_copy(model, path)
        spec["source"] = {
            "kind": "file",
            "path": path,
            "compiled": bool(getattr(model, "compiled", False)),
            "policy": _policy_name(model),
            # a saved MultiOptimizer's function cannot be loaded in the child
            "replace_saved_optimizer": unloadable,
        }
        return _collect(spec, runs, timeout, env, workdir, calibrate)


def _policy_name(model: Any) -> str | None:
    """The dtype policy the model itself was built under (``None`` if it has none)."""
    return getattr(getattr(model, "dtype_policy", None), "name", None)


def measure_builder(
    builder: str,
    batch_size: int,
    *,
    training: bool = True,
    optimizer: Any = None,
    loss: Any = None,
    precision: str | None = None,
    runs: int = 3,
    device: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    calibrate: bool = True,
    target_shapes: Any = None,
) -> Measurement:
    """Measure a model that each fresh process builds itself, so nothing is saved.

    ``builder`` is a zoo case name (see ``jupyter_tfmem.zoo``) or
    ``"module:function"`` naming a function that returns a built ``keras.Model``.
    The case's own batch size and compile settings are not applied here: pass
    them, as ``benchmarks/accuracy.py`` does.  ``calibrate`` and
    ``target_shapes`` as in ``measure``.
    """
    if not isinstance(builder, str) or not builder:
        raise TypeError("builder must be a zoo case name or a 'module:function' string")
    _check_common(batch_size, runs, timeout)
    if ":" in builder:
        source = {"kind": "callable", "path": builder}
    else:
        from .zoo import get_case

        get_case(builder)  # ValueError with the valid names
        source = {"kind": "zoo", "name": builder}
    spec = _base_spec(batch_size, training, optimizer, loss, precision, device)
    spec["target_shapes"] = _json_shapes(target_shapes, "target")
    spec["source"] = source
    with tempfile.TemporaryDirectory(prefix="tfmem-measure-") as workdir:
        return _collect(spec, runs, timeout, env, workdir, calibrate)
