"""Estimator rules for TF behaviours (loops, CPU convolution buffers) on hand-built graphs."""

from __future__ import annotations

import math

import pytest
from _tflog import logged_allocations, step_allocations
from conftest import AVX2, AVX512, AVX512_FP16, on_cpu

from jupyter_tfmem.engine.schedule import Node, replay, topo_fifo_order
from jupyter_tfmem.estimator import (
    _const_slot,
    _eigen_dtypes,
    _hold_runahead,
    _mark_dim0_views,
    _reduction_runs,
    _runahead_ops,
    _runahead_shares,
    _ungate_loop_entries,
)

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


def test_a_run_ahead_window_leaves_room_for_the_outputs_written_meanwhile():
    """k iterations hold P bytes each while j outputs of O bytes are written:
    the loop's most is max(k P + (T-k) O, T O), k min(P, O) under k P + T O."""
    proj = Node(f"{W}/body/_1/x_proj", "MatMul", [], [], [(0.0, 400.0, F32)])
    # four times the bytes of the one output each step writes: a quarter less
    assert _runahead_shares([proj], {W: (0.0, 100.0)}) == {W: (1.0, 0.75)}
    # outputs at least as large: the lists alone make the loop's most
    assert _runahead_shares([proj], {W: (0.0, 500.0)}) == {W: (1.0, 0.0)}
    assert _runahead_shares([proj], {}) == {W: (1.0, 1.0)}


def test_a_run_ahead_window_is_held_until_the_loop_exits():
    """The replay runs the body once, so x_proj's reader frees it at once; the
    other open iterations' projections live until the loop ends."""
    nodes = _loop()
    nodes[f"{W}/exit/_0"] = Node(f"{W}/exit/_0", "Exit", [(f"{W}/switch/_1", 0)], [], [None])
    nodes["after"] = Node("after", "Relu", [(f"{W}/exit/_0", 0)], [], [(1.0, 0.0, F32)])
    proj = nodes[f"{W}/body/_1/x_proj"]
    _hold_runahead(nodes, proj, 32, (0.75, 0.75), f"{W}/exit/_0")
    window = nodes[f"{proj.name}/_runahead_window"]
    assert window.outputs[0][0] == pytest.approx(100.0 * (32 * 0.75 - 1))
    assert window.pieces == 23  # one allocation per iteration, as TF makes them
    assert proj.outputs[0][0] == 100.0  # its own iteration's, read by h_next

    for merge in (f"{W}/merge/_0", f"{W}/merge/_1"):  # the replay has no back edge
        nodes[merge].inputs = nodes[merge].inputs[:1]
    order = topo_fifo_order(nodes)
    live, _ = replay(nodes, order, 1, preset={})
    at = {name: a for name, (a, _) in zip(order, live, strict=True)}
    assert at[f"{W}/body/_1/h_next"] >= 2300.0
    assert at["after"] < 2300.0


def _with_cast_kernel(nodes: dict[str, Node]) -> dict[str, Node]:
    """``_loop()`` with x_proj reading a float16 cast of a loop-constant kernel,
    and the gates Grappler's lowering puts on the loop's entry and body."""
    gate, body_gate = f"{W}/LoopControlInputs/_9", f"Func/{W}/body/_1/input_control_node/_9"
    extra = [
        Node("kernel", "Placeholder", [], [], [(4.0, 0.0, F32)]),
        Node(f"{W}/enter/_2", "Enter", [("kernel", 0)], [gate], [(4.0, 0.0, F32)]),
        Node(gate, "NoOp", [], ["h0"], []),
        Node(body_gate, "NoOp", [], [f"{W}/switch/_0", f"{W}/switch/_1"], []),
        Node(f"{W}/body/_1/cast", "Cast", [(f"{W}/enter/_2", 0)], [body_gate], [(2.0, 0, F32)]),
    ]
    nodes.update({node.name: node for node in extra})
    nodes[f"{W}/body/_1/x_proj"].inputs.append((f"{W}/body/_1/cast", 0))
    nodes[f"{W}/body/_1/h_proj"].controls.append(body_gate)
    return nodes


def test_work_seen_through_a_view_runs_ahead_where_the_view_waits():
    # A 1D convolution is a 2D one between an ExpandDims and a Squeeze: the
    # Squeeze waits for the state, but the buffer it views is the
    # convolution's, which is what the open iterations hold.
    nodes = _loop()
    squeeze = f"{W}/body/_1/squeeze"
    nodes[squeeze] = Node(squeeze, "Squeeze", [(f"{W}/body/_1/x_proj", 0)], [], [(100.0, 0, F32)])
    nodes[f"{W}/body/_1/h_next"].inputs[0] = (squeeze, 0)
    assert sorted(_runahead_ops(nodes)) == [f"{W}/body/_1/squeeze", f"{W}/body/_1/x_proj"]
    # a view of the state is not run ahead, nor what it views
    nodes[squeeze].inputs = [(f"{W}/body/_1/h_proj", 0)]
    nodes[f"{W}/body/_1/h_next"].inputs = [(f"{W}/body/_1/x_proj", 0), (squeeze, 0)]
    assert _runahead_ops(nodes) == [f"{W}/body/_1/x_proj"]


def test_work_from_loop_constants_runs_ahead_when_it_feeds_work_that_does():
    # The cast reads only the kernel: every open iteration casts it before
    # its x_proj runs, so it is held as many times as x_proj is.
    ahead = _runahead_ops(_with_cast_kernel(_loop()))
    assert sorted(ahead) == [f"{W}/body/_1/cast", f"{W}/body/_1/x_proj"]


def test_a_loops_ops_wait_for_their_data_not_for_all_of_the_loops_inputs():
    # TF's runtime lowers the While after Grappler and has neither gate.
    nodes = _with_cast_kernel(_loop())
    _ungate_loop_entries(nodes)
    assert nodes[f"{W}/enter/_2"].controls == []
    assert nodes[f"{W}/body/_1/cast"].controls == []
    # the state's product waits for the state alone: the first iteration's
    # runs before the loop's input sequence exists
    assert nodes[f"{W}/body/_1/h_proj"].controls == []


def test_a_control_input_of_the_while_itself_still_gates_the_loops_entry():
    nodes = _with_cast_kernel(_loop())
    gate = f"{W}/LoopControlInputs/_9"
    nodes["assign"] = Node("assign", "AssignVariableOp", [], [], [])
    nodes[gate].controls.append("assign")
    _ungate_loop_entries(nodes)
    assert nodes[f"{W}/enter/_2"].controls == [gate]
    assert nodes[gate].controls == ["assign"]  # h0, an entry's input, is not a gate of its own


def test_the_entry_of_a_list_the_loop_fills_waits_for_the_loops_inputs():
    # The replay charges the list's elements at its Enter: the gate keeps
    # them from being charged before the loop can start.
    nodes = _with_cast_kernel(_loop())
    gate = f"{W}/LoopControlInputs/_9"
    nodes["reserve"] = Node("reserve", "TensorListReserve", [], [], [(0.0, 0.0, "variant")])
    nodes["handle"] = Node("handle", "Identity", [("reserve", 0)], [], [(0.0, 0.0, "variant")])
    out = f"{W}/enter/_3"
    nodes[out] = Node(out, "Enter", [("handle", 0)], [gate], [(0.0, 0.0, "variant")])
    _ungate_loop_entries(nodes)
    assert nodes[out].controls == [gate]
    assert nodes[f"{W}/enter/_2"].controls == []


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


def test_onednn_takes_the_dtypes_the_cpu_has_instructions_for(monkeypatch):
    from jupyter_tfmem.estimator import _eigen_dtypes, onednn_dtypes

    assert onednn_dtypes(frozenset({"avx2", "fma"})) == {"float32"}
    assert onednn_dtypes(AVX512) == {"float32", "bfloat16"}
    assert onednn_dtypes(AVX512_FP16) == {"float32", "bfloat16", "float16"}
    # AVX512-FP16 needs AVX-512BW beside it; AVX-NE-CONVERT alone takes both halves
    assert onednn_dtypes(frozenset({"avx512f", "avx512_fp16"})) == {"float32", "bfloat16"}
    assert onednn_dtypes(frozenset({"avx2", "avx_ne_convert"})) == {
        "float32",
        "bfloat16",
        "float16",
    }
    assert onednn_dtypes(None) == {"float32", "bfloat16"}  # no /proc/cpuinfo
    on_cpu(monkeypatch, AVX512_FP16)
    assert _eigen_dtypes() == {"float64"}
    on_cpu(monkeypatch, AVX512)
    assert _eigen_dtypes() == {"float16", "float64"}
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    assert _eigen_dtypes() == {"float16", "bfloat16", "float32", "float64"}
    # Without AVX512-VNNI/BF16, AVX-VNNI or AMX, TF leaves oneDNN off unless asked
    on_cpu(monkeypatch, AVX2)
    assert _eigen_dtypes() == {"float16", "bfloat16", "float32", "float64"}
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "1")
    assert _eigen_dtypes() == {"float16", "bfloat16", "float64"}
    on_cpu(monkeypatch, AVX2 | {"avx_vnni"})
    assert _eigen_dtypes() == {"float16", "bfloat16", "float64"}


def test_onednn_is_on_where_tf_turns_it_on():
    from jupyter_tfmem.estimator import onednn_on

    assert onednn_on(AVX512, None) and onednn_on(AVX512_FP16, None)
    assert not onednn_on(AVX2, None)
    assert not onednn_on(AVX2 | {"avx512f"}, None)  # AVX-512 alone (Skylake) is not enough
    assert onednn_on(AVX2, "1") and onednn_on(AVX2, "True")
    assert not onednn_on(AVX512, "0") and not onednn_on(AVX512, "false")
    assert onednn_on(AVX2 | {"amx_tile"}, "") and onednn_on(None, None)


def test_eigen_convolution_gradients_get_their_column_buffer(monkeypatch):
    from jupyter_tfmem.estimator import _size_eigen_conv_buffers

    on_cpu(monkeypatch, AVX512)

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
    on_cpu(monkeypatch, AVX512_FP16)  # float16 goes to oneDNN too
    half = conv_grad("float16")
    _size_eigen_conv_buffers(half, props, threads=2)
    assert half["g"].scratch is None
    # float32 goes to oneDNN (TF's default on x86), which has no such buffer.
    single = conv_grad("float32")
    _size_eigen_conv_buffers(single, props, threads=2)
    assert single["g"].scratch is None
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    _size_eigen_conv_buffers(single, props, threads=2)
    assert single["g"].scratch is not None


def test_tfs_float64_convolution_gradients_unfold_as_the_rule_says():
    """TF's log of Eigen's convolution gradients against ``_size_eigen_conv_buffers``.

    The filter gradient unfolds a whole shard of images even when one
    image's work would fill the cores (the first two cases: 12 and 65 images
    of 1,024 pixels); the input gradient unfolds one image then (the third)
    and a shard only for small images (the fourth).
    """
    from jupyter_tfmem.estimator import _size_eigen_conv_buffers

    cases = [
        ("Conv2DBackpropFilter", (64, 32, 32, 32), (3, 3, 32, 32)),
        ("Conv2DBackpropFilter", (64, 32, 32, 3), (3, 3, 3, 32)),
        ("Conv2DBackpropInput", (64, 32, 32, 32), (3, 3, 32, 32)),
        ("Conv2DBackpropInput", (8, 16, 16, 8), (3, 3, 8, 8)),
    ]
    logged = step_allocations(
        """
        def RUN(case, x, w, dy):
            if case["op"] == "Conv2DBackpropFilter":
                return tf.raw_ops.Conv2DBackpropFilter(
                    input=x, filter_sizes=tf.shape(w), out_backprop=dy,
                    strides=[1, 1, 1, 1], padding="SAME")
            return tf.raw_ops.Conv2DBackpropInput(
                input_sizes=tf.shape(x), filter=w, out_backprop=dy,
                strides=[1, 1, 1, 1], padding="SAME")
        """,
        [
            {
                "op": op,
                "inputs": [(list(x), "float64"), (list(w), "float64"), ([*x[:3], w[3]], "float64")],
            }
            for op, x, w in cases
        ],
    )
    for (op, x, w), sizes in zip(cases, logged, strict=True):
        node = Node("g", op, [("x", 0), ("w", 0), ("dy", 0)], [], [(0.0, 1.0, "float64")])
        props = {"dy": [((*x[:3], w[3]), None)], "w": [(w, None)], "g": [(w, None)]}
        _size_eigen_conv_buffers({"g": node}, props, threads=2)
        output = 8 * math.prod(w if op == "Conv2DBackpropFilter" else x)
        assert sorted(s for s in sizes if s >= 4096) == sorted([output, node.scratch[0]])


def test_tfs_float64_pool_gradient_recomputes_its_argmax_and_works_in_place(monkeypatch):
    """Eigen's ``MaxPoolingGradOp``: an int64 argmax always, a copy of the pool's
    output only when something else still holds it, the result in the pool's input."""
    from jupyter_tfmem.estimator import _add_eigen_pool_grad_temps

    logged = step_allocations(
        """
        def RUN(case, x):
            x = x * 2.0
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.nn.max_pool2d(x, 2, 2, "VALID")
            g = tape.gradient(y, x, output_gradients=y * 2.0)
            return (g, y) if case["keep_pooled"] else g
        """,
        [{"inputs": [([64, 32, 32, 32], "float64")], "keep_pooled": k} for k in (False, True)],
    )
    x, pooled = 8 * 64 * 32 * 32 * 32, 8 * 64 * 16 * 16 * 32
    alone, kept = (sorted(s for s in sizes if s >= 4096) for sizes in logged)
    assert alone == [pooled] * 3 + [x]  # x, the pool, dy, the argmax; the result in x
    assert kept == [pooled] * 4 + [x]  # and a copy of the pool, which the step returns

    def pool_grad(dtype):
        nodes = {
            "pool": Node("pool", "MaxPool", [("x", 0)], [], [(0.0, 4096.0, dtype)]),
            "grad": Node(
                "grad", "MaxPoolGrad", [("x", 0), ("pool", 0), ("dy", 0)], [], [(0.0, 1.0, dtype)]
            ),
        }
        _add_eigen_pool_grad_temps(nodes)
        return nodes["grad"]

    on_cpu(monkeypatch, AVX512)
    grad = pool_grad("float64")
    assert grad.pre_temps == ((0.0, 4096.0), (0.0, 4096.0))
    assert grad.pre_temp_inputs == (1, None) and grad.forwards == {0: (0,)}
    single = pool_grad("float32")  # oneDNN's kernel: its workspace instead
    assert single.pre_temps == () and single.forwards is None


def _product(op: str, dtype: str) -> dict[str, Node]:
    return {"p": Node("p", op, [("x", 0), ("w", 0)], [], [(0.0, 1024.0, dtype)])}


def _product_shapes(n: int) -> dict:
    return {"x": [((n, 256), None)], "w": [((256, 512), None)], "p": [((n, 512), None)]}


def test_float16_products_get_float32_copies_of_operands_and_output(monkeypatch):
    from jupyter_tfmem.estimator import _B1, _B2, _size_eigen_matmul_copies

    on_cpu(monkeypatch, AVX512)
    props = (_product_shapes(_B1), _product_shapes(_B2))
    half = _product("MatMul", "float16")
    _size_eigen_matmul_copies(half, *props)
    # x and the output grow with the batch; the kernel's copy does not
    assert half["p"].post_temps == pytest.approx([(0, 4 * 256), (4 * 256 * 512, 0), (0, 4 * 512)])
    for dtype in ("float32", "bfloat16"):  # oneDNN's kernels: no copies
        other = _product("BatchMatMulV2", dtype)
        _size_eigen_matmul_copies(other, *props)
        assert other["p"].post_temps == ()
    on_cpu(monkeypatch, AVX512_FP16)
    half = _product("MatMul", "float16")
    _size_eigen_matmul_copies(half, *props)
    assert half["p"].post_temps == ()
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    bf16 = _product("BatchMatMulV2", "bfloat16")
    _size_eigen_matmul_copies(bf16, *props)
    assert len(bf16["p"].post_temps) == 3


def test_integer_products_get_copies_of_their_operands_in_the_output_dtype(monkeypatch):
    """Keras's int8 Dense multiplies int8 by int8 into int32: TF's kernel casts
    each operand to int32 first; an operand already in the output's dtype is
    used as it is."""
    from jupyter_tfmem.estimator import _size_eigen_matmul_copies

    on_cpu(monkeypatch, AVX512)

    def product(x_dtype: str, w_dtype: str, out_dtype: str) -> Node:
        nodes = {
            "x": Node("x", "Cast", [], [], [(0.0, 256.0, x_dtype)]),
            "w": Node("w", "ReadVariableOp", [], [], [(256.0 * 512, 0.0, w_dtype)]),
            **_product("BatchMatMulV3", out_dtype),
        }
        _size_eigen_matmul_copies(nodes, {}, {})
        return nodes["p"]

    assert product("int8", "int8", "int32").post_temps == pytest.approx(
        [(0.0, 4 * 256.0), (4 * 256.0 * 512, 0.0)]
    )
    assert product("int32", "int8", "int32").post_temps == pytest.approx([(4 * 256.0 * 512, 0.0)])
    assert product("int32", "int32", "int32").post_temps == ()
    assert product("float32", "float32", "float32").post_temps == ()


def test_tfs_int8_product_allocates_int32_copies_of_both_operands():
    """The output first, then an int32 copy of each int8 operand."""
    shapes = [((512, 256), (256, 1024)), ((64, 784), (784, 1024))]
    logged = step_allocations(
        "RUN = lambda case, x, w: tf.linalg.matmul(x, w, output_type=tf.int32)",
        [{"inputs": [(list(x), "int8"), (list(w), "int8")]} for x, w in shapes],
    )
    for sizes, (x, w) in zip(logged, shapes, strict=True):
        big = [s for s in sizes if s >= 65536]
        assert big == [4 * x[0] * w[1], 4 * math.prod(x), 4 * math.prod(w)]


def test_a_quantized_layers_float_kernel_is_drawn_at_build_and_freed_by_quantize():
    """The build drew the float kernel before the layer's bias; quantize made
    the int8 kernel, freed the float kernel, and copied the quantized values
    in from a temporary."""
    from jupyter_tfmem.estimator import _with_quantize_history

    creation = [
        (("p", "other"), 64, "parameters", True, None),
        (("p", "bias"), 4096, "parameters", False, None),
        (("p", "kernel"), 802816, "parameters", False, None),
        (("p", "scale"), 4096, "parameters", False, None),
    ]
    roles = {
        ("p", "bias"): ("built", 7, 4 * 802816),
        ("p", "kernel"): ("kernel", 7, 4 * 802816),
        ("p", "scale"): ("built", 7, 4 * 802816),
    }

    history = [
        (key, size, drawn) for key, size, _, drawn, _ in _with_quantize_history(creation, roles)
    ]

    assert history == [
        (("p", "other"), 64, True),
        (("float", ("p", "kernel")), 4 * 802816, True),
        (("p", "bias"), 4096, False),
        (("p", "kernel"), 802816, False),
        (("release", ("float", ("p", "kernel"))), 0, False),
        (("values", ("p", "kernel")), 802816, False),
        (("release", ("values", ("p", "kernel"))), 0, False),
        (("p", "scale"), 4096, False),
    ]
    # built quantized (loaded, or rebuilt from its config): no float kernel
    loaded = [creation[0], creation[2], creation[1], creation[3]]
    assert _with_quantize_history(loaded, roles) == loaded


def test_tfs_quantize_frees_the_float_kernel_and_copies_the_values_in():
    """TF's allocator log of Keras's quantize("int8") on one Dense layer."""
    logged = logged_allocations(
        """
        import sys
        import keras
        inp = keras.Input((784,))
        model = keras.Model(inp, keras.layers.Dense(1024)(inp))
        print("MARK quantize", file=sys.stderr, flush=True)
        model.quantize("int8")
        print("MARK end", file=sys.stderr, flush=True)
        """
    )["quantize"]
    big = [(kind, size, address) for kind, size, address, _ in logged if size >= 65536]
    int8, float32 = 784 * 1024, 784 * 1024 * 4
    # The float kernel is freed and at most one int8 buffer stays: the
    # kernel.  The order varies (the float kernel goes when Python drops its
    # last reference), and when NumPy's array of the values happens to be
    # 64-byte aligned TF takes its buffer as it is and the kernel adopts it,
    # outside TF's allocator (no int8 buffer stays).
    assert [size for kind, size, _ in big if kind == "f" and size == float32] == [float32]
    made = [address for kind, size, address in big if kind == "a" and size == int8]
    freed = [address for kind, size, address in big if kind == "f" and size == int8]
    assert 1 <= len(made) <= 2 and len(set(made) - set(freed)) <= 1
    assert {size for _, size, _ in big} <= {int8, float32}  # no float temporaries


def _float16_in_onednn() -> bool:
    """Whether TF on this machine's CPU runs float16 kernels in oneDNN."""
    from jupyter_tfmem.estimator import _eigen_dtypes

    return "float16" not in _eigen_dtypes()


def test_tfs_float16_product_allocates_the_float32_copies():
    """Eigen's float16 product copies to float32; oneDNN's (AVX512-FP16 CPUs) does not."""
    shapes = [((512, 256), (256, 1024)), ((8, 256, 128), (8, 128, 512))]
    logged = step_allocations(
        "RUN = lambda case, x, w: tf.matmul(x, w)",
        [{"inputs": [(list(x), "float16"), (list(w), "float16")]} for x, w in shapes],
    )
    for sizes, (x, w) in zip(logged, shapes, strict=True):
        out = math.prod(x) // x[-1] * w[-1]
        big = [s for s in sizes if s >= 131072]
        if _float16_in_onednn():  # the output (and maybe oneDNN's scratchpad), no copies
            assert big[0] == 2 * out
            assert not {4 * math.prod(x), 4 * math.prod(w), 4 * out} & set(big[1:])
        else:  # the float16 output first, then float32 copies of x, w and the output
            assert big == [2 * out, 4 * math.prod(x), 4 * math.prod(w), 4 * out]


def _pool_graph(ksize: int, dtype: str, with_grad: bool):
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    pool = gd.node.add(name="pool", op="MaxPool")
    pool.attr["ksize"].list.i.extend([1, ksize, ksize, 1])
    nodes = {"pool": Node("pool", "MaxPool", [("x", 0)], [], [(0.0, 4096.0, dtype)])}
    if with_grad:
        gd.node.add(name="grad", op="MaxPoolGrad")
        nodes["grad"] = Node("grad", "MaxPoolGrad", [("x", 0), ("pool", 0), ("dy", 0)], [], [])
    return gd, nodes


def test_onednn_max_pools_hand_their_gradient_a_workspace(monkeypatch):
    from jupyter_tfmem.estimator import _add_onednn_pool_workspaces

    on_cpu(monkeypatch, AVX512)
    # float32 output of 4096 bytes per sample: 1024 elements, one byte each
    gd, nodes = _pool_graph(2, "float32", with_grad=True)
    _add_onednn_pool_workspaces(gd, nodes)
    assert nodes["pool"].outputs[1][:2] == (0.0, 1024.0)
    assert nodes["grad"].inputs[-1] == ("pool", 1)
    # a 16x16 window (256 elements) needs four bytes per element; bfloat16 is oneDNN's too
    gd, nodes = _pool_graph(16, "bfloat16", with_grad=True)
    _add_onednn_pool_workspaces(gd, nodes)
    assert nodes["pool"].outputs[1][:2] == (0.0, 8192.0)
    # inference (no gradient), Eigen's float16 pool and oneDNN turned off: none
    for dtype, grad in (("float32", False), ("float16", True)):
        gd, nodes = _pool_graph(2, dtype, with_grad=grad)
        _add_onednn_pool_workspaces(gd, nodes)
        assert len(nodes["pool"].outputs) == 1
    on_cpu(monkeypatch, AVX512_FP16)
    gd, nodes = _pool_graph(2, "float16", with_grad=True)
    _add_onednn_pool_workspaces(gd, nodes)
    assert len(nodes["pool"].outputs) == 2
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
    gd, nodes = _pool_graph(2, "float32", with_grad=True)
    _add_onednn_pool_workspaces(gd, nodes)
    assert len(nodes["pool"].outputs) == 1


def test_tfs_max_pool_allocates_its_workspace_in_training():
    cases = [
        {"inputs": [([8, 32, 32, 16], dtype)], "k": k}
        for dtype, k in (("float32", 2), ("bfloat16", 2), ("bfloat16", 16), ("float16", 2))
    ]
    logged = step_allocations(
        """
        def RUN(case, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.nn.max_pool2d(x, case["k"], case["k"], "VALID")
            return tape.gradient(y, x)
        """,
        cases,
    )
    for case, sizes in zip(cases, logged, strict=True):
        k = case["k"]
        elements = 8 * (32 // k) ** 2 * 16
        workspace = elements * (1 if k * k < 256 else 4)
        if case["inputs"][0][1] in _eigen_dtypes():
            # Eigen's pool recomputes the argmax (float16 without AVX512-FP16,
            # bfloat16 on a CPU without AVX-512)
            assert workspace not in sizes
        else:
            assert workspace in sizes


def test_tfs_cross_entropy_writes_its_gradient_into_logits_nobody_else_reads():
    """``forward_input_or_allocate_output({0}, 1, ...)``: the rule in ``opsem.FORWARDED_INPUTS``."""
    logits = 64 * 1000 * 4
    logged = step_allocations(
        """
        def RUN(case, x, y):
            z = x * 2.0  # logits of the step's own
            out = tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=z, labels=y)
            return (*out, z) if case["keep_logits"] else out
        """,
        [
            {"inputs": [([64, 1000], "float32"), ([64], "int32")], "keep_logits": keep}
            for keep in (False, True)
        ],
    )
    alone, kept = ([s for s in sizes if s >= logits] for sizes in logged)
    assert alone == [logits]  # the product; the gradient is written over it
    assert kept == [logits, logits]  # the logits are returned: the gradient needs its own


@pytest.mark.parametrize("op", ["LeftShift", "RightShift", "BitwiseAnd", "Invert", "Atan"])
def test_tfs_integer_and_trigonometric_cwise_ops_write_into_an_input_nobody_else_reads(op):
    """Every ``BinaryOp``/``UnaryOp`` kernel forwards an input it may reuse
    (RandAugment's posterisation shifts uint8 pictures: the replay allocated
    four 1.7 MiB outputs TF's log does not have)."""
    from jupyter_tfmem.engine.opsem import FORWARDING_OPS

    size = 64 * 1024 * 4
    dtype = "float32" if op == "Atan" else "int32"
    logged = step_allocations(
        """
        def RUN(case, x):
            z = x + x  # the step's own buffer, read once
            op = getattr(tf.raw_ops, case["op"])
            if case["op"] in ("Invert", "Atan"):
                return op(x=z)
            return op(x=z, y=tf.ones_like(x)) if case["op"] == "BitwiseAnd" else op(x=z, y=x)
        """,
        [{"inputs": [([64, 1024], dtype)], "op": op}],
    )[0]
    assert logged.count(size) == 1  # z only: the op's output is written over it
    assert op in FORWARDING_OPS


def test_tfs_list_from_a_tensor_allocates_each_row_on_its_own():
    """TensorListFromTensor copies every row into an element of its own: the
    replay's list is that many allocations (``Buffer.pieces``), not one."""
    from jupyter_tfmem.estimator import _rows

    rows, row = 40, (64, 32)
    logged = step_allocations(
        """
        def RUN(case, x):
            shape = tf.constant(case["row"])
            items = tf.raw_ops.TensorListFromTensor(tensor=x, element_shape=shape)
            return tf.raw_ops.TensorListGetItem(
                input_handle=items, index=3, element_shape=shape, element_dtype=tf.float32
            )
        """,
        [{"inputs": [([rows, *row], "float32")], "row": list(row)}],
    )[0]
    element = math.prod(row) * 4
    assert logged.count(element) >= rows
    assert element * rows not in logged
    props = {"x": [((rows, *row), F32)]}
    assert _rows(props, props, ("x", 0)) == rows
    # a first dimension that grows with the batch is not a row count
    assert _rows(props, {"x": [((rows + 1, *row), F32)]}, ("x", 0)) == 1


def test_tfs_function_makes_its_constants_before_its_first_op_runs():
    logged = logged_allocations(
        """
        import sys
        import numpy as np
        import tensorflow as tf
        table = np.arange(64 * 1024, dtype="float32").reshape(256, 256)
        f = tf.function(lambda x: tf.matmul(tf.nn.relu(x), table))
        x = tf.ones((512, 256))
        print("MARK first", file=sys.stderr, flush=True)
        f(x)
        print("MARK end", file=sys.stderr, flush=True)
        """
    )
    big = [(kind, size, name) for kind, size, _, name in logged["first"] if size >= 256 * 1024]
    # (tracing and Grappler make and free copies of the table first)
    made = big.index(("a", 256 * 1024, "ConstantOp"))
    first_op = next(i for i, (kind, size, _) in enumerate(big) if kind == "a" and size > 256 * 1024)
    # the constant is made before the relu, the step's first op, and is kept
    assert made < first_op, big
    assert len([e for e in big[made:] if e[:2] == ("f", 256 * 1024)]) == 0


def _cut_graph(inner: int) -> dict[str, Node]:
    """A (4, batch, inner) float32 tensor cut along dimension 0 and others,
    with each op marked by ``_mark_dim0_views`` (batches 2 and 3 traced)."""
    import tensorflow as tf

    with tf.Graph().as_default() as graph:
        x = tf.compat.v1.placeholder(tf.float32, (4, None, inner), name="x")
        tf.unstack(x, axis=0, name="rows")
        tf.unstack(x, num=2, axis=1, name="cols")
        tf.split(x, 2, axis=0, name="halves")
        tf.split(x, [1, 3], axis=0, name="uneven")
        tf.identity(x[1], name="row")
        tf.identity(x[1:3], name="row_range")
        tf.identity(x[::2], name="every_other")
        tf.identity(x[:, 1], name="column")
        tf.slice(x, [1, 0, 0], [2, -1, -1], name="sliced")
    return _marked_views(graph, 2, 3)


def _marked_views(graph, n1: int, n2: int) -> dict[str, Node]:
    """``graph``'s ops as nodes marked by ``_mark_dim0_views``, its unknown
    dimensions traced as ``n1`` and ``n2``."""

    def props(n: int) -> dict:
        return {
            op.name: [(tuple(n if d is None else d for d in o.shape), o.dtype) for o in op.outputs]
            for op in graph.get_operations()
        }

    nodes = {
        op.name: Node(op.name, op.type, [(i.op.name, i.value_index) for i in op.inputs], [], [])
        for op in graph.get_operations()
    }
    _mark_dim0_views(graph.as_graph_def(), nodes, props(n1), props(n2))
    return nodes


def test_rows_of_whole_64_byte_blocks_are_views_of_the_input():
    """TF's Unpack, Split, SplitV, Slice and StridedSlice kernels hand out
    slices of their input's buffer when they cut only dimension 0 and a row is
    a whole number of 64-byte blocks (TF 2.21 here: a (256, k) float32 tensor
    cut into rows stays alive whole behind one row for 64 and 128-byte rows,
    not for 16, 32, 48 or 96).  The measured case is in test_measurement.py."""
    nodes = _cut_graph(16)  # a row is batch x 64 bytes
    views = {name: node.view_of for name, node in nodes.items() if node.view_of is not None}
    by_op = {nodes[name].op: src for name, src in views.items()}
    assert by_op == {"Unpack": 0, "Split": 1, "SplitV": 0, "StridedSlice": 0, "Slice": 0}
    assert nodes["rows"].view_of == 0
    assert nodes["cols"].view_of is None  # cut along dimension 1: copied
    assert nodes["strided_slice"].view_of == 0  # x[1]
    assert nodes["strided_slice_1"].view_of == 0  # x[1:3]
    assert nodes["strided_slice_2"].view_of is None  # x[::2] skips rows
    assert nodes["strided_slice_3"].view_of is None  # x[:, 1]

    # Rows of 3 floats at batch 2 (24 bytes) are not aligned: every kernel copies.
    assert not [node for node in _cut_graph(3).values() if node.view_of is not None]


def test_a_slice_that_takes_all_of_its_input_is_the_input():
    """TF's slice kernels set their output to the input when the slice is the
    whole of it (``is_identity``), in any layout: Keras' int4 ``Dense`` cuts
    its unpacked kernel with ``x[:rows, ...]``.  TF's log of the step has no
    allocation for it; the rule makes it a view, rows aligned or not."""
    import tensorflow as tf

    logged = step_allocations(
        """
        def RUN(case, x):
            z = x + x  # the step's own buffer
            return tf.nn.relu(z[:64, ...]) if case["whole"] else tf.nn.relu(z[:63, ...])
        """,
        [{"inputs": [([64, 1000], "int32")], "whole": whole} for whole in (True, False)],
    )
    size = 64 * 1000 * 4
    whole, part = ([s for s in sizes if s >= 63 * 1000 * 4] for sizes in logged)
    assert whole == [size]  # z only: the slice is z, and the Relu writes over it
    assert len(part) == 2  # z, and its 63 rows (the Relu writes over those)

    with tf.Graph().as_default() as graph:
        x = tf.compat.v1.placeholder(tf.float32, (None, 3), name="x")
        tf.identity(x[:, :3], name="all")  # 12-byte rows: not a dim-0 view
        tf.identity(x[..., ::-1], name="reversed")  # as long, but not the input
        tf.identity(x[:, 1:], name="cut")
        tf.slice(x, [0, 0], [-1, 3], name="sliced")
    nodes = _marked_views(graph, 2, 5)
    views = {name for name, node in nodes.items() if node.view_of == 0}
    assert views == {"strided_slice", "sliced"}, views


def test_a_view_keeps_its_input_alive_until_the_last_row_is_read():
    f32 = (1.0, 0.0, F32)
    nodes = {
        "x": Node("x", "Placeholder", [], [], [(4.0, 0.0, F32)]),
        "rows": Node("rows", "Unpack", [("x", 0)], [], [f32] * 4, view_of=0),
        "a": Node("a", "Relu", [("rows", 0)], [], [f32]),
        "b": Node("b", "Relu", [("rows", 3)], [], [f32]),
    }
    nodes["b"].controls.append("a")
    order = topo_fifo_order(nodes)
    live, _ = replay(nodes, order, 1, preset={})
    at = {name: a for name, (a, _) in zip(order, live, strict=True)}
    assert at["rows"] == 4.0  # the rows cost nothing more
    assert at["a"] == 5.0  # x lives on behind row 3 (a's output is not freed: no reader)
    nodes["rows"].view_of = None
    live, _ = replay(nodes, topo_fifo_order(nodes), 1, preset={})
    assert dict(zip(order, live, strict=True))["rows"][0] == 8.0  # copies beside x


@pytest.mark.parametrize(
    ("shape", "axes", "runs"),
    [
        ((8, 32, 32, 64), {0, 1, 2}, 2),  # BatchNormalization's moments: in place
        ((8, 100, 64), {1}, 3),  # the middle of three: in place
        ((8, 100, 64), {0, 2}, 3),  # first and third: in place
        ((8, 32, 32, 8, 8), {1, 2, 4}, 4),  # GroupNormalization: transposed first
        ((8, 1, 32, 1, 8), {1, 2, 4}, 2),  # unit dimensions do not count
        ((8, 32, 32, 64), {0, 2}, 4),
    ],
)
def test_a_reduction_is_done_in_place_only_over_three_simplified_dimensions(shape, axes, runs):
    assert _reduction_runs(shape, axes) == runs


def test_a_transpose_that_moves_the_innermost_axis_is_timed_per_element():
    """Swapping the last two axes of an int8 tensor takes about float32's time
    for as many elements (executor.ELEMENT_MOVE_BYTES); moving outer axes
    copies whole rows and keeps the per-byte time; float32 is unchanged."""
    import tensorflow as tf

    from jupyter_tfmem.estimator import _B1, _B2, _durations, _mark_free_transposes

    def timed(perm: list[int], dtype: str) -> float:
        graph = tf.Graph()
        with graph.as_default():
            tf.constant(perm, name="perm")
        size = tf.as_dtype(dtype).size * 64 * 512
        nodes = {
            "x": Node("x", "Cast", [], [], [(0.0, float(size), dtype)]),
            "perm": Node("perm", "Const", [], [], [(12.0, 0.0, "int32")]),
            "t": Node("t", "Transpose", [("x", 0), ("perm", 0)], [], [(0.0, float(size), dtype)]),
        }

        def props(b: int) -> dict:
            shape = (b, 64, 512)
            out = tuple(shape[a] for a in perm)
            return {"x": [(shape, dtype)], "perm": [((3,), "int32")], "t": [(out, dtype)]}

        graph_def = graph.as_graph_def()
        graph_def.node.add(name="t", op="Transpose", input=["x", "perm"])
        p1, p2 = props(_B1), props(_B2)
        _mark_free_transposes(graph_def, nodes, p1, p2)
        return _durations(nodes, p1, p2, 32)["t"]

    inner, outer = [0, 2, 1], [1, 0, 2]
    assert timed(inner, "int8") == pytest.approx(timed(inner, "float32"))
    assert timed(inner, "bfloat16") == pytest.approx(timed(inner, "float32"))
    assert timed(outer, "int8") < 0.3 * timed(outer, "float32")
    assert timed(outer, "float32") == pytest.approx(timed(inner, "float32"))


def test_a_popped_element_is_the_lists_buffer_not_a_new_one():
    # TF's TensorListPopBack sets the stored tensor as its output: while the
    # backward loop uses it, the list (charged whole) is all that holds it.
    def n(name, op, inputs, outputs):
        return Node(name, op, [(s, i) for s, i in inputs], [], outputs)

    nodes = {
        "acc": n("acc", "EmptyTensorList", [], [(1000.0, 0.0, F32)]),
        "pop": n("pop", "TensorListPopBack", [("acc", 0)], [(0.0, 0.0, F32), (100.0, 0.0, F32)]),
        "grad": n("grad", "Mul", [("pop", 1)], [(100.0, 0.0, F32)]),
        "out": n("out", "Relu", [("grad", 0), ("pop", 0)], [(100.0, 0.0, F32)]),
    }
    order = topo_fifo_order(nodes)
    live, _ = replay(nodes, order, 1, preset={})
    at = {name: a for name, (a, _) in zip(order, live, strict=True)}
    assert at["pop"] == 1000.0
    assert at["grad"] == 1100.0


def test_tfs_runtime_graph_gates_no_loop_op_on_all_of_the_loops_inputs():
    # What _ungate_loop_entries rests on, checked on the graph TF itself runs.
    import keras
    import numpy as np
    from tensorflow.python.eager import context

    inp = keras.Input((5, 3))
    model = keras.Model(inp, keras.layers.LSTM(4)(inp))
    context.enable_graph_collection()
    try:
        model.predict_on_batch(np.zeros((2, 5, 3), "float32"))
        metadata = context.export_run_metadata()
    finally:
        context.disable_graph_collection()
    names = [
        node.name
        for graphs in metadata.function_graphs
        for graph in graphs.partition_graphs
        for node in graph.node
    ]
    assert any("/enter/" in name for name in names)  # the loop is lowered
    assert not any("LoopControlInputs" in name or "input_control_node" in name for name in names)


def test_the_second_merged_filter_order_swaps_each_pair_from_where_the_graph_has_it(monkeypatch):
    """Two layers' output gradients: one read input gradient first, one filter
    gradient first.  The replayed second order has each pair the other way, so
    the executor's inline kernel changes in both (it used to move filters first,
    which left the second layer's order as it was)."""
    from jupyter_tfmem.estimator import _merged_filters_swapped

    on_cpu(monkeypatch, AVX512)  # oneDNN merges float32 bias gradients into filter gradients

    def n(name, op, inputs=()):
        return Node(name, op, [(s, 0) for s in inputs], [], [(1.0, 0.0, F32)])

    graph = [
        n("x", "Placeholder"),
        n("w", "Placeholder"),
        n("dy2", "ReluGrad", ["x"]),
        n("db2", "BiasAddGrad", ["dy2"]),
        n("dx2", "Conv2DBackpropInput", ["x", "w", "dy2"]),
        n("dw2", "Conv2DBackpropFilter", ["x", "w", "dy2"]),
        n("dy1", "ReluGrad", ["dx2"]),
        n("db1", "BiasAddGrad", ["dy1"]),
        n("dw1", "Conv2DBackpropFilter", ["x", "w", "dy1"]),
        n("dx1", "Conv2DBackpropInput", ["x", "w", "dy1"]),
    ]
    nodes = {node.name: node for node in graph}
    order = [node.name for node in graph]
    swapped = _merged_filters_swapped(nodes, order)
    assert sorted(swapped) == sorted(order)
    assert swapped.index("dw2") < swapped.index("dx2")
    assert swapped.index("dx1") < swapped.index("dw1")
    assert _merged_filters_swapped(nodes, swapped) == order
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")  # no merge, one order
    assert _merged_filters_swapped(nodes, order) == order
