"""One list of optimizer names: the API, CLI, magic and panel accept exactly it.

The list lives in the core (``estimator.OPTIMIZER_NAMES``); it used to be
copied three times and the copies drifted (the CLI lacked a name the magic
had, the panel lacked two, the API's message offered one Keras cannot build).
"""

from __future__ import annotations

import argparse

import pytest
from conftest import make_footprint
from IPython.core.error import UsageError
from IPython.testing.globalipapp import start_ipython

keras = pytest.importorskip("keras")

import jupyter_tfmem  # noqa: E402
from jupyter_tfmem import cli, magics, panel  # noqa: E402
from jupyter_tfmem.estimator import OPTIMIZER_NAMES  # noqa: E402


def keras_optimizer_classes() -> set[str]:
    """Lower-cased names of every optimizer class ``keras.optimizers`` exports."""
    return {
        name.lower()
        for name, obj in vars(keras.optimizers).items()
        if isinstance(obj, type) and issubclass(obj, keras.optimizers.Optimizer)
    }


def builds_from_a_bare_name(name: str) -> bool:
    from jupyter_tfmem.optimizer_configs import optimizer_from_config

    try:
        return isinstance(optimizer_from_config(name), keras.optimizers.Optimizer)
    except (ValueError, TypeError, KeyError):
        return False


#: Names that are not on the list: Keras classes that cannot be built from a
#: bare name (the wrappers that need arguments) and typos.
OUTSIDE = sorted((keras_optimizer_classes() - set(OPTIMIZER_NAMES)) | {"adamm", "sgdd", ""})


def test_the_list_is_what_keras_builds_from_a_bare_name():
    assert len(set(OPTIMIZER_NAMES)) == len(OPTIMIZER_NAMES)
    buildable = {name for name in keras_optimizer_classes() if builds_from_a_bare_name(name)}
    assert set(OPTIMIZER_NAMES) == buildable
    assert "lossscaleoptimizer" in OUTSIDE and "multioptimizer" in OUTSIDE  # the check has teeth
    # Keras itself cannot build Lamb from its name; the list takes it all the same
    assert "lamb" in OPTIMIZER_NAMES
    with pytest.raises(ValueError):
        keras.optimizers.get("lamb")


def test_the_api_accepts_exactly_the_list():
    inp = keras.Input((8,))
    model = keras.Model(inp, keras.layers.Dense(4)(keras.layers.Dense(16)(inp)))
    for name in OPTIMIZER_NAMES:
        fp = jupyter_tfmem.estimate(model, 8, optimizer=name.upper(), loss="mse")
        assert fp.optimizer == name
        assert fp.categories["parameters"].bytes > 0
    for name in OUTSIDE:
        with pytest.raises(ValueError, match=r"unknown optimizer.*use one of sgd, adam"):
            jupyter_tfmem.estimate(model, 8, optimizer=name, loss="mse")


def test_the_cli_accepts_exactly_the_list():
    for name in OPTIMIZER_NAMES:
        assert cli.parse_optimizer(f" {name.upper()} ") == name
    for name in OUTSIDE:
        with pytest.raises(argparse.ArgumentTypeError, match="unknown optimizer"):
            cli.parse_optimizer(name)
    help_text = " ".join(cli.build_parser().format_help().split())
    assert ", ".join(OPTIMIZER_NAMES) in help_text


def test_the_magic_accepts_exactly_the_list(monkeypatch):
    calls = []

    def record(model, batch_size, **kwargs):
        calls.append(kwargs["optimizer"])
        return make_footprint(batch_size)

    monkeypatch.setattr(jupyter_tfmem, "estimate", record)
    from IPython.core.interactiveshell import InteractiveShell

    start_ipython()  # no-op (None) when another test module started it
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_tfmem")
    shell.run_cell("import keras\nm = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])")
    for name in OPTIMIZER_NAMES:
        shell.run_line_magic("tfmem", f"m --optimizer {name.upper()}")
    assert calls == list(OPTIMIZER_NAMES)
    for name in OUTSIDE:
        if name:  # an empty flag value is a different error
            with pytest.raises(UsageError, match="unknown optimizer"):
                shell.run_line_magic("tfmem", f"m --optimizer {name}")
    assert len(calls) == len(OPTIMIZER_NAMES)
    assert ", ".join(OPTIMIZER_NAMES) in " ".join(magics.TfmemMagics.tfmem.__doc__.split())


def test_the_panel_offers_exactly_the_list():
    import dataclasses

    fp = make_footprint()  # estimated with adam
    asked = []

    def reestimate(**kwargs):
        asked.append(kwargs["optimizer"])
        return dataclasses.replace(fp, optimizer=kwargs["optimizer"])

    menu = panel.FootprintPanel(fp, reestimate).optimizer_select
    assert [value for _, value in menu.options] == list(OPTIMIZER_NAMES)
    for name in reversed(OPTIMIZER_NAMES):
        menu.value = name
    assert asked == list(reversed(OPTIMIZER_NAMES))  # from adam, every pick is a change
