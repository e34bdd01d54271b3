"""The benchmark zoo: named cases whose builders make the models they declare.

Only the cheap builders are built here; the keras.applications ones take
seconds each and are exercised by ``benchmarks/accuracy.py``.
"""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

from jupyter_tfmem import zoo

CHEAP = [
    "mlp",
    "lstm_text",
    "gru_tagger",
    "transformer_encoder",
    "unet_small",
    "recommender",
    "two_input_two_output",
    "bilstm_text",
    "conv1d_signal",
    "cnn_small",
    "lstm_long",
    "gru_long",
    "bilstm_long",
    "bert_small",
    "sepconv_cnn",
    "shared_nested",
]


def test_zoo_has_enough_varied_cases():
    cases = list(zoo.CASES.values())
    assert len(cases) >= 14
    assert len({c.name for c in cases}) == len(cases)
    optimizers = {
        str(c.optimizer if isinstance(c.optimizer, str) else c.optimizer["class_name"]).lower()
        for c in cases
        if c.training
    }
    assert {"sgd", "adam", "rmsprop"} <= optimizers
    assert sum(not c.training for c in cases) >= 4
    for case in cases:
        assert case.batch_size >= 1
        assert case.training == (case.optimizer is not None)


def test_builder_paths_resolve_to_the_builders():
    for case in zoo.CASES.values():
        module, _, name = case.builder_path.partition(":")
        assert getattr(importlib.import_module(module), name) is case.builder


@pytest.mark.parametrize("builder_name", CHEAP)
def test_cheap_builders_make_fresh_uncompiled_models_of_the_declared_inputs(builder_name):
    import keras

    builder = getattr(zoo, builder_name)
    cases = [c for c in zoo.CASES.values() if c.builder is builder]
    assert cases, f"{builder_name} is used by no case"
    model = builder()
    assert isinstance(model, keras.Model)
    assert not model.compiled
    assert builder() is not model
    declared = cases[0].inputs
    assert all(c.inputs == declared for c in cases)
    actual = [(tuple(t.shape)[1:], str(t.dtype)) for t in model.inputs]
    assert actual == [(tuple(shape), dtype) for shape, dtype in declared]
    for case in cases:
        if case.loss and "sparse" in case.loss:
            assert all(t.shape[-1] > 1 for t in model.outputs)


@pytest.mark.parametrize(
    "builder_name", ["scored_token_lm", "scored_multilabel", "scored_cnn", "scored_segmenter"]
)
def test_scored_builders_keep_their_metrics_when_the_case_compiles_them(builder_name):
    import keras

    from jupyter_tfmem import _measure_worker as worker

    builder = getattr(zoo, builder_name)
    case = next(c for c in zoo.CASES.values() if c.builder is builder)
    model = builder()
    metrics = model.get_compile_config()["metrics"]
    assert metrics
    # the measuring worker compiles with the case's optimizer and loss
    worker._compile(keras, model, {"optimizer": case.optimizer, "loss": case.loss}, [])
    assert model.get_compile_config()["metrics"] == metrics
    assert model.loss == case.loss


def test_unknown_case_lists_the_valid_names():
    with pytest.raises(ValueError, match="mlp_infer"):
        zoo.get_case("resnet9000")


def test_case_optimizers_are_real_keras_optimizers():
    import keras

    for case in zoo.CASES.values():
        opt = case.make_optimizer()
        assert (opt is None) == (not case.training)
        if opt is not None:
            assert isinstance(opt, keras.optimizers.Optimizer)


def test_stackoverflow_baseline_counts_each_output_once_plus_parameters():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        from baselines import cs231n_rule, so_model_memory
    finally:
        sys.path.pop(0)
    model = zoo.mlp()
    # Outputs per sample: input, Dense, Dropout, Dense, Dropout, Dense.
    per_sample = 784 + 1024 + 1024 + 1024 + 1024 + 10
    params = model.count_params()
    assert params == (784 * 1024 + 1024) + (1024 * 1024 + 1024) + (1024 * 10 + 10)
    assert so_model_memory(model, 32) == 4 * (32 * per_sample + params)
    # The CS231n rule: activations and their gradients, parameters x4 under Adam.
    activations = per_sample - 784
    expected = 4 * (2 * activations * 32 + 4 * params + 784 * 32)
    assert cs231n_rule(model, 32, training=True, optimizer="adam") == expected
    assert math.isclose(
        cs231n_rule(model, 32, training=False), 4 * ((1024 + 1024) * 32 + params + 784 * 32)
    )
