"""The helper process: the same graphs and replays as here, and never in the way."""

from __future__ import annotations

import pytest

keras = pytest.importorskip("keras")

import jupyter_tfmem as jt  # noqa: E402
from jupyter_tfmem.engine import grappler, helper_process  # noqa: E402
from jupyter_tfmem.engine.step import trace_step  # noqa: E402


def small_model() -> keras.Model:
    keras.backend.clear_session()  # the same names, so the same graph, each time
    inp = keras.Input((16,))
    x = keras.layers.Dense(32, activation="gelu", name="hidden")(inp)
    x = keras.layers.LayerNormalization(name="norm")(x)
    return keras.Model(inp, keras.layers.Dense(4, name="out")(x))


@pytest.fixture
def helper(monkeypatch):
    monkeypatch.setenv(helper_process.ENV_SWITCH, "1")
    monkeypatch.setattr(helper_process, "_broken", False)
    # importing TensorFlow takes the helper a few seconds; this blocks on its pipe
    assert helper_process.wait_until_ready(timeout=120)
    yield
    helper_process.stop()


def _traced():
    import tensorflow as tf

    model = small_model()
    opt = keras.optimizers.Adam()
    opt.build(model.trainable_variables)
    return trace_step(
        model,
        training=True,
        x_specs=tf.TensorSpec((8, 16)),
        y_specs=tf.TensorSpec((8, 4)),
        loss_fn=keras.losses.MeanSquaredError(),
        optimizer=opt,
    )


def _bytes(graph_def) -> bytes:
    return graph_def.SerializeToString(deterministic=True)


def test_the_helper_writes_the_graphs_grappler_writes_here(helper):
    traced = _traced()
    result = helper_process.optimize(traced.graph_def, traced.fetches)
    assert result is not None
    once_there, twice_there = result()
    first = grappler.first_pass(traced.graph_def, traced.fetches)
    assert _bytes(once_there) == _bytes(grappler.restored(first))
    assert _bytes(twice_there) == _bytes(grappler.second_pass(first, traced.fetches))
    assert _bytes(twice_there) == _bytes(grappler.optimize(traced.graph_def, traced.fetches))


def test_an_estimate_shares_grappler_and_the_replays_with_the_helper(helper, monkeypatch):
    sent = []
    send = helper_process._Helper.send
    monkeypatch.setattr(
        helper_process._Helper,
        "send",
        lambda self, kind, *a: (sent.append(kind), send(self, kind, *a)),
    )
    there = jt.estimate(small_model(), 8, optimizer="adam", loss="mse", device="CPU")
    # the first graph's Grappler passes and shapes, then half of the executor schedules
    assert sent == [helper_process._GRAPPLER, helper_process._CALL, helper_process._CALL]
    monkeypatch.setenv(helper_process.ENV_SWITCH, "0")
    here = jt.estimate(small_model(), 8, optimizer="adam", loss="mse", device="CPU")
    assert there.to_dict() == here.to_dict()
    assert len(sent) == 3


def test_a_call_runs_the_function_there(helper):
    import math

    result = helper_process.call(math.comb, 10, 3)
    assert result is not None and result() == 120


def test_work_given_for_the_wait_runs_only_while_the_answer_is_not_there(helper):
    import select
    import time

    done = []
    # the helper cannot answer before it has slept: the wait is still ahead
    result = helper_process.call(time.sleep, 0.5)
    assert result is not None
    result(lambda: done.append("meanwhile"))
    assert done == ["meanwhile"]
    result = helper_process.call(max, 1, 2)
    assert result is not None
    ready, _, _ = select.select([helper_process._helper.proc.stdout], [], [], 60)
    assert ready  # the answer has come: nothing is done before it is read
    assert result(lambda: done.append("again")) == 2
    assert done == ["meanwhile"]


def test_result_or_takes_the_helpers_answer_else_does_the_work_here(helper):
    import math

    def here():
        return "here"

    assert helper_process.result_or(helper_process.call(math.comb, 10, 3), here) == 120
    failing = helper_process.call(math.comb, "ten", 3)  # raises in the helper
    assert failing is not None
    assert helper_process.result_or(failing, here) == "here"
    assert helper_process.call(math.comb, 10, 3) is None  # not used again
    assert helper_process.result_or(None, here) == "here"


def test_a_helper_that_died_leaves_grappler_to_this_process(helper):
    helper_process._helper.proc.kill()
    helper_process._helper.proc.wait()
    fp = jt.estimate(small_model(), 8, optimizer="adam", loss="mse")
    assert fp.peak_bytes > 0
    assert not helper_process.enabled()  # not tried again in this process


def test_a_graph_the_helper_cannot_optimize_is_reported_not_returned(helper):
    traced = _traced()
    broken = type(traced.graph_def).FromString(traced.graph_def.SerializeToString())
    broken.node[-1].input.append("no_such_node")
    result = helper_process.optimize(broken, traced.fetches)
    assert result is not None and result() is None
    # the estimate then runs Grappler itself, which raises as it did before
    with pytest.raises(Exception, match="no_such_node"):
        grappler.optimize(broken, traced.fetches)


def test_a_forked_child_does_its_work_itself(helper, monkeypatch):
    # a process forked after the helper started shares its pipe: it must not use it
    monkeypatch.setattr(helper_process._helper, "owner", -1)
    assert helper_process.call(max, 1, 2) is None
    assert helper_process.enabled()  # the parent goes on using it


def test_the_helper_runs_this_very_package_from_any_directory(helper, monkeypatch, tmp_path):
    # started elsewhere, ``python -m`` would import whatever copy of the
    # package that directory or site-packages holds, or none
    helper_process.stop()
    monkeypatch.chdir(tmp_path)
    assert helper_process.wait_until_ready(timeout=120)
    result = helper_process.call(helper_process._where)
    assert result is not None and result() == helper_process._where()
