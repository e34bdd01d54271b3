"""``tfmem``: the footprint of a saved model (or the bundled demo) from a shell.

Arguments are checked before TensorFlow is imported wherever that is
possible, so a typo costs milliseconds, not the seconds TF takes to load;
``tfmem --help`` never imports it.  Every failure ends in one line on stderr
and a non-zero exit status (2: the command line is wrong, 1: the model or the
estimate failed); TensorFlow's own log lines are hidden unless ``--verbose``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

from .estimator import OPTIMIZER_NAMES
from .estimator import PRECISION_POLICIES as PRECISIONS
from .shapes import parse_shape

PROG = "tfmem"
DEMO = "demo"

#: the batch estimated when --batch is not given (a stateful model's own instead)
DEFAULT_BATCH = 32
#: Largest batch size accepted: beyond it no model fits on any card, and a
#: larger number is far more likely a typo (an extra zero) than a plan.
MAX_BATCH = 2**24
#: Most devices ``--replicas`` accepts (a larger number is more likely a typo).
MAX_REPLICAS = 4096
#: Most device overhead ``--overhead-mib`` accepts: no card has more memory.
MAX_OVERHEAD_MIB = 2**20

#: Optimizer names the estimator accepts (one list, in the core), so a typo is
#: caught before TF loads.
OPTIMIZERS: tuple[str, ...] = OPTIMIZER_NAMES

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """The command line is wrong (exit status 2)."""


class RunError(Exception):
    """The command line is fine but the work failed (exit status 1)."""


# -- argument types ----------------------------------------------------------------


def parse_batch_size(text: str) -> int:
    """A batch size: a positive whole number no larger than ``MAX_BATCH``."""
    cleaned = text.strip().replace("_", "")
    if not re.fullmatch(r"[+-]?\d+", cleaned):
        raise argparse.ArgumentTypeError(f"--batch must be a whole number such as 32, got {text!r}")
    value = int(cleaned)
    if value < 1:
        raise argparse.ArgumentTypeError(f"--batch must be at least 1, got {value}")
    if value > MAX_BATCH:
        raise argparse.ArgumentTypeError(
            f"--batch {value} is too large: the limit is {MAX_BATCH:,} (2**24); "
            "no card holds more, and a larger number is usually a typo"
        )
    return value


def _whole_number(text: str, flag: str, low: int, high: int, example: str) -> int:
    cleaned = text.strip().replace("_", "")
    if not re.fullmatch(r"[+-]?\d+", cleaned):
        raise argparse.ArgumentTypeError(
            f"{flag} must be a whole number such as {example}, got {text!r}"
        )
    value = int(cleaned)
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{flag} must be between {low} and {high:,}, got {value}")
    return value


def parse_replicas(text: str) -> int:
    """Devices the global batch is split over (data parallelism): 1 to ``MAX_REPLICAS``."""
    return _whole_number(text, "--replicas", 1, MAX_REPLICAS, "2")


def parse_overhead_mib(text: str) -> int:
    """A device overhead in MiB, e.g. from ``calibrate_overhead`` on the user's GPU."""
    return _whole_number(text, "--overhead-mib", 0, MAX_OVERHEAD_MIB, "420")


def parse_optimizer(text: str) -> str:
    name = text.strip().lower()
    if name not in OPTIMIZERS:
        raise argparse.ArgumentTypeError(
            f"unknown optimizer {text!r}; choose one of: {', '.join(OPTIMIZERS)}"
        )
    return name


def parse_precision(text: str) -> str:
    name = text.strip().lower()
    if name not in PRECISIONS:
        raise argparse.ArgumentTypeError(
            f"unknown precision {text!r}; choose a Keras dtype policy: {', '.join(PRECISIONS)}"
        )
    return name


def _shape_type(flag: str) -> Callable[[str], tuple[int, ...]]:
    """argparse type for ``flag``: one shape without the batch (``shapes.parse_shape``)."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            return parse_shape(text, flag)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


#: One input's shape without the batch: ``128``, ``224,224,3`` or ``224x224x3``.
parse_input_shape = _shape_type("--input-shape")
#: One target's shape without the batch, for a loss whose targets differ from the outputs.
parse_target_shape = _shape_type("--target-shape")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and returns to ``main``."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "How much GPU memory does a Keras model need for one training (or inference)\n"
            "step at a given batch size, and why?  Prints the estimated peak of TensorFlow's\n"
            "allocator, what a GPU needs besides it (CUDA context, libraries), and the split\n"
            "into parameters, gradients, optimizer state, activations, the input batch and\n"
            "temporaries, saying which parts grow with the batch size."
        ),
        epilog=(
            "examples:\n"
            "  tfmem demo --batch 64\n"
            "  tfmem model.keras --batch 32 --gpu T4\n"
            "  tfmem model.h5 --batch 8 --optimizer sgd --json\n"
            "  tfmem export_dir --batch 16 --inference     (a SavedModel: inference only)\n"
            "  tfmem text.keras --batch 32 --input-shape 128   (sequence length 128)\n"
            "\n"
            "exit status: 0 success, 1 the model or the estimate failed, "
            "2 bad command line.\n"
            "A file literally named 'demo' is loaded with ./demo."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "model",
        metavar="MODEL_FILE",
        help=(
            "a .keras or .h5 file, a TensorFlow SavedModel directory (inference only), "
            "or 'demo' for the bundled example (a small CNN for 32x32x3 images, Adam)"
        ),
    )
    parser.add_argument(
        "-b",
        "--batch",
        type=parse_batch_size,
        default=None,
        metavar="N",
        help=f"batch size to estimate (default: {DEFAULT_BATCH}, or the batch a stateful "
        "model's state fixes)",
    )
    parser.add_argument(
        "--optimizer",
        type=parse_optimizer,
        metavar="NAME",
        help=(
            "optimizer to estimate training with, instead of the model's own "
            f"({', '.join(OPTIMIZERS)}); an uncompiled model without one is estimated with adam"
        ),
    )
    parser.add_argument(
        "--loss",
        metavar="NAME",
        help="loss to estimate training with, instead of the model's own (any Keras loss name)",
    )
    parser.add_argument(
        "--inference",
        action="store_true",
        help="estimate an inference step (predict_on_batch) instead of a training step",
    )
    parser.add_argument(
        "--precision",
        type=parse_precision,
        metavar="POLICY",
        help=f"Keras dtype policy to assume ({', '.join(PRECISIONS)}); default: the model's own",
    )
    parser.add_argument(
        "--input-shape",
        dest="input_shapes",
        type=parse_input_shape,
        action="append",
        metavar="DIMS",
        help=(
            "an input's shape without the batch dimension, for models with dynamic sizes: "
            "128 (a sequence length) or 224,224,3; repeat the flag once per input, in order"
        ),
    )
    parser.add_argument(
        "--target-shape",
        dest="target_shapes",
        type=parse_target_shape,
        action="append",
        metavar="DIMS",
        help=(
            "a target's shape without the batch dimension, for a loss whose targets are not "
            "shaped like the outputs: 20 (CTC's longest label); repeat once per output, in order"
        ),
    )
    parser.add_argument(
        "--replicas",
        type=parse_replicas,
        default=1,
        metavar="N",
        help=(
            "data-parallel training over N GPUs (tf.distribute.MirroredStrategy): --batch is "
            "the global batch and every figure is one device's (default: 1)"
        ),
    )
    parser.add_argument(
        "--overhead-mib",
        type=parse_overhead_mib,
        metavar="MIB",
        help=(
            "device overhead outside TF's allocator, in MiB, instead of the documented "
            "constants (e.g. calibrated on your GPU: see docs/gpu.md)"
        ),
    )
    parser.add_argument(
        "--device",
        choices=("GPU", "CPU"),
        type=str.upper,
        help="the device whose executor order to follow (default: the one TF would use "
        "here, a GPU if it sees one); GPU runs every kernel inline, CPU on inter-op threads",
    )
    parser.add_argument(
        "--gpu",
        metavar="NAME_OR_GB",
        help="a card (T4, A100-80, RTX 4090, ...) or a size (24GB): does it fit, and the "
        "largest batch that does",
    )
    parser.add_argument(
        "--measure",
        action="store_true",
        help="also run real steps in a fresh process and print the measured peak next to "
        "the estimate (takes as long as the steps do)",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true", help="print a Markdown report")
    out.add_argument("--json", action="store_true", help="print the footprint as JSON")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show TensorFlow's log messages, and a traceback on errors",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return parser


def _version() -> str:
    from . import __version__

    return __version__


# -- main --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tfmem``; return the exit status instead of exiting, for tests and ``-m``."""
    parser = build_parser()
    verbose = False
    try:
        try:
            args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        except SystemExit as exc:  # --help and --version end here
            return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_OK
        verbose = args.verbose
        gpu = _early_gpu(args.gpu)
        report = _run(args, gpu)
    except UsageError as exc:
        _fail(f"{exc} (see {PROG} --help)")
        return EXIT_USAGE
    except RunError as exc:
        _fail(str(exc))
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
    except Exception as exc:
        if verbose:
            import traceback

            traceback.print_exc()
        _fail(
            f"unexpected {type(exc).__name__}: {_one_line(exc)}"
            + ("" if verbose else " (run with --verbose for details)")
        )
        return EXIT_RUNTIME
    try:
        print(report)
        sys.stdout.flush()
    except BrokenPipeError:  # `tfmem ... | head`: the reader has what it wanted
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


def _fail(message: str) -> None:
    sys.stdout.flush()
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)


def _one_line(text: object) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return " ".join(lines) if lines else type(text).__name__


def _early_gpu(text: str | None) -> tuple[str, int] | None:
    """Check ``--gpu`` before TF loads; ``local`` must wait until TF is imported."""
    if text is None or text.strip().lower() == "local":
        return None
    return _parse_gpu(text)


def _parse_gpu(text: str) -> tuple[str, int]:
    try:
        from .gpus import parse_gpu
    except ImportError as exc:
        raise RunError(f"--gpu is not available in this installation ({exc})") from None
    try:
        found = parse_gpu(text)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--gpu: {_one_line(exc)}") from None
    if isinstance(found, tuple):
        name, memory = found
    else:
        name = getattr(found, "name", text)
        memory = found.memory_bytes
    return str(name), int(memory)


def _run(args: argparse.Namespace, gpu: tuple[str, int] | None) -> str:
    training = not args.inference
    _check_cheap(args)
    with _quiet(args.verbose):
        _check_loss(args.loss)
        from .engine import helper_process

        helper_process.start()  # it imports TF while the model loads
        source = _load(args, training)
        if args.batch is None:
            args.batch = _default_batch(source, args.replicas)
        if args.gpu is not None and gpu is None:
            gpu = _parse_gpu(args.gpu)  # "local": TF is imported now
        fp = _estimate(source, args, training)
        measurement = _measure(source, args, training) if args.measure else None

    notes = list(source.notes)
    if training and args.optimizer is None and getattr(source.model, "compiled", True) is False:
        notes.append(
            "the model has no optimizer of its own, so the estimate trains it with Adam; "
            "pass --optimizer (and --loss) to estimate with the ones you train with"
        )
    extra_lines: list[str] = []
    fit = None
    if gpu is not None:
        fit = _fit(fp, gpu)
        extra_lines.append(fit["text"])
    comparison = None
    if measurement is not None:
        comparison = _compare(fp, measurement)
        extra_lines.extend(comparison["text"])

    if args.json:
        data = fp.to_dict()
        data["source"] = {"path": source.path, "format": source.format, "notes": notes}
        if fit is not None:
            data["gpu"] = {k: v for k, v in fit.items() if k != "text"}
        if comparison is not None:
            data["measurement"] = {k: v for k, v in comparison.items() if k != "text"}
        return json.dumps(data, indent=2)
    if args.markdown:
        parts = [fp.to_markdown().rstrip()]
        parts += [_md_escape(line) for line in extra_lines]
        parts += [f"*Note:* {_md_escape(n)}" for n in notes]
        return "\n\n".join(parts)
    parts = [fp.to_text().rstrip()]
    if extra_lines:
        parts.append("\n".join(extra_lines))
    if notes:
        parts.append("\n".join(f"Note: {n}" for n in notes))
    return "\n\n".join(parts)


class _Source:
    """The model to estimate and what the report should say about where it came from."""

    def __init__(self, model: Any, path: str, fmt: str, notes: Sequence[str]) -> None:
        self.model = model
        self.path = path
        self.format = fmt
        self.notes = tuple(notes)


def _check_cheap(args: argparse.Namespace) -> None:
    """What can be refused before TF is imported: the file's existence and format."""
    if args.measure and args.replicas > 1:
        raise UsageError(
            "--measure runs one device and cannot check a data-parallel estimate; "
            "drop --replicas, or --measure"
        )
    if args.model == DEMO:
        if args.input_shapes:
            raise UsageError(
                "the demo model has a fixed input shape (32, 32, 3); drop --input-shape"
            )
        return
    from .loading import ModelLoadError, detect_format

    try:
        fmt = detect_format(args.model)
    except ModelLoadError as exc:
        raise RunError(str(exc)) from None
    if fmt == "savedmodel" and not args.inference:
        raise RunError(
            f"{args.model} is a SavedModel, which Keras 3 can only run for inference "
            "(keras.layers.TFSMLayer): add --inference, or estimate training from the "
            "model's .keras file (model.save('model.keras'))"
        )


def _load(args: argparse.Namespace, training: bool) -> _Source:
    if args.model == DEMO:
        from .demo import build_demo_model

        return _Source(
            build_demo_model(),
            DEMO,
            "demo",
            ("the bundled demo: a small CNN for 32x32x3 images, 10 classes, Adam",),
        )
    from .loading import ModelLoadError, load_model

    try:
        loaded = load_model(args.model, training=training, input_shapes=args.input_shapes)
    except ModelLoadError as exc:
        raise RunError(str(exc)) from None
    return _Source(loaded.model, loaded.path, loaded.format, loaded.notes)


def _check_loss(name: str | None) -> None:
    if name is None:
        return
    from .loss_configs import loss_from_spec

    try:
        loss_from_spec(name)
    except (ValueError, TypeError):
        raise UsageError(
            f"unknown loss {name!r}; give a Keras loss name such as "
            "sparse_categorical_crossentropy, categorical_crossentropy or mse"
        ) from None


def _default_batch(source: _Source, replicas: int) -> int:
    """32, or the batch a stateful Keras model's state fixes (it runs at no other)."""
    if source.format == "savedmodel":
        return DEFAULT_BATCH
    from .shapes import default_batch

    return default_batch(source.model, DEFAULT_BATCH, replicas)


def _estimate(source: _Source, args: argparse.Namespace, training: bool) -> Any:
    import jupyter_tfmem

    kwargs: dict[str, Any] = {"training": training}
    if args.optimizer is not None:
        kwargs["optimizer"] = args.optimizer
    if args.loss is not None:
        kwargs["loss"] = args.loss
    if args.precision is not None:
        kwargs["precision"] = args.precision
    # A SavedModel's wrapper was built with the shapes already; a Keras model
    # gets them here to fill its dynamic dimensions.
    if args.input_shapes and source.format != "savedmodel":
        kwargs["input_shapes"] = list(args.input_shapes)
    if args.target_shapes:
        kwargs["target_shapes"] = list(args.target_shapes)
    if args.replicas > 1:
        kwargs["replicas"] = args.replicas
    if args.device is not None:
        kwargs["device"] = args.device
    try:
        fp = jupyter_tfmem.estimate(source.model, args.batch, **kwargs)
        if args.overhead_mib is not None:
            fp = fp.with_overhead([_given_overhead(args.overhead_mib)])
        return fp
    except (ValueError, TypeError) as exc:
        message = _one_line(exc)
        if "input_shapes" in message and not args.input_shapes:
            message += "; on the command line: --input-shape, once per input (e.g. 128)"
        if "target_shapes" in message and not args.target_shapes:
            message += "; on the command line: --target-shape, once per output (e.g. 20)"
        raise RunError(message) from None


def _given_overhead(mib: int) -> Any:
    from .footprint import OverheadItem

    return OverheadItem(
        "device overhead (--overhead-mib)",
        mib * 2**20,
        "given on the command line instead of the documented constants",
    )


def _measure(source: _Source, args: argparse.Namespace, training: bool) -> Any:
    import jupyter_tfmem

    kwargs: dict[str, Any] = {"training": training}
    wanted = {"optimizer": args.optimizer, "loss": args.loss, "precision": args.precision}
    if source.format != "savedmodel":  # as in _estimate
        wanted["input_shapes"] = args.input_shapes and list(args.input_shapes)
    wanted["target_shapes"] = args.target_shapes and list(args.target_shapes)
    kwargs.update({key: value for key, value in wanted.items() if value})
    try:
        return jupyter_tfmem.measure(source.model, args.batch, **kwargs)
    except ImportError as exc:
        raise RunError(f"--measure is not available in this installation ({exc})") from None
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        raise RunError(f"measuring failed: {_one_line(exc)}") from None


# -- extra lines ---------------------------------------------------------------------


def _fit(fp: Any, gpu: tuple[str, int]) -> dict[str, Any]:
    from .footprint import MAX_BATCH_SIZE_CAP
    from .views.format import format_bytes
    from .views.text import shows_range

    name, memory = gpu
    need = fp.total_bytes
    largest = fp.max_batch_size(memory)
    top = fp.max_batch_size(memory, schedule="top")
    fits = need <= memory
    verdict = "fits" if fits else "does NOT fit"
    if fp.fixed_batch is not None:
        tail = f"a stateful layer fixes the batch at {fp.fixed_batch}"
    elif largest == 0:
        tail = "not even batch 1 fits"
    elif largest >= MAX_BATCH_SIZE_CAP:
        tail = "any batch size fits (nothing in this estimate grows with the batch)"
    else:
        tail = f"largest batch that fits: {largest:,}"
        if top != largest:
            tail += f" ({top:,} at the top of TF's range)"
    low, high = fp.total_range
    spread = ""
    # the range is the peak's; next to the total (overhead included) it can round away
    if shows_range(fp) and format_bytes(low) != format_bytes(high):
        spread = f", {format_bytes(low)} to {format_bytes(high)} over TF's schedules"
    text = (
        f"GPU {name}: batch {fp.batch_size} {verdict} "
        f"(needs {format_bytes(need)}{spread} of {format_bytes(memory)}); {tail}"
    )
    return {
        "name": name,
        "memory_bytes": memory,
        "batch_size": fp.batch_size,
        "total_bytes": need,
        "fits": fits,
        "fits_at_top_of_range": high <= memory,
        "max_batch_size": largest,
        "max_batch_size_at_top_of_range": top,
        "text": text,
    }


def _compare(fp: Any, measurement: Any) -> dict[str, Any]:
    from .views.format import format_bytes, format_signed_percent

    measured = int(measurement.peak_bytes)
    estimated = int(fp.peak_bytes)
    runs = [int(r) for r in getattr(measurement, "runs", ()) or ()]
    device = str(getattr(measurement, "device", "") or "?")
    error = (estimated - measured) / measured if measured > 0 else None
    spread = ""
    if len(runs) > 1:
        spread = f", {len(runs)} runs from {format_bytes(min(runs))} to {format_bytes(max(runs))}"
    lines = [
        f"Measured allocator peak on {device}: {format_bytes(measured)} (median{spread})",
        f"Estimated allocator peak: {format_bytes(estimated)}"
        + (f", {format_signed_percent(error)} vs measured" if error is not None else ""),
    ]
    return {
        "device": device,
        "measured_peak_bytes": measured,
        "estimated_peak_bytes": estimated,
        "runs": runs,
        "relative_error": error,
        "text": lines,
    }


def _md_escape(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", text)


# -- keeping TensorFlow quiet ----------------------------------------------------------


@contextlib.contextmanager
def _quiet(verbose: bool) -> Iterator[None]:
    """Hide TF's C++ log lines and Python warnings while TF works.

    TF 2.21 writes its start-up lines straight to file descriptor 2 before any
    log level applies, so the only way to keep ``tfmem``'s stderr to the one
    line that matters is to point that descriptor elsewhere meanwhile.
    """
    if verbose:
        yield
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.stdout.flush()
    sys.stderr.flush()
    saved_fd = None
    devnull = None
    try:
        saved_fd = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except OSError:  # no usable fd 2 (embedded interpreters): stay as we are
        saved_fd = None
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(_Null()):
            warnings.simplefilter("ignore")
            yield
    finally:
        if saved_fd is not None:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        if devnull is not None:
            os.close(devnull)


class _Null(io.TextIOBase):
    """A text sink; loggers created meanwhile may keep it, so it must be a real stream."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)
