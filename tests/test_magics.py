"""%tfmem and %%tfmem in a real IPython shell, with the real estimator on tiny models."""

from __future__ import annotations

import re

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.error import UsageError
from IPython.testing.globalipapp import TerminalInteractiveShell, start_ipython

import jupyter_tfmem
from jupyter_tfmem import magics
from jupyter_tfmem.gpus import parse_gpu
from jupyter_tfmem.views.data import MIME_TYPE
from jupyter_tfmem.views.format import format_bytes
from jupyter_tfmem.views.mime import WIDGET_VIEW_MIME

SETUP = """
import keras

def tiny(name="tiny", units=4):
    return keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(units, name=name + "_dense")], name=name
    )

model = tiny("model")
models = {"big": tiny("big", 16)}
not_a_model = 3
"""


@pytest.fixture(scope="module")
def ip():
    # start_ipython() returns None once another test module has started the shell
    shell = start_ipython() or TerminalInteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_tfmem")
    return shell


@pytest.fixture
def shell(ip):
    """The shared test shell with a fresh namespace and a display publisher we can read."""
    ip.reset(new_session=False)
    result = ip.run_cell(SETUP)
    assert result.success, result.error_in_exec
    saved = ip.display_pub
    ip.display_pub = CapturingDisplayPublisher()
    yield ip
    ip.display_pub = saved


@pytest.fixture
def estimates(monkeypatch):
    """Spy on the real estimator: every call's arguments and Footprint."""
    calls = []
    real = jupyter_tfmem.estimate

    def spy(model, batch_size, **kwargs):
        fp = real(model, batch_size, **kwargs)
        calls.append({"model": model, "batch_size": batch_size, **kwargs, "fp": fp})
        return fp

    monkeypatch.setattr(jupyter_tfmem, "estimate", spy)
    return calls


@pytest.fixture
def panels(monkeypatch):
    """The panels the magic builds, to read their titles and widgets."""
    built = []

    class Recording(magics.FootprintPanel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(magics, "FootprintPanel", Recording)
    return built


def bundles(shell):
    return [out["data"] for out in shell.display_pub.outputs]


# -- registration and help ----------------------------------------------------
def test_load_ext_registers_line_and_cell_magic(ip):
    assert "tfmem" in ip.magics_manager.magics["line"]
    assert "tfmem" in ip.magics_manager.magics["cell"]


def test_help_lists_every_flag(shell, capsys, estimates):
    shell.run_line_magic("tfmem", "--help")
    out = capsys.readouterr().out
    for flag in (
        "--batch",
        "--optimizer",
        "--precision",
        "--inference",
        "--gpu",
        "--device",
        "--markdown",
        "--measure",
        "--help",
    ):
        assert flag in out
    for name in ("adamw", "mixed_bfloat16", "A100-80", "T4 16 GB"):
        assert name in out
    assert estimates == [] and bundles(shell) == []


# -- the line magic -----------------------------------------------------------------
def test_line_magic_shows_panel_with_static_fallback(shell, estimates, panels):
    assert shell.run_line_magic("tfmem", "model") is None
    (call,) = estimates
    assert call["model"] is shell.user_ns["model"]
    assert call["batch_size"] == magics.DEFAULT_BATCH_SIZE == 32
    assert call["training"] is True and call["optimizer"] is None and call["precision"] is None
    (bundle,) = bundles(shell)
    assert set(bundle) == {MIME_TYPE, "text/html", "text/markdown", "text/plain", WIDGET_VIEW_MIME}
    assert bundle[MIME_TYPE] == call["fp"].to_dict()
    assert bundle[WIDGET_VIEW_MIME]["model_id"] == panels[0].widget.model_id
    assert "GPU memory of model" in panels[0].title.value


def test_expression_in_the_user_namespace(shell, estimates):
    shell.run_line_magic("tfmem", 'models["big"] --batch 4')
    shell.run_line_magic("tfmem", "models[ 'big' ] -b 5")
    assert [c["model"] for c in estimates] == [shell.user_ns["models"]["big"]] * 2
    assert [c["batch_size"] for c in estimates] == [4, 5]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ("--batch 8", {"batch_size": 8}),
        ("-b 3", {"batch_size": 3}),
        ("--optimizer sgd", {"optimizer": "sgd"}),
        ("--optimizer AdamW", {"optimizer": "adamw"}),
        ("-o rmsprop", {"optimizer": "rmsprop"}),
        ("--precision mixed_float16", {"precision": "mixed_float16"}),
        ("-p bfloat16", {"precision": "bfloat16"}),
        ("--inference", {"training": False}),
    ],
)
def test_flags_reach_the_estimator(shell, estimates, flags, expected):
    shell.run_line_magic("tfmem", f"model {flags}")
    (call,) = estimates
    for key, value in expected.items():
        assert call[key] == value
    data = bundles(shell)[0][MIME_TYPE]
    for key, value in expected.items():
        field = {"batch_size": "batch_size", "training": "training"}.get(key, key)
        assert data[field] == value


@pytest.mark.parametrize(
    ("flag", "card"),
    [
        ("A100-80", "A100 80 GB"),
        ('"a100 80gb"', "A100 80 GB"),
        ("t4", "T4 16 GB"),
        ("24GB", "Custom 24 GiB"),
        ("16GiB", "Custom 16 GiB"),
    ],
)
def test_gpu_flag_sets_the_card(shell, estimates, panels, flag, card):
    shell.run_line_magic("tfmem", f"model --gpu {flag}")
    assert panels[0].gpu.name == card
    fp = estimates[0]["fp"]
    largest = fp.max_batch_size(parse_gpu(card.replace("Custom ", "")).memory_bytes)
    markdown = bundles(shell)[0]["text/markdown"]
    assert f"Fits on a {card}" in markdown
    assert f"Largest batch that fits: {largest}" in markdown


def test_default_gpu_is_the_documented_default(shell, panels, monkeypatch):
    monkeypatch.setattr(magics, "default_gpu", lambda: parse_gpu("T4"))
    shell.run_line_magic("tfmem", "model")
    assert panels[0].gpu.name == "T4 16 GB"


def test_markdown_prints_only_the_table(shell, estimates, capsys):
    assert shell.run_line_magic("tfmem", "model --markdown --batch 2") is None
    out = capsys.readouterr().out
    assert out == estimates[0]["fp"].to_markdown() + "\n"
    assert bundles(shell) == []


def test_measure_flag_passes_the_same_settings(shell, estimates, panels, monkeypatch):
    calls = []

    class FakeMeasurement:
        peak_bytes = 10_000
        runs = (9_000, 10_000, 12_000)
        device = "CPU:0"

    def fake_measure(model, batch_size, **kwargs):
        calls.append({"model": model, "batch_size": batch_size, **kwargs})
        return FakeMeasurement()

    monkeypatch.setattr(jupyter_tfmem, "measure", fake_measure)
    shell.run_line_magic("tfmem", "model --measure --batch 6 --inference --precision float16")
    (call,) = calls
    assert call == {
        "model": shell.user_ns["model"],
        "batch_size": 6,
        "training": False,
        "optimizer": None,
        "precision": "float16",
    }
    shown = panels[0].measured.value
    assert "measured 9.77 KiB" in shown
    assert format_bytes(estimates[0]["fp"].peak_bytes) in shown
    assert "3 runs from 8.79 KiB to 11.7 KiB" in shown


@pytest.mark.slow
def test_measure_for_real_with_markdown(shell, estimates, monkeypatch, capsys):
    seen = []
    real = jupyter_tfmem.measure

    def spy(model, batch_size, **kwargs):
        seen.append(real(model, batch_size, **kwargs))
        return seen[-1]

    monkeypatch.setattr(jupyter_tfmem, "measure", spy)
    shell.run_line_magic("tfmem", "model --measure --markdown --batch 4")
    out = capsys.readouterr().out
    (m,) = seen
    fp = estimates[0]["fp"]
    assert out.startswith(fp.to_markdown())
    err = (fp.peak_bytes - m.peak_bytes) / m.peak_bytes
    assert f"measured {format_bytes(m.peak_bytes)}" in out
    assert f"estimate {100 * err:+.1f}%" in out


# -- the cell magic -----------------------------------------------------------------
def test_cell_with_no_model(shell, estimates, capsys):
    shell.run_cell_magic("tfmem", "", "x = 1 + 1")
    assert shell.user_ns["x"] == 2
    assert "assigned no Keras model" in capsys.readouterr().out
    assert estimates == [] and bundles(shell) == []


def test_cell_with_one_model(shell, estimates, panels):
    shell.run_cell_magic("tfmem", "--batch 16", "net = tiny('net')\ny = 5")
    (call,) = estimates
    assert call["model"] is shell.user_ns["net"] and call["batch_size"] == 16
    assert [p.title.value for p in panels] == [panels[0].title.value]
    assert "GPU memory of net" in panels[0].title.value
    assert len(bundles(shell)) == 1


def test_cell_with_two_models_and_a_rebinding(shell, estimates, panels):
    untouched = shell.user_ns["models"]["big"]
    shell.run_cell_magic(
        "tfmem",
        "--inference",
        "encoder = tiny('enc')\nmodel = tiny('model_again', 2)\nalias = model\nkeep = 1",
    )
    names = [re.search(r"GPU memory of (\w+)", p.title.value).group(1) for p in panels]
    # model was rebound; alias is a new name for it; models["big"] was not touched
    assert names == ["model", "encoder", "alias"]
    assert all(c["training"] is False for c in estimates)
    assert untouched not in [c["model"] for c in estimates]
    assert len(bundles(shell)) == 3


def test_cell_markdown_heads_each_table_with_its_variable(shell, estimates, capsys):
    shell.run_cell_magic("tfmem", "--markdown", "first = tiny('a')\nsecond = tiny('b', 3)")
    out = capsys.readouterr().out
    assert out.index("**first**") < out.index("**second**")
    for call in estimates:
        assert call["fp"].to_markdown() in out


def test_cell_that_fails_estimates_nothing(shell, estimates):
    result_before = shell.execution_count
    shell.run_cell_magic("tfmem", "", "broken = tiny('broken')\nraise RuntimeError('boom')")
    assert estimates == []
    assert shell.execution_count == result_before


def test_cell_magic_checks_flags_before_running_the_cell(shell):
    with pytest.raises(UsageError, match="batch size must be at least 1"):
        shell.run_cell_magic("tfmem", "--batch 0", "ran = True")
    assert "ran" not in shell.user_ns


def test_cell_magic_takes_no_model_name(shell):
    with pytest.raises(UsageError, match="takes no model name"):
        shell.run_cell_magic("tfmem", "model", "z = 1")


# -- bad input ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("nope", r"name 'nope' is not defined.*Keras models defined here: model"),
        ("not_a_model", r"'not_a_model' is of type int, not a Keras model.*models defined here"),
        ('models["small"]', r"evaluating .* failed: KeyError"),
        ("model +", r"not a Python expression"),
        ("", r"name the model to estimate.*%tfmem --help"),
        ("model --batch 0", r"batch size must be at least 1, got 0"),
        ("model --batch -3", r"batch size must be at least 1, got -3"),
        ("model --batch x", r"batch size must be a whole number such as 32, got 'x'"),
        ("model --batch 2.5", r"whole number"),
        ("model --optimizer adamm", r"unknown optimizer 'adamm'. Did you mean 'adam'\?.*sgd"),
        ("model --optimizer sgdd", r"unknown optimizer.*Choose one of: sgd, adam"),
        ("model --precision half", r"unknown precision policy 'half'.*mixed_float16"),
        ("model --gpu T5000", r"--gpu: unknown GPU 'T5000'.*Known cards: T4 16 GB"),
        ("model --gpu a100", r"ambiguous.*A100-40 or A100-80"),
        ("model --gpu 0GB", r"more than zero"),
        ("model --colour red", r"unrecognized arguments: --colour red"),
        ("model 'unclosed", r"cannot read the flags"),
    ],
)
def test_bad_input_is_a_usage_error_with_a_hint(shell, estimates, line, message):
    with pytest.raises(UsageError, match=message):
        shell.run_line_magic("tfmem", line)
    assert estimates == []


def test_core_errors_become_usage_errors(shell):
    # an unbuilt model: the real estimator raises ValueError saying how to build it
    shell.run_cell("unbuilt = keras.Sequential([keras.layers.Dense(3)])")
    with pytest.raises(UsageError, match=r"cannot estimate unbuilt: .*not been built"):
        shell.run_line_magic("tfmem", "unbuilt")


def test_type_errors_from_the_core_become_usage_errors(shell, monkeypatch):
    def refuse(model, batch_size, **kwargs):
        raise TypeError("training must be True or False")

    monkeypatch.setattr(jupyter_tfmem, "estimate", refuse)
    with pytest.raises(UsageError, match="cannot estimate model: training must be"):
        shell.run_line_magic("tfmem", "model")


def test_usage_error_in_a_cell_shows_one_line_not_a_traceback(shell, capsys):
    result = shell.run_cell("%tfmem model --batch 0")
    assert isinstance(result.error_in_exec, UsageError)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "batch size must be at least 1" in text
    assert "Traceback" not in text


# -- the panel's callback re-estimates the same model -----------------------------
def test_panel_selectors_reestimate_the_same_model(shell, estimates, panels):
    shell.run_line_magic("tfmem", "model --batch 8")
    panel = panels[0]
    panel.optimizer_select.value = "sgd"
    panel.precision_select.value = "mixed_float16"
    panel.mode_select.value = False
    assert [c["model"] for c in estimates] == [shell.user_ns["model"]] * 4
    assert estimates[1]["optimizer"] == "sgd"
    assert estimates[2]["precision"] == "mixed_float16"
    assert estimates[3]["training"] is False
    assert panel.footprint == estimates[3]["fp"].at(8)


def test_device_reaches_estimate_and_a_bad_one_is_a_usage_error(shell, estimates):
    shell.run_line_magic("tfmem", "model --batch 8 --device gpu --markdown")
    shell.run_line_magic("tfmem", "model --batch 8 --markdown")
    assert estimates[0]["device"] == "GPU"
    assert "device" not in estimates[1]
    with pytest.raises(UsageError, match=r"unknown device 'tpu'.*gpu, cpu"):
        shell.run_line_magic("tfmem", "model --device tpu")
    assert len(estimates) == 2


def test_replicas_reach_estimate_and_bad_ones_are_usage_errors(shell, estimates, capsys):
    shell.run_line_magic("tfmem", "model --batch 32 --replicas 2 --markdown")
    (call,) = estimates
    assert call["replicas"] == 2 and call["batch_size"] == 32
    assert call["fp"].device_batch_size == 16
    assert "(16, 4)" in capsys.readouterr().out  # per-device output shape
    for flags, needle in (
        ("--replicas 0", "at least 1"),
        ("--replicas x", "whole number"),
        ("--replicas 2 --measure", "data-parallel"),
    ):
        with pytest.raises(UsageError, match=needle):
            shell.run_line_magic("tfmem", f"model {flags}")
    assert len(estimates) == 1  # refused before estimating


def test_shapes_reach_estimate_and_measure_and_bad_ones_are_usage_errors(
    shell, estimates, monkeypatch
):
    measured = []

    class FakeMeasurement:
        peak_bytes = 10_000
        runs = (10_000,)
        device = "CPU:0"

    def fake_measure(model, batch_size, **kwargs):
        measured.append(kwargs)
        return FakeMeasurement()

    monkeypatch.setattr(jupyter_tfmem, "measure", fake_measure)
    assert shell.run_cell('model.compile("sgd", "mse")').success
    shell.run_line_magic("tfmem", "model --markdown --measure --input-shape 8 --target-shape '(4)'")
    (call,) = estimates
    assert call["input_shapes"] == [(8,)] and call["target_shapes"] == [(4,)]
    assert measured == [
        {
            "training": True,
            "optimizer": None,
            "precision": None,
            "input_shapes": [(8,)],
            "target_shapes": [(4,)],
        }
    ]
    shell.run_line_magic("tfmem", "model --markdown")
    assert "target_shapes" not in estimates[1] and "input_shapes" not in estimates[1]
    for flags, needle in (
        ("--target-shape 0", "--target-shape sizes must be between 1"),
        ("--input-shape a,b", "--input-shape wants sizes"),
        ("--target-shape 4 --target-shape 2", "1 output but 2 target shapes"),
    ):
        with pytest.raises(UsageError, match=needle):
            shell.run_line_magic("tfmem", f"model {flags}")
    assert len(estimates) == 2  # none of those estimated


def test_a_stateful_model_is_estimated_at_its_own_batch_unless_another_is_asked(shell, estimates):
    """Without --batch, a stateful model's own batch (it runs at no other), on
    each device with --replicas; another batch is a UsageError naming it."""
    assert shell.run_cell(
        "inp = keras.Input(batch_shape=(8, 12, 4))\n"
        "smodel = keras.Model(inp, keras.layers.GRU(6, stateful=True)(inp))"
    ).success
    shell.run_line_magic("tfmem", "smodel --markdown")
    shell.run_line_magic("tfmem", "smodel --markdown --replicas 2")
    shell.run_line_magic("tfmem", "model --markdown")
    assert [c["batch_size"] for c in estimates] == [8, 16, 32]
    assert estimates[0]["fp"].fixed_batch == 8 and estimates[2]["fp"].fixed_batch is None
    with pytest.raises(UsageError, match="fixes the batch at 8: use batch_size=8"):
        shell.run_line_magic("tfmem", "smodel --batch 32")
