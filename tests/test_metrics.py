"""The metrics ``compile`` was given are part of the traced train step, on copies."""

from __future__ import annotations

import numpy as np
import pytest

keras = pytest.importorskip("keras")

import jupyter_tfmem as jt  # noqa: E402

MiB = 2**20


def token_head(metrics: list) -> keras.Model:
    """A softmax over 4,000 words per token: its output is 15.6 MiB at batch 16."""
    inp = keras.Input((64,), dtype="int32")
    x = keras.layers.Embedding(4000, 32)(inp)
    out = keras.layers.Dense(4000, activation="softmax")(x)
    model = keras.Model(inp, out)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=metrics)
    return model


def test_a_compiled_metric_holds_what_its_update_reads():
    # Sparse accuracy reads the softmax output after the optimizer's update
    # has been queued; the step without metrics frees it with the loss.
    plain = jt.estimate(token_head([]), 16).peak_bytes
    scored = jt.estimate(token_head(["accuracy"]), 16).peak_bytes
    output = 16 * 64 * 4000 * 4
    assert scored - plain >= output


def test_the_loss_tracker_alone_adds_no_tensor_of_the_batch():
    # Keras tracks the loss in every step; that is a few scalars.
    model = token_head([])
    fp = jt.estimate(model, 16)
    uncompiled = keras.Model(model.inputs, model.outputs)
    bare = jt.estimate(uncompiled, 16, optimizer="sgd", loss="sparse_categorical_crossentropy")
    assert abs(fp.peak_bytes - bare.peak_bytes) < MiB


def tagger(metrics: list) -> keras.Model:
    inp = keras.Input((16,))
    model = keras.Model(inp, keras.layers.Dense(50, activation="sigmoid")(inp))
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=metrics)
    return model


def _metric_state(model: keras.Model) -> list:
    return [(v.path, np.array(v.numpy())) for v in model.metrics_variables]


def test_estimating_neither_builds_nor_updates_the_models_metrics():
    auc = keras.metrics.AUC(multi_label=True)  # makes its variables on its first update
    model = tagger(["binary_accuracy", auc])
    jt.estimate(model, 16)
    assert not model._compile_metrics.built
    assert not auc.variables

    x = np.random.rand(8, 16).astype("float32")
    y = (np.random.rand(8, 50) > 0.5).astype("float32")
    model.train_on_batch(x, y)  # now built, with values
    before = _metric_state(model)
    assert any(np.any(value != 0) for _, value in before)
    jt.estimate(model, 16)
    after = _metric_state(model)
    assert [path for path, _ in after] == [path for path, _ in before]
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(after, before, strict=True))


def test_a_metrics_accumulators_of_one_shape_start_in_one_shared_buffer(monkeypatch):
    # Keras makes the compiled metrics' state from zeros while tracing the
    # first step, and Grappler merges equal constants: TF's log of a tagger
    # with a per-label AUC has its four accumulators in one buffer at build.
    from jupyter_tfmem import estimator

    made = []
    allocate = estimator._allocate_persistent

    def record(model, creation, holders=None, m=0):
        made.append((list(creation), dict(holders or {})))
        return allocate(model, creation, holders, m)

    monkeypatch.setattr(estimator, "_allocate_persistent", record)
    jt.estimate(tagger([keras.metrics.AUC(num_thresholds=200, multi_label=True)]), 16)
    creation, holders = made[-1]
    accumulators = [e for e in creation if e[2] == "parameters" and e[1] == 200 * 50 * 4]
    assert len(accumulators) == 4
    assert len({e[4] for e in accumulators}) == 1
    assert accumulators[0][4] in holders  # one of them keeps the shared buffer


def test_a_metric_that_does_not_fit_the_outputs_says_so():
    # a per-label AUC needs one row of labels per sample, as fit() does
    with pytest.raises(ValueError, match=r"metric given to compile\(\).*rank 2"):
        jt.estimate(token_head([keras.metrics.AUC(multi_label=True)]), 16)


class Uncopyable(keras.metrics.Mean):
    """A metric that can be neither rebuilt from its config nor deep-copied."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def get_config(self):
        raise NotImplementedError

    def __deepcopy__(self, memo):
        raise TypeError("no copies")


def test_a_metric_that_cannot_be_copied_is_left_out_and_named():
    model = token_head(["accuracy", Uncopyable(2.0, name="odd")])
    fp = jt.estimate(model, 16)
    assert any("'odd'" in note and "left out" in note for note in fp.notes)
    # the copyable one is still traced
    assert fp.peak_bytes > jt.estimate(token_head([]), 16).peak_bytes


def test_an_uncopyable_metric_of_one_output_leaves_the_others_in_place():
    # one entry per output: dropping the first would give the second output's
    # metric to the first
    inp = keras.Input((16,))
    first = keras.layers.Dense(3, activation="softmax", name="first")(inp)
    second = keras.layers.Dense(1, name="second")(inp)
    model = keras.Model(inp, [first, second])
    model.compile(
        optimizer="sgd",
        loss=["sparse_categorical_crossentropy", "mse"],
        metrics=[Uncopyable(2.0, name="odd"), "mae"],
    )
    fp = jt.estimate(model, 8)
    assert any("'odd'" in note for note in fp.notes)
