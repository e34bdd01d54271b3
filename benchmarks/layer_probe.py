"""Small models of everyday Keras layers, estimated and measured, one pattern each.

The zoo's cases are whole models; a kernel rule the replay lacks shows in
them only where the pattern sits at the peak.  Each model here puts one
layer pattern (a permute, a padded convolution, a group norm, a max pool,
...) at its own peak, so a missing rule shows as a large error in one row.
Session 34's probe found four such rules this way (docs/engine.md), and
``tests/test_measurement.py`` checks each rule on its model here; the
training rows of some models race in TF, so read their runs before a rule.

    python benchmarks/layer_probe.py                       # every model, both modes
    python benchmarks/layer_probe.py --models permute,group_norm --modes infer --runs 3
    python benchmarks/layer_probe.py --precision mixed_bfloat16 --modes train
    python benchmarks/layer_probe.py --jit          # whole-step XLA
    python benchmarks/layer_probe.py --models dense_stack --modes train --optimizer adafactor

Under ``--precision`` the models are built under that dtype policy, as a
user who sets it first builds them.  Session 35's precision rows found two
faults of ``measure()`` itself, not of the estimate (docs/guarantees.md).
Its ``--jit`` rows found the XLA step's batch modelled as one buffer
(docs/engine.md, point 8).  Session 36's rows of optimizers and
``mixed_float16`` found two faults of the allocator model (``embedding_bag``
with Adam, ``dropout_mlp``'s inference) and one of ``measure()``
(``dense_stack`` under ``mixed_float16``: a skipped update was measured).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _layers() -> Any:
    import keras

    return keras, keras.layers


def permute() -> Any:
    keras, layers = _layers()
    inp = keras.Input((64, 1, 256))
    x = layers.Conv2D(32, 1)(layers.Permute((2, 1, 3))(inp))
    return keras.Model(inp, layers.GlobalAveragePooling2D()(x))


def padded_convolution() -> Any:
    keras, layers = _layers()
    inp = keras.Input((30, 30, 32))
    x = layers.Conv2D(32, 3, strides=2)(layers.ZeroPadding2D(1)(inp))
    return keras.Model(inp, layers.Flatten()(x))


def group_norm() -> Any:
    keras, layers = _layers()
    inp = keras.Input((32, 32, 64))
    x = layers.GroupNormalization(8)(layers.Conv2D(64, 3, padding="same")(inp))
    return keras.Model(inp, layers.GlobalAveragePooling2D()(layers.Activation("swish")(x)))


def wide_max_pool() -> Any:
    keras, layers = _layers()
    inp = keras.Input((64, 64, 8))
    x = layers.MaxPooling2D(16, strides=1, padding="same")(inp)
    return keras.Model(inp, layers.GlobalAveragePooling2D()(x))


def conv_shortcut_add() -> Any:
    keras, layers = _layers()
    inp = keras.Input((64, 64, 32))
    shortcut = layers.Conv2D(64, 1)(inp)
    x = layers.Add()([layers.Conv2D(64, 3, padding="same")(inp), shortcut])
    return keras.Model(inp, layers.GlobalAveragePooling2D()(layers.ReLU()(x)))


def unrolled_rnn() -> Any:
    keras, layers = _layers()
    inp = keras.Input((32, 512))
    x = layers.SimpleRNN(16, unroll=True)(inp)
    return keras.Model(inp, layers.Dense(1)(x))


def residual_block_bn() -> Any:
    keras, layers = _layers()
    inp = keras.Input((32, 32, 64))
    shortcut = layers.Conv2D(64, 1)(inp)
    x = layers.BatchNormalization()(layers.Conv2D(64, 3, padding="same")(inp))
    return keras.Model(
        inp, layers.GlobalAveragePooling2D()(layers.ReLU()(layers.Add()([x, shortcut])))
    )


def dense_residual() -> Any:
    keras, layers = _layers()
    inp = keras.Input((128, 256))
    x = layers.LayerNormalization()(layers.Add()([layers.Dense(256)(inp), inp]))
    return keras.Model(
        inp, layers.GlobalAveragePooling1D()(layers.Dense(256, activation="relu")(x))
    )


def gated_multiply() -> Any:
    keras, layers = _layers()
    inp = keras.Input((256, 128))
    x = layers.Multiply()([inp, layers.Dense(128, activation="sigmoid")(inp)])
    return keras.Model(inp, layers.Dense(1)(layers.GlobalAveragePooling1D()(x)))


def upsample_concat() -> Any:
    keras, layers = _layers()
    inp = keras.Input((32, 32, 32))
    up = layers.UpSampling2D()(layers.Conv2D(32, 3, padding="same")(layers.MaxPooling2D()(inp)))
    return keras.Model(inp, layers.Conv2D(8, 1)(layers.Concatenate()([inp, up])))


def bilinear_upsampling() -> Any:
    keras, layers = _layers()
    inp = keras.Input((32, 32, 16))
    x = layers.Conv2D(16, 3, padding="same")(layers.UpSampling2D(interpolation="bilinear")(inp))
    return keras.Model(inp, layers.GlobalAveragePooling2D()(x))


def softmax_axis1() -> Any:
    keras, layers = _layers()
    inp = keras.Input((64, 128))
    x = layers.Softmax(axis=1)(layers.Dense(128)(inp))
    return keras.Model(inp, layers.Dense(2)(layers.Flatten()(x)))


def separable_conv() -> Any:
    keras, layers = _layers()
    inp = keras.Input((64, 64, 32))
    x = layers.SeparableConv2D(64, 3, padding="same", activation="relu")(inp)
    return keras.Model(inp, layers.GlobalMaxPooling2D()(x))


def conv3d() -> Any:
    keras, layers = _layers()
    inp = keras.Input((16, 32, 32, 8))
    x = layers.Conv3D(16, 3, padding="same", activation="relu")(inp)
    return keras.Model(inp, layers.GlobalAveragePooling3D()(layers.MaxPooling3D()(x)))


def attention_block() -> Any:
    keras, layers = _layers()
    inp = keras.Input((64, 128))
    x = layers.MultiHeadAttention(4, 32)(inp, inp)
    x = layers.LayerNormalization()(layers.Add()([inp, x]))
    return keras.Model(inp, layers.Dense(1)(layers.GlobalAveragePooling1D()(x)))


def embedding_bag() -> Any:
    keras, layers = _layers()
    inp = keras.Input((50,), dtype="int32")
    x = layers.GlobalAveragePooling1D()(layers.Embedding(100_000, 64)(inp))
    return keras.Model(inp, layers.Dense(1)(x))


def dropout_mlp() -> Any:
    keras, layers = _layers()
    inp = keras.Input((256,))
    x = layers.Dropout(0.5)(layers.Dense(1024, activation="relu")(inp))
    x = layers.Dropout(0.3)(layers.Dense(1024, activation="relu")(x))
    return keras.Model(inp, layers.Dense(1)(x))


def dense_stack() -> Any:
    keras, layers = _layers()
    inp = keras.Input((1024,))
    x = inp
    for _ in range(3):
        x = layers.Dense(1024, activation="relu")(x)
    return keras.Model(inp, layers.Dense(1)(x))


#: name -> (builder, batch size)
MODELS: dict[str, tuple[Callable[[], Any], int]] = {
    "permute": (permute, 32),
    "padded_convolution": (padded_convolution, 32),
    "group_norm": (group_norm, 16),
    "wide_max_pool": (wide_max_pool, 32),
    "conv_shortcut_add": (conv_shortcut_add, 16),
    "unrolled_rnn": (unrolled_rnn, 64),
    "residual_block_bn": (residual_block_bn, 16),
    "dense_residual": (dense_residual, 32),
    "gated_multiply": (gated_multiply, 64),
    "upsample_concat": (upsample_concat, 16),
    "bilinear_upsampling": (bilinear_upsampling, 16),
    "softmax_axis1": (softmax_axis1, 32),
    "separable_conv": (separable_conv, 16),
    "conv3d": (conv3d, 8),
    "attention_block": (attention_block, 32),
    "embedding_bag": (embedding_bag, 64),
    "dropout_mlp": (dropout_mlp, 256),
    "dense_stack": (dense_stack, 32),
}


def build(
    name: str,
    *,
    training: bool,
    precision: str | None = None,
    jit: bool = False,
    optimizer: str = "adam",
) -> tuple[Any, int]:
    """Model ``name`` and its batch size, built under ``precision`` (a Keras dtype
    policy) and compiled as the probe runs it: ``optimizer`` (Adam unless
    told) and a squared error for training, and ``jit_compile`` (for
    inference too) with ``jit``."""
    import keras

    builder, batch = MODELS[name]
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(precision or previous)
    try:
        model = builder()
    finally:
        keras.config.set_dtype_policy(previous)
    if training or jit:
        model.compile(optimizer=_optimizer(optimizer), loss="mean_squared_error", jit_compile=jit)
    return model, batch


def _optimizer(name: str) -> Any:
    """A Keras optimizer by name; ``sgdm`` is SGD with momentum 0.9, ``adam_accum2``
    Adam accumulating gradients over 2 steps."""
    import keras

    if name == "sgdm":
        return keras.optimizers.SGD(momentum=0.9)
    if name.startswith("adam_accum"):
        return keras.optimizers.Adam(gradient_accumulation_steps=int(name[len("adam_accum") :]))
    if name == "lamb":
        return keras.optimizers.Lamb()
    return keras.optimizers.get(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    parser.add_argument("--modes", default="infer,train", help="infer, train or both")
    parser.add_argument("--runs", type=int, default=1, help="fresh TF processes per row")
    parser.add_argument(
        "--precision",
        help="build every model under this Keras dtype policy (e.g. mixed_bfloat16) and "
        "measure it so",
    )
    parser.add_argument(
        "--jit", action="store_true", help="compile every model with jit_compile=True (XLA)"
    )
    parser.add_argument(
        "--optimizer",
        default="adam",
        help="optimizer for training rows: a Keras name (adamw, adafactor, lion, ...), "
        "sgdm (momentum 0.9) or adam_accum2 (default: adam)",
    )
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; one of: {', '.join(MODELS)}")
    modes = [m for m in args.modes.split(",") if m]
    if not set(modes) <= {"infer", "train"}:
        parser.error("--modes takes infer, train or both")

    import keras

    from jupyter_tfmem import estimate
    from jupyter_tfmem.measurement import measure

    mib = 2**20
    print(
        f"{'model':20s} {'mode':5s} {'batch':>5s} {'estimate':>9s} {'TF':>9s} {'error':>7s}  runs"
    )
    for name in names:
        for mode in modes:
            keras.backend.clear_session()
            training = mode == "train"
            model, batch = build(
                name,
                training=training,
                precision=args.precision,
                jit=args.jit,
                optimizer=args.optimizer,
            )
            est = estimate(model, batch, training=training).peak_bytes
            got = measure(model, batch, training=training, precision=args.precision, runs=args.runs)
            err = 100 * (est - got.peak_bytes) / got.peak_bytes
            runs = ", ".join(f"{r / mib:.2f}" for r in got.runs)
            print(
                f"{name:20s} {mode:5s} {batch:5d} {est / mib:9.2f} {got.peak_bytes / mib:9.2f} "
                f"{err:+6.1f}%  {runs}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.exit(main())
