"""MirroredStrategy over logical CPU devices vs one device: the all-reduce's extra memory.

Run ``python benchmarks/mirrored_cpu.py R GLOBAL_BATCH`` (R = 1 or more) in a
fresh process each time; it prints one JSON line.  With R > 1 the CPU is split
into R logical devices.  They share one BFC allocator, so
``get_memory_info("CPU:i")`` is the same combined figure for every i: the
per-device figure is that divided by R.  Env ``W`` sets the hidden width
(default 1024).  docs/gpu.md has the numbers and what they do and do not show.
"""

from __future__ import annotations

import os

os.environ["TF_CPU_ALLOCATOR_USE_BFC"] = "true"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gc
import json
import sys

import tensorflow as tf


def main() -> None:
    replicas, global_batch = int(sys.argv[1]), int(sys.argv[2])
    width = int(os.environ.get("W", "1024"))
    cpu = tf.config.list_physical_devices("CPU")[0]
    if replicas > 1:
        config = [tf.config.LogicalDeviceConfiguration()] * replicas
        tf.config.set_logical_device_configuration(cpu, config)
    import keras

    def build() -> keras.Model:
        inp = keras.Input((512,))
        h = inp
        for _ in range(3):
            h = keras.layers.Dense(width, activation="relu")(h)
        model = keras.Model(inp, keras.layers.Dense(10)(h))
        model.compile(optimizer="adam", loss="mse")
        return model

    result: dict = {"W": width, "R": replicas, "global": global_batch}
    if replicas > 1:
        strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
        result["cross_device_ops"] = type(strategy.extended._cross_device_ops).__name__
        with strategy.scope():
            model = build()
    else:
        model = build()
    x = tf.random.uniform((global_batch, 512))
    y = tf.random.uniform((global_batch, 10))
    model.train_on_batch(x, y)  # warm-up: traces, builds slots
    gc.collect()
    for i in range(replicas):
        tf.config.experimental.reset_memory_stats(f"CPU:{i}")
    model.train_on_batch(x, y)
    for i in range(replicas):
        result[f"CPU:{i}"] = tf.config.experimental.get_memory_info(f"CPU:{i}")
    result["gradient_bytes"] = sum(int(v.numpy().size) * 4 for v in model.trainable_weights)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
