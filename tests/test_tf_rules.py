"""Estimator rules for TF behaviours (loops, CPU convolution buffers) on hand-built graphs."""

from __future__ import annotations

from jupyter_tfmem.engine.schedule import Node
from jupyter_tfmem.estimator import _const_slot, _runahead_ops

F32 = "float32"
W = "model/rnn/while"


def _loop() -> dict[str, Node]:
    """An RNN step: a counter i, a state h, and x_i @ Wx that does not need h."""

    def n(name, op, inputs=(), size=1.0):
        return Node(name, op, [(s, 0) for s in inputs], [], [(size, 0.0, F32)])

    nodes = [
        n("i0", "Const"),
        n("h0", "Const"),
        n(f"{W}/enter/_0", "Enter", ["i0"]),
        n(f"{W}/enter/_1", "Enter", ["h0"]),
        n(f"{W}/merge/_0", "Merge", [f"{W}/enter/_0", f"{W}/next_iteration/_0"]),
        n(f"{W}/merge/_1", "Merge", [f"{W}/enter/_1", f"{W}/next_iteration/_1"]),
        n(f"{W}/switch/_0", "Switch", [f"{W}/merge/_0"]),
        n(f"{W}/switch/_1", "Switch", [f"{W}/merge/_1"]),
        n(f"{W}/body/_1/one", "Const"),
        n(f"{W}/body/_1/i_next", "AddV2", [f"{W}/switch/_0", f"{W}/body/_1/one"]),
        n(f"{W}/body/_1/x_proj", "MatMul", [f"{W}/switch/_0"], size=100.0),
        n(f"{W}/body/_1/h_proj", "MatMul", [f"{W}/switch/_1"], size=100.0),
        n(f"{W}/body/_1/h_next", "AddV2", [f"{W}/body/_1/x_proj", f"{W}/body/_1/h_proj"]),
        n(f"{W}/next_iteration/_0", "NextIteration", [f"{W}/body/_1/i_next"]),
        n(f"{W}/next_iteration/_1", "NextIteration", [f"{W}/body/_1/h_next"]),
    ]
    return {node.name: node for node in nodes}


def test_only_ops_that_do_not_wait_for_the_state_run_ahead():
    ahead = _runahead_ops(_loop())
    # x_proj needs only the counter; h_proj and h_next need the state h; the
    # counter's own increment feeds nothing that waits.
    assert ahead == [f"{W}/body/_1/x_proj"]


def test_a_loop_without_state_runs_nothing_ahead():
    nodes = _loop()
    # h's next value is h itself: it is passed through, not state.
    nodes[f"{W}/next_iteration/_1"].inputs = [(f"{W}/switch/_1", 0)]
    assert _runahead_ops(nodes) == []


def test_a_list_index_is_constant_only_through_enters_not_merges():
    nodes = _loop()
    consts = {"i0": 0, "seven": 7}
    nodes["seven"] = Node("seven", "Const", [], [], [(4.0, 0.0, "int32")])
    nodes[f"{W}/enter/_7"] = Node(f"{W}/enter/_7", "Enter", [("seven", 0)], [], [None])
    assert _const_slot(nodes, consts, f"{W}/enter/_7") == 7
    # The counter starts from the constant 0, but it changes every iteration.
    assert _const_slot(nodes, consts, f"{W}/switch/_0") is None


def test_eigen_convolution_gradients_get_their_column_buffer(monkeypatch):
    from jupyter_tfmem.estimator import _size_eigen_conv_buffers

    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)

    def conv_grad(dtype):
        node = Node("g", "Conv2DBackpropInput", [("s", 0), ("w", 0), ("dy", 0)], [], [])
        node.outputs = [(0.0, 1.0, dtype)]
        return {"g": node}

    # dy (64, 16, 16, 64) and a 3x3x32x64 kernel, as TF's log shows: a
    # float16 gradient unfolds 145 images into 145 x 256 x 288 halves.
    props = {"dy": [((64, 16, 16, 64), None)], "w": [((3, 3, 32, 64), None)]}
    half = conv_grad("float16")
    _size_eigen_conv_buffers(half, props, threads=2)
    assert half["g"].scratch == (145 * 256 * 288 * 2, 0.0)
    # float32 goes to oneDNN (TF's default on x86), which has no such buffer.
    single = conv_grad("float32")
    _size_eigen_conv_buffers(single, props, threads=2)
    assert single["g"].scratch is None
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    _size_eigen_conv_buffers(single, props, threads=2)
    assert single["g"].scratch is not None
