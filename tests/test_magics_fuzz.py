"""Fuzzing %tfmem's argument parsing: any input ends in a result or a UsageError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.error import UsageError
from IPython.testing.globalipapp import TerminalInteractiveShell, start_ipython

import jupyter_tfmem

FLAGS = [
    "--batch",
    "-b",
    "--optimizer",
    "--precision",
    "--inference",
    "--gpu",
    "--device",
    "--markdown",
    "--measure",
    "--help",
    "model",
    "models['big']",
    "not_a_model",
    "0",
    "-3",
    "x",
    "1e9",
    "adam",
    "warp",
    "T4",
    "A100-80",
    "mixed_float16",
    "'",
    '"',
    "--",
    "=",
    "|",
    "<script>",
]


@pytest.fixture(scope="module")
def shell():
    # start_ipython() returns None once another test module has started the shell
    ip = start_ipython() or TerminalInteractiveShell.instance()
    ip.run_line_magic("load_ext", "jupyter_tfmem")
    ip.run_cell(
        "import keras\n"
        "model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])\n"
        "models = {'big': model}\n"
        "not_a_model = 3\n"
    )
    saved = ip.display_pub
    ip.display_pub = CapturingDisplayPublisher()
    yield ip
    ip.display_pub = saved


@pytest.fixture(scope="module")
def no_measure():
    """Real steps in subprocesses are too slow to fuzz; the flag's parsing is what counts."""
    mp = pytest.MonkeyPatch()

    def refuse(*args, **kwargs):
        raise ValueError("measuring is disabled in this test")

    mp.setattr(jupyter_tfmem, "measure", refuse)
    yield
    mp.undo()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.lists(st.sampled_from(FLAGS), max_size=6).map(" ".join),
        st.text(max_size=40),
    )
)
def test_any_argument_line_gives_a_result_or_a_usage_error(shell, no_measure, line):
    try:
        shell.run_line_magic("tfmem", line)
    except UsageError as err:
        message = str(err)
        assert message and "Traceback" not in message
        assert len(message) < 2000
    except SystemExit:
        pytest.fail(f"%tfmem {line!r} tried to exit the kernel")
