"""While loops (RNNs): how long the list a backward loop pops stays allocated."""

from __future__ import annotations

import pytest

from jupyter_tfmem import estimator
from jupyter_tfmem.engine.schedule import Node, replay, topo_fifo_order

LIST, ELEM, WORK = 1000.0, 10.0, 300.0


VARIANT, F32 = "variant", "float32"


def _backward_loop(list_dtype=VARIANT) -> dict[str, Node]:
    """A backward loop popping the list its forward loop filled, as TF lowers it.

    Its state (the incoming gradient) comes from ``later``, the end of a chain
    of ops standing for the later layers' backward pass.
    """
    spec = [
        ("acc", "Fill", [], (LIST, list_dtype)),
        ("enter", "Enter", [("acc", 0)], (0.0, list_dtype)),
        ("list_merge", "Merge", [("enter", 0), ("list_next", 0)], (0.0, list_dtype)),
        ("cond", "LoopCond", [], (1.0, None)),
        ("list_switch", "Switch", [("list_merge", 0), ("cond", 0)], (0.0, list_dtype)),
        ("pop", "TensorListPopBack", [("list_switch", 1)], (0.0, list_dtype)),
        ("list_next", "NextIteration", [("pop", 0)], (0.0, list_dtype)),
        *((f"chain{i}", "NoOp", [(f"chain{i - 1}", 0)] if i else [], (0, None)) for i in range(9)),
        ("later", "Fill", [("chain8", 0)], (WORK, F32)),
        ("h_enter", "Enter", [("later", 0)], (0.0, F32)),
        ("h_merge", "Merge", [("h_enter", 0), ("h_next", 0)], (H, F32)),
        ("h_switch", "Switch", [("h_merge", 0), ("cond", 0)], (H, F32)),
        ("grad", "Mul", [("h_switch", 1), ("pop", 1)], (4.0, F32)),
        ("h_next", "NextIteration", [("grad", 0)], (0.0, F32)),
        ("exit", "Exit", [("h_switch", 0)], (0.0, F32)),
    ]
    nodes = {
        name: Node(name, op, list(inputs), [], [(a, 0.0, dtype)])
        for name, op, inputs, (a, dtype) in spec
    }
    nodes["pop"].outputs.append((ELEM, 0.0, F32))  # the element
    for name in ("list_switch", "h_switch"):  # output 0 to the exit, 1 to the body
        nodes[name].outputs.append(nodes[name].outputs[0])
    return nodes


def test_a_popped_lists_next_value_waits_for_the_loops_state():
    nodes = _backward_loop()
    estimator._sequence_loop_exits(nodes)
    assert nodes["list_next"].controls == ["h_next"]
    assert set(nodes["exit"].controls) == {"h_next", "list_next"}
    assert nodes["h_next"].controls == []  # the state does not wait for the list: no cycle


def test_a_loop_value_that_is_not_a_list_waits_for_nothing_new():
    nodes = _backward_loop(list_dtype=F32)
    estimator._sequence_loop_exits(nodes)
    assert nodes["list_next"].controls == []


def test_a_popped_list_stays_allocated_until_its_loop_ends():
    nodes = _backward_loop()
    estimator._sequence_loop_exits(nodes)
    for node in nodes.values():  # the replay runs the body once: no back edges
        if node.op == "Merge":
            node.inputs = [s for s in node.inputs if nodes[s[0]].op != "NextIteration"]
    order = topo_fifo_order(nodes)
    assert order.index("pop") < order.index("later")  # the pop does not wait for it
    timeline, _ = replay(nodes, order, 1, preset={})
    live = dict(zip(order, (a for a, _ in timeline), strict=True))
    # Freed at the pop, the list would be gone while the later layers' backward
    # pass runs; TF frees its elements only as the loop's iterations use them.
    assert live["later"] >= LIST + WORK
    assert live["exit"] < LIST  # and it goes when the loop ends


H = 48.0  # bytes of the recurrent state


def _forward_loop() -> dict[str, Node]:
    """A GRU-like forward loop traced with a static batch, as TF lowers it.

    Each tensor's spec is its size (aliases included), as shape inference gives it.

    The carried state ``h`` is pushed for the backward pass; the new state
    ``h_new`` (next iteration's ``h``) is written to the output list, which
    TensorListStack copies after the loop.  Nothing pushes ``h_new`` itself.
    """
    spec = [
        ("h_init", "Fill", [], (H, F32)),
        ("cond", "LoopCond", [], (1.0, None)),
        ("h_enter", "Enter", [("h_init", 0)], (H, F32)),
        ("h_merge", "Merge", [("h_enter", 0), ("h_next", 0)], (H, F32)),
        ("h_switch", "Switch", [("h_merge", 0), ("cond", 0)], (H, F32)),
        ("h_body", "Identity", [("h_switch", 1)], (H, F32)),
        ("acc", "EmptyTensorList", [], (0.0, VARIANT)),
        ("acc_enter", "Enter", [("acc", 0)], (0.0, VARIANT)),
        ("acc_merge", "Merge", [("acc_enter", 0), ("acc_next", 0)], (0.0, VARIANT)),
        ("acc_switch", "Switch", [("acc_merge", 0), ("cond", 0)], (0.0, VARIANT)),
        ("push", "TensorListPushBack", [("acc_switch", 1), ("h_body", 0)], (0.0, VARIANT)),
        ("acc_next", "NextIteration", [("push", 0)], (0.0, VARIANT)),
        ("h_new", "AddV2", [("h_body", 0), ("h_init", 0)], (H, F32)),
        ("h_next", "NextIteration", [("h_new", 0)], (H, F32)),
        ("out", "TensorListReserve", [], (0.0, VARIANT)),
        ("out_enter", "Enter", [("out", 0)], (0.0, VARIANT)),
        ("out_merge", "Merge", [("out_enter", 0), ("out_next", 0)], (0.0, VARIANT)),
        ("out_switch", "Switch", [("out_merge", 0), ("cond", 0)], (0.0, VARIANT)),
        ("step", "Identity", [("cond", 0)], (4.0, None)),
        ("set", "TensorListSetItem", [("out_switch", 1), ("step", 0), ("h_new", 0)], (0, VARIANT)),
        ("out_next", "NextIteration", [("set", 0)], (0.0, VARIANT)),
    ]
    nodes = {
        name: Node(name, op, list(inputs), [], [(a, 0.0, dtype)])
        for name, op, inputs, (a, dtype) in spec
    }
    for name in ("h_switch", "acc_switch", "out_switch"):  # output 0 to the exit, 1 to the body
        nodes[name].outputs.append(nodes[name].outputs[0])
    return nodes


def test_a_pushed_carried_state_is_charged_to_its_accumulator_not_the_output_list():
    from tensorflow.core.framework import graph_pb2

    nodes = _forward_loop()
    estimator._size_tensor_lists(graph_pb2.GraphDef(), nodes)
    # The accumulator keeps every step's state for the backward pass; the output
    # list refers to the same buffers and is copied and freed after the loop.
    assert nodes["acc_enter"].op == "_ListEnter"
    assert nodes["acc_enter"].outputs[0][0] == H
    assert nodes["set"].outputs[0][0] == 0.0
    assert nodes["out_enter"].outputs[0][0] == 0.0


def test_a_step_with_loops_runs_on_the_executor_threads_each_loop_taking_all_its_steps(
    monkeypatch,
):
    # TF's executor runs a graph with while loops on its inter-op threads like
    # any other (a bidirectional RNN's two loops run side by side), so the
    # replay follows the same thread model.  Each loop's body is replayed
    # once but runs once per time step, so beside the ops outside the loop
    # its ops take that many times as long.
    import keras

    steps = 20
    inp = keras.Input((steps, 8))
    x = keras.layers.Bidirectional(keras.layers.LSTM(16))(inp)
    model = keras.Model(inp, keras.layers.Dense(1)(x))

    raw, used = {}, {}
    durations, events = estimator._durations, estimator._executor_events

    def record_raw(*args, **kwargs):
        raw.update(durations(*args, **kwargs))
        return dict(raw)

    def record_used(nodes, order, durs, threads, shared=False, trips=None, **kw):
        used.update(durs)
        return events(nodes, order, durs, threads, shared, trips, **kw)

    monkeypatch.setattr(estimator, "_durations", record_raw)
    monkeypatch.setattr(estimator, "_executor_events", record_used)
    fp = estimator.estimate(model, 4, optimizer="adam", loss="mse", device="CPU")
    assert "inter-op threads" in fp.executor
    in_loops = [n for n in raw if estimator._frame_of(n) and raw[n] > 0]
    assert in_loops  # the loop bodies have ops that take time
    for name in in_loops:
        assert used[name] == pytest.approx(raw[name] * steps)
    outside = [n for n in raw if not estimator._frame_of(n) and raw[n] > 0]
    assert outside and all(used[n] == raw[n] for n in outside)
