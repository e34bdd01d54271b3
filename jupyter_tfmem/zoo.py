"""The public benchmark zoo: named models, each with the batch and step it is measured at.

Every model is built from code (``weights=None``, nothing is downloaded) at small
input sizes, so that one measurement takes seconds on a 2-core CPU while the
zoo still spans the shapes that break simple estimators: deep CNNs with
batch-norm, parallel skip branches, recurrent loops, attention, and embedding
tables far larger than any activation.

Keras is imported inside the builders only, so listing the cases costs nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

from . import zoo_heldout
from .multi_optimizers import multi_optimizer_spec
from .optimizer_configs import optimizer_from_config

__all__ = ["CASES", "ZooCase", "case_names", "get_case"]

#: ``(shape without the batch axis, dtype)`` for each model input, in order.
InputSpec = tuple[tuple[tuple[int, ...], str], ...]
#: An optimizer as Keras accepts it: a name or a ``{"class_name", "config"}`` dict.
OptimizerSpec = str | Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class ZooCase:
    """One benchmark case: how to build the model and which step to measure.

    ``builder`` returns a fresh, uncompiled ``keras.Model`` (or one compiled
    only to turn on ``jit_compile`` or to give it metrics); the case says how
    to compile it (``optimizer``, ``loss``) so that the estimator and the
    measurement see exactly the same work.
    """

    name: str
    builder: Callable[[], Any]
    batch_size: int
    training: bool
    optimizer: OptimizerSpec | None
    loss: str | None
    inputs: InputSpec
    description: str
    #: a Keras dtype policy to build the model under (``None``: float32)
    precision: str | None = None
    #: targets' shapes without the batch, where the loss's are not the outputs' (CTC)
    target_shapes: tuple[tuple[int, ...], ...] | None = None

    @property
    def builder_path(self) -> str:
        """``module:function`` of the builder, importable in a fresh process."""
        return f"{self.builder.__module__}:{self.builder.__name__}"

    def make_optimizer(self) -> Any:
        """A new Keras optimizer instance for this case (``None`` for inference)."""
        if self.optimizer is None:
            return None
        return optimizer_from_config(self.optimizer)

    def estimate(self, **options: Any) -> Any:
        """``jupyter_tfmem.estimate`` of this case's step, on a newly built model.

        Keras' name counters are cleared first: layer names decide the order
        of equal-ready ops in Grappler's output, in TF as in the replay, and
        a measuring process builds the model under fresh names.
        """
        import keras

        from .estimator import estimate

        keras.backend.clear_session()
        return estimate(
            self.builder(),
            self.batch_size,
            training=self.training,
            optimizer=self.make_optimizer(),
            loss=self.loss,
            precision=self.precision,
            target_shapes=self.target_shapes,
            **options,
        )


def _keras() -> Any:
    import keras

    return keras


# --------------------------------------------------------------------------
# Builders.  Each returns a new uncompiled model; none downloads anything.
# --------------------------------------------------------------------------


def resnet50_64() -> Any:
    """ResNet50 (keras.applications) on 64x64 RGB, 10 classes."""
    return _keras().applications.ResNet50(
        weights=None, input_shape=(64, 64, 3), classes=10, classifier_activation="softmax"
    )


def resnet50_320() -> Any:
    """ResNet50 on 320x320 RGB: Grappler's memory optimizer rewrites one of its AddNs."""
    return _keras().applications.ResNet50(
        weights=None, input_shape=(320, 320, 3), classes=10, classifier_activation="softmax"
    )


def mobilenetv2_96() -> Any:
    """MobileNetV2 (depthwise convolutions, ReLU6) on 96x96 RGB, 10 classes."""
    return _keras().applications.MobileNetV2(weights=None, input_shape=(96, 96, 3), classes=10)


def vgg16_64() -> Any:
    """VGG16 with its dense top on 64x64 RGB: few activations, ~39M parameters."""
    return _keras().applications.VGG16(weights=None, input_shape=(64, 64, 3), classes=10)


def densenet121_64() -> Any:
    """DenseNet121 on 64x64 RGB: many concatenations of growing feature maps."""
    return _keras().applications.DenseNet121(weights=None, input_shape=(64, 64, 3), classes=10)


def efficientnetb0_64() -> Any:
    """EfficientNetB0 on 64x64 RGB: squeeze-excite blocks and swish activations."""
    return _keras().applications.EfficientNetB0(weights=None, input_shape=(64, 64, 3), classes=10)


def unet_small() -> Any:
    """A small U-Net on 64x64 RGB: encoder feature maps stay alive for the decoder."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((64, 64, 3), name="image")
    skips = []
    x = inp
    for filters in (16, 32, 64):
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(128, 3, padding="same", activation="relu")(x)
    for filters, skip in zip((64, 32, 16), reversed(skips), strict=True):
        x = layers.Conv2DTranspose(filters, 2, strides=2, padding="same")(x)
        x = layers.Concatenate()([x, skip])
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    out = layers.Conv2D(1, 1, activation="sigmoid", name="mask")(x)
    return keras.Model(inp, out, name="unet_small")


def mlp() -> Any:
    """A 784-1024-1024-10 multilayer perceptron with dropout."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((784,), name="pixels")
    x = layers.Dense(1024, activation="relu")(inp)
    x = layers.Dropout(0.2)(x)
    x = layers.Dense(1024, activation="relu")(x)
    x = layers.Dropout(0.2)(x)
    out = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inp, out, name="mlp")


def _embedding_lstm(tokens: int, vocab: int, dim: int, name: str) -> Any:
    """Embedding(vocab, dim) + LSTM(128) + a sigmoid output over ``tokens`` tokens."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((tokens,), dtype="int32", name="tokens")
    x = layers.Embedding(vocab, dim)(inp)
    x = layers.LSTM(128)(x)
    out = layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inp, out, name=name)


def lstm_text() -> Any:
    """Embedding(20000, 64) + LSTM(128) sentiment classifier over 100 tokens."""
    return _embedding_lstm(100, 20000, 64, "lstm_text")


def gru_tagger() -> Any:
    """Embedding + stacked GRUs returning sequences: a per-token tagger over 80 tokens."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((80,), dtype="int32", name="tokens")
    x = layers.Embedding(10000, 64)(inp)
    x = layers.GRU(96, return_sequences=True)(x)
    x = layers.GRU(96, return_sequences=True)(x)
    out = layers.Dense(12, activation="softmax")(x)
    return keras.Model(inp, out, name="gru_tagger")


def transformer_encoder() -> Any:
    """Two post-norm encoder blocks (MultiHeadAttention, LayerNorm, FFN) over 64 tokens."""
    keras = _keras()
    layers = keras.layers
    seq, dim, heads, vocab = 64, 128, 4, 8000
    inp = keras.Input((seq,), dtype="int32", name="tokens")
    x = layers.Embedding(vocab, dim)(inp)
    for i in range(2):
        attn = layers.MultiHeadAttention(heads, dim // heads, name=f"mha_{i}")(x, x)
        x = layers.LayerNormalization(name=f"ln_attn_{i}")(x + attn)
        ffn = layers.Dense(4 * dim, activation="gelu", name=f"ffn_in_{i}")(x)
        ffn = layers.Dense(dim, name=f"ffn_out_{i}")(ffn)
        x = layers.LayerNormalization(name=f"ln_ffn_{i}")(x + ffn)
    x = layers.GlobalAveragePooling1D()(x)
    out = layers.Dense(5, activation="softmax")(x)
    return keras.Model(inp, out, name="transformer_encoder")


def two_table_recommender(users: int, items: int, dim: int, head: dict[str, Any], name: str) -> Any:
    """User and item embedding tables, an MLP on both and their product; one output
    (``head``: the output Dense layer's keyword arguments)."""
    keras = _keras()
    layers = keras.layers
    user = keras.Input((1,), dtype="int32", name="user")
    item = keras.Input((1,), dtype="int32", name="item")
    u = layers.Flatten()(layers.Embedding(users, dim, name="user_table")(user))
    v = layers.Flatten()(layers.Embedding(items, dim, name="item_table")(item))
    x = layers.Concatenate()([u, v, layers.Multiply()([u, v])])
    x = layers.Dense(128, activation="relu")(x)
    x = layers.Dense(64, activation="relu")(x)
    return keras.Model([user, item], layers.Dense(1, **head)(x), name=name)


def recommender() -> Any:
    """Two-tower recommender: 200k x 64 and 50k x 64 embedding tables, an MLP on top."""
    return two_table_recommender(200_000, 50_000, 64, {"name": "rating"}, "recommender")


def inceptionv3_96() -> Any:
    """InceptionV3 on 96x96 RGB: parallel branches of different widths."""
    return _keras().applications.InceptionV3(weights=None, input_shape=(96, 96, 3), classes=10)


def xception_72() -> Any:
    """Xception on 72x72 RGB: separable convolutions with residual adds."""
    return _keras().applications.Xception(weights=None, input_shape=(72, 72, 3), classes=10)


def resnet50v2_64() -> Any:
    """ResNet50V2 (pre-activation) on 64x64 RGB, 10 classes."""
    return _keras().applications.ResNet50V2(weights=None, input_shape=(64, 64, 3), classes=10)


def convnext_tiny_64() -> Any:
    """ConvNeXtTiny on 64x64 RGB: its depthwise convolutions run as XLA-compiled calls."""
    return _keras().applications.ConvNeXtTiny(weights=None, input_shape=(64, 64, 3), classes=10)


def mobilenetv3small_96() -> Any:
    """MobileNetV3Small on 96x96 RGB: hard-swish, squeeze-excite, depthwise convs."""
    return _keras().applications.MobileNetV3Small(weights=None, input_shape=(96, 96, 3), classes=10)


def bilstm_text() -> Any:
    """Embedding(5000, 32) + Bidirectional(LSTM(64)) classifier over 60 tokens."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((60,), dtype="int32", name="tokens")
    x = layers.Embedding(5000, 32)(inp)
    x = layers.Bidirectional(layers.LSTM(64))(x)
    out = layers.Dense(3, activation="softmax")(x)
    return keras.Model(inp, out, name="bilstm_text")


def conv1d_signal() -> Any:
    """Two Conv1D blocks, global max pooling and Dropout over 200 x 16 signals."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((200, 16), name="signal")
    x = layers.Conv1D(64, 5, activation="relu")(inp)
    x = layers.MaxPooling1D()(x)
    x = layers.Conv1D(128, 5, activation="relu")(x)
    x = layers.GlobalMaxPooling1D()(x)
    x = layers.Dropout(0.3)(x)
    out = layers.Dense(5)(x)
    return keras.Model(inp, out, name="conv1d_signal")


def _jit(model: Any) -> Any:
    """Compile ``model`` only to turn on ``jit_compile``; the case's optimizer and loss
    replace the placeholders here (``estimate`` and the measuring worker keep it)."""
    model.compile(optimizer="sgd", loss="mean_squared_error", jit_compile=True)
    return model


def _bn_cnn(name: str) -> Any:
    """Three Conv2D-BatchNorm-ReLU-MaxPool blocks on 32x32 RGB, 10 classes."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((32, 32, 3), name="image")
    x = inp
    for filters in (32, 64, 128):
        x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        x = layers.MaxPooling2D()(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(10, activation="softmax")(layers.Dense(256, activation="relu")(x))
    return keras.Model(inp, out, name=name)


def jit_cnn() -> Any:
    """A small CNN with BatchNormalization, compiled with ``jit_compile=True``."""
    return _jit(_bn_cnn("jit_cnn"))


def jit_transformer() -> Any:
    """The zoo's transformer encoder, compiled with ``jit_compile=True``."""
    return _jit(transformer_encoder())


def two_input_two_output() -> Any:
    """An image branch and a tabular branch merged, with a class head and a value head."""
    keras = _keras()
    layers = keras.layers
    image = keras.Input((32, 32, 3), name="image")
    table = keras.Input((20,), name="table")
    x = layers.Conv2D(32, 3, activation="relu")(image)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    t = layers.Dense(64, activation="relu")(table)
    x = layers.Concatenate()([x, t])
    x = layers.Dense(128, activation="relu")(x)
    cls = layers.Dense(10, activation="softmax", name="cls")(x)
    value = layers.Dense(1, name="value")(x)
    return keras.Model([image, table], [cls, value], name="two_input_two_output")


def cnn_small() -> Any:
    """Three Conv2D-BatchNorm-ReLU-MaxPool blocks on 32x32 RGB (``jit_cnn`` without XLA)."""
    return _bn_cnn("cnn_small")


def lstm_long() -> Any:
    """Embedding(5000, 32) + LSTM(128) classifier over 500 tokens: a long recurrent loop."""
    return _embedding_lstm(500, 5000, 32, "lstm_long")


def gru_long() -> Any:
    """GRU(64) over 1000 steps of an 8-channel signal, 4 classes: a very long loop."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((1000, 8), name="signal")
    x = layers.GRU(64)(inp)
    out = layers.Dense(4, activation="softmax")(x)
    return keras.Model(inp, out, name="gru_long")


def bilstm_long() -> Any:
    """Bidirectional(LSTM(32)) returning sequences over 400 x 16, pooled, 3 classes."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((400, 16), name="signal")
    x = layers.Bidirectional(layers.LSTM(32, return_sequences=True))(inp)
    x = layers.GlobalAveragePooling1D()(x)
    out = layers.Dense(3, activation="softmax")(x)
    return keras.Model(inp, out, name="bilstm_long")


def bert_encoder(
    seq: int = 128,
    vocab: int = 8000,
    dim: int = 256,
    depth: int = 4,
    heads: int = 4,
    name: str = "bert_encoder",
) -> Any:
    """A BERT-style encoder from Keras layers: token + position embeddings, ``depth``
    post-norm blocks (MultiHeadAttention, Dropout, LayerNorm, GELU feed-forward of
    ``4 * dim``) and a 2-class head on the first token.

    The same construction as ``bert_base`` in ``benchmarks/speed.py``, with the
    sizes as parameters (that module is not importable from the package).
    """
    keras = _keras()
    layers = keras.layers
    tokens = keras.Input((seq,), dtype="int32", name="tokens")
    x = layers.Embedding(vocab, dim, name="token_embedding")(tokens)
    x = x + layers.Embedding(seq, dim, name="position_embedding")(keras.ops.arange(seq))
    x = layers.LayerNormalization()(x)
    for _ in range(depth):
        attn = layers.MultiHeadAttention(heads, dim // heads)(x, x)
        x = layers.LayerNormalization()(x + layers.Dropout(0.1)(attn))
        ffn = layers.Dense(dim)(layers.Dense(4 * dim, activation="gelu")(x))
        x = layers.LayerNormalization()(x + layers.Dropout(0.1)(ffn))
    out = layers.Dense(2, activation="softmax")(x[:, 0])
    return keras.Model(tokens, out, name=name)


def bert_small() -> Any:
    """``bert_encoder`` with 4 blocks, hidden 256, 4 heads, 128 tokens, 8000-token vocabulary."""
    return bert_encoder(seq=128, vocab=8000, dim=256, depth=4, heads=4, name="bert_small")


def sepconv_cnn() -> Any:
    """SeparableConv2D blocks with BatchNorm on 64x64 RGB (depthwise then pointwise), 10 classes."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((64, 64, 3), name="image")
    x = layers.Conv2D(32, 3, strides=2, padding="same", use_bias=False)(inp)
    x = layers.Activation("relu")(layers.BatchNormalization()(x))
    for filters in (64, 128, 256):
        x = layers.SeparableConv2D(filters, 3, padding="same", use_bias=False)(x)
        x = layers.Activation("relu")(layers.BatchNormalization()(x))
        x = layers.MaxPooling2D()(x)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inp, out, name="sepconv_cnn")


def shared_nested() -> Any:
    """A siamese pair: one nested ``keras.Model`` (a conv encoder) called on two 32x32
    images, and one Dense layer applied three times in a row (tied weights)."""
    keras = _keras()
    layers = keras.layers
    image = keras.Input((32, 32, 3), name="image")
    x = layers.Conv2D(32, 3, activation="relu")(image)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    encoder = keras.Model(image, layers.Dense(64, activation="relu")(x), name="encoder")
    left = keras.Input((32, 32, 3), name="left")
    right = keras.Input((32, 32, 3), name="right")
    a, b = encoder(left), encoder(right)
    x = layers.Concatenate()([a, b, layers.Multiply()([a, b])])
    x = layers.Dense(64, activation="relu")(x)
    tied = layers.Dense(64, activation="relu", name="tied")
    for _ in range(3):
        x = tied(x)
    out = layers.Dense(1, activation="sigmoid", name="same")(x)
    return keras.Model([left, right], out, name="shared_nested")


def _scored(model: Any, metrics: list[Any]) -> Any:
    """``model`` compiled with ``metrics``.  The case's optimizer and loss replace
    the ones given here, and the metrics stay, as ``fit`` updates them every step."""
    model.compile(optimizer="sgd", loss="mean_squared_error", metrics=metrics)
    return model


def scored_token_lm() -> Any:
    """Embedding(8000, 128), Dense(256) and a softmax over 8,000 words per token,
    compiled with ``metrics=["accuracy"]``."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((128,), dtype="int32", name="tokens")
    x = layers.Embedding(8000, 128)(inp)
    x = layers.Dense(256, activation="relu")(x)
    out = layers.Dense(8000, activation="softmax", name="next_word")(x)
    return _scored(keras.Model(inp, out, name="scored_token_lm"), ["accuracy"])


def scored_multilabel() -> Any:
    """A 256-512-1000 sigmoid tagger scored by per-label AUC, precision, recall and
    binary accuracy."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((256,), name="features")
    x = layers.Dense(512, activation="relu")(inp)
    out = layers.Dense(1000, activation="sigmoid", name="tags")(x)
    metrics = [
        keras.metrics.AUC(multi_label=True),
        keras.metrics.Precision(),
        keras.metrics.Recall(),
        "binary_accuracy",
    ]
    return _scored(keras.Model(inp, out, name="scored_multilabel"), metrics)


def scored_cnn() -> Any:
    """``cnn_small`` scored by accuracy and top-3 accuracy, as most classifiers are."""
    keras = _keras()
    metrics = ["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=3)]
    return _scored(_bn_cnn("scored_cnn"), metrics)


def scored_segmenter() -> Any:
    """A two-scale convolutional segmenter of 21 classes per pixel at 128x128, scored by
    mean IoU and pixel accuracy."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((128, 128, 3), name="image")
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = layers.UpSampling2D()(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    out = layers.Conv2D(21, 1, activation="softmax", name="classes")(x)
    metrics = [keras.metrics.MeanIoU(21, sparse_y_pred=False), "accuracy"]
    return _scored(keras.Model(inp, out, name="scored_segmenter"), metrics)


# --------------------------------------------------------------------------
# Cases.
# --------------------------------------------------------------------------

_IMG64 = (((64, 64, 3), "float32"),)
_SGD_MOMENTUM = {"class_name": "SGD", "config": {"learning_rate": 0.01, "momentum": 0.9}}

_CASE_LIST: tuple[ZooCase, ...] = (
    ZooCase(
        "resnet50_64_sgd",
        resnet50_64,
        32,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        _IMG64,
        "ResNet50 64x64, batch 32, training with plain SGD",
    ),
    ZooCase(
        "resnet50_64_infer",
        resnet50_64,
        64,
        False,
        None,
        None,
        _IMG64,
        "ResNet50 64x64, batch 64, inference",
    ),
    ZooCase(
        "resnet50_320_sgd",
        resnet50_320,
        16,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((320, 320, 3), "float32"),),
        "ResNet50 320x320, batch 16, training with plain SGD (an AddN summed in place)",
    ),
    ZooCase(
        "mobilenetv2_96_adam",
        mobilenetv2_96,
        32,
        True,
        "adam",
        "categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "MobileNetV2 96x96, batch 32, training with Adam",
    ),
    ZooCase(
        "mobilenetv2_96_infer",
        mobilenetv2_96,
        64,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "MobileNetV2 96x96, batch 64, inference",
    ),
    ZooCase(
        "vgg16_64_rmsprop",
        vgg16_64,
        16,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        _IMG64,
        "VGG16 64x64 (39M parameters), batch 16, training with RMSprop",
    ),
    ZooCase(
        "densenet121_64_adam",
        densenet121_64,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        _IMG64,
        "DenseNet121 64x64, batch 16, training with Adam",
    ),
    ZooCase(
        "efficientnetb0_64_infer",
        efficientnetb0_64,
        64,
        False,
        None,
        None,
        _IMG64,
        "EfficientNetB0 64x64, batch 64, inference",
    ),
    ZooCase(
        "unet_small_adam",
        unet_small,
        8,
        True,
        "adam",
        "binary_crossentropy",
        _IMG64,
        "small U-Net 64x64, batch 8, training with Adam",
    ),
    ZooCase(
        "mlp_sgd_momentum",
        mlp,
        256,
        True,
        _SGD_MOMENTUM,
        "sparse_categorical_crossentropy",
        (((784,), "float32"),),
        "MLP 784-1024-1024-10, batch 256, training with SGD + momentum",
    ),
    ZooCase(
        "mlp_infer",
        mlp,
        1024,
        False,
        None,
        None,
        (((784,), "float32"),),
        "MLP 784-1024-1024-10, batch 1024, inference",
    ),
    ZooCase(
        "lstm_text_adam",
        lstm_text,
        64,
        True,
        "adam",
        "binary_crossentropy",
        (((100,), "int32"),),
        "Embedding + LSTM(128) over 100 tokens, batch 64, Adam",
    ),
    ZooCase(
        "lstm_text_infer",
        lstm_text,
        256,
        False,
        None,
        None,
        (((100,), "int32"),),
        "Embedding + LSTM(128) over 100 tokens, batch 256, inference",
    ),
    ZooCase(
        "gru_tagger_rmsprop",
        gru_tagger,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((80,), "int32"),),
        "Embedding + 2 GRU(96) per-token tagger, batch 32, RMSprop",
    ),
    ZooCase(
        "transformer_adam",
        transformer_encoder,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "2-block transformer encoder, 64 tokens, dim 128, batch 32, Adam",
    ),
    ZooCase(
        "transformer_infer",
        transformer_encoder,
        128,
        False,
        None,
        None,
        (((64,), "int32"),),
        "2-block transformer encoder, 64 tokens, batch 128, inference",
    ),
    ZooCase(
        "recommender_adam",
        recommender,
        512,
        True,
        "adam",
        "mean_squared_error",
        (((1,), "int32"), ((1,), "int32")),
        "two-tower recommender, 250k x 64 embedding rows, batch 512, Adam",
    ),
    ZooCase(
        "two_input_two_output_sgd",
        two_input_two_output,
        64,
        True,
        _SGD_MOMENTUM,
        None,
        (((32, 32, 3), "float32"), ((20,), "float32")),
        "two inputs, two outputs (default loss), batch 64, SGD + momentum",
    ),
    # Added after the estimator was written, to see how it does on models it
    # was not developed against.
    ZooCase(
        "inceptionv3_96_adam",
        inceptionv3_96,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "InceptionV3 96x96, batch 16, training with Adam",
    ),
    ZooCase(
        "xception_72_infer",
        xception_72,
        16,
        False,
        None,
        None,
        (((72, 72, 3), "float32"),),
        "Xception 72x72, batch 16, inference",
    ),
    ZooCase(
        "resnet50v2_64_adam",
        resnet50v2_64,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        _IMG64,
        "ResNet50V2 64x64, batch 16, training with Adam",
    ),
    ZooCase(
        "convnext_tiny_64_adam",
        convnext_tiny_64,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        _IMG64,
        "ConvNeXtTiny 64x64, batch 16, training with Adam (XLA-compiled depthwise calls)",
    ),
    # More optimizers, on the transformer.
    ZooCase(
        "transformer_adagrad",
        transformer_encoder,
        32,
        True,
        "adagrad",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder, batch 32, Adagrad",
    ),
    ZooCase(
        "transformer_adafactor",
        transformer_encoder,
        32,
        True,
        "adafactor",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder, batch 32, Adafactor (factored second moments)",
    ),
    ZooCase(
        "transformer_lion",
        transformer_encoder,
        32,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder, batch 32, Lion",
    ),
    ZooCase(
        "transformer_adam_accum4",
        transformer_encoder,
        32,
        True,
        {"class_name": "Adam", "config": {"gradient_accumulation_steps": 4}},
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder, batch 32, Adam accumulating gradients over 4 steps",
    ),
    # Other precisions: the model is rebuilt under a Keras dtype policy.
    ZooCase(
        "transformer_mixed16_adam",
        transformer_encoder,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder under mixed_float16 (loss scaling), batch 32, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "transformer_mixed16_adam_b128",
        transformer_encoder,
        128,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder under mixed_float16 (loss scaling), batch 128, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "transformer_mixedbf16_infer",
        transformer_encoder,
        128,
        False,
        None,
        None,
        (((64,), "int32"),),
        "transformer encoder under mixed_bfloat16, batch 128, inference",
        "mixed_bfloat16",
    ),
    ZooCase(
        "transformer_float64_adam",
        transformer_encoder,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder in float64, batch 32, Adam",
        "float64",
    ),
    # jit_compile=True: the whole step is one XLA executable.
    ZooCase(
        "jit_cnn_adam",
        jit_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "CNN with BatchNorm, jit_compile=True, batch 32, Adam",
    ),
    ZooCase(
        "jit_cnn_adam_b128",
        jit_cnn,
        128,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "CNN with BatchNorm, jit_compile=True, batch 128, Adam",
    ),
    ZooCase(
        "jit_cnn_infer",
        jit_cnn,
        128,
        False,
        None,
        None,
        (((32, 32, 3), "float32"),),
        "CNN with BatchNorm, jit_compile=True, batch 128, inference",
    ),
    ZooCase(
        "jit_transformer_adam",
        jit_transformer,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "2-block transformer encoder, jit_compile=True, batch 32, Adam",
    ),
    # A held-out set: added to check the engine, not tuned against.
    ZooCase(
        "mobilenetv3small_96_adam",
        mobilenetv3small_96,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "MobileNetV3Small 96x96, batch 16, training with Adam",
    ),
    ZooCase(
        "efficientnetb0_64_sgd",
        efficientnetb0_64,
        16,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        _IMG64,
        "EfficientNetB0 64x64, batch 16, training with SGD",
    ),
    ZooCase(
        "bilstm_text_rmsprop",
        bilstm_text,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((60,), "int32"),),
        "Embedding + bidirectional LSTM over 60 tokens, batch 32, RMSprop",
    ),
    ZooCase(
        "densenet121_64_infer",
        densenet121_64,
        32,
        False,
        None,
        None,
        _IMG64,
        "DenseNet121 64x64, batch 32, inference",
    ),
    ZooCase(
        "conv1d_signal_adamw",
        conv1d_signal,
        64,
        True,
        "adamw",
        "mean_squared_error",
        (((200, 16), "float32"),),
        "Conv1D signal regressor with Dropout, batch 64, AdamW",
    ),
    # Issue 5, part 1: pure float16 / bfloat16 (variables in that dtype too),
    # mixed precision on a CNN, float64 inference.
    ZooCase(
        "transformer_float16_adam",
        transformer_encoder,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "transformer encoder in pure float16 (float16 variables), batch 32, Adam",
        "float16",
    ),
    ZooCase(
        "transformer_bfloat16_infer",
        transformer_encoder,
        128,
        False,
        None,
        None,
        (((64,), "int32"),),
        "transformer encoder in pure bfloat16, batch 128, inference",
        "bfloat16",
    ),
    ZooCase(
        "transformer_float64_infer",
        transformer_encoder,
        128,
        False,
        None,
        None,
        (((64,), "int32"),),
        "transformer encoder in float64, batch 128, inference",
        "float64",
    ),
    ZooCase(
        "cnn_small_bfloat16_adam",
        cnn_small,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "small CNN with BatchNorm in pure bfloat16, batch 64, Adam",
        "bfloat16",
    ),
    ZooCase(
        "cnn_small_float16_infer",
        cnn_small,
        128,
        False,
        None,
        None,
        (((32, 32, 3), "float32"),),
        "small CNN with BatchNorm in pure float16, batch 128, inference",
        "float16",
    ),
    ZooCase(
        "cnn_small_mixed16_adam",
        cnn_small,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "small CNN with BatchNorm under mixed_float16 (loss scaling), batch 64, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "cnn_small_mixedbf16_adam_b128",
        cnn_small,
        128,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "small CNN with BatchNorm under mixed_bfloat16, batch 128, Adam",
        "mixed_bfloat16",
    ),
    # Issue 5, part 2: recurrent loops of 400 to 1000 steps.
    ZooCase(
        "lstm_long_adam",
        lstm_long,
        32,
        True,
        "adam",
        "binary_crossentropy",
        (((500,), "int32"),),
        "Embedding + LSTM(128) over 500 tokens, batch 32, Adam",
    ),
    ZooCase(
        "lstm_long_infer",
        lstm_long,
        128,
        False,
        None,
        None,
        (((500,), "int32"),),
        "Embedding + LSTM(128) over 500 tokens, batch 128, inference",
    ),
    ZooCase(
        "gru_long_rmsprop",
        gru_long,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((1000, 8), "float32"),),
        "GRU(64) over 1000 steps x 8 channels, batch 32, RMSprop",
    ),
    ZooCase(
        "gru_long_infer",
        gru_long,
        128,
        False,
        None,
        None,
        (((1000, 8), "float32"),),
        "GRU(64) over 1000 steps x 8 channels, batch 128, inference",
    ),
    ZooCase(
        "bilstm_long_adam",
        bilstm_long,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((400, 16), "float32"),),
        "bidirectional LSTM(32) returning sequences over 400 steps, batch 32, Adam",
    ),
    # Issue 5, part 3: a small BERT-style encoder.
    ZooCase(
        "bert_small_adamw",
        bert_small,
        16,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "BERT-style encoder, 4 blocks, hidden 256, 128 tokens, batch 16, AdamW",
    ),
    ZooCase(
        "bert_small_infer",
        bert_small,
        64,
        False,
        None,
        None,
        (((128,), "int32"),),
        "BERT-style encoder, 4 blocks, hidden 256, 128 tokens, batch 64, inference",
    ),
    # Issue 5, part 4: plain SGD next to momentum, separable convolutions in
    # training, shared layers and a nested model, second batch sizes.
    ZooCase(
        "mlp_sgd",
        mlp,
        256,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((784,), "float32"),),
        "MLP 784-1024-1024-10, batch 256, plain SGD (no momentum; cf. mlp_sgd_momentum)",
    ),
    ZooCase(
        "sepconv_cnn_adam",
        sepconv_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        _IMG64,
        "SeparableConv2D CNN with BatchNorm 64x64, batch 32, training with Adam",
    ),
    ZooCase(
        "shared_nested_sgd",
        shared_nested,
        64,
        True,
        _SGD_MOMENTUM,
        "binary_crossentropy",
        (((32, 32, 3), "float32"), ((32, 32, 3), "float32")),
        "siamese: nested encoder model on two inputs, a Dense tied 3x, batch 64, SGD + momentum",
    ),
    ZooCase(
        "shared_nested_infer",
        shared_nested,
        256,
        False,
        None,
        None,
        (((32, 32, 3), "float32"), ((32, 32, 3), "float32")),
        "siamese: nested encoder model on two inputs, a Dense tied 3x, batch 256, inference",
    ),
    ZooCase(
        "gru_tagger_rmsprop_b128",
        gru_tagger,
        128,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((80,), "int32"),),
        "Embedding + 2 GRU(96) per-token tagger, batch 128, RMSprop",
    ),
    ZooCase(
        "conv1d_signal_adamw_b256",
        conv1d_signal,
        256,
        True,
        "adamw",
        "mean_squared_error",
        (((200, 16), "float32"),),
        "Conv1D signal regressor with Dropout, batch 256, AdamW",
    ),
)


def _variant(base: str, batch: int, *, infer: bool = False, name: str | None = None) -> ZooCase:
    """Case ``base`` at another batch size, or its model in inference.

    Issue 5 asks for every precision, family and optimizer at two or more
    batch sizes, training and inference; deriving the extra rows keeps the
    model, inputs and precision exactly those of the measured base case.
    """
    case = next(c for c in _CASE_LIST if c.name == base)
    stem = case.description.rsplit(", batch ", 1)[0]
    if infer:
        stem = stem.replace(" (loss scaling)", "")
        return dataclasses.replace(
            case,
            name=name or f"{base.rsplit('_', 1)[0]}_infer_b{batch}",
            batch_size=batch,
            training=False,
            optimizer=None,
            loss=None,
            description=f"{stem}, batch {batch}, inference",
        )
    return dataclasses.replace(
        case,
        name=name or f"{base}_b{batch}",
        batch_size=batch,
        description=re.sub(r"batch \d+", f"batch {batch}", case.description),
    )


# Issue 5's coverage matrix: each precision, XLA, family and optimizer above at
# a second batch size, and in inference where the base rows only train.
_CASE_LIST += (
    # precision
    _variant("transformer_mixed16_adam", 64, infer=True),
    _variant("transformer_mixed16_adam", 256, infer=True),
    _variant("transformer_mixedbf16_infer", 32),
    _variant("cnn_small_mixedbf16_adam_b128", 32, name="cnn_small_mixedbf16_adam_b32"),
    _variant("transformer_float16_adam", 64),
    _variant("transformer_float16_adam", 128, infer=True),
    _variant("cnn_small_float16_infer", 32),
    _variant("transformer_bfloat16_infer", 32),
    _variant("cnn_small_bfloat16_adam", 32),
    _variant("transformer_float64_adam", 16),
    _variant("transformer_float64_infer", 32),
    # XLA
    _variant("jit_cnn_infer", 32),
    _variant("jit_transformer_adam", 64),
    _variant("jit_transformer_adam", 128, infer=True),
    _variant("jit_transformer_adam", 32, infer=True),
    # recurrent, attention, embeddings
    _variant("lstm_long_adam", 64),
    _variant("lstm_long_infer", 32),
    _variant("gru_long_rmsprop", 64),
    _variant("gru_long_infer", 32),
    _variant("bilstm_long_adam", 64),
    _variant("bilstm_long_adam", 128, infer=True),
    _variant("bilstm_long_adam", 32, infer=True),
    _variant("transformer_adam", 64),
    _variant("transformer_infer", 32),
    _variant("bert_small_adamw", 32),
    _variant("bert_small_infer", 16),
    _variant("recommender_adam", 128),
    _variant("recommender_adam", 512, infer=True),
    _variant("recommender_adam", 4096, infer=True),
    # depthwise/separable, Dropout, shared/nested, several inputs and outputs
    _variant("mobilenetv2_96_adam", 16),
    _variant("mobilenetv2_96_infer", 16),
    _variant("sepconv_cnn_adam", 64),
    _variant("sepconv_cnn_adam", 64, infer=True),
    _variant("sepconv_cnn_adam", 16, infer=True),
    _variant("conv1d_signal_adamw", 256, infer=True),
    _variant("conv1d_signal_adamw", 64, infer=True),
    _variant("shared_nested_sgd", 128),
    _variant("shared_nested_infer", 64),
    _variant("two_input_two_output_sgd", 256),
    _variant("two_input_two_output_sgd", 64, infer=True),
    _variant("two_input_two_output_sgd", 256, infer=True),
    # optimizers at a second batch size
    _variant("transformer_adagrad", 64),
    _variant("transformer_adafactor", 64),
    _variant("transformer_lion", 64),
    _variant("transformer_adam_accum4", 64),
    _variant("mlp_sgd", 64),
    _variant("mlp_sgd_momentum", 64),
)

# Written after the estimator was frozen in session 8 (see zoo_heldout.py).
_CASE_LIST += (
    ZooCase(
        "conv3d_video_adam",
        zoo_heldout.conv3d_video,
        8,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((8, 32, 32, 3), "float32"),),
        "3D CNN on 8 frames of 32x32, batch 8, Adam",
    ),
    ZooCase(
        "cifar_bn_dropout_adamw",
        zoo_heldout.cifar_bn_dropout,
        64,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "CIFAR-style CNN with BatchNorm and Dropout, batch 64, AdamW",
    ),
    ZooCase(
        "cifar_bn_dropout_infer",
        zoo_heldout.cifar_bn_dropout,
        128,
        False,
        None,
        None,
        (((32, 32, 3), "float32"),),
        "CIFAR-style CNN with BatchNorm and Dropout, batch 128, inference",
    ),
    ZooCase(
        "groupnorm_resnet_sgd",
        zoo_heldout.groupnorm_resnet,
        32,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "residual CNN with GroupNormalization, batch 32, SGD",
    ),
    ZooCase(
        "masked_bigru_attention_adam",
        zoo_heldout.masked_bigru_attention,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((100,), "int32"),),
        "masked BiGRU with Attention, 100 tokens, batch 32, Adam",
    ),
    ZooCase(
        "conv_autoencoder_rmsprop",
        zoo_heldout.conv_autoencoder,
        32,
        True,
        "rmsprop",
        "mse",
        (((64, 64, 3), "float32"),),
        "convolutional autoencoder (Conv2DTranspose, UpSampling2D), batch 32, RMSprop",
    ),
    ZooCase(
        "dlrm_like_adagrad",
        zoo_heldout.dlrm_like,
        256,
        True,
        "adagrad",
        "mse",
        (((1,), "int32"), ((1,), "int32"), ((13,), "float32")),
        "DLRM-like recommender, 200k and 100k x 32 tables, batch 256, Adagrad",
    ),
    ZooCase(
        "efficientnetv2b0_64_adam",
        zoo_heldout.efficientnetv2b0_64,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "EfficientNetV2B0 64x64, batch 16, Adam",
    ),
    ZooCase(
        "mobilenet_v1_96_infer",
        zoo_heldout.mobilenet_v1_96,
        32,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "MobileNet v1 96x96, batch 32, inference",
    ),
    ZooCase(
        "siamese_adam",
        zoo_heldout.siamese,
        64,
        True,
        "adam",
        "mse",
        (((28, 28, 1), "float32"), ((28, 28, 1), "float32")),
        "siamese encoder on two 28x28 images, batch 64, Adam",
    ),
    ZooCase(
        "resnet_mixed16_sgd",
        zoo_heldout.resnet_mixed,
        32,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "small ResNet, mixed_float16 (loss scaling), batch 32, SGD",
        precision="mixed_float16",
    ),
    ZooCase(
        "causal_decoder_lion",
        zoo_heldout.causal_decoder,
        16,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "causal decoder, 64 tokens, 8k vocabulary, batch 16, Lion",
    ),
    ZooCase(
        "causal_decoder_infer",
        zoo_heldout.causal_decoder,
        32,
        False,
        None,
        None,
        (((64,), "int32"),),
        "causal decoder, 64 tokens, 8k vocabulary, batch 32, inference",
    ),
    ZooCase(
        "lstm_stacked_adam",
        zoo_heldout.lstm_stacked_seq2seq,
        32,
        True,
        "adam",
        "mse",
        (((60, 16), "float32"),),
        "two stacked LSTMs, 60 steps, batch 32, Adam",
    ),
    # Written in session 17, before any change for them (see zoo_heldout.py).
    ZooCase(
        "vit_tiny_adam",
        zoo_heldout.vit_tiny,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "vision transformer, 4 blocks, 64 patches of 4x4, batch 32, Adam",
    ),
    ZooCase(
        "audio_cnn1d_sgd",
        zoo_heldout.audio_cnn1d,
        32,
        True,
        _SGD_MOMENTUM,
        "sparse_categorical_crossentropy",
        (((4000, 1), "float32"),),
        "1D CNN with BatchNorm over 4,000 audio samples, batch 32, SGD + momentum",
    ),
    ZooCase(
        "gru_seq2seq_rmsprop",
        zoo_heldout.gru_seq2seq,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((40,), "int32"), ((30,), "int32")),
        "GRU encoder-decoder, 40 and 30 tokens, 5k vocabulary, batch 32, RMSprop",
    ),
    ZooCase(
        "wide_deep_adagrad",
        zoo_heldout.wide_deep,
        256,
        True,
        "adagrad",
        "mse",
        (((6,), "int32"), ((13,), "float32")),
        "wide and deep, 50k x 32 table, batch 256, Adagrad",
    ),
    ZooCase(
        "upsample_autoencoder_nadam",
        zoo_heldout.upsample_autoencoder,
        16,
        True,
        "nadam",
        "mse",
        (((64, 64, 3), "float32"),),
        "upsampling autoencoder with SpatialDropout, 64x64, batch 16, Nadam",
    ),
    ZooCase(
        "mlp_mixer_adamw",
        zoo_heldout.mlp_mixer,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "MLP-Mixer, 4 blocks, 64 patches, batch 32, AdamW",
    ),
    ZooCase(
        "dcgan_generator_adam",
        zoo_heldout.dcgan_generator,
        32,
        True,
        "adam",
        "mse",
        (((128,), "float32"),),
        "DCGAN-style generator to 32x32 RGB, batch 32, Adam, MSE",
    ),
    ZooCase(
        "text_cnn_rmsprop",
        zoo_heldout.text_cnn,
        64,
        True,
        "rmsprop",
        "binary_crossentropy",
        (((200,), "int32"),),
        "text CNN, 200 tokens, 20k vocabulary, batch 64, RMSprop, binary cross-entropy",
    ),
    ZooCase(
        "lstm_time_distributed_adam",
        zoo_heldout.lstm_time_distributed,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((50,), "int32"),),
        "masked LSTM tagger with TimeDistributed dense layers, 50 tokens, batch 64, Adam",
    ),
    ZooCase(
        "additive_attention_sgd",
        zoo_heldout.additive_attention_qa,
        64,
        True,
        "sgd",
        "categorical_crossentropy",
        (((20, 64), "float32"), ((100, 64), "float32")),
        "additive attention, 20 over 100 steps, two inputs, batch 64, SGD",
    ),
    ZooCase(
        "small_resnet_48_infer",
        zoo_heldout.small_resnet_48,
        128,
        False,
        None,
        None,
        (((48, 48, 3), "float32"),),
        "small residual CNN, 48x48, 100 classes, batch 128, inference",
    ),
    ZooCase(
        "gqa_decoder_adamw",
        zoo_heldout.gqa_decoder,
        8,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "grouped-query attention decoder, 128 tokens, 8k vocabulary, batch 8, AdamW",
    ),
    # Session 18's held-out round (figures before any change: zoo_heldout's docstring).
    ZooCase(
        "efficientnet_b0_mixed16_adam",
        zoo_heldout.efficientnet_b0_64,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "EfficientNetB0 64x64, mixed_float16, batch 32, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "efficientnet_b0_mixed16_infer",
        zoo_heldout.efficientnet_b0_64,
        64,
        False,
        None,
        None,
        (((64, 64, 3), "float32"),),
        "EfficientNetB0 64x64, mixed_float16, batch 64, inference",
        "mixed_float16",
    ),
    ZooCase(
        "tiny_encoder_bf16_adamw",
        zoo_heldout.tiny_encoder,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "2-block transformer encoder, 128 tokens, mixed_bfloat16, batch 32, AdamW",
        "mixed_bfloat16",
    ),
    ZooCase(
        "xla_residual_mlp_adam",
        zoo_heldout.xla_residual_mlp,
        256,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((256,), "float32"),),
        "residual MLP with LayerNorm, jit_compile=True, batch 256, Adam",
    ),
    ZooCase(
        "stacked_bigru_rmsprop",
        zoo_heldout.stacked_bigru,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((256,), "int32"),),
        "two bidirectional GRUs over 256 tokens, batch 32, RMSprop",
    ),
    ZooCase(
        "stacked_bigru_infer",
        zoo_heldout.stacked_bigru,
        128,
        False,
        None,
        None,
        (((256,), "int32"),),
        "two bidirectional GRUs over 256 tokens, batch 128, inference",
    ),
    ZooCase(
        "two_tower_lion",
        zoo_heldout.two_tower,
        512,
        True,
        "lion",
        "binary_crossentropy",
        (((1,), "int32"), ((1,), "int32")),
        "two-tower recommender, 100k and 50k embeddings, batch 512, Lion",
    ),
    ZooCase(
        "xception_mini_nesterov",
        zoo_heldout.xception_mini,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": True}},
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "Xception-style separable blocks 96x96, batch 32, SGD with Nesterov momentum",
    ),
    ZooCase(
        "siamese_two_heads_adafactor",
        zoo_heldout.siamese_two_heads,
        64,
        True,
        "adafactor",
        "mse",
        (((48, 48, 1), "float32"), ((48, 48, 1), "float32")),
        "shared nested encoder, two inputs and two outputs, batch 64, Adafactor",
    ),
    ZooCase(
        "cifar_cnn_float64_sgd",
        zoo_heldout.cifar_cnn,
        64,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "small CNN in float64, batch 64, SGD",
        "float64",
    ),
    ZooCase(
        "cifar_cnn_accumulate_adam",
        zoo_heldout.cifar_cnn,
        64,
        True,
        {"class_name": "Adam", "config": {"gradient_accumulation_steps": 2}},
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "small CNN, batch 64, Adam accumulating gradients over 2 steps",
    ),
    ZooCase(
        "nasnet_mobile_rmsprop",
        zoo_heldout.nasnet_mobile_64,
        16,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "NASNetMobile 64x64, batch 16, RMSprop",
    ),
    ZooCase(
        "nasnet_mobile_infer",
        zoo_heldout.nasnet_mobile_64,
        64,
        False,
        None,
        None,
        (((64, 64, 3), "float32"),),
        "NASNetMobile 64x64, batch 64, inference",
    ),
    ZooCase(
        "lstm_stack_mixed16_adam",
        zoo_heldout.lstm_stack_text,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((200,), "int32"),),
        "two stacked LSTMs over 200 tokens, mixed_float16, batch 64, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "lstm_stack_mixed16_infer",
        zoo_heldout.lstm_stack_text,
        128,
        False,
        None,
        None,
        (((200,), "int32"),),
        "two stacked LSTMs over 200 tokens, mixed_float16, batch 128, inference",
        "mixed_float16",
    ),
    ZooCase(
        "cnn_gru_float16_momentum",
        zoo_heldout.cnn_gru_signal,
        64,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((1024, 4), "float32"),),
        "Conv1D and GRU over 1,024 steps, pure float16, batch 64, SGD + momentum",
        "float16",
    ),
    ZooCase(
        "xla_seq2seq_rmsprop",
        zoo_heldout.xla_seq2seq,
        16,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((64,), "int32"), ((48,), "int32")),
        "encoder-decoder transformer, two inputs, jit_compile=True, batch 16, RMSprop",
    ),
    ZooCase(
        "fasttext_adam",
        zoo_heldout.fasttext_big_vocab,
        256,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "200k-row embedding text classifier, batch 256, Adam",
    ),
    ZooCase(
        "depthwise_bn_bfloat16_adam",
        zoo_heldout.depthwise_bn_net,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "depthwise-separable BatchNorm net 64x64, pure bfloat16, batch 32, Adam",
        "bfloat16",
    ),
    ZooCase(
        "mlp_ln_dropout_accumulate_adamw",
        zoo_heldout.mlp_ln_dropout,
        512,
        True,
        {"class_name": "AdamW", "config": {"gradient_accumulation_steps": 4}},
        "sparse_categorical_crossentropy",
        (((512,), "float32"),),
        "MLP with LayerNorm and Dropout, batch 512, AdamW accumulating over 4 steps",
    ),
    ZooCase(
        "multi_io_nadam",
        zoo_heldout.multi_io,
        64,
        True,
        "nadam",
        "mse",
        (((32, 32, 3), "float32"), ((20,), "float32"), ((40,), "int32")),
        "three inputs (image, table, text), two outputs, batch 64, Nadam",
    ),
    ZooCase(
        "xla_bn_resnet_mixed16_adam",
        zoo_heldout.xla_bn_resnet,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "BatchNorm ResNet 32x32, jit_compile=True, mixed_float16, batch 64, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "conv_lstm_adagrad",
        zoo_heldout.conv_lstm,
        8,
        True,
        "adagrad",
        "sparse_categorical_crossentropy",
        (((10, 32, 32, 1), "float32"),),
        "two ConvLSTM2D layers over 10 frames of 32x32, batch 8, Adagrad",
    ),
    ZooCase(
        "simple_rnn_long_sgd",
        zoo_heldout.simple_rnn_long,
        64,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((300, 16), "float32"),),
        "two SimpleRNN layers over 300 steps, batch 64, SGD",
    ),
    ZooCase(
        "simple_rnn_long_infer",
        zoo_heldout.simple_rnn_long,
        256,
        False,
        None,
        None,
        (((300, 16), "float32"),),
        "two SimpleRNN layers over 300 steps, batch 256, inference",
    ),
    ZooCase(
        "xla_lstm_adam",
        zoo_heldout.xla_lstm_text,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((120,), "int32"),),
        "LSTM text classifier, jit_compile=True, batch 64, Adam",
    ),
    ZooCase(
        "conv_vae_adam",
        zoo_heldout.conv_vae,
        32,
        True,
        "adam",
        "mse",
        (((64, 64, 3), "float32"),),
        "subclassed convolutional VAE 64x64, batch 32, Adam",
    ),
    ZooCase(
        "mobilenetv3large_mixedbf16_sgd",
        zoo_heldout.mobilenetv3large_64,
        32,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "MobileNetV3Large 64x64, mixed_bfloat16, batch 32, SGD",
        "mixed_bfloat16",
    ),
    ZooCase(
        "tcn_dilated_rmsprop",
        zoo_heldout.tcn_dilated,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((2048, 8), "float32"),),
        "dilated causal Conv1D net with LayerNorm, 2048 steps, batch 32, RMSprop",
    ),
    ZooCase(
        "cnn_bn_mixed16_accumulate_adam",
        zoo_heldout.cnn_bn_small,
        64,
        True,
        {"class_name": "Adam", "config": {"gradient_accumulation_steps": 2}},
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "BatchNorm CNN 48x48, mixed_float16, batch 64, Adam accumulating over 2 steps",
        "mixed_float16",
    ),
    ZooCase(
        "bilstm_attention_mixedbf16_adam",
        zoo_heldout.bilstm_attention,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((150,), "int32"),),
        "bidirectional LSTM with dot-product attention, mixed_bfloat16, batch 32, Adam",
        "mixed_bfloat16",
    ),
    ZooCase(
        "sequential_cnn_float64_infer",
        zoo_heldout.sequential_cnn,
        128,
        False,
        None,
        None,
        (((32, 32, 3), "float32"),),
        "Sequential CIFAR CNN with Dropout, float64, batch 128, inference",
        "float64",
    ),
    ZooCase(
        "xla_mobilenet_half_infer",
        zoo_heldout.xla_mobilenet_half,
        32,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "MobileNetV2 alpha 0.5 96x96, jit_compile=True, batch 32, inference",
    ),
    ZooCase(
        "masked_bag_mixed16_lion",
        zoo_heldout.masked_bag,
        256,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((80,), "int32"),),
        "masked embedding bag, 30k vocabulary, mixed_float16, batch 256, Lion",
        "mixed_float16",
    ),
    ZooCase(
        "vit_patch_float16_sgd",
        zoo_heldout.vit_patch,
        32,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "three-block vision transformer 64x64, float16, batch 32, SGD",
        "float16",
    ),
    # Added by session 21's check of optimizer options (no change was needed):
    # EMA keeps a third copy of the weights and updates it every step.
    ZooCase(
        "mlp_adam_ema",
        mlp,
        64,
        True,
        {"class_name": "Adam", "config": {"use_ema": True}},
        "sparse_categorical_crossentropy",
        (((784,), "float32"),),
        "MLP 784-1024-1024-10, batch 64, Adam with an exponential moving average of the weights",
    ),
    # Session 21's held-out round (zoo_heldout.py's docstring has the first figures).
    ZooCase(
        "densenet121_sgdm",
        densenet121_64,
        16,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "DenseNet121 64x64, batch 16, SGD with momentum",
    ),
    ZooCase(
        "grouped_resnext_adam",
        zoo_heldout.grouped_resnext,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "ResNeXt-style blocks with 8-group convolutions 64x64, batch 32, Adam",
    ),
    ZooCase(
        "convnext_tiny_mixedbf16_adamw",
        convnext_tiny_64,
        8,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "ConvNeXtTiny 64x64, mixed_bfloat16, batch 8, AdamW",
        "mixed_bfloat16",
    ),
    ZooCase(
        "xla_decoder_mixed16_adamw",
        zoo_heldout.xla_causal_decoder,
        16,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "2-block causal decoder, jit_compile=True, mixed_float16, batch 16, AdamW",
        "mixed_float16",
    ),
    ZooCase(
        "masked_bag_wide_adagrad",
        zoo_heldout.masked_bag_wide,
        128,
        True,
        "adagrad",
        "sparse_categorical_crossentropy",
        (((80,), "int32"),),
        "masked embedding bag, 50k vocabulary, batch 128, Adagrad",
    ),
    ZooCase(
        "conv1d_attention_mixedbf16_adafactor",
        zoo_heldout.conv1d_attention,
        64,
        True,
        "adafactor",
        "sparse_categorical_crossentropy",
        (((256, 12), "float32"),),
        "Conv1D with Luong attention, mixed_bfloat16, batch 64, Adafactor",
        "mixed_bfloat16",
    ),
    ZooCase(
        "mnist_mlp_b1_nesterov",
        zoo_heldout.mnist_mlp_dropout,
        1,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": True}},
        "sparse_categorical_crossentropy",
        (((784,), "float32"),),
        "MNIST MLP with Dropout, batch 1, SGD with Nesterov momentum",
    ),
    ZooCase(
        "wide_bn_mlp_b512_rmsprop_centered",
        zoo_heldout.wide_bn_mlp,
        512,
        True,
        {"class_name": "RMSprop", "config": {"centered": True, "momentum": 0.5}},
        "sparse_categorical_crossentropy",
        (((1024,), "float32"),),
        "2048-wide BatchNorm MLP, batch 512, centered RMSprop with momentum",
    ),
    ZooCase(
        "stacked_bigru_float64_infer",
        zoo_heldout.stacked_bigru_small,
        64,
        False,
        None,
        None,
        (((100, 32), "float32"),),
        "two bidirectional GRUs over 100 steps, float64, batch 64, inference",
        "float64",
    ),
    ZooCase(
        "conv1d_transpose_ae_sgd",
        zoo_heldout.conv1d_transpose_autoencoder,
        64,
        True,
        "sgd",
        "mean_squared_error",
        (((250, 8), "float32"),),
        "Conv1D autoencoder with Conv1DTranspose and UpSampling1D, batch 64, SGD",
    ),
    ZooCase(
        "spectral_norm_cnn_adam",
        zoo_heldout.spectral_norm_cnn,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "CNN with SpectralNormalization 32x32, batch 64, Adam",
    ),
    ZooCase(
        "xla_effv2b0_mixedbf16_sgd",
        zoo_heldout.xla_efficientnetv2b0_64,
        16,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "EfficientNetV2B0 64x64, jit_compile=True, mixed_bfloat16, batch 16, SGD",
        "mixed_bfloat16",
    ),
    # Session 25's held-out round (zoo_heldout.py's docstring has the first figures).
    ZooCase(
        "resnet20_cifar_sgdm_b128",
        zoo_heldout.resnet20_cifar,
        128,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "ResNet-20-style CIFAR network 32x32, batch 128, SGD with momentum",
    ),
    ZooCase(
        "inception_resnet_v2_75_infer",
        zoo_heldout.inception_resnet_v2_75,
        16,
        False,
        None,
        None,
        (((75, 75, 3), "float32"),),
        "InceptionResNetV2 75x75, batch 16, inference",
    ),
    ZooCase(
        "bigru_text_mixed16_rmsprop",
        zoo_heldout.bigru_text,
        64,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((150,), "int32"),),
        "Embedding + bidirectional GRU over 150 tokens, mixed_float16, batch 64, RMSprop",
        "mixed_float16",
    ),
    ZooCase(
        "xla_vit_small_adam",
        zoo_heldout.xla_vit_small,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "4-block vision transformer 48x48, jit_compile=True, batch 32, Adam",
    ),
    ZooCase(
        "user_item_dot_mixedbf16_adam",
        zoo_heldout.user_item_dot,
        1024,
        True,
        "adam",
        "binary_crossentropy",
        (((1,), "int32"), ((1,), "int32")),
        "user and item embeddings with a dot product, mixed_bfloat16, batch 1024, Adam",
        "mixed_bfloat16",
    ),
    ZooCase(
        "separable_audio_sgdm",
        zoo_heldout.separable_audio,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((4000, 1), "float32"),),
        "SeparableConv1D and DepthwiseConv1D on 4,000 samples, batch 32, SGD with momentum",
    ),
    ZooCase(
        "unet_tiny_float64_sgd",
        zoo_heldout.unet_tiny,
        16,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "two-level U-Net 48x48, float64, batch 16, SGD",
        "float64",
    ),
    ZooCase(
        "nested_shared_two_outputs_adagrad",
        zoo_heldout.nested_shared_two_outputs,
        256,
        True,
        "adagrad",
        "binary_crossentropy",
        (((64,), "float32"), ((64,), "float32")),
        "nested encoder shared by two inputs, two outputs, batch 256, Adagrad",
    ),
    ZooCase(
        "lstm_text_accum4_adam",
        lstm_text,
        64,
        True,
        {"class_name": "Adam", "config": {"gradient_accumulation_steps": 4}},
        "binary_crossentropy",
        (((100,), "int32"),),
        "Embedding + LSTM(128) over 100 tokens, batch 64, Adam accumulating over 4 steps",
    ),
    ZooCase(
        "conv_attention_dropout_adafactor",
        zoo_heldout.conv_attention_dropout,
        64,
        True,
        "adafactor",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "CNN stem with MultiHeadAttention over its grid and Dropout, batch 64, Adafactor",
    ),
    ZooCase(
        "xla_gru_sequence_infer",
        zoo_heldout.xla_gru_sequence,
        128,
        False,
        None,
        None,
        (((120, 24), "float32"),),
        "GRU over 120 steps with a per-step head, jit_compile=True, batch 128, inference",
    ),
    ZooCase(
        "mobilenetv2_half_float16_infer",
        zoo_heldout.mobilenetv2_half_64,
        32,
        False,
        None,
        None,
        (((64, 64, 3), "float32"),),
        "MobileNetV2 width 0.5 64x64, float16, batch 32, inference",
        "float16",
    ),
    # Session 26's held-out round (zoo_heldout's docstring).
    ZooCase(
        "bilstm_bigru_tagger_infer",
        zoo_heldout.bilstm_bigru_tagger,
        96,
        False,
        None,
        None,
        (((200, 24), "float32"),),
        "bidirectional LSTM then bidirectional GRU over 200 steps, batch 96, inference",
    ),
    ZooCase(
        "bilstm_bigru_tagger_sgdm",
        zoo_heldout.bilstm_bigru_tagger,
        48,
        True,
        _SGD_MOMENTUM,
        "sparse_categorical_crossentropy",
        (((200, 24), "float32"),),
        "bidirectional LSTM then bidirectional GRU over 200 steps, batch 48, SGD momentum",
    ),
    ZooCase(
        "two_branch_recurrent_infer",
        zoo_heldout.two_branch_recurrent,
        256,
        False,
        None,
        None,
        (((120, 16), "float32"), ((80, 24), "float32")),
        "an LSTM and a GRU on two inputs, side by side, batch 256, inference",
    ),
    ZooCase(
        "two_branch_recurrent_adam",
        zoo_heldout.two_branch_recurrent,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((120, 16), "float32"), ((80, 24), "float32")),
        "an LSTM and a GRU on two inputs, side by side, batch 64, Adam",
    ),
    ZooCase(
        "gru_stack_three_infer",
        zoo_heldout.gru_stack_three,
        128,
        False,
        None,
        None,
        (((180,), "int32"),),
        "three stacked GRUs over 180 tokens, batch 128, inference",
    ),
    ZooCase(
        "conformer_lite_adamw",
        zoo_heldout.conformer_lite,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128, 40), "float32"),),
        "Conv1D, self-attention and a feed-forward block over 128 frames, batch 32, AdamW",
    ),
    ZooCase(
        "conformer_lite_infer",
        zoo_heldout.conformer_lite,
        128,
        False,
        None,
        None,
        (((128, 40), "float32"),),
        "Conv1D, self-attention and a feed-forward block over 128 frames, batch 128, inference",
    ),
    ZooCase(
        "category_towers_adagrad",
        zoo_heldout.category_towers,
        1024,
        True,
        "adagrad",
        "binary_crossentropy",
        (((1,), "int32"), ((1,), "int32"), ((1,), "int32")),
        "user and item towers (20k users, 50k items, 500 categories), batch 1024, Adagrad",
    ),
    ZooCase(
        "residual_bn_cnn_mixedbf16_sgdm",
        zoo_heldout.residual_bn_cnn,
        64,
        True,
        _SGD_MOMENTUM,
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "two residual blocks with BatchNormalization, mixed_bfloat16, batch 64, SGD momentum",
        "mixed_bfloat16",
    ),
    ZooCase(
        "groupnorm_cnn_adam",
        zoo_heldout.groupnorm_cnn,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "convolutions with GroupNormalization and swish, batch 64, Adam",
    ),
    # Session 28's held-out round (zoo_heldout's docstring).
    ZooCase(
        "vectorizing_text_lstm_adam",
        zoo_heldout.vectorizing_text_lstm,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((1,), "string"),),
        "TextVectorization of raw strings, an embedding and an LSTM, batch 32, Adam",
    ),
    ZooCase(
        "convlstm_next_frame_adam",
        zoo_heldout.convlstm_next_frame,
        8,
        True,
        "adam",
        "binary_crossentropy",
        (((10, 32, 32, 1), "float32"),),
        "two ConvLSTM2D layers over 10 frames of 32x32, batch 8, Adam",
    ),
    ZooCase(
        "convlstm_next_frame_infer",
        zoo_heldout.convlstm_next_frame,
        16,
        False,
        None,
        None,
        (((10, 32, 32, 1), "float32"),),
        "two ConvLSTM2D layers over 10 frames of 32x32, batch 16, inference",
    ),
    ZooCase(
        "augmenting_cnn_adam",
        zoo_heldout.augmenting_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "random flips, rotations and zooms before two convolutions, batch 32, Adam",
    ),
    ZooCase(
        "masked_bilstm_states_rmsprop",
        zoo_heldout.masked_bilstm_states,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((80, 12), "float32"),),
        "Masking, a bidirectional LSTM's states and self-attention, batch 32, RMSprop",
    ),
    ZooCase(
        "integer_features_adagrad",
        zoo_heldout.integer_features,
        256,
        True,
        "adagrad",
        "binary_crossentropy",
        (((10,), "int64"), ((3,), "float32")),
        "IntegerLookup, Hashing and Discretization features, batch 256, Adagrad",
    ),
    ZooCase(
        "regularized_mlp_sgd",
        zoo_heldout.regularized_mlp,
        128,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((128,), "float32"),),
        "an MLP with weight and activity regularizers, batch 128, SGD",
    ),
    ZooCase(
        "averaged_mlp_adam_ema_clip",
        zoo_heldout.averaged_mlp,
        64,
        True,
        {"class_name": "Adam", "config": {"use_ema": True, "clipnorm": 1.0}},
        "mse",
        (((256,), "float32"),),
        "a 1,024-wide MLP, batch 64, Adam with weight averaging (EMA) and clipnorm",
    ),
    ZooCase(
        "framewise_cnn_lstm_adam",
        zoo_heldout.framewise_cnn_lstm,
        16,
        True,
        "adam",
        "mse",
        (((6, 32, 32, 3), "float32"),),
        "TimeDistributed convolutions over 6 frames, then an LSTM, batch 16, Adam",
    ),
    ZooCase(
        "triplet_sequential_sgd",
        zoo_heldout.triplet_sequential,
        64,
        True,
        "sgd",
        "mse",
        (((28, 28, 1), "float32"),) * 3,
        "one Sequential encoder on three inputs, two distances, batch 64, SGD",
    ),
    ZooCase(
        "reshaping_layers_rmsprop",
        zoo_heldout.reshaping_layers,
        64,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((28, 28, 1), "float32"),),
        "padding, dilation, cropping, Permute, a causal Conv1D and PReLU, batch 64, RMSprop",
    ),
    ZooCase(
        "einsum_dense_adafactor",
        zoo_heldout.einsum_dense_net,
        64,
        True,
        "adafactor",
        "mse",
        (((50, 64), "float32"),),
        "two EinsumDense layers with LayerNorm, batch 64, Adafactor",
    ),
    ZooCase(
        "wide_gelu_mlp_lion_accum4",
        zoo_heldout.wide_gelu_mlp,
        64,
        True,
        {"class_name": "Lion", "config": {"gradient_accumulation_steps": 4}},
        "mse",
        (((256,), "float32"),),
        "a 1,024-wide GELU MLP, batch 64, Lion accumulating over 4 steps",
    ),
    # Session 29's held-out round (zoo_heldout's docstring).
    ZooCase(
        "mobilenetv2_128_mixed16_adamw",
        zoo_heldout.mobilenetv2_128_narrow,
        24,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128, 128, 3), "float32"),),
        "MobileNetV2 width 0.75 at 128x128, mixed_float16, batch 24, AdamW",
        "mixed_float16",
    ),
    ZooCase(
        "xla_resnet50v2_96_infer",
        zoo_heldout.xla_resnet50v2_96,
        16,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "ResNet50V2 96x96, jit_compile=True, batch 16, inference",
    ),
    ZooCase(
        "lstm_1000_adagrad",
        zoo_heldout.lstm_1000_regressor,
        8,
        True,
        "adagrad",
        "mean_squared_error",
        (((1000, 16), "float32"),),
        "two stacked LSTMs over 1,000 steps, batch 8, Adagrad",
    ),
    ZooCase(
        "lstm_1000_infer",
        zoo_heldout.lstm_1000_regressor,
        64,
        False,
        None,
        None,
        (((1000, 16), "float32"),),
        "two stacked LSTMs over 1,000 steps, batch 64, inference",
    ),
    ZooCase(
        "pre_ln_encoder_mixedbf16_adamw",
        zoo_heldout.pre_ln_encoder_256,
        8,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((256,), "int32"),),
        "pre-LN BERT-like encoder, 4 blocks, 256 tokens, mixed_bfloat16, batch 8, AdamW",
        "mixed_bfloat16",
    ),
    ZooCase(
        "big_table_recommender_adam",
        zoo_heldout.big_table_recommender,
        2048,
        True,
        "adam",
        "binary_crossentropy",
        (((1,), "int32"), ((1,), "int32")),
        "500k-user and 100k-item embeddings and an MLP, batch 2048, Adam",
    ),
    ZooCase(
        "nested_shared_two_tasks_rmsprop_momentum",
        zoo_heldout.nested_shared_two_tasks,
        128,
        True,
        {"class_name": "RMSprop", "config": {"momentum": 0.9}},
        "mean_squared_error",
        (((64,), "float32"), ((64,), "float32")),
        "a nested, shared encoder on two inputs, two outputs, batch 128, RMSprop with momentum",
    ),
    ZooCase(
        "lstm_200_float64_sgd",
        zoo_heldout.lstm_200_classifier,
        32,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((200, 8), "float32"),),
        "an LSTM over 200 steps in float64, batch 32, SGD",
        "float64",
    ),
    ZooCase(
        "xla_encoder_mixed16_adamw_accum2",
        zoo_heldout.xla_encoder_128,
        32,
        True,
        {"class_name": "AdamW", "config": {"gradient_accumulation_steps": 2}},
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "two pre-LN blocks, jit_compile=True, mixed_float16, batch 32, AdamW accumulating over 2",
        "mixed_float16",
    ),
    ZooCase(
        "separable_bn_float16_sgdm",
        zoo_heldout.separable_bn_64,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "depthwise-separable BatchNorm blocks 64x64 in pure float16, batch 32, SGD momentum",
        "float16",
    ),
    ZooCase(
        "resnet50_128_lion",
        zoo_heldout.resnet50_128,
        16,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((128, 128, 3), "float32"),),
        "ResNet50 128x128, 100 classes, batch 16, Lion",
    ),
    ZooCase(
        "bigru_300_sgd_b1",
        zoo_heldout.bigru_300,
        1,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((300, 24), "float32"),),
        "two stacked bidirectional GRUs over 300 steps, batch 1, SGD",
    ),
    ZooCase(
        "causal_cross_decoder_adam",
        zoo_heldout.causal_cross_decoder,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64,), "int32"), ((96, 128), "float32")),
        "causal self-attention and cross-attention, two inputs, batch 16, Adam",
    ),
    ZooCase(
        "efficientnetb0_96_bfloat16_infer",
        zoo_heldout.efficientnetb0_96,
        32,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "EfficientNetB0 96x96 in pure bfloat16, batch 32, inference",
        "bfloat16",
    ),
    # Session 29's second round (zoo_heldout's docstring).
    ZooCase(
        "gru_500_adam",
        zoo_heldout.gru_500,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((500, 12), "float32"),),
        "a GRU of 128 over 500 steps, batch 16, Adam",
    ),
    ZooCase(
        "bilstm_200_tagger_rmsprop_b4",
        zoo_heldout.bilstm_200_tagger,
        4,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((200, 20), "float32"),),
        "a bidirectional LSTM tagging 200 steps, batch 4, RMSprop",
    ),
    ZooCase(
        "mobilenetv3small_128_infer_b7",
        zoo_heldout.mobilenetv3small_128,
        7,
        False,
        None,
        None,
        (((128, 128, 3), "float32"),),
        "MobileNetV3Small 128x128, batch 7, inference",
    ),
    ZooCase(
        "densenet121_mixedbf16_sgdm_b12",
        zoo_heldout.densenet121_64,
        12,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "DenseNet121 64x64 under mixed_bfloat16, batch 12, SGD with momentum",
        "mixed_bfloat16",
    ),
    ZooCase(
        "six_block_encoder_adagrad",
        zoo_heldout.six_block_encoder,
        24,
        True,
        "adagrad",
        "sparse_categorical_crossentropy",
        (((96,), "int32"),),
        "six encoder blocks, hidden 192, 96 tokens, batch 24, Adagrad",
    ),
    ZooCase(
        "bag_three_heads_nadam",
        zoo_heldout.bag_three_heads,
        256,
        True,
        "nadam",
        "mean_squared_error",
        (((20,), "int32"), ((150,), "int32")),
        "one embedding shared by two token inputs, three outputs, batch 256, Nadam",
    ),
    ZooCase(
        "xla_conv_mixed16_rmsprop_b48",
        zoo_heldout.xla_conv_48,
        48,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "BatchNorm conv blocks 48x48, jit_compile=True, mixed_float16, batch 48, RMSprop",
        "mixed_float16",
    ),
    # Written in session 33, before any change for them (see zoo_heldout.py).
    ZooCase(
        "noisy_cnn_adamax",
        zoo_heldout.noisy_cnn,
        64,
        True,
        "adamax",
        "categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "Gaussian noise and dropout, alpha dropout, dilated convolutions, batch 64, Adamax",
    ),
    ZooCase(
        "repeat_seq2seq_nadam",
        zoo_heldout.repeat_seq2seq,
        32,
        True,
        "nadam",
        "mean_squared_error",
        (((60, 16), "float32"),),
        "backwards LSTM encoder, RepeatVector, LSTM decoder over 40 steps, batch 32, Nadam",
    ),
    ZooCase(
        "repeat_seq2seq_infer_b64",
        zoo_heldout.repeat_seq2seq,
        64,
        False,
        None,
        None,
        (((60, 16), "float32"),),
        "backwards LSTM encoder, RepeatVector, LSTM decoder over 40 steps, batch 64, inference",
    ),
    ZooCase(
        "gru_v1_dropout_sgdm",
        zoo_heldout.gru_v1_dropout,
        32,
        True,
        {"class_name": "SGD", "config": {"learning_rate": 0.01, "momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((120, 24), "float32"),),
        "two GRUs with reset_after=False and recurrent dropout, 120 steps, batch 32, momentum",
    ),
    ZooCase(
        "stacked_lstm_cells_adam",
        zoo_heldout.stacked_lstm_cells,
        16,
        True,
        "adam",
        "binary_crossentropy",
        (((80,), "int32"),),
        "RNN over StackedRNNCells of two LSTM cells, 80 tokens, batch 16, Adam",
    ),
    ZooCase(
        "grouped_resize_adadelta",
        zoo_heldout.grouped_resize,
        32,
        True,
        "adadelta",
        "sparse_categorical_crossentropy",
        (((40, 40, 3), "float32"),),
        "Resizing, grouped and dilated grouped convolutions, batch 32, Adadelta",
    ),
    ZooCase(
        "unit_norm_mlp_amsgrad_clip",
        zoo_heldout.unit_norm_mlp,
        256,
        True,
        {"class_name": "Adam", "config": {"amsgrad": True, "global_clipnorm": 1.0}},
        "sparse_categorical_crossentropy",
        (((512,), "float32"),),
        "GELU MLP with UnitNormalization, batch 256, AMSGrad with global norm clipping",
    ),
    ZooCase(
        "volume_decoder_sgd",
        zoo_heldout.volume_decoder,
        16,
        True,
        "sgd",
        "mean_squared_error",
        (((128,), "float32"),),
        "Conv3DTranspose decoder to 16^3 voxels, batch 16, SGD",
    ),
    ZooCase(
        "resnet101_64_nesterov",
        zoo_heldout.resnet101_64,
        16,
        True,
        {"class_name": "SGD", "config": {"learning_rate": 0.01, "momentum": 0.9, "nesterov": True}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "ResNet101 at 64x64, batch 16, Nesterov momentum",
    ),
    ZooCase(
        "masked_causal_lm_lion",
        zoo_heldout.masked_causal_lm,
        16,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "two masked causal attention blocks, 64 tokens, 4k vocabulary, batch 16, Lion",
    ),
    ZooCase(
        "densenet169_96_infer",
        zoo_heldout.densenet169_96,
        16,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "DenseNet169 at 96x96, batch 16, inference",
    ),
    # Session 33's second round (see zoo_heldout.py).
    ZooCase(
        "grouped_mixed16_adam",
        zoo_heldout.grouped_mixed16,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 32), "float32"),),
        "grouped and dilated grouped convolutions, mixed_float16, batch 32, Adam",
        "mixed_float16",
    ),
    ZooCase(
        "dilated_depthwise_rmsprop",
        zoo_heldout.dilated_depthwise,
        16,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((64, 64, 16), "float32"),),
        "dilated depthwise convolutions 64x64, batch 16, RMSprop",
    ),
    ZooCase(
        "causal_grouped_tcn_adamw",
        zoo_heldout.causal_grouped_tcn,
        32,
        True,
        "adamw",
        "mean_squared_error",
        (((256, 32), "float32"),),
        "residual causal grouped dilated Conv1D blocks, 256 steps, batch 32, AdamW",
    ),
    ZooCase(
        "bigru_sum_adam",
        zoo_heldout.bigru_sum,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((150, 20), "float32"),),
        "two bidirectional GRUs merged by sum and average, 150 steps, batch 32, Adam",
    ),
    ZooCase(
        "bigru_sum_infer_b64",
        zoo_heldout.bigru_sum,
        64,
        False,
        None,
        None,
        (((150, 20), "float32"),),
        "two bidirectional GRUs merged by sum and average, 150 steps, batch 64, inference",
    ),
    ZooCase(
        "lstm_states_head_rmsprop",
        zoo_heldout.lstm_states_head,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((90, 12), "float32"),),
        "LSTM sequence and states into the head, 90 steps, batch 32, RMSprop",
    ),
    ZooCase(
        "lstm_states_head_infer_b128",
        zoo_heldout.lstm_states_head,
        128,
        False,
        None,
        None,
        (((90, 12), "float32"),),
        "LSTM sequence and states into the head, 90 steps, batch 128, inference",
    ),
    ZooCase(
        "unrolled_gru_sgd",
        zoo_heldout.unrolled_gru,
        64,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((24, 16), "float32"),),
        "two unrolled GRUs over 24 steps, batch 64, SGD",
    ),
    ZooCase(
        "masked_mha_adamw",
        zoo_heldout.masked_mha,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((48,), "int32"), ((48, 48), "bool")),
        "two encoder blocks with an explicit attention mask input, batch 32, AdamW",
    ),
    ZooCase(
        "wide_bag_sgd",
        zoo_heldout.wide_bag,
        256,
        True,
        "sgd",
        "binary_crossentropy",
        (((40,), "int32"),),
        "300,000-row embedding max-pooled, batch 256, SGD",
    ),
    ZooCase(
        "efficientnetv2b1_96_infer",
        zoo_heldout.efficientnetv2b1_96,
        8,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "EfficientNetV2B1 at 96x96, batch 8, inference",
    ),
)

# Session 40's held-out round (zoo_heldout.py says how it was run).
_SGD_MOMENTUM_WD = {
    "class_name": "SGD",
    "config": {"learning_rate": 0.01, "momentum": 0.9, "weight_decay": 1e-4},
}
_CASE_LIST += (
    ZooCase(
        "bn_mlp_wide_schedulefree",
        zoo_heldout.bn_mlp_wide,
        256,
        True,
        "schedulefreeadamw",
        "sparse_categorical_crossentropy",
        (((512,), "float32"),),
        "three 1,024-wide Dense layers with BatchNormalization, batch 256, schedule-free AdamW",
    ),
    ZooCase(
        "muon_encoder",
        zoo_heldout.muon_encoder,
        32,
        True,
        "muon",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "one pre-LN encoder block over 64 tokens, batch 32, Muon",
    ),
    ZooCase(
        "resnet152v2_64_sgdwd",
        zoo_heldout.resnet152v2_64,
        8,
        True,
        _SGD_MOMENTUM_WD,
        "sparse_categorical_crossentropy",
        _IMG64,
        "ResNet152V2 64x64 (58M parameters), batch 8, SGD with momentum and weight decay",
    ),
    ZooCase(
        "efficientnetb3_128_infer",
        zoo_heldout.efficientnetb3_128,
        8,
        False,
        None,
        None,
        (((128, 128, 3), "float32"),),
        "EfficientNetB3 at 128x128, batch 8, inference",
    ),
    ZooCase(
        "maxnorm_cnn_focal_adamw",
        zoo_heldout.maxnorm_cnn,
        64,
        True,
        "adamw",
        "categorical_focal_crossentropy",
        (((40, 40, 3), "float32"),),
        "CNN with MaxNorm constraints and Dropout, focal cross-entropy, batch 64, AdamW",
    ),
    ZooCase(
        "xla_gru_mixed16_adam",
        zoo_heldout.xla_gru_mixed16,
        32,
        True,
        "adam",
        "categorical_crossentropy",
        (((120, 24), "float32"),),
        "GRU over 120 steps, per-step head, jit_compile=True, mixed_float16, batch 32, Adam",
        precision="mixed_float16",
    ),
    ZooCase(
        "transpose_depthwise_rmsprop",
        zoo_heldout.transpose_depthwise,
        32,
        True,
        "rmsprop",
        "mean_squared_error",
        (((48, 48, 8), "float32"),),
        "depthwise multipliers, Conv2DTranspose with output padding, batch 32, RMSprop",
    ),
    ZooCase(
        "retrieval_adamw",
        zoo_heldout.masked_dot_retrieval,
        512,
        True,
        "adamw",
        "binary_crossentropy",
        (((16,), "int32"), ((120,), "int32")),
        "masked shared embedding, query and document, cosine Dot, batch 512, AdamW",
    ),
    ZooCase(
        "xla_unet_adam",
        zoo_heldout.xla_unet,
        8,
        True,
        "adam",
        "categorical_crossentropy",
        _IMG64,
        "two-level U-Net 64x64, jit_compile=True, batch 8, Adam",
    ),
    ZooCase(
        "attention_pooled_kl_adagrad",
        zoo_heldout.attention_pooled_tagger,
        64,
        True,
        "adagrad",
        "kl_divergence",
        (((80,), "int32"),),
        "self-attention and softmax pooling over 80 tokens, KL divergence, batch 64, Adagrad",
    ),
)
_CASE_LIST += (
    _variant("xla_gru_mixed16_adam", 128, infer=True),
    _variant("transpose_depthwise_rmsprop", 64, infer=True),
)

# Session 41's held-out round (zoo_heldout.py says how it was run): frozen
# and partly frozen backbones, LoRA adapters, int8 weights, RMSNorm with
# SwiGLU, a subclassed model.
_ADAMW_CLIPPED = {"class_name": "AdamW", "config": {"learning_rate": 1e-3, "global_clipnorm": 1.0}}
_CASE_LIST += (
    ZooCase(
        "frozen_mobilenetv2_96_adam",
        zoo_heldout.frozen_mobilenetv2_96,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "frozen MobileNetV2 96x96 under a new head, batch 32, Adam",
    ),
    ZooCase(
        "finetune_resnet50_64_sgdm",
        zoo_heldout.finetune_resnet50_64,
        16,
        True,
        _SGD_MOMENTUM,
        "sparse_categorical_crossentropy",
        _IMG64,
        "ResNet50 64x64 frozen before its last stage, batch 16, SGD with momentum",
    ),
    ZooCase(
        "lora_encoder_adamw",
        zoo_heldout.lora_encoder,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((96,), "int32"),),
        "two encoder blocks with rank-8 LoRA adapters over 96 tokens, batch 32, AdamW",
    ),
    ZooCase(
        "int8_mlp_infer",
        zoo_heldout.int8_mlp,
        256,
        False,
        None,
        None,
        (((784,), "float32"),),
        "four 1,024-wide Dense layers quantized to int8, batch 256, inference",
    ),
    ZooCase(
        "int8_encoder_infer",
        zoo_heldout.int8_encoder,
        64,
        False,
        None,
        None,
        (((128,), "int32"),),
        "two encoder blocks of width 256 quantized to int8, 128 tokens, batch 64, inference",
    ),
    ZooCase(
        "rmsnorm_swiglu_decoder_adamw_clip",
        zoo_heldout.rmsnorm_swiglu_decoder,
        16,
        True,
        _ADAMW_CLIPPED,
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "two causal RMSNorm and SwiGLU decoder blocks over 128 tokens, 6k vocabulary, "
        "batch 16, AdamW with global norm clipping",
    ),
    ZooCase(
        "subclassed_residual_mlp_sgd",
        zoo_heldout.subclassed_residual_mlp,
        128,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((256,), "float32"),),
        "subclassed model of six residual 1,024-wide Dense blocks, batch 128, SGD",
    ),
    ZooCase(
        "frozen_efficientnetb0_112_mixed16_adam",
        zoo_heldout.frozen_efficientnetb0_112,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((112, 112, 3), "float32"),),
        "EfficientNetB0 112x112 frozen but its last block, under mixed_float16 (loss scaling), "
        "batch 16, Adam",
        precision="mixed_float16",
    ),
)
_CASE_LIST += (
    _variant("frozen_mobilenetv2_96_adam", 8),
    _variant("lora_encoder_adamw", 64, infer=True),
    _variant("int8_mlp_infer", 16),
    _variant("int8_encoder_infer", 8),
)

# Session 42: int4 and float8 quantization (zoo_heldout.py).
_CASE_LIST += (
    ZooCase(
        "int4_mlp_infer",
        zoo_heldout.int4_mlp,
        256,
        False,
        None,
        None,
        (((784,), "float32"),),
        "four 1,024-wide Dense layers quantized to int4, batch 256, inference",
    ),
    ZooCase(
        "float8_mlp_adam",
        zoo_heldout.float8_mlp,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((512,), "float32"),),
        "three 1,024-wide Dense layers trained in float8, batch 64, Adam",
    ),
    ZooCase(
        "float8_encoder_adamw",
        zoo_heldout.float8_encoder,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((96,), "int32"),),
        "two encoder blocks of width 128 trained in float8, 96 tokens, batch 32, AdamW",
    ),
)
_CASE_LIST += (
    ZooCase(
        "ctc_bigru_adam",
        zoo_heldout.ctc_bigru,
        32,
        True,
        "adam",
        "ctc",
        (((200, 40), "float32"),),
        "convolution and two bidirectional GRUs over 200 frames of 40 features, CTC loss on "
        "30-token labels, batch 32, Adam",
        target_shapes=((30,),),
    ),
)
_CASE_LIST += (
    ZooCase(
        "channels_first_cnn_adam",
        zoo_heldout.channels_first_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((3, 64, 64), "float32"),),
        "three convolutions in channels_first layout on 3x64x64, batch 32, Adam",
    ),
    ZooCase(
        "kl_vae_adam",
        zoo_heldout.kl_vae,
        64,
        True,
        "adam",
        "binary_crossentropy",
        (((28, 28, 1), "float32"),),
        "convolutional VAE whose sampling layer adds its KL loss (add_loss), batch 64, Adam",
    ),
)
_CASE_LIST += (
    _variant("channels_first_cnn_adam", 128),
    _variant("kl_vae_adam", 256),
    _variant("ctc_bigru_adam", 8),
    _variant("int4_mlp_infer", 16),
    _variant("float8_mlp_adam", 512),
    _variant("float8_encoder_adamw", 64, infer=True),
)

# Session 43: remat, stateful RNNs, a user-written cell, uint8 images, dict
# losses with loss_weights, steps_per_execution (zoo_heldout.py).
_CASE_LIST += (
    ZooCase(
        "remat_cnn_adam",
        zoo_heldout.remat_cnn,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "five convolutions, the large ones under RematScope, 64x64, batch 64, Adam",
    ),
    ZooCase(
        "stateful_gru_rmsprop",
        zoo_heldout.stateful_gru,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((60, 16), "float32"),),
        "two stateful GRUs over 60 steps, batch 32 (fixed), RMSprop",
    ),
    ZooCase(
        "stateful_gru_rmsprop_b8",
        zoo_heldout.stateful_gru_b8,
        8,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((60, 16), "float32"),),
        "two stateful GRUs over 60 steps, batch 8 (fixed), RMSprop",
    ),
    ZooCase(
        "custom_cell_rnn_adam",
        zoo_heldout.custom_cell_rnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((120, 32), "float32"),),
        "two RNNs of a user-written gated cell over 120 steps, batch 32, Adam",
    ),
    ZooCase(
        "uint8_cnn_adam",
        zoo_heldout.uint8_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "uint8"),),
        "BatchNorm CNN on uint8 96x96 images rescaled in the model, batch 32, Adam",
    ),
    ZooCase(
        "two_head_detector_adam",
        zoo_heldout.two_head_detector,
        32,
        True,
        "adam",
        None,
        (((64, 64, 3), "float32"),),
        "CNN with class and box heads, focal and Huber losses weighted, batch 32, Adam",
    ),
    ZooCase(
        "multi_step_cnn_adam",
        zoo_heldout.multi_step_cnn,
        32,
        True,
        "adam",
        None,
        (((64, 64, 3), "float32"),),
        "small CNN compiled with steps_per_execution=8, batch 32, Adam",
    ),
)
_CASE_LIST += (
    ZooCase(
        "fori_refine_adam",
        zoo_heldout.fori_refine,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((512,), "float32"),),
        "a Dense layer applied six times in keras.ops.fori_loop, width 512, batch 32, Adam",
    ),
)
_CASE_LIST += (
    _variant("fori_refine_adam", 256),
    _variant("remat_cnn_adam", 16),
    _variant("stateful_gru_rmsprop", 32, infer=True),
    _variant("custom_cell_rnn_adam", 8),
    _variant("uint8_cnn_adam", 128, infer=True),
    _variant("two_head_detector_adam", 128),
    _variant("multi_step_cnn_adam", 128),
)

# Session 44: pixel shuffle, a top-k mixture of experts, keras.ops.scan, a
# graph convolution, Perceiver latents, axial attention, ignore_class, and
# stochastic depth with keras.ops.cond (zoo_heldout.py).
_CASE_LIST += (
    ZooCase(
        "pixel_shuffle_sr_adam",
        zoo_heldout.pixel_shuffle_sr,
        16,
        True,
        "adam",
        "mse",
        (((48, 48, 3), "float32"),),
        "ESPCN-style 3x super-resolution with depth_to_space, 48x48 to 144x144, batch 16, Adam",
    ),
    ZooCase(
        "moe_tokens_adamw",
        zoo_heldout.moe_tokens,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((64,), "int32"),),
        "embedding, a top-2-of-8 mixture of experts over 64 tokens, batch 32, AdamW",
    ),
    ZooCase(
        "scan_decay_rnn_rmsprop",
        zoo_heldout.scan_decay_rnn,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((200, 32), "float32"),),
        "two learned exponential decays in keras.ops.scan over 200 steps, batch 32, RMSprop",
    ),
    ZooCase(
        "gcn_graphs_adam",
        zoo_heldout.gcn_graphs,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 32), "float32"), ((64, 64), "float32")),
        "three graph convolutions over 64-node graphs (features, adjacency), batch 32, Adam",
    ),
    ZooCase(
        "perceiver_latents_adam",
        zoo_heldout.perceiver_latents,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((256, 64), "float32"),),
        "32 learned latents attending to 256 tokens, two self-attention blocks, batch 32, Adam",
    ),
    ZooCase(
        "axial_attention_adam",
        zoo_heldout.axial_attention,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "four axial MultiHeadAttention blocks on a 16x16 map, batch 16, Adam",
    ),
    ZooCase(
        "ignore_class_segmenter_sgdm",
        zoo_heldout.ignore_class_segmenter,
        16,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        None,
        (((96, 96, 3), "float32"),),
        "one-level U-Net, 6 classes, cross-entropy with ignore_class=0, batch 16, SGD momentum",
    ),
    ZooCase(
        "stochastic_depth_cnn_adam",
        zoo_heldout.stochastic_depth_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "four residual blocks dropped by keras.ops.cond (stochastic depth), 64x64, batch 32, Adam",
    ),
)
_CASE_LIST += (
    _variant("pixel_shuffle_sr_adam", 64, infer=True),
    _variant("moe_tokens_adamw", 128),
    _variant("scan_decay_rnn_rmsprop", 8),
    _variant("gcn_graphs_adam", 256, infer=True),
    _variant("perceiver_latents_adam", 128),
    _variant("axial_attention_adam", 64),
    _variant("ignore_class_segmenter_sgdm", 64),
    _variant("stochastic_depth_cnn_adam", 128),
)

_CASE_LIST += (
    ZooCase(
        "map_fn_cnn_adam",
        zoo_heldout.map_fn_cnn,
        256,
        True,
        "adam",
        "mse",
        (((32, 32, 3), "float32"),),
        "tf.map_fn flipping each image, then a convolution, 32x32, batch 256, Adam",
    ),
    ZooCase(
        "bilstm_states_adam",
        zoo_heldout.bilstm_states,
        256,
        True,
        "adam",
        "mse",
        (((40, 8), "float32"),),
        "bidirectional LSTM(16) with return_state over 40 steps, batch 256, Adam",
    ),
)
_CASE_LIST += (
    _variant("map_fn_cnn_adam", 256, infer=True),
    _variant("bilstm_states_adam", 256, infer=True),
)

# Session 45: a Fourier token mixer, a mel spectrogram front-end, Cholesky
# whitening, a sort-and-cumsum pooling, extract_patches, ConvLSTM1D, a
# CosineDecay schedule with CenterCrop, and ops.where with ops.cumsum.
_CASE_LIST += (
    ZooCase(
        "fnet_mixer_adam",
        zoo_heldout.fnet_mixer,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "FNet: two blocks mixing 128 tokens with keras.ops.fft2, width 128, batch 32, Adam",
    ),
    ZooCase(
        "mel_audio_cnn_adam",
        zoo_heldout.mel_audio_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((16000,), "float32"),),
        "MelSpectrogram layer on 1 s of 16 kHz audio, three convolutions, batch 32, Adam",
    ),
    ZooCase(
        "whitened_features_sgdm",
        zoo_heldout.whitened_features,
        256,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((64,), "float32"),),
        "Cholesky whitening (triangular solve), then an MLP, batch 256, SGD momentum",
    ),
    ZooCase(
        "sorted_pool_ranker_rmsprop",
        zoo_heldout.sorted_pool_ranker,
        64,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((50, 32), "float32"),),
        "50 candidates scored, sorted (argsort) and cumsum-pooled, batch 64, RMSprop",
    ),
    ZooCase(
        "patch_vit_adamw",
        zoo_heldout.patch_vit,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "vision transformer on extract_patches tokens (64 of 8x8), two blocks, batch 32, AdamW",
    ),
    ZooCase(
        "convlstm1d_frames_adam",
        zoo_heldout.convlstm1d_frames,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((10, 64, 8), "float32"),),
        "two ConvLSTM1D layers over 10 frames of 64 points, batch 32, Adam",
    ),
    ZooCase(
        "cropped_cosine_cnn_sgdn",
        zoo_heldout.cropped_cosine_cnn,
        32,
        True,
        {
            "class_name": "SGD",
            "config": {
                "learning_rate": {
                    "module": "keras.optimizers.schedules",
                    "class_name": "CosineDecay",
                    "config": {"initial_learning_rate": 0.05, "decay_steps": 1000},
                },
                "momentum": 0.9,
                "nesterov": True,
            },
        },
        "sparse_categorical_crossentropy",
        (((80, 80, 3), "float32"),),
        "CenterCrop 80 to 64, GaussianNoise, six convolutions, CosineDecay, batch 32, SGD Nesterov",
    ),
    ZooCase(
        "causal_mean_tcn_lion",
        zoo_heldout.causal_mean_tcn,
        32,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((256, 16), "float32"),),
        "causal convolutions, ops.where gates, ops.cumsum means, 256 steps, batch 32, Lion",
    ),
)
_CASE_LIST += (
    _variant("fnet_mixer_adam", 128),
    _variant("mel_audio_cnn_adam", 128, infer=True),
    _variant("whitened_features_sgdm", 1024),
    _variant("sorted_pool_ranker_rmsprop", 512, infer=True),
    _variant("patch_vit_adamw", 128),
    _variant("convlstm1d_frames_adam", 128, infer=True),
    _variant("cropped_cosine_cnn_sgdn", 128),
    _variant("causal_mean_tcn_lion", 256, infer=True),
)

_CASE_LIST += (
    ZooCase(
        "convlstm3d_volumes_adam",
        zoo_heldout.convlstm3d_volumes,
        8,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((6, 16, 16, 16, 2), "float32"),),
        "ConvLSTM3D over 6 frames of 16^3 volumes, batch 8, Adam",
    ),
    ZooCase(
        "hierarchical_lstm_rmsprop",
        zoo_heldout.hierarchical_lstm,
        32,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((20, 12), "int32"),),
        "TimeDistributed(LSTM) over 12 characters of 20 words, then an LSTM, batch 32, RMSprop",
    ),
    ZooCase(
        "recurrent_dropout_gru_sgdm",
        zoo_heldout.recurrent_dropout_gru,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((100, 24), "float32"),),
        "two GRUs with dropout and recurrent_dropout over 100 steps, batch 32, SGD momentum",
    ),
    ZooCase(
        "concat_attention_adam",
        zoo_heldout.concat_attention,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((64, 24), "float32"), ((96, 24), "float32")),
        "Attention(score_mode='concat'), 64 queries by 96 values of width 48, batch 32, Adam",
    ),
    ZooCase(
        "rms_bidirectional_adam",
        zoo_heldout.rms_bidirectional,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((60, 16), "float32"),),
        "Bidirectional LSTM with merge_mode=None, RMSNormalization, batch 64, Adam",
    ),
    ZooCase(
        "bicubic_upsampler_adam",
        zoo_heldout.bicubic_upsampler,
        16,
        True,
        "adam",
        "mse",
        (((32, 32, 3), "float32"),),
        "bicubic ops.image.resize 32 to 64 between PReLU convolutions, batch 16, Adam",
    ),
)
_CASE_LIST += (
    _variant("convlstm3d_volumes_adam", 32, infer=True),
    _variant("hierarchical_lstm_rmsprop", 128, infer=True),
    _variant("recurrent_dropout_gru_sgdm", 128),
    _variant("concat_attention_adam", 128, infer=True),
    _variant("rms_bidirectional_adam", 256, infer=True),
    _variant("bicubic_upsampler_adam", 64),
)

# Session 37: models compiled with metrics, which Keras's step updates after
# the optimizer's (the estimate traced no metric before then).
_CASE_LIST += (
    ZooCase(
        "scored_token_lm_adam",
        scored_token_lm,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "token classifier over an 8k vocabulary with accuracy, 128 tokens, batch 16, Adam",
    ),
    ZooCase(
        "scored_multilabel_adam",
        scored_multilabel,
        128,
        True,
        "adam",
        "binary_crossentropy",
        (((256,), "float32"),),
        "1000-label sigmoid tagger with per-label AUC, precision, recall, batch 128, Adam",
    ),
    ZooCase(
        "scored_cnn_adam",
        scored_cnn,
        64,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "BatchNorm CNN with accuracy and top-3 accuracy, batch 64, Adam",
    ),
    ZooCase(
        "scored_segmenter_adam",
        scored_segmenter,
        8,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((128, 128, 3), "float32"),),
        "21-class segmenter with mean IoU and accuracy at 128x128, batch 8, Adam",
    ),
)
_CASE_LIST += (
    _variant("scored_token_lm_adam", 8),
    _variant("scored_multilabel_adam", 32),
)

#: Session 60's held-out round: per-variable optimizers (``MultiOptimizer``),
#: the fine-tuning split users write: momentum SGD for the convolutions, Adam
#: for the head.
_FINETUNE_SPLIT = multi_optimizer_spec(
    {"module": "keras.optimizers", "class_name": "SGD", "config": {"momentum": 0.9}},
    {".*dense.*": {"module": "keras.optimizers", "class_name": "Adam", "config": {}}},
)

# Session 60: adaptive pooling, tied input and output embeddings, an STFT
# front-end, a 3D U-Net (also under XLA), a list of RNN cells in one loop,
# SpatialDropout1D, in-model augmentation, Minimum/Average merges and a
# MultiOptimizer.
_CASE_LIST += (
    ZooCase(
        "adaptive_pool_cnn_adam",
        zoo_heldout.adaptive_pool_cnn,
        32,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((72, 72, 3), "float32"),),
        "ELU CNN pooled to 5x5 by AdaptiveAveragePooling2D at 72x72, batch 32, Adam",
    ),
    ZooCase(
        "adaptive_pool_cnn_multiopt",
        zoo_heldout.adaptive_pool_cnn,
        32,
        True,
        _FINETUNE_SPLIT,
        "sparse_categorical_crossentropy",
        (((72, 72, 3), "float32"),),
        "the same CNN under MultiOptimizer (momentum SGD, Adam for the Dense), batch 32",
    ),
    ZooCase(
        "tied_lm_adamw",
        zoo_heldout.tied_lm,
        16,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "causal LM with ReversibleEmbedding tied logits, vocab 6,000, batch 16, AdamW",
    ),
    ZooCase(
        "tied_lm_mixedbf16_adamw",
        zoo_heldout.tied_lm,
        16,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "the tied-embedding LM under mixed_bfloat16, batch 16, AdamW",
        precision="mixed_bfloat16",
    ),
    ZooCase(
        "stft_gru_rmsprop",
        zoo_heldout.stft_gru,
        16,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((8000, 1), "float32"),),
        "STFTSpectrogram on 8,000 samples, two GRU(64), batch 16, RMSprop",
    ),
    ZooCase(
        "volume_segmenter_adam",
        zoo_heldout.volume_segmenter,
        4,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((30, 30, 30, 1), "float32"),),
        "3D U-Net with AveragePooling3D, SpatialDropout3D, UpSampling3D, Cropping3D, batch 4, Adam",
    ),
    ZooCase(
        "xla_volume_segmenter_adam",
        zoo_heldout.xla_volume_segmenter,
        4,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((30, 30, 30, 1), "float32"),),
        "the 3D U-Net with jit_compile=True, batch 4, Adam",
    ),
    ZooCase(
        "cell_stack_rnn_nadam",
        zoo_heldout.cell_stack_rnn,
        32,
        True,
        "nadam",
        "sparse_categorical_crossentropy",
        (((100, 24), "float32"),),
        "RNN([GRUCell(64), SimpleRNNCell(64)]) over 100 steps, batch 32, Nadam",
    ),
    ZooCase(
        "spatial_dropout_textcnn_adamax",
        zoo_heldout.spatial_dropout_textcnn,
        64,
        True,
        "adamax",
        "sparse_categorical_crossentropy",
        (((400,), "int32"),),
        "text CNN with SpatialDropout1D and AveragePooling1D over 400 tokens, batch 64, Adamax",
    ),
    ZooCase(
        "spatial_dropout_textcnn_mixed16_adamax",
        zoo_heldout.spatial_dropout_textcnn,
        64,
        True,
        "adamax",
        "sparse_categorical_crossentropy",
        (((400,), "int32"),),
        "the text CNN under mixed_float16 (loss scaling), batch 64, Adamax",
        precision="mixed_float16",
    ),
    ZooCase(
        "augment_crop_cnn_sgd",
        zoo_heldout.augment_crop_cnn,
        64,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": True}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "RandomCrop, RandomTranslation, RandomContrast, RandomBrightness, CNN, batch 64, "
        "Nesterov SGD",
    ),
    ZooCase(
        "min_avg_tabular_adagrad",
        zoo_heldout.min_avg_tabular,
        512,
        True,
        "adagrad",
        "mean_squared_error",
        (((64,), "float32"),),
        "three ELU branches merged by Minimum and Average, GaussianDropout, batch 512, Adagrad",
    ),
)
_CASE_LIST += (
    _variant("adaptive_pool_cnn_adam", 128, infer=True),
    _variant("stft_gru_rmsprop", 64, infer=True),
    _variant("volume_segmenter_adam", 8),
    _variant("cell_stack_rnn_nadam", 128, infer=True),
    _variant("augment_crop_cnn_sgd", 64, infer=True),
    _variant("min_avg_tabular_adagrad", 2048),
)


# Session 61: adaptive max pooling (1D, 3D), HashedCrossing and Normalization,
# GlobalMaxPooling3D and Identity, colour and geometric augmentation (also in a
# Pipeline), an unrolled LSTM and a reset_after=False GRU, 2D attention axes,
# bilinear upsampling, pure bfloat16 training; Lamb, Ftrl, Adam's weight decay,
# clipvalue; Huber, Poisson, categorical and squared hinge, log-cosh, cosine
# similarity and Dice losses.
_CASE_LIST += (
    ZooCase(
        "adaptive_max_audio_lamb",
        zoo_heldout.adaptive_max_audio,
        32,
        True,
        {"class_name": "Lamb", "config": {}},
        "huber",
        (((16000, 1), "float32"),),
        "strided Conv1D on 16,000 samples, AdaptiveMaxPooling1D to 16 steps, batch 32, Lamb, Huber",
    ),
    ZooCase(
        "crossed_tabular_ftrl",
        zoo_heldout.crossed_tabular,
        1024,
        True,
        "ftrl",
        "poisson",
        (((24,), "float32"), ((1,), "int32"), ((1,), "int32")),
        "Normalization and a HashedCrossing of two ids into 4,096 embedded bins, batch 1024, "
        "Ftrl, Poisson",
    ),
    ZooCase(
        "pooled_volume_net_adamwd",
        zoo_heldout.pooled_volume_net,
        8,
        True,
        {"class_name": "Adam", "config": {"weight_decay": 0.004}},
        "categorical_hinge",
        (((24, 24, 24, 2), "float32"),),
        "Conv3D on 24^3 volumes, AdaptiveMaxPooling3D and GlobalMaxPooling3D, batch 8, "
        "Adam with weight decay, categorical hinge",
    ),
    ZooCase(
        "color_jitter_cnn_sgdclip",
        zoo_heldout.color_jitter_cnn,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "clipvalue": 0.5}},
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "RandomHue, RandomSaturation, RandomGrayscale, RandomGaussianBlur, RandomErasing, CNN, "
        "batch 32, SGD momentum with clipvalue",
    ),
    ZooCase(
        "shear_pipeline_cnn_adadelta",
        zoo_heldout.shear_pipeline_cnn,
        32,
        True,
        "adadelta",
        "squared_hinge",
        (((64, 64, 3), "float32"),),
        "Pipeline of RandomShear, RandomPerspective, Solarization, strided CNN, batch 32, "
        "Adadelta, squared hinge",
    ),
    ZooCase(
        "unrolled_recurrent_nadam",
        zoo_heldout.unrolled_recurrent,
        64,
        True,
        "nadam",
        "log_cosh",
        (((24, 16), "float32"),),
        "LSTM(128, unroll=True) over 24 steps, backward GRU(reset_after=False), batch 64, "
        "Nadam, log-cosh",
    ),
    ZooCase(
        "grid_attention_adafactor",
        zoo_heldout.grid_attention,
        16,
        True,
        "adafactor",
        "cosine_similarity",
        (((16, 16, 24), "float32"),),
        "MultiHeadAttention over both axes of a 16x16 grid, two blocks, batch 16, Adafactor, "
        "cosine similarity",
    ),
    ZooCase(
        "dice_segmenter_lion",
        zoo_heldout.dice_segmenter,
        16,
        True,
        "lion",
        "dice",
        (((96, 96, 3), "float32"),),
        "SeparableConv2D encoder, bilinear UpSampling2D, sigmoid mask at 96x96, batch 16, Lion, "
        "Dice",
    ),
    ZooCase(
        "dice_segmenter_mixed16_lion",
        zoo_heldout.dice_segmenter,
        16,
        True,
        "lion",
        "dice",
        (((96, 96, 3), "float32"),),
        "the Dice segmenter under mixed_float16 (loss scaling), batch 16, Lion",
        precision="mixed_float16",
    ),
    ZooCase(
        "bf16_conv_classifier_sgd",
        zoo_heldout.bf16_conv_classifier,
        64,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "BatchNorm CNN in pure bfloat16 at 64x64, batch 64, SGD",
        precision="bfloat16",
    ),
)
_CASE_LIST += (
    _variant("adaptive_max_audio_lamb", 128, infer=True),
    _variant("crossed_tabular_ftrl", 4096),
    _variant("pooled_volume_net_adamwd", 32, infer=True),
    _variant("color_jitter_cnn_sgdclip", 96),
    _variant("shear_pipeline_cnn_adadelta", 64, infer=True),
    _variant("unrolled_recurrent_nadam", 256),
    _variant("grid_attention_adafactor", 64, infer=True),
    _variant("bf16_conv_classifier_sgd", 256, infer=True),
)

# Session 62's held-out round (builders in zoo_heldout.py, written before any estimate).
_CASE_LIST += (
    ZooCase(
        "posterized_cnn_sfadamw",
        zoo_heldout.posterized_cnn,
        64,
        True,
        "ScheduleFreeAdamW",
        "sparse_categorical_crossentropy",
        (((56, 56, 3), "float32"),),
        "RandomInvert, RandomPosterization, RandomSharpness, RandomColorDegeneration, CNN, "
        "AdaptiveMaxPooling2D, batch 64, ScheduleFreeAdamW",
    ),
    ZooCase(
        "pooled_sensor_gru_adagradclip",
        zoo_heldout.pooled_sensor_gru,
        32,
        True,
        {"class_name": "Adagrad", "config": {"clipnorm": 1.0}},
        "mean_squared_logarithmic_error",
        (((4096, 6), "float32"),),
        "Conv1D over 4,096 samples, AdaptiveAveragePooling1D, bidirectional GRU, batch 32, "
        "Adagrad with clipnorm, mean squared log error",
    ),
    ZooCase(
        "tversky_unet_adamwclip",
        zoo_heldout.tversky_unet,
        8,
        True,
        {"class_name": "AdamW", "config": {"global_clipnorm": 1.0}},
        "tversky",
        (((128, 128, 1), "float32"),),
        "two-level U-Net with GroupNormalization and Conv2DTranspose at 128x128, batch 8, "
        "AdamW with global_clipnorm, Tversky",
    ),
    ZooCase(
        "siamese_tower_rmspropm",
        zoo_heldout.siamese_tower,
        64,
        True,
        {"class_name": "RMSprop", "config": {"momentum": 0.9}},
        "binary_focal_crossentropy",
        (((40, 40, 1), "float32"), ((40, 40, 1), "float32")),
        "a Sequential CNN tower shared by two 40x40 inputs, |difference| head, batch 64, "
        "RMSprop with momentum, binary focal",
    ),
    ZooCase(
        "subclassed_resnet_mixedbf16_adam",
        zoo_heldout.subclassed_resnet,
        32,
        True,
        {"class_name": "Adam", "config": {"amsgrad": True}},
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "subclassed Model of custom residual Layers at 48x48, mixed_bfloat16, batch 32, "
        "Adam with amsgrad",
        precision="mixed_bfloat16",
    ),
    ZooCase(
        "xla_separable_net_rmsprop",
        zoo_heldout.xla_separable_net,
        64,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((80, 80, 3), "float32"),),
        "DepthwiseConv2D and pointwise stack with BatchNorm at 80x80, jit_compile=True, "
        "batch 64, RMSprop",
    ),
    ZooCase(
        "float64_residual_regressor_sgdn",
        zoo_heldout.float64_residual_regressor,
        512,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": True}},
        "mean_absolute_percentage_error",
        (((48,), "float32"),),
        "residual MLP with Dropout in float64, batch 512, SGD with Nesterov momentum, "
        "mean absolute percentage error",
        precision="float64",
    ),
    ZooCase(
        "masked_multitask_text_adamema",
        zoo_heldout.masked_multitask_text,
        64,
        True,
        {"class_name": "Adam", "config": {"use_ema": True}},
        "binary_crossentropy",
        (((200,), "int32"),),
        "Embedding(mask_zero) over 200 tokens, Conv1D and masked mean, two sigmoid outputs, "
        "batch 64, Adam with EMA",
    ),
    ZooCase(
        "bert_style_encoder_adamw_accum2",
        zoo_heldout.bert_style_encoder,
        16,
        True,
        {"class_name": "AdamW", "config": {"gradient_accumulation_steps": 2}},
        "sparse_categorical_crossentropy",
        (((192,), "int32"), ((192,), "int32")),
        "4-block BERT-style encoder over 192 tokens with segment embeddings, batch 16, "
        "AdamW accumulating over 2 steps",
    ),
)
_CASE_LIST += (
    _variant("posterized_cnn_sfadamw", 160),
    _variant("pooled_sensor_gru_adagradclip", 128, infer=True),
    _variant("tversky_unet_adamwclip", 24),
    _variant("siamese_tower_rmspropm", 256, infer=True),
    _variant("subclassed_resnet_mixedbf16_adam", 96),
    _variant("xla_separable_net_rmsprop", 256, infer=True),
    _variant("float64_residual_regressor_sgdn", 4096),
    _variant("masked_multitask_text_adamema", 256, infer=True),
    _variant("bert_style_encoder_adamw_accum2", 64, infer=True),
)

# Session 62's second round: keras.applications models the zoo did not have.
_CASE_LIST += (
    ZooCase(
        "vgg19_64_adamw",
        zoo_heldout.vgg19_64,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "VGG19 64x64, batch 32, AdamW",
    ),
    ZooCase(
        "efficientnetv2b2_96_mixed16_sgdm",
        zoo_heldout.efficientnetv2b2_96,
        16,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "EfficientNetV2B2 96x96, mixed_float16 (loss scaling), batch 16, SGD with momentum",
        precision="mixed_float16",
    ),
    ZooCase(
        "convnext_small_64_infer",
        zoo_heldout.convnext_small_64,
        32,
        False,
        None,
        None,
        (((64, 64, 3), "float32"),),
        "ConvNeXtSmall 64x64, batch 32, inference",
    ),
    ZooCase(
        "densenet201_64_rmsprop",
        zoo_heldout.densenet201_64,
        8,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "DenseNet201 64x64, batch 8, RMSprop",
    ),
    ZooCase(
        "resnet152_96_infer",
        zoo_heldout.resnet152_96,
        32,
        False,
        None,
        None,
        (((96, 96, 3), "float32"),),
        "ResNet152 96x96, batch 32, inference",
    ),
    ZooCase(
        "efficientnetb2_96_adam",
        zoo_heldout.efficientnetb2_96,
        16,
        True,
        "adam",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "EfficientNetB2 96x96, batch 16, Adam",
    ),
)

# Session 63's held-out round (builders in zoo_heldout.py, written before any estimate).
_CASE_LIST += (
    ZooCase(
        "elastic_contrast_cnn_sgdwd",
        zoo_heldout.elastic_contrast_cnn,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "weight_decay": 1e-4}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "RandomElasticTransform, AutoContrast, RandomColorJitter, CNN at 64x64, "
        "batch 32, SGD with momentum and weight decay",
    ),
    ZooCase(
        "moe_token_mixer_adamclipv",
        zoo_heldout.moe_token_mixer,
        32,
        True,
        {"class_name": "Adam", "config": {"clipvalue": 1.0}},
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "two attention blocks with a top-2 mixture of 8 experts over 128 tokens, batch 32, "
        "Adam with clipvalue",
    ),
    ZooCase(
        "sortpool_point_net_nadam",
        zoo_heldout.sortpool_point_net,
        32,
        True,
        "nadam",
        "sparse_categorical_crossentropy",
        (((1024, 3), "float32"),),
        "PointNet over 1,024 points with sort pooling, batch 32, Nadam",
    ),
    ZooCase(
        "circle_embedder_adam",
        zoo_heldout.circle_embedder,
        64,
        True,
        "adam",
        "circle",
        (((32, 32, 3), "float32"),),
        "CNN to an L2-normalised embedding at 32x32, circle loss on class ids, batch 64, Adam",
        target_shapes=((),),
    ),
    ZooCase(
        "volume_mae_regressor_rmspropwd",
        zoo_heldout.volume_mae_regressor,
        8,
        True,
        {"class_name": "RMSprop", "config": {"weight_decay": 1e-4}},
        "mean_absolute_error",
        (((32, 32, 32, 1), "float32"),),
        "Conv3D with BatchNorm on 32^3 volumes, AdaptiveAveragePooling3D, batch 8, "
        "RMSprop with weight decay, mean absolute error",
    ),
    ZooCase(
        "rope_swiglu_decoder_adamw",
        zoo_heldout.rope_swiglu_decoder,
        8,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((256,), "int32"),),
        "3-block causal decoder from keras.ops with rotary embeddings, RMSNormalization and "
        "SwiGLU over 256 tokens, batch 8, AdamW",
    ),
    ZooCase(
        "randaugment_cnn_adamax",
        zoo_heldout.randaugment_cnn,
        64,
        True,
        "adamax",
        "sparse_categorical_crossentropy",
        (((48, 48, 3), "float32"),),
        "RandAugment, BatchNorm CNN at 48x48, batch 64, Adamax",
    ),
    ZooCase(
        "masked_bilstm_average_rmsprop",
        zoo_heldout.masked_bilstm_average,
        32,
        True,
        "rmsprop",
        "log_cosh",
        (((300, 40), "float32"),),
        "Masking, bidirectional LSTM averaged, LSTM over 300 steps, batch 32, RMSprop, log-cosh",
    ),
    ZooCase(
        "resnet101v2_64_nadam",
        zoo_heldout.resnet101v2_64,
        32,
        True,
        "nadam",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "ResNet101V2 64x64, batch 32, Nadam",
    ),
    ZooCase(
        "efficientnetv2s_96_sgd",
        zoo_heldout.efficientnetv2s_96,
        16,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "EfficientNetV2S 96x96, batch 16, SGD",
    ),
)
_CASE_LIST += (
    _variant("elastic_contrast_cnn_sgdwd", 96),
    _variant("moe_token_mixer_adamclipv", 128, infer=True),
    _variant("sortpool_point_net_nadam", 128),
    _variant("circle_embedder_adam", 256),
    _variant("volume_mae_regressor_rmspropwd", 32, infer=True),
    _variant("rope_swiglu_decoder_adamw", 16, infer=True),
    _variant("randaugment_cnn_adamax", 192),
    _variant("masked_bilstm_average_rmsprop", 128, infer=True),
    _variant("resnet101v2_64_nadam", 64, infer=True),
    _variant("efficientnetv2s_96_sgd", 64, infer=True),
)

# Session 64's held-out round: written and committed before any estimate.
_CASE_LIST += (
    ZooCase(
        "augmix_cnn_adadelta",
        zoo_heldout.augmix_cnn,
        64,
        True,
        "adadelta",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "AugMix, six-conv CNN at 32x32, batch 64, Adadelta",
    ),
    ZooCase(
        "cutmix_mixup_cnn_lamb",
        zoo_heldout.cutmix_mixup_cnn,
        32,
        True,
        "lamb",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "CutMix and MixUp, BatchNorm CNN at 64x64, batch 32, Lamb",
    ),
    ZooCase(
        "clahe_gray_cnn_rmspropc",
        zoo_heldout.clahe_gray_cnn,
        64,
        True,
        {"class_name": "RMSprop", "config": {"centered": True}},
        "sparse_categorical_crossentropy",
        (((64, 64, 1), "float32"),),
        "CLAHE, CNN on 64x64 greyscale, batch 64, centred RMSprop",
    ),
    ZooCase(
        "residual_subpixel_sr_amsgrad",
        zoo_heldout.residual_subpixel_sr,
        16,
        True,
        {"class_name": "Adam", "config": {"amsgrad": True}},
        "mean_squared_error",
        (((32, 32, 3), "float32"),),
        "4x super-resolution 32x32 to 128x128 by depth_to_space, batch 16, Adam with AMSGrad",
    ),
    ZooCase(
        "glu_conv_lm_adamwema",
        zoo_heldout.glu_conv_lm,
        16,
        True,
        {"class_name": "AdamW", "config": {"use_ema": True, "ema_momentum": 0.999}},
        "sparse_categorical_crossentropy",
        (((512,), "int32"),),
        "Gated causal Conv1D language model over 512 tokens, batch 16, AdamW with EMA",
    ),
    ZooCase(
        "graph_message_passer_sgdn",
        zoo_heldout.graph_message_passer,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": True}},
        "categorical_generalized_cross_entropy",
        (((256, 32), "float32"), ((1024,), "int32"), ((1024,), "int32")),
        "Three rounds of message passing on 256-node graphs, batch 32, Nesterov SGD, "
        "generalised cross-entropy on class ids",
        target_shapes=((),),
    ),
    ZooCase(
        "sdpa_vit_adamgc",
        zoo_heldout.sdpa_vit,
        32,
        True,
        {"class_name": "Adam", "config": {"global_clipnorm": 1.0}},
        "sparse_categorical_crossentropy",
        (((56, 56, 3), "float32"),),
        "4-block ViT on 56x56 with ops.dot_product_attention, batch 32, Adam with global_clipnorm",
    ),
    ZooCase(
        "global_filter_net_adagrad",
        zoo_heldout.global_filter_net,
        32,
        True,
        "adagrad",
        "huber",
        (((1024, 16), "float32"),),
        "3-block global-filter net (rfft, complex filter, irfft) over 1024 steps, batch 32, "
        "Adagrad, Huber",
    ),
    ZooCase(
        "efficientnetv2b3_96_lion",
        zoo_heldout.efficientnetv2b3_96,
        16,
        True,
        "lion",
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "EfficientNetV2B3 96x96, batch 16, Lion",
    ),
    ZooCase(
        "convnext_base_64_sgdm",
        zoo_heldout.convnext_base_64,
        8,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "ConvNeXtBase (88M parameters) 64x64, batch 8, SGD with momentum",
    ),
)
_CASE_LIST += (
    _variant("augmix_cnn_adadelta", 192),
    _variant("cutmix_mixup_cnn_lamb", 96),
    _variant("clahe_gray_cnn_rmspropc", 256, infer=True),
    _variant("residual_subpixel_sr_amsgrad", 32, infer=True),
    _variant("glu_conv_lm_adamwema", 32, infer=True),
    _variant("graph_message_passer_sgdn", 128),
    _variant("sdpa_vit_adamgc", 128, infer=True),
    _variant("global_filter_net_adagrad", 96),
    _variant("efficientnetv2b3_96_lion", 64, infer=True),
    _variant("convnext_base_64_sgdm", 32, infer=True),
)

# Session 65's held-out round: written and committed before any estimate.
_CASE_LIST += (
    ZooCase(
        "scan_recurrence_lm_adamcn",
        zoo_heldout.scan_recurrence_lm,
        16,
        True,
        {"class_name": "Adam", "config": {"clipnorm": 1.0}},
        "sparse_categorical_crossentropy",
        (((256,), "int32"),),
        "3-block linear recurrence by ops.associative_scan over 256 tokens, batch 16, "
        "Adam with clipnorm",
    ),
    ZooCase(
        "affine_warp_selu_cnn_ftrl",
        zoo_heldout.affine_warp_selu_cnn,
        64,
        True,
        "ftrl",
        "kl_divergence",
        (((48, 48, 3), "float32"),),
        "Random affine warp by ops.image.affine_transform, SELU CNN at 48x48, batch 64, Ftrl, "
        "KL divergence",
    ),
    ZooCase(
        "while_loop_refiner_rmspropm",
        zoo_heldout.while_loop_refiner,
        256,
        True,
        {"class_name": "RMSprop", "config": {"momentum": 0.9}},
        "cosine_similarity",
        (((384,), "float32"),),
        "Shared residual MLP applied 5 times in ops.while_loop, batch 256, RMSprop with momentum, "
        "cosine similarity",
    ),
    ZooCase(
        "vmap_standardized_cnn_sgdwd",
        zoo_heldout.vmap_standardized_cnn,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "weight_decay": 1e-4}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "Per-image standardisation by ops.vectorized_map, hard-swish CNN at 64x64, "
        "mixed_bfloat16, batch 32, SGD with momentum and weight decay",
        precision="mixed_bfloat16",
    ),
    ZooCase(
        "segment_count_pointnet_nadam",
        zoo_heldout.segment_count_pointnet,
        32,
        True,
        "nadam",
        "poisson",
        (((1024, 3), "float32"), ((1024,), "int32")),
        "Per-point MLP pooled per region by ops.segment_max and segment_sum, 1024 points, "
        "batch 32, Nadam, Poisson",
    ),
    ZooCase(
        "mish_tcn_logsumexp_adamw",
        zoo_heldout.mish_tcn_logsumexp,
        32,
        True,
        "adamw",
        "mean_squared_logarithmic_error",
        (((2048, 8), "float32"),),
        "Dilated causal Conv1D TCN with mish over 2048 steps, logsumexp pooling, XLA, batch 32, "
        "AdamW, MSLE",
    ),
    ZooCase(
        "gmlp_tagger_lionwd",
        zoo_heldout.gmlp_tagger,
        32,
        True,
        {"class_name": "Lion", "config": {"weight_decay": 0.01}},
        "sparse_categorical_crossentropy",
        (((128,), "int32"),),
        "4-block gMLP tagger over 128 tokens, mixed_float16 (loss scaling), batch 32, "
        "Lion with weight decay",
        precision="mixed_float16",
    ),
    ZooCase(
        "erf_siamese_matcher_sgdcv",
        zoo_heldout.erf_siamese_matcher,
        64,
        True,
        {"class_name": "SGD", "config": {"clipvalue": 1.0}},
        "squared_hinge",
        (((48, 48, 3), "float32"), ((48, 48, 3), "float32")),
        "Siamese CNN matcher with erf-gated activations (shared encoder) at 48x48, float16, "
        "batch 64, SGD with clipvalue, squared hinge",
        precision="float16",
    ),
    ZooCase(
        "efficientnetb4_96_adamga",
        zoo_heldout.efficientnetb4_96,
        16,
        True,
        {"class_name": "Adam", "config": {"gradient_accumulation_steps": 2}},
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "EfficientNetB4 96x96, batch 16, Adam accumulating 2 steps",
    ),
    ZooCase(
        "efficientnetv2m_64_rmsprop",
        zoo_heldout.efficientnetv2m_64,
        16,
        True,
        "rmsprop",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "EfficientNetV2M (54M parameters) 64x64, batch 16, RMSprop",
    ),
)
_CASE_LIST += (
    _variant("scan_recurrence_lm_adamcn", 64, infer=True),
    _variant("affine_warp_selu_cnn_ftrl", 192),
    _variant("while_loop_refiner_rmspropm", 1024),
    _variant("vmap_standardized_cnn_sgdwd", 128, infer=True),
    _variant("segment_count_pointnet_nadam", 128),
    _variant("mish_tcn_logsumexp_adamw", 96),
    _variant("gmlp_tagger_lionwd", 128, infer=True),
    _variant("erf_siamese_matcher_sgdcv", 256),
    _variant("efficientnetb4_96_adamga", 64, infer=True),
    _variant("efficientnetv2m_64_rmsprop", 32, infer=True),
)

# Session 66's held-out round: written and committed before any estimate.
_CASE_LIST += (
    ZooCase(
        "linear_attention_lm_adafactor",
        zoo_heldout.linear_attention_lm,
        16,
        True,
        "adafactor",
        "sparse_categorical_crossentropy",
        (((256,), "int32"),),
        "3-block causal linear-attention LM (ops.cumsum of key-value outer products) over "
        "256 tokens, pure bfloat16, batch 16, Adafactor",
        precision="bfloat16",
    ),
    ZooCase(
        "xcit_encoder_adamwams",
        zoo_heldout.xcit_encoder,
        64,
        True,
        {"class_name": "AdamW", "config": {"amsgrad": True}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "4-block cross-covariance (channel) attention transformer at 64x64, batch 64, "
        "AdamW with AMSGrad",
    ),
    ZooCase(
        "data_cond_gate_cnn_adamgcn",
        zoo_heldout.data_cond_gate_cnn,
        64,
        True,
        {"class_name": "Adam", "config": {"global_clipnorm": 1.0}},
        "binary_crossentropy",
        (((64, 64, 3), "float32"),),
        "CNN whose middle stage ops.cond picks from the batch's mean activation, 64x64, "
        "batch 64, Adam with global_clipnorm, multi-label binary cross-entropy",
    ),
    ZooCase(
        "antialias_pyramid_net_adagrad",
        zoo_heldout.antialias_pyramid_net,
        32,
        True,
        "adagrad",
        "mean_absolute_error",
        (((96, 96, 3), "float32"),),
        "Shared CNN trunk over a 96x96 picture and two antialiased resizes of it, batch 32, "
        "Adagrad, MAE",
    ),
    ZooCase(
        "bilstm_mul_tagger_sgdn",
        zoo_heldout.bilstm_mul_tagger,
        32,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": True}},
        "sparse_categorical_crossentropy",
        (((300,), "int32"),),
        "Masked BiLSTM (directions multiplied) and BiLSTM (summed) tagger over 300 tokens, "
        "mixed_float16 (loss scaling), batch 32, SGD with Nesterov momentum",
        precision="mixed_float16",
    ),
    ZooCase(
        "ft_transformer_adam",
        zoo_heldout.ft_transformer,
        256,
        True,
        "adam",
        "mean_squared_error",
        (((24,), "float32"),),
        "Feature-tokenising tabular transformer (24 feature tokens, 3 MHA blocks) in float64, "
        "batch 256, Adam",
        precision="float64",
    ),
    ZooCase(
        "convnext_large_32_sgd",
        zoo_heldout.convnext_large_32,
        8,
        True,
        "sgd",
        "sparse_categorical_crossentropy",
        (((32, 32, 3), "float32"),),
        "ConvNeXtLarge (196M parameters) 32x32, batch 8, plain SGD",
    ),
    ZooCase(
        "keypoint_gather_net_rmsprop",
        zoo_heldout.keypoint_gather_net,
        16,
        True,
        "rmsprop",
        "mean_squared_error",
        (((128, 128, 3), "float32"), ((64,), "int32")),
        "CNN feature map at 128x128 read at 64 cells by ops.take_along_axis, batch 16, RMSprop",
    ),
    ZooCase(
        "shufflenet_v2_sgdm",
        zoo_heldout.shufflenet_v2,
        64,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9}},
        "sparse_categorical_crossentropy",
        (((96, 96, 3), "float32"),),
        "ShuffleNetV2-style net (channel split and shuffle, depthwise, BatchNorm) at 96x96, "
        "mixed_bfloat16, batch 64, SGD with momentum",
        precision="mixed_bfloat16",
    ),
    ZooCase(
        "conv_mixer_lionga",
        zoo_heldout.conv_mixer,
        32,
        True,
        {"class_name": "Lion", "config": {"gradient_accumulation_steps": 4}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "ConvMixer-256/6 (depthwise 9x9) at 64x64, XLA, batch 32, Lion accumulating 4 steps",
    ),
)
_CASE_LIST += (
    _variant("linear_attention_lm_adafactor", 64, infer=True),
    _variant("xcit_encoder_adamwams", 192),
    _variant("data_cond_gate_cnn_adamgcn", 256, infer=True),
    _variant("antialias_pyramid_net_adagrad", 96),
    _variant("bilstm_mul_tagger_sgdn", 128, infer=True),
    _variant("ft_transformer_adam", 1024),
    _variant("convnext_large_32_sgd", 32, infer=True),
    _variant("keypoint_gather_net_rmsprop", 64),
    _variant("shufflenet_v2_sgdm", 128),
    _variant("conv_mixer_lionga", 128, infer=True),
)

#: Session 67's held-out round (builders in ``zoo_heldout``), written and
#: measured before any estimate.
_CASE_LIST += (
    ZooCase(
        "capsule_net_adamax",
        zoo_heldout.capsule_net,
        32,
        True,
        "adamax",
        "mean_squared_error",
        (((28, 28, 1), "float32"),),
        "Capsule network (3 unrolled routing-by-agreement iterations) on 28x28, batch 32, Adamax",
    ),
    ZooCase(
        "dcn_v2_ranker_ftrl",
        zoo_heldout.dcn_v2_ranker,
        2048,
        True,
        "ftrl",
        "binary_crossentropy",
        (((16,), "int32"), ((13,), "float32")),
        "Deep & Cross Network v2 ranker (16 embedding tables, 3 cross layers), batch 2048, Ftrl",
    ),
    ZooCase(
        "swin_tiny_64_adamw",
        zoo_heldout.swin_tiny_64,
        32,
        True,
        "adamw",
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "Two-stage Swin-style transformer (shifted windows by ops.roll) at 64x64, "
        "mixed_float16, batch 32, AdamW (loss scaling)",
        precision="mixed_float16",
    ),
    ZooCase(
        "nasnet_large_64_rmspropcm",
        zoo_heldout.nasnet_large_64,
        16,
        True,
        {"class_name": "RMSprop", "config": {"momentum": 0.9, "centered": True}},
        "kl_divergence",
        (((64, 64, 3), "float32"),),
        "NASNetLarge (85M parameters) at 64x64, KL-divergence loss, batch 16, centered RMSprop "
        "with momentum",
    ),
    ZooCase(
        "rk4_ode_regressor_adamcv",
        zoo_heldout.rk4_ode_regressor,
        512,
        True,
        {"class_name": "Adam", "config": {"clipvalue": 1.0}},
        "log_cosh",
        (((64,), "float32"),),
        "Neural ODE (8 unrolled RK4 steps of a shared MLP field), log-cosh loss, batch 512, "
        "Adam with clipvalue",
    ),
    ZooCase(
        "wavenet_mu_law_nadam",
        zoo_heldout.wavenet_mu_law,
        8,
        True,
        "nadam",
        "sparse_categorical_crossentropy",
        (((2048, 1), "float32"),),
        "WaveNet (2 stacks of gated dilated causal Conv1D, 256 classes per sample) over 2048 "
        "samples, batch 8, Nadam",
    ),
    ZooCase(
        "efficientnetb7_64_sgdwd",
        zoo_heldout.efficientnetb7_64,
        16,
        True,
        {"class_name": "SGD", "config": {"momentum": 0.9, "weight_decay": 0.0001}},
        "sparse_categorical_crossentropy",
        (((64, 64, 3), "float32"),),
        "EfficientNetB7 (64M parameters) at 64x64, batch 16, SGD with momentum and weight decay",
    ),
    ZooCase(
        "edgeconv_pointnet_lamb",
        zoo_heldout.edgeconv_pointnet,
        16,
        True,
        "lamb",
        "sparse_categorical_crossentropy",
        (((512, 3), "float32"),),
        "DGCNN-style EdgeConv point classifier (k-NN by ops.top_k, gathered neighbours) over "
        "512 points, batch 16, Lamb",
    ),
    ZooCase(
        "hypernet_mlp_adadelta",
        zoo_heldout.hypernet_mlp,
        256,
        True,
        "adadelta",
        "cosine_similarity",
        (((96,), "float32"), ((16,), "float32")),
        "Hypernetwork generating a 128x128 layer per example (einsum), cosine-similarity loss, "
        "pure float16, batch 256, Adadelta",
        precision="float16",
    ),
    ZooCase(
        "unet1d_denoiser_adamema",
        zoo_heldout.unet1d_denoiser,
        16,
        True,
        {"class_name": "Adam", "config": {"use_ema": True}},
        "mean_absolute_error",
        (((4096, 2), "float32"),),
        "1-D U-Net denoiser (Conv1DTranspose, skips) over 4096 samples, XLA, batch 16, "
        "Adam with EMA",
    ),
)
_CASE_LIST += (
    _variant("capsule_net_adamax", 128),
    _variant("dcn_v2_ranker_ftrl", 8192, infer=True),
    _variant("swin_tiny_64_adamw", 96),
    _variant("nasnet_large_64_rmspropcm", 64, infer=True),
    _variant("rk4_ode_regressor_adamcv", 2048),
    _variant("wavenet_mu_law_nadam", 32, infer=True),
    _variant("efficientnetb7_64_sgdwd", 64, infer=True),
    _variant("edgeconv_pointnet_lamb", 48),
    _variant("hypernet_mlp_adadelta", 1024, infer=True),
    _variant("unet1d_denoiser_adamema", 64, infer=True),
)

#: All cases by name, in benchmark order.
CASES: dict[str, ZooCase] = {case.name: case for case in _CASE_LIST}


def case_names() -> list[str]:
    """The names of all zoo cases, in benchmark order."""
    return list(CASES)


def get_case(name: str) -> ZooCase:
    """The case called ``name``; a ValueError lists the valid names otherwise."""
    try:
        return CASES[name]
    except KeyError:
        raise ValueError(f"unknown zoo case {name!r}; choose one of: {', '.join(CASES)}") from None
