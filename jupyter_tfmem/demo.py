"""The bundled example: a small image classifier built from code.

``tfmem demo`` and the README use it so that the main job runs on a fresh
machine with nothing to download.  It is the kind of model the question this
project answers is about (a CIFAR-sized CNN trained with Adam), and it has the
parts whose memory behaves differently: convolutions whose activations grow
with the batch, batch normalisation, pooling, dropout, and dense layers whose
weights dominate the parameters.
"""

from __future__ import annotations

from typing import Any

DEMO_NAME = "demo_cnn"
DEMO_INPUT_SHAPE = (32, 32, 3)
DEMO_CLASSES = 10


def build_demo_model(compile: bool = True) -> Any:
    """A CIFAR-10-shaped CNN (32x32x3 images, 10 classes), compiled with Adam.

    Built fresh on each call, so no user model is touched; the weights are
    random (memory does not depend on their values) and the global random seed
    is left alone.
    """
    import keras
    from keras import layers

    model = keras.Sequential(
        [
            keras.Input(shape=DEMO_INPUT_SHAPE, name="image"),
            layers.Conv2D(32, 3, padding="same", activation="relu", name="conv1"),
            layers.BatchNormalization(name="bn1"),
            layers.Conv2D(32, 3, padding="same", activation="relu", name="conv2"),
            layers.MaxPooling2D(name="pool1"),
            layers.Conv2D(64, 3, padding="same", activation="relu", name="conv3"),
            layers.BatchNormalization(name="bn2"),
            layers.Conv2D(64, 3, padding="same", activation="relu", name="conv4"),
            layers.MaxPooling2D(name="pool2"),
            layers.Flatten(name="flatten"),
            layers.Dropout(0.3, name="dropout"),
            layers.Dense(256, activation="relu", name="dense"),
            layers.Dense(DEMO_CLASSES, activation="softmax", name="classes"),
        ],
        name=DEMO_NAME,
    )
    if compile:
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate=1e-3),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy"],
        )
    return model
