"""Load a saved model from disk for estimation, with errors a user can act on.

What is supported, and why:

- ``.keras`` archives (Keras 3's own format) and legacy ``.h5`` / ``.hdf5``
  files: loaded with ``keras.saving.load_model`` in safe mode, so a file
  cannot run Python code (``Lambda`` layers are refused, not executed).
- A TensorFlow SavedModel directory: Keras 3 cannot rebuild a model from it,
  only call it through ``keras.layers.TFSMLayer``.  The graph it holds is the
  inference graph, so it is estimated **for inference only**, as one opaque
  layer (no per-layer breakdown), and only when its endpoint takes a single
  tensor.  Training needs the ``.keras`` file.
- Custom layers, losses or models cannot be loaded without the code that
  defines them; the error says to load the model in Python with that code and
  call :func:`jupyter_tfmem.estimate` there.

The format is decided from the path and the file's first bytes before
TensorFlow is imported, so a wrong path fails in milliseconds.
"""

from __future__ import annotations

import dataclasses
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .loss_configs import losses_from_spec

#: Human-readable list used in error messages and the CLI's help.
SUPPORTED_FORMATS = ".keras file, .h5/.hdf5 file, or a TensorFlow SavedModel directory"

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
# HDF5 allows a user block before the superblock: the signature then sits at
# 512, 1024, 2048, ... bytes.
_HDF5_OFFSETS = (0, 512, 1024, 2048, 4096, 8192)

FORMAT_KERAS = "keras"
FORMAT_H5 = "h5"
FORMAT_SAVEDMODEL = "savedmodel"


class ModelLoadError(ValueError):
    """A model file that cannot be loaded; the message says what to do instead."""


@dataclasses.dataclass(frozen=True)
class LoadedModel:
    """A model read from disk, with what the reader needs to know about how."""

    model: Any
    path: str
    format: str
    inference_only: bool = False
    notes: tuple[str, ...] = ()


def detect_format(path: str | os.PathLike[str]) -> str:
    """Name the format of ``path`` from its name and first bytes, without TensorFlow."""
    p = Path(path)
    try:
        is_dir = p.is_dir()
        exists = is_dir or p.exists()
    except OSError as exc:  # e.g. a path too long for the file system
        raise ModelLoadError(f"{p}: cannot access it ({exc.strerror or exc})") from None
    if not exists:
        raise ModelLoadError(f"{p}: no such file or directory")
    if is_dir:
        if (p / "saved_model.pb").is_file() or (p / "saved_model.pbtxt").is_file():
            return FORMAT_SAVEDMODEL
        raise ModelLoadError(
            f"{p} is a directory but not a TensorFlow SavedModel (no saved_model.pb in it); "
            f"give a {SUPPORTED_FORMATS}"
        )
    head = _read_head(p)
    is_zip = head.startswith(_ZIP_MAGIC)
    is_hdf5 = _looks_like_hdf5(p, head)
    suffix = p.suffix.lower()
    if suffix == ".keras":
        if is_zip and zipfile.is_zipfile(p):  # the magic, then the central directory
            return FORMAT_KERAS
        if is_hdf5:
            raise ModelLoadError(f"{p} is an HDF5 file, not a .keras archive: rename it to .h5")
        raise ModelLoadError(
            f"{p} is not a valid .keras archive (not a zip file): it is corrupt or truncated, "
            "or was not written by model.save()"
        )
    if suffix in (".h5", ".hdf5"):
        if is_hdf5:
            return FORMAT_H5
        if is_zip:
            raise ModelLoadError(f"{p} is a .keras archive, not an HDF5 file: rename it to .keras")
        raise ModelLoadError(
            f"{p} is not a valid HDF5 file: it is corrupt or truncated, "
            "or was not written by model.save()"
        )
    if p.name in ("saved_model.pb", "saved_model.pbtxt"):
        raise ModelLoadError(f"{p}: give the SavedModel's directory ({p.parent}), not the file")
    if is_zip:
        raise ModelLoadError(f"{p} looks like a .keras archive: rename it to end in .keras")
    if is_hdf5:
        raise ModelLoadError(f"{p} looks like an HDF5 model: rename it to end in .h5")
    raise ModelLoadError(f"{p}: unsupported model format; give a {SUPPORTED_FORMATS}")


def load_model(
    path: str | os.PathLike[str],
    *,
    training: bool = True,
    input_shapes: Sequence[tuple[int, ...]] | None = None,
) -> LoadedModel:
    """Load a model for estimation; raise :class:`ModelLoadError` with advice on failure.

    ``training`` matters for SavedModels, which can only be estimated for
    inference.  ``input_shapes`` (without the batch dimension) fill a
    SavedModel's dynamic dimensions; Keras models receive them at estimation.
    """
    fmt = detect_format(path)
    if fmt == FORMAT_SAVEDMODEL:
        return _load_savedmodel(Path(path), training=training, input_shapes=input_shapes)
    return _load_keras_file(Path(path), fmt, training=training)


# -- Keras files ---------------------------------------------------------------


def _load_keras_file(path: Path, fmt: str, *, training: bool) -> LoadedModel:
    import keras

    notes: list[str] = []
    try:
        model = keras.saving.load_model(path, compile=True, safe_mode=True)
    except Exception as exc:  # Keras raises many types for one bad file
        # The architecture may be fine while the compile settings are not
        # (a custom loss, or Keras 3.15 failing on its own "mse" in .h5
        # files): load without them and say so, rather than give up.
        try:
            model = keras.saving.load_model(path, compile=False, safe_mode=True)
        except Exception:
            raise ModelLoadError(_explain_keras_failure(path, fmt, exc)) from None
        notes.append(_recompile(model, path, fmt, exc))
    if not isinstance(model, keras.Model):
        raise ModelLoadError(
            f"{path} holds a {type(model).__name__}, not a Keras model; "
            "save the model itself with model.save()"
        )
    if training and not model.compiled and not notes:
        notes.append(f"{path.name} holds no compile settings (optimizer, loss)")
    return LoadedModel(model=model, path=str(path), format=fmt, notes=tuple(notes))


def _recompile(model: Any, path: Path, fmt: str, exc: BaseException) -> str:
    """Compile ``model`` from an HDF5 file's training config; return a note saying how."""
    import json

    import keras

    failed = f"Keras could not restore the compile settings in {path.name} ({_first_line(exc)})"
    if fmt != FORMAT_H5:
        return failed
    try:
        import h5py

        with h5py.File(path, "r") as fh:
            raw = fh.attrs.get("training_config")
        if raw is None:
            return failed
        config = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        optimizer = keras.optimizers.deserialize(config["optimizer_config"])
        loss = losses_from_spec(config.get("loss"))
        model.compile(optimizer=optimizer, loss=loss)
    except Exception:  # whatever is in the file, fall back to an uncompiled model
        return failed
    return f"compiled from the file's training config ({type(optimizer).__name__})"


def _explain_keras_failure(path: Path, fmt: str, exc: BaseException) -> str:
    text = _first_line(exc)
    lowered = str(exc).lower()
    first_sentence = text.split(". ")[0].rstrip(".")
    if "lambda" in lowered and ("safe_mode" in lowered or "unsafe" in lowered):
        return (
            f"{path} contains a Lambda layer, whose Python code is not run from a file "
            "for safety; if you trust the file, load it in Python with "
            "keras.saving.load_model(path, safe_mode=False) and call jupyter_tfmem.estimate"
        )
    custom_markers = ("could not locate", "unknown layer", "custom_objects", "register_keras")
    if any(marker in lowered for marker in custom_markers):
        return (
            f"{path} uses a custom class or function that is not part of Keras "
            f"({first_sentence}); "
            "the command line cannot load it without your code: load the model in Python "
            "with custom_objects=... (or after importing the module that registers them) "
            "and call jupyter_tfmem.estimate(model, batch_size)"
        )
    if "no model config" in lowered or ("weights" in lowered and "config" in lowered):
        return (
            f"{path} holds weights only, not a model's architecture; save the whole model "
            "with model.save('model.keras')"
        )
    kind = "a .keras archive" if fmt == FORMAT_KERAS else "an HDF5 model file"
    return f"could not read {path} as {kind}: it is corrupt or incomplete ({text})"


# -- SavedModel ------------------------------------------------------------------


def _load_savedmodel(
    path: Path, *, training: bool, input_shapes: Sequence[tuple[int, ...]] | None
) -> LoadedModel:
    if training:
        raise ModelLoadError(
            f"{path} is a SavedModel, which Keras 3 can only run for inference "
            "(keras.layers.TFSMLayer): estimate it with --inference, or estimate training "
            "from the .keras file (model.save('model.keras'))"
        )
    import keras

    layer = None
    errors: list[str] = []
    for endpoint in ("serve", "serving_default"):
        try:
            layer = keras.layers.TFSMLayer(
                str(path.resolve()), call_endpoint=endpoint, trainable=False
            )
            break
        except ValueError as exc:
            errors.append(_first_line(exc))
        except Exception as exc:  # tf.saved_model.load fails in many ways on bad input
            raise ModelLoadError(
                f"could not read the SavedModel in {path}: it is corrupt or incomplete "
                f"({_first_line(exc)})"
            ) from None
    if layer is None:
        raise ModelLoadError(
            f"{path} is a SavedModel without a 'serve' or 'serving_default' endpoint, so "
            "Keras cannot call it; export it with model.export(path) or save it as .keras"
        )
    specs = _endpoint_input_specs(layer.call_endpoint_fn)
    if len(specs) != 1:
        raise ModelLoadError(
            f"{path}: the SavedModel's endpoint takes {len(specs)} inputs; only single-input "
            "SavedModels can be estimated from the command line; save the model as .keras"
        )
    spec = specs[0]
    shape = _resolve_shape(path, spec.shape, input_shapes)
    inputs = keras.Input(shape=shape, dtype=spec.dtype.name, name="input")
    outputs = layer(inputs)
    model = keras.Model(inputs, outputs, name=path.name or "saved_model")
    notes = (
        "SavedModel run through keras.layers.TFSMLayer: inference only, "
        "one opaque layer (no per-layer breakdown)",
    )
    return LoadedModel(
        model=model, path=str(path), format=FORMAT_SAVEDMODEL, inference_only=True, notes=notes
    )


def _endpoint_input_specs(fn: Any) -> list[Any]:
    import tensorflow as tf

    concrete = getattr(fn, "concrete_functions", None)
    concrete_fn = concrete[0] if concrete else fn
    args, kwargs = concrete_fn.structured_input_signature
    return list(tf.nest.flatten((args, kwargs)))


def _resolve_shape(
    path: Path, full_shape: Any, input_shapes: Sequence[tuple[int, ...]] | None
) -> tuple[int, ...]:
    dims = list(full_shape)[1:]  # drop the batch dimension
    if input_shapes:
        if len(input_shapes) != 1:
            raise ModelLoadError(
                f"{path}: the SavedModel has one input but {len(input_shapes)} input shapes "
                "were given"
            )
        given = tuple(input_shapes[0])
        if len(given) != len(dims) or any(
            d is not None and d != g for d, g in zip(dims, given, strict=True)
        ):
            raise ModelLoadError(
                f"{path}: input shape ({_fmt_shape(given)}) does not match the SavedModel's "
                f"input (batch, {_fmt_shape(dims)})"
            )
        return given
    if any(d is None for d in dims):
        raise ModelLoadError(
            f"{path}: the SavedModel's input (batch, {_fmt_shape(dims)}) has dynamic "
            "dimensions; give them with --input-shape, e.g. --input-shape "
            + ",".join("128" if d is None else str(d) for d in dims)
        )
    return tuple(int(d) for d in dims)


# -- helpers ---------------------------------------------------------------------


def _read_head(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(8)
    except PermissionError:
        raise ModelLoadError(f"{path}: permission denied") from None
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _looks_like_hdf5(path: Path, head: bytes) -> bool:
    if head.startswith(_HDF5_MAGIC):
        return True
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            for offset in _HDF5_OFFSETS[1:]:
                if offset + 8 > size:
                    break
                fh.seek(offset)
                if fh.read(8) == _HDF5_MAGIC:
                    return True
    except OSError:
        return False
    return False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0].strip()
    return line if len(line) <= 300 else line[:297] + "..."


def _fmt_shape(dims: Sequence[Any]) -> str:
    return ", ".join("None" if d is None else str(d) for d in dims)
