"""``%tfmem`` and ``%%tfmem``: the notebook front door.

Thin on purpose: parse and check the flags (so a typo fails in milliseconds,
before any tracing), find the model(s), call ``jupyter_tfmem.estimate`` (and
``measure``), and display a ``FootprintPanel`` whose output also carries the
static renderings.  Every user mistake becomes a ``UsageError``: IPython shows
its one-line message without a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import weakref
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

import jupyter_tfmem as api

from .estimator import OPTIMIZER_NAMES, PRECISION_POLICIES
from .gpus import DEFAULT_GPU_NAME, Gpu, default_gpu, parse_gpu
from .panel import FootprintPanel
from .shapes import default_batch, parse_shape
from .views.text import escape_markdown, measurement_sentence

DEFAULT_BATCH_SIZE = 32

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


def _batch_size(text: str) -> int:
    """argparse type for --batch: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"the batch size must be a whole number such as 32, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"the batch size must be at least 1, got {value}")
    return value


def _replicas(text: str) -> int:
    """argparse type for --replicas: a whole number of devices, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--replicas must be a whole number of GPUs such as 2, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--replicas must be at least 1, got {value}")
    return value


def _unquote(text: str | None) -> str | None:
    """IPython splits magic lines keeping quotes (so ``models["a"]`` survives); drop them here."""
    if text is None:
        return None
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _is_keras_model(obj: Any) -> bool:
    keras = sys.modules.get("keras")  # not imported yet: nothing can be a Keras model
    return keras is not None and isinstance(obj, keras.Model)


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    key = value.lower()
    if key in choices:
        return key
    hint = difflib.get_close_matches(key, choices, n=1)
    did_you_mean = f" Did you mean {hint[0]!r}?" if hint else ""
    listing = ", ".join(choices)
    raise UsageError(f"unknown {what} {value!r}.{did_you_mean} Choose one of: {listing}.")


#: Settings that exist only when the user gave them, passed to measure() too.
_SHAPE_KEYS = ("input_shapes", "target_shapes")


def _given(settings: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: settings[key] for key in keys if key in settings}


def _extra_kwargs(settings: dict[str, Any]) -> dict[str, Any]:
    """Keywords passed to estimate() only when the user gave them."""
    return _given(settings, ("replicas", "device", *_SHAPE_KEYS))


def _shapes(texts: list[str] | None, flag: str) -> list[tuple[int, ...]] | None:
    """The shapes given with ``flag`` (repeated once per tensor), or a UsageError."""
    if not texts:
        return None
    try:
        return [parse_shape(_unquote(text) or "", flag) for text in texts]
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@magics_class
class TfmemMagics(Magics):
    """How much GPU memory a Keras model needs, in a notebook."""

    @line_cell_magic
    @magic_arguments()
    @argument(
        "model",
        nargs="*",
        help='The model: a variable or an expression such as models["big"] '
        "(line magic only; %%%%tfmem estimates every model its cell assigns).",
    )
    @argument(
        "-b",
        "--batch",
        type=_batch_size,
        default=None,
        help=f"Batch size of the step (default {DEFAULT_BATCH_SIZE}, or the batch a "
        "stateful model's state fixes).",
    )
    @argument(
        "-o",
        "--optimizer",
        default=None,
        help="Optimizer to estimate training with: "
        + ", ".join(OPTIMIZER_NAMES)
        + " (default: the compiled one, else adam).",
    )
    @argument(
        "-p",
        "--precision",
        default=None,
        help="Keras dtype policy: "
        + ", ".join(PRECISION_POLICIES)
        + " (default: the model's own).",
    )
    @argument(
        "--inference",
        action="store_true",
        help="Estimate an inference step (predict) instead of a training step.",
    )
    @argument(
        "-g",
        "--gpu",
        default=None,
        help="Card to check against: a name (T4, L4, RTX3090, RTX4090, V100-16, V100-32, "
        "A100-40, A100-80, H100, H200, local) or a size (24, 24GB, 16GiB; GB means GiB). "
        f"Default: the local GPU if TensorFlow sees one, else {DEFAULT_GPU_NAME}.",
    )
    @argument(
        "--replicas",
        type=_replicas,
        default=1,
        help="Data-parallel training over this many GPUs (MirroredStrategy): --batch is the "
        "global batch and every figure is one device's (default 1).",
    )
    @argument(
        "--device",
        help="GPU or CPU: the device whose executor order to follow (default: the one TF "
        "would use here, a GPU if it sees one).",
    )
    @argument(
        "--input-shape",
        action="append",
        metavar="DIMS",
        help="An input's shape without the batch, for models with dynamic sizes: 128 "
        "(a sequence length) or 224,224,3; once per input, in order.",
    )
    @argument(
        "--target-shape",
        action="append",
        metavar="DIMS",
        help="A target's shape without the batch, for a loss whose targets are not shaped "
        "like the outputs: 20 (CTC's longest label); once per output, in order.",
    )
    @argument(
        "--markdown",
        action="store_true",
        help="Print the per-layer table as Markdown (to copy) instead of showing the panel.",
    )
    @argument(
        "--measure",
        action="store_true",
        help="Also run real steps in fresh processes (jupyter_tfmem.measure) and show "
        "estimate vs measured. Takes seconds to minutes.",
    )
    @argument("-h", "--help", action="store_true", help="Show this help and do nothing else.")
    def tfmem(self, line: str = "", cell: str | None = None) -> None:
        """Estimate the GPU memory of a Keras model's training (or inference) step.

        %tfmem MODEL [flags]  estimates one model; %%tfmem [flags] runs the
        cell, then estimates each Keras model the cell assigned to a variable.
        """
        try:
            args = parse_argstring(self.tfmem, line)
        except ValueError as exc:  # e.g. an unclosed quote in the line
            raise UsageError(f"cannot read the flags: {exc}. {self._usage()}") from None
        if args.help:
            # IPython formats magic help as reST ("::" + indented block) for %tfmem?
            print(self.tfmem.parser.format_help().removeprefix("::").strip("\n"))
            return None
        optimizer = _unquote(args.optimizer)
        if optimizer is not None:
            optimizer = _choice(optimizer, OPTIMIZER_NAMES, "optimizer")
        precision = _unquote(args.precision)
        if precision is not None:
            precision = _choice(precision, PRECISION_POLICIES, "precision policy")
        gpu = self._gpu(_unquote(args.gpu))
        if args.measure and args.replicas > 1:
            raise UsageError(
                "--measure runs one device and cannot check a data-parallel estimate; "
                "drop --replicas or --measure."
            )
        settings = {
            "batch_size": args.batch,
            "training": not args.inference,
            "optimizer": optimizer,
            "precision": precision,
        }
        if args.replicas > 1:  # only then, so single-device calls stay as they were
            settings["replicas"] = args.replicas
        for key, texts, flag in (
            ("input_shapes", args.input_shape, "--input-shape"),
            ("target_shapes", args.target_shape, "--target-shape"),
        ):
            given = _shapes(texts, flag)
            if given is not None:
                settings[key] = given
        device = _unquote(args.device)
        if device is not None:
            settings["device"] = _choice(device, ("gpu", "cpu"), "device").upper()
        expr = " ".join(args.model).strip()

        if cell is None:
            if not expr:
                raise UsageError(f"name the model to estimate. {self._usage()}")
            model = self._evaluate(expr)
            self._report(expr, model, settings, gpu, args)
            return None

        if expr:
            raise UsageError(
                f"%%tfmem takes no model name (got {expr!r}): it estimates every Keras model "
                "the cell assigns. To estimate one existing model, use %tfmem MODEL on a line."
            )
        before = self._snapshot()
        result = self.shell.run_cell(cell)
        if not result.success:
            return None  # IPython has shown the cell's error already
        models = self._new_models(before)
        if not models:
            print(
                "%%tfmem: this cell assigned no Keras model to a variable, so there is "
                "nothing to estimate. Assign it, e.g. model = keras.Sequential([...])."
            )
            return None
        for name, model in models:
            self._report(name, model, settings, gpu, args, heading=True)
        return None

    # -- steps ---------------------------------------------------------------
    def _report(
        self,
        label: str,
        model: Any,
        settings: dict[str, Any],
        gpu: Gpu,
        args: Any,
        heading: bool = False,
    ) -> None:
        if settings["batch_size"] is None:
            replicas = settings.get("replicas", 1)
            batch = DEFAULT_BATCH_SIZE
            if _is_keras_model(model):  # else estimate() says what it needs
                batch = default_batch(model, DEFAULT_BATCH_SIZE, replicas)
            settings = {**settings, "batch_size": batch}
        fp = self._estimate(label, model, settings)
        measurement = self._measure(label, model, settings) if args.measure else None
        if args.markdown:
            if heading:  # several tables from one cell: say which is which
                print(f"**{escape_markdown(label)}**\n")
            print(fp.to_markdown())
            if measurement is not None:
                print()
                print(escape_markdown(measurement_sentence(fp, measurement)))
            return

        def reestimate(*, optimizer: str | None, precision: str, training: bool) -> Any:
            return api.estimate(
                model,
                settings["batch_size"],
                training=training,
                optimizer=optimizer,
                precision=precision,
                **_extra_kwargs(settings),
            )

        display(FootprintPanel(fp, reestimate, gpu=gpu, title=label, measurement=measurement))

    def _estimate(self, label: str, model: Any, settings: dict[str, Any]) -> Any:
        try:
            return api.estimate(
                model,
                settings["batch_size"],
                training=settings["training"],
                optimizer=settings["optimizer"],
                precision=settings["precision"],
                **_extra_kwargs(settings),
            )
        except (ValueError, TypeError) as exc:
            raise UsageError(f"cannot estimate {label}: {exc}") from None

    def _measure(self, label: str, model: Any, settings: dict[str, Any]) -> Any:
        try:
            return api.measure(
                model,
                settings["batch_size"],
                training=settings["training"],
                optimizer=settings["optimizer"],
                precision=settings["precision"],
                **_given(settings, _SHAPE_KEYS),
            )
        except (ValueError, TypeError, RuntimeError) as exc:
            raise UsageError(f"cannot measure {label}: {exc}") from None

    def _gpu(self, spec: str | None) -> Gpu:
        if spec is None:
            return default_gpu()
        try:
            return parse_gpu(spec)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"--gpu: {exc}") from None

    def _evaluate(self, expr: str) -> Any:
        try:
            obj = self.shell.ev(expr)
        except NameError as exc:
            raise UsageError(f"{exc}. {self._models_hint()}") from None
        except SyntaxError as exc:
            raise UsageError(
                f"{expr!r} is not a Python expression ({exc.msg}). {self._usage()}"
            ) from None
        except Exception as exc:
            raise UsageError(f"evaluating {expr!r} failed: {type(exc).__name__}: {exc}") from None
        if not _is_keras_model(obj):
            raise UsageError(
                f"{expr!r} is of type {type(obj).__name__}, not a Keras model. "
                + self._models_hint()
            )
        return obj

    # -- finding the models a cell assigned -----------------------------------
    def _user_models(self) -> list[tuple[str, Any]]:
        return [
            (name, value)
            for name, value in list(self.shell.user_ns.items())
            if not name.startswith("_") and name not in _IPYTHON_NAMES and _is_keras_model(value)
        ]

    def _snapshot(self) -> dict[str, Any]:
        """What each user variable held before the cell, without keeping old models alive."""
        snap: dict[str, Any] = {}
        for name, value in list(self.shell.user_ns.items()):
            try:
                snap[name] = weakref.ref(value)
            except TypeError:  # ints, strings...: none of them is a model
                snap[name] = None
        return snap

    def _new_models(self, before: dict[str, Any]) -> list[tuple[str, Any]]:
        out = []
        for name, value in self._user_models():
            ref = before.get(name)
            if name not in before or ref is None or ref() is not value:
                out.append((name, value))
        return out

    def _models_hint(self) -> str:
        names = [name for name, _ in self._user_models()]
        if not names:
            return "No Keras model is defined in this notebook yet."
        return "Keras models defined here: " + ", ".join(names) + "."

    def _usage(self) -> str:
        return "Usage: %tfmem MODEL [--batch N] [--gpu A100-80] ...; see %tfmem --help."


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%tfmem`` and ``%%tfmem`` (``%load_ext jupyter_tfmem``)."""
    from .engine import helper_process

    ipython.register_magics(TfmemMagics)
    helper_process.start()  # ready by the first %tfmem (engine/helper_process.py)
