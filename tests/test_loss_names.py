"""Losses Keras exports but cannot find by name, and losses whose targets are class ids.

Keras 3.15's registry does not list ``CategoricalGeneralizedCrossEntropy``:
``compile(loss="categorical_generalized_cross_entropy")`` fails, and its own
config deserializes to a string, so ``measure`` could not rebuild it in the
measuring process.  Its targets, like the circle loss's, are one class id
per example, not tensors shaped like the outputs.
"""

from __future__ import annotations

import pytest

keras = pytest.importorskip("keras")

import jupyter_tfmem  # noqa: E402
from jupyter_tfmem import cli, estimator  # noqa: E402
from jupyter_tfmem.loss_configs import loss_from_spec, losses_from_spec  # noqa: E402

GCE = "categorical_generalized_cross_entropy"


def _classifier(classes: int = 6, loss=None):
    inp = keras.Input((16,))
    out = keras.layers.Dense(classes, activation="softmax")(keras.layers.Dense(32)(inp))
    model = keras.Model(inp, out)
    if loss is not None:
        model.compile(optimizer="sgd", loss=loss)
    return model


def test_a_loss_the_registry_refuses_is_built_from_its_name_or_config():
    with pytest.raises(ValueError, match="Could not interpret"):
        keras.losses.get(GCE)  # Keras's own lookup fails: the check has teeth
    own_config = keras.losses.serialize(keras.losses.CategoricalGeneralizedCrossEntropy())
    assert isinstance(keras.losses.deserialize(own_config), str)
    for name in (GCE, "CategoricalGeneralizedCrossEntropy"):
        assert type(loss_from_spec(name)) is keras.losses.CategoricalGeneralizedCrossEntropy
    config = keras.losses.serialize(keras.losses.CategoricalGeneralizedCrossEntropy(q=0.7))
    built = loss_from_spec(config)
    assert type(built) is keras.losses.CategoricalGeneralizedCrossEntropy and built.q == 0.7
    assert loss_from_spec("mse") == "mse"  # what Keras takes is left to Keras
    assert losses_from_spec({"a": GCE, "b": None, "c": ["mse", GCE]})["c"][1].q == 0.5
    for wrong in ("categorical_generalised_cross_entropy", "LossFunctionWrapperr"):
        with pytest.raises(ValueError, match="Could not interpret"):
            loss_from_spec(wrong)
    with pytest.raises(ValueError, match="Could not interpret"):
        loss_from_spec({"class_name": "NoSuchLoss", "config": {}})


def test_every_exported_loss_class_comes_back_from_its_config():
    base = keras.losses.Loss
    classes = [
        obj
        for obj in vars(keras.losses).values()
        if isinstance(obj, type) and issubclass(obj, base) and obj is not base
    ]
    assert len(classes) > 20
    for cls in classes:
        assert type(loss_from_spec(keras.losses.serialize(cls()))) is cls, cls.__name__


@pytest.mark.parametrize(
    ("loss", "shape", "dtype"),
    [
        (keras.losses.CategoricalGeneralizedCrossEntropy(), (None,), "int32"),
        (GCE, (None,), "int32"),
        (keras.losses.Circle(), (None,), "int32"),
        ("sparse_categorical_crossentropy", (None,), "int32"),
        ("categorical_crossentropy", (None, 6), "float32"),
    ],
)
def test_losses_on_class_ids_get_one_id_per_example(loss, shape, dtype):
    model = _classifier()
    _, desc = estimator._resolve_loss(model, loss, [])
    spec = estimator._target_specs(model, desc)
    assert tuple(spec.shape) == shape and spec.dtype.name == dtype


def test_a_model_compiled_with_an_unregistered_loss_is_estimated_and_measured():
    model = _classifier(loss=keras.losses.CategoricalGeneralizedCrossEntropy(q=0.7))
    by_object = jupyter_tfmem.estimate(model, 64)
    with_ids = jupyter_tfmem.estimate(model, 64, target_shapes=[()])
    assert by_object.peak_bytes == with_ids.peak_bytes > 0  # one id per example by default
    assert jupyter_tfmem.estimate(_classifier(), 64, optimizer="sgd", loss=GCE).peak_bytes > 0
    measured = jupyter_tfmem.measure(model, 64, runs=1)
    assert measured.peak_bytes > 0 and model.loss.q == 0.7


def test_the_cli_takes_the_name_and_refuses_a_typo():
    cli._check_loss(GCE)
    with pytest.raises(cli.UsageError, match="unknown loss"):
        cli._check_loss("categorical_generalised_cross_entropy")
