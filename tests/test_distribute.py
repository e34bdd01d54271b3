"""Data parallelism: estimate(..., replicas=R) is one device's share of a global batch.

The single-device estimate at the per-replica batch is the reference; the only
documented extra is the gradient all-reduce's packed buffer (training only).
"""

from __future__ import annotations

import dataclasses
import json
import math

import keras
import pytest
from conftest import make_footprint

import jupyter_tfmem as tfmem
from jupyter_tfmem import cli
from jupyter_tfmem.distribute import ALLREDUCE_ROW_NAME, data_parallel, gradient_bytes
from jupyter_tfmem.footprint import Footprint, PeakScenario

MiB = 2**20


@pytest.fixture(scope="module")
def mlp() -> keras.Model:
    inp = keras.Input((256,))
    h = inp
    for _ in range(2):
        h = keras.layers.Dense(512, activation="relu")(h)
    model = keras.Model(inp, keras.layers.Dense(10)(h), name="mlp")
    model.compile(optimizer="adam", loss="mse")
    return model


def without_allreduce(fp: Footprint) -> Footprint:
    """``fp`` minus the all-reduce moment, on one device: what the single estimate should be."""
    lines = tuple(line for line in fp.lines if ALLREDUCE_ROW_NAME not in line.layers)
    info = tuple(row for row in fp.layer_info if row.name != ALLREDUCE_ROW_NAME)
    return dataclasses.replace(fp, lines=lines, layer_info=info, replicas=1)


def test_two_replicas_at_32_are_one_device_at_16_plus_the_allreduce(mlp):
    one = tfmem.estimate(mlp, 16)
    two = tfmem.estimate(mlp, 32, replicas=2)
    assert (two.batch_size, two.replicas, two.device_batch_size) == (32, 2, 16)
    assert len(two.lines) == len(one.lines) + 1
    # apart from the all-reduce moment, per device it is the single-device step at 16
    base = without_allreduce(two)
    for n in (1, 16, 100, 5000):
        assert base.at(n).peak_bytes == one.at(n).peak_bytes
    # the all-reduce moment: weights + slots + input batch + the gradients twice
    grads = gradient_bytes(mlp)
    assert grads == 4 * mlp.count_params()  # all trainable, float32
    (extra,) = [line for line in two.lines if ALLREDUCE_ROW_NAME in line.layers]
    ref = one.lines[0].categories
    assert extra.categories["gradients"] == (grads, 0.0)
    assert extra.categories["temporaries"] == (grads, 0.0)
    assert extra.categories["parameters"] == ref["parameters"]
    assert extra.categories["optimizer_state"] == ref["optimizer_state"]
    assert extra.a == pytest.approx(
        ref["parameters"][0] + ref["optimizer_state"][0] + ref["input_batch"][0] + 2 * grads
    )
    # a weight-heavy model at a small batch peaks while the gradients are packed ...
    assert two.peak_bytes > one.peak_bytes
    assert two._line is extra
    # ... and at a large batch the backward pass dominates again, as on one device
    assert two.at(2 * 5000).peak_bytes == one.at(5000).peak_bytes
    assert any("all-reduce" in note for note in two.notes)
    assert any("global batch" in note for note in two.notes)


def test_the_allreduce_moment_bounds_every_schedule_from_below():
    # the all-reduce runs after the backward pass, whichever schedule it took
    fp = make_footprint(batch_size=4)
    low = PeakScenario("low", ((0.5 * fp.peak_bytes, 0.0),))
    fp = dataclasses.replace(fp, scenarios=(low,))
    grads = 10 * fp.peak_bytes
    two = data_parallel(fp, 2, grad_bytes=grads)
    (extra,) = [line for line in two.lines if ALLREDUCE_ROW_NAME in line.layers]
    assert two.scenario_peaks["low"] == round(extra.bytes_at(4))
    assert two.peak_range == (two.peak_bytes, two.peak_bytes)


def test_at_means_the_global_batch_and_rounds_the_share_up(mlp):
    one = tfmem.estimate(mlp, 16, training=False)
    three = tfmem.estimate(mlp, 48, training=False, replicas=3)
    assert not any(ALLREDUCE_ROW_NAME in line.layers for line in three.lines)  # inference
    assert three.peak_bytes == one.peak_bytes
    moved = three.at(100)  # 34 + 33 + 33: the busiest device runs 34
    assert (moved.batch_size, moved.device_batch_size) == (100, 34)
    assert moved.peak_bytes == one.at(34).peak_bytes
    assert moved.layers[1].output_shape == "(34, 512)"
    # largest batch that fits is a global batch: three devices' worth
    budget = one.at(1000).total_bytes
    assert three.max_batch_size(budget) == 3 * one.max_batch_size(budget)


def test_replicas_one_and_a_one_device_strategy_change_nothing(mlp):
    import tensorflow as tf

    plain = tfmem.estimate(mlp, 8)
    assert tfmem.estimate(mlp, 8, replicas=1) == plain
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    assert strategy.num_replicas_in_sync == 1
    assert tfmem.estimate(mlp, 8, strategy=strategy) == plain


def test_strategy_gives_its_replica_count(mlp):
    class TwoDevices:  # what estimate reads from a MirroredStrategy
        num_replicas_in_sync = 2

    assert tfmem.estimate(mlp, 32, strategy=TwoDevices()) == tfmem.estimate(mlp, 32, replicas=2)


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"replicas": 0}, ValueError, "at least 1"),
        ({"replicas": -1}, ValueError, "at least 1"),
        ({"replicas": 1.5}, TypeError, "whole number"),
        ({"replicas": "2"}, TypeError, "whole number"),
        ({"replicas": True}, TypeError, "whole number"),
        ({"replicas": 2, "strategy": object()}, TypeError, "not both"),
        ({"strategy": object()}, TypeError, "tf.distribute strategy"),
    ],
)
def test_bad_replicas_are_explained(mlp, kwargs, error, needle):
    with pytest.raises(error, match=needle):
        tfmem.estimate(mlp, 32, **kwargs)


def test_footprint_rejects_bad_replicas():
    with pytest.raises(ValueError, match="at least 1"):
        dataclasses.replace(make_footprint(), replicas=0)


def test_per_device_report_says_so_everywhere():
    base = make_footprint(16)
    fp = data_parallel(base, 2, grad_bytes=6000, global_batch=31)
    assert (fp.batch_size, fp.device_batch_size) == (31, 16)
    data = json.loads(json.dumps(fp.to_dict()))
    assert (data["batch_size"], data["replicas"], data["device_batch_size"]) == (31, 2, 16)
    assert data["peak_bytes"] == fp.peak_bytes
    text = fp.to_text()
    assert "at batch 31" in text and "data parallel over 2 devices, per-device figures" in text
    assert "replicas=2" in repr(fp)
    assert ALLREDUCE_ROW_NAME in fp.to_markdown()
    # a single-device report keeps its old fields and meaning
    assert base.to_dict()["replicas"] == 1
    assert "data parallel" not in base.to_text()


def test_cli_replicas_and_overhead_flags(monkeypatch, capsys):
    calls = []

    def fake(model, batch_size, **kwargs):
        calls.append(kwargs)
        fp = make_footprint(math.ceil(batch_size / kwargs.get("replicas", 1)))
        return data_parallel(fp, kwargs.get("replicas", 1), 6000, batch_size)

    monkeypatch.setattr(tfmem, "estimate", fake)
    code = cli.main(["demo", "--batch", "64", "--replicas", "4", "--overhead-mib", "300", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert calls[-1]["replicas"] == 4
    data = json.loads(out)
    assert (data["batch_size"], data["replicas"], data["device_batch_size"]) == (64, 4, 16)
    assert data["overhead_bytes"] == 300 * MiB
    assert data["total_bytes"] == data["peak_bytes"] + 300 * MiB
    # without the flag nothing new reaches estimate
    assert cli.main(["demo", "--batch", "8", "--json"]) == 0
    assert "replicas" not in calls[-1]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--replicas", "0"], "--replicas must be between 1"),
        (["--replicas", "two"], "--replicas must be a whole number"),
        (["--replicas", "2", "--measure"], "cannot check a data-parallel estimate"),
        (["--overhead-mib", "-5"], "--overhead-mib must be between 0"),
    ],
)
def test_cli_bad_replicas_and_overhead_are_usage_errors(argv, needle, capsys):
    assert cli.main(["demo", *argv]) == cli.EXIT_USAGE
    assert needle in capsys.readouterr().err
