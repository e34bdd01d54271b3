"""How the estimator runs Grappler: with the shapes TF's own function runtime gives it."""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")

from jupyter_tfmem.engine import grappler  # noqa: E402


def _graph(build):
    graph = tf.Graph()
    with graph.as_default():
        out = build()
    return graph.as_graph_def(), [out.op.name]


def _ops(graph_def):
    return [node.op for node in graph_def.node]


def test_a_batch_input_keeps_its_static_shape():
    # A reshape to the shape its input already has is dropped by Grappler only
    # when it knows that shape.  TF's runtime knows it (its _Arg nodes carry
    # _output_shapes); a fed placeholder would hide it.
    def build():
        x = tf.compat.v1.placeholder(tf.float32, (4, 3), name="x")
        return tf.reshape(x * 2.0, (4, 3), name="same_shape")

    gd, fetches = _graph(build)
    out = grappler.optimize(gd, fetches)
    assert "Reshape" not in _ops(out)
    # the input is a placeholder again, as the replay expects, with nothing added
    x = next(n for n in out.node if n.name == "x")
    assert x.op == "Placeholder" and not x.input
    assert not any("_tfmem_default" in n.name for n in out.node)  # nothing else reads it


def test_a_variable_handle_tells_grappler_its_variable_shape():
    def build(with_shape):
        handle = tf.compat.v1.placeholder(tf.resource, (), name="v")
        read = tf.raw_ops.ReadVariableOp(resource=handle, dtype=tf.float32)
        return tf.reshape(read * 2.0, (5, 2), name="same_shape")

    for with_shape, kept in ((False, True), (True, False)):
        gd, fetches = _graph(lambda: build(with_shape))
        if with_shape:
            node = next(n for n in gd.node if n.name == "v")
            node.attr["_handle_dtypes"].list.type.append(tf.float32.as_datatype_enum)
            shape = node.attr["_handle_shapes"].list.shape.add()
            for d in (5, 2):
                shape.dim.add().size = d
        out = grappler.optimize(gd, fetches)
        assert ("Reshape" in _ops(out)) is kept
        v = next(n for n in out.node if n.name == "v")
        assert v.op == "Placeholder"


_RUNTIME_DUMP = """
import sys
import tensorflow as tf

w = tf.ones((8, 32))
b = tf.ones((32,))


@tf.function
def f(x):
    h = tf.nn.bias_add(tf.reshape(tf.matmul(tf.reshape(x, (-1, 8)), w), (4, 16, 32)), b)
    return tf.reduce_sum(0.5 * h * tf.math.erfc(-h * 0.7071))


x = tf.ones((4, 16, 8))
graph = f.get_concrete_function(x).graph
open(sys.argv[1], "wb").write(graph.as_graph_def().SerializeToString())
print(",".join(t.op.name for t in graph.outputs))
f(x)
"""


def test_grappler_runs_as_many_passes_as_tfs_function_runtime(tmp_path):
    # TF's runtime runs Grappler's pipeline twice, and the second pass of
    # common-subgraph elimination orders a commutative op's operands again.
    # The order decides which operand's buffer a Mul writes its result into
    # (BERT's GELU: the matmul's buffer, not the one the erfc chain uses), so
    # every Mul and Add must read its operands in the runtime's order.
    import os
    import subprocess
    import sys

    from google.protobuf import text_format

    dump = tmp_path / "dump"
    dump.mkdir()
    env = {
        **os.environ,
        "TF_DUMP_GRAPH_PREFIX": str(dump),
        "TF_CPP_VMODULE": "meta_optimizer=1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", _RUNTIME_DUMP, str(tmp_path / "graph.pb")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    runtime = None
    for path in sorted(dump.glob("after_MetaOptimizer_*.pbtxt")):
        if "iteration" in path.name:
            continue
        gd = text_format.Parse(path.read_text(), tf.compat.v1.GraphDef())
        if any(n.op == "Erfc" for n in gd.node):
            runtime = gd
    assert runtime is not None, sorted(p.name for p in dump.iterdir())

    traced = tf.compat.v1.GraphDef.FromString((tmp_path / "graph.pb").read_bytes())
    ours = grappler.optimize(traced, proc.stdout.strip().split(","))

    def operands(graph_def):
        return {
            n.name: [i.split(":")[0] for i in n.input if not i.startswith("^")]
            for n in graph_def.node
            if n.op in ("Mul", "AddV2", "Add")
        }

    theirs = operands(runtime)
    mine = operands(ours)
    assert any(len(set(v)) == 2 for v in theirs.values())  # there is an order to get right
    shared = sorted(set(theirs) & set(mine))
    assert shared, (sorted(theirs), sorted(mine))
    assert {n: mine[n] for n in shared} == {n: theirs[n] for n in shared}


_KERAS_STEPS = """
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import layer_probe

model = layer_probe.gated_multiply()
model.compile(optimizer="adam", loss="mean_squared_error")
x, y = np.ones((8, *model.input_shape[1:]), "float32"), np.ones((8, 1), "float32")
for _ in range(2):
    model.train_on_batch(x, y)
"""


def test_a_keras_steps_products_read_their_operands_in_the_runtimes_order():
    # Grappler's common-subexpression pass orders a commutative op's operands
    # by name, and MinimizeBroadcasts regroups a chain of products by that
    # order: in the gated product's gradient, (1/n * Tile) * x in one order
    # and Tile * (1/n * x) in the other, which frees the broadcast sooner.
    # The names of the step's inputs take part, so the trace must name them
    # as Keras's step function does.
    import sys
    from pathlib import Path

    import keras

    import jupyter_tfmem as jt

    benchmarks = Path(__file__).resolve().parent.parent / "benchmarks"
    sys.path.insert(0, str(benchmarks))
    try:
        import graph_match
        import layer_probe
    finally:
        sys.path.pop(0)

    theirs = graph_match.runtime_graph(_KERAS_STEPS, str(benchmarks))
    keras.backend.clear_session()  # the model's names as in a fresh process
    model = layer_probe.gated_multiply()
    model.compile(optimizer="adam", loss="mean_squared_error")
    ours, _ = graph_match.replayed_graph(lambda: jt.estimate(model, 8, training=True))

    def products(graph_def):  # the model's own, forward and backward
        ops = graph_match._operands(graph_def)
        return {
            name: inputs
            for name, (op, inputs) in ops.items()
            if op in graph_match.COMMUTATIVE and name.startswith(("functional", "gradient_tape"))
        }

    t, o = products(theirs), products(ours)
    assert len(t) >= 4 and set(t) == set(o)
    assert any(o[n][0] == "<arg>" or o[n][1] == "<arg>" for n in o)  # an input takes part
    assert o == t


def test_a_target_whose_zeros_grappler_merged_into_the_loss_is_a_plain_placeholder_again():
    # A known-shape input gets a zeros default while Grappler runs.  In its
    # second pass, common-subgraph elimination may merge that default into an
    # equal constant of the step (the logistic loss's zeros_like of the
    # logits); the target must still come back as a placeholder with no input.
    import keras

    import jupyter_tfmem as jt

    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1)])
    model.compile("sgd", keras.losses.BinaryCrossentropy(from_logits=True))
    footprint = jt.estimate(model, batch_size=8)
    weights = (6 + 1) * 4
    assert footprint.peak_bytes >= weights


def test_shapes_are_those_tfs_public_import_gives_with_defaults_filled_in():
    # infer_shapes imports without Python's device bookkeeping; the shapes and
    # dtypes must be what the public import gives, attrs left at their
    # defaults included (the NodeDefs below name no data_format or strides
    # default, nor MaxPool's explicit_paddings).
    def build():
        x = tf.compat.v1.placeholder(tf.float32, (2, 8, 8, 3), name="x")
        k = tf.ones((3, 3, 3, 4))
        y = tf.nn.relu(tf.nn.conv2d(x, k, 1, "SAME"))
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")
        return tf.reduce_mean(tf.reshape(y, (2, -1)), axis=1, name="out")

    gd, fetches = _graph(build)
    for node in gd.node:
        for key in ("data_format", "explicit_paddings", "use_cudnn_on_gpu", "dilations"):
            if key in node.attr:
                del node.attr[key]
    with tf.Graph().as_default() as graph:
        tf.graph_util.import_graph_def(gd, name="")
        public = {
            op.name: [
                (tuple(t.shape.as_list()) if t.shape.is_fully_defined() else None, t.dtype)
                for t in op.outputs
            ]
            for op in graph.get_operations()
        }
    shapes = grappler.infer_shapes(gd, fetches)
    assert shapes == public
    assert shapes["MaxPool2d"][0][0] == (2, 4, 4, 4)
    with pytest.raises(ValueError):
        bad = type(gd).FromString(gd.SerializeToString())
        bad.node[-1].input[0] = "missing"
        grappler.infer_shapes(bad, fetches)


def _traced_step(model, x_shape, y_shape, x_dtype="float32"):
    import keras

    from jupyter_tfmem.engine.step import trace_step

    opt = keras.optimizers.Adam()
    opt.build(model.trainable_variables)
    return trace_step(
        model,
        training=True,
        x_specs=tf.TensorSpec(x_shape, x_dtype),
        y_specs=tf.TensorSpec(y_shape),
        loss_fn=keras.losses.MeanSquaredError(),
        optimizer=opt,
    )


def _attention_block():
    import keras

    inp = keras.Input((6,), dtype="int32")
    x = keras.layers.Embedding(40, 16)(inp)
    x = keras.layers.LayerNormalization()(x + keras.layers.MultiHeadAttention(2, 8)(x, x))
    x = keras.layers.Dense(32, activation="gelu")(x)
    return keras.Model(inp, keras.layers.Dense(3)(keras.layers.GlobalAveragePooling1D()(x)))


def _bidirectional_lstm():
    import keras

    inp = keras.Input((7, 4))
    x = keras.layers.Bidirectional(keras.layers.LSTM(8))(inp)
    return keras.Model(inp, keras.layers.Dense(3)(x))


def _without_hints(graph_def) -> bytes:
    out = type(graph_def).FromString(graph_def.SerializeToString())
    for node in out.node:
        for key in grappler.HINTS:
            if key in node.attr:
                del node.attr[key]
    return out.SerializeToString(deterministic=True)


def test_two_calls_of_one_pass_are_one_call_of_two_passes():
    # optimize() runs Grappler's pipeline as two calls of one pass (so that the
    # first pass can be compared across batch sizes); TF's runtime makes one
    # call of two.  The second call must see the first's output as it is.
    # Only hints the replay does not read may differ (grappler.HINTS).

    from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2
    from tensorflow.python.grappler import tf_optimizer

    for traced in (
        _traced_step(_attention_block(), (4, 6), (4, 3), "int32"),
        _traced_step(_bidirectional_lstm(), (4, 7, 4), (4, 3)),
    ):
        prepared, fetches = grappler._prepared(traced.graph_def, traced.fetches)
        config = config_pb2.ConfigProto()
        config.graph_options.rewrite_options.meta_optimizer_iterations = (
            rewriter_config_pb2.RewriterConfig.TWO
        )
        config.graph_options.rewrite_options.min_graph_nodes = -1
        metagraph = grappler._metagraph(prepared.graph, fetches)
        one_call = grappler._restored(
            tf_optimizer.OptimizeGraph(config, metagraph, verbose=False), prepared
        )
        two_calls = grappler.optimize(traced.graph_def, traced.fetches)
        assert _without_hints(one_call) == _without_hints(two_calls)
        once = grappler.restored(grappler.first_pass(traced.graph_def, traced.fetches))
        assert once.SerializeToString() != two_calls.SerializeToString()  # a pass did something


def test_a_bfloat16_fused_convolution_gets_its_convolutions_shape():
    # With oneDNN, Grappler's remapper fuses a bfloat16 Conv2D, BiasAdd and
    # Relu into _FusedConv2D, whose op definition does not list bfloat16
    # (TF's runtime rewrites it into a oneDNN op): MobileNetV3 under
    # mixed_bfloat16 could not be estimated.
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    bf16 = tf.bfloat16.as_datatype_enum
    x = gd.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = bf16
    x.attr["shape"].shape.CopyFrom(tf.TensorShape([2, 8, 8, 3]).as_proto())
    for name, shape in (("w", [3, 3, 3, 4]), ("b", [4])):
        const = gd.node.add(name=name, op="Const")
        const.attr["dtype"].type = bf16
        const.attr["value"].tensor.CopyFrom(
            tf.make_tensor_proto(tf.zeros(shape, tf.bfloat16).numpy())
        )
    conv = gd.node.add(name="conv", op="_FusedConv2D", input=["x", "w", "b"])
    conv.attr["T"].type = bf16
    conv.attr["TArgs"].list.type.append(bf16)
    conv.attr["num_args"].i = 1
    conv.attr["fused_ops"].list.s.extend([b"BiasAdd", b"Relu"])
    conv.attr["strides"].list.i.extend([1, 2, 2, 1])
    conv.attr["padding"].s = b"SAME"
    with pytest.raises(ValueError, match="bfloat16"):
        grappler.infer_shapes(gd, ["conv"])
    props = grappler.infer_shapes(grappler.materialize_variables(gd, {}), ["conv"])
    assert props["conv"] == [((2, 4, 4, 4), tf.bfloat16)]


def _two_simple_rnns_notes(steps: int, units: tuple[int, int], batch: int) -> tuple[str, ...]:
    """The notes of a training estimate of two stacked SimpleRNNs."""
    import keras

    from jupyter_tfmem import estimate

    inp = keras.Input((steps, 4))
    x = keras.layers.SimpleRNN(units[0], return_sequences=True)(inp)
    model = keras.Model(inp, keras.layers.SimpleRNN(units[1])(x))
    return estimate(model, batch, training=True, optimizer="sgd", loss="mse").notes


def test_a_backward_loop_knows_the_shape_of_what_it_pops():
    # A list's element shape reaches the backward loop's TensorListPopBack
    # through the loop plumbing; without it the gradient loop's tensors
    # (and the input gradient's list) were of unknown size, counted as 0.
    notes = _two_simple_rnns_notes(20, (16, 8), 8)
    assert not [note for note in notes if "cannot infer" in note], notes


def test_a_batch_that_makes_two_lists_equal_is_still_traced_at_its_size():
    # At batch 8 the second SimpleRNN's [batch, 8] state and its 8x8 kernel
    # give two accumulators equal element shapes, and Grappler merges the
    # two empty lists: the graphs at batch 8 and 9 differ only by that, and
    # the estimate must not fall back to the open-batch graph.
    notes = _two_simple_rnns_notes(10, (8, 8), 8)
    assert not [note for note in notes if "different graph" in note], notes


def test_a_ragged_batch_made_dense_gets_one_row_per_sample():
    @tf.function
    def vectorize(text):
        return tf.strings.split(text).to_tensor(shape=[None, 8])

    spec = tf.TensorSpec([4], tf.string)
    gd = vectorize.get_concrete_function(spec).graph.as_graph_def()
    op = next(n for n in gd.node if n.op == "RaggedTensorToTensor")
    shared = op.input[0].partition(":")[0]
    names = grappler.open_ragged_rows(gd)
    assert len(names) == 1 and op.input[0] == names[0]
    batched = grappler.with_batch(gd, [], 4, names)
    values = {
        n.name: tf.make_ndarray(n.attr["value"].tensor) for n in batched.node if n.op == "Const"
    }
    assert values[names[0]].tolist() == [4, 8]
    assert values[shared].tolist() == [-1, 8]  # the constant other ops may read is left alone


def _stored_shape_graph():
    """A forward loop pushes ``x``'s shape onto a stack; the backward loop pops it to reshape."""
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    int32 = tf.int32.as_datatype_enum
    gd.node.add(name="acc", op="EmptyTensorList")
    gd.node.add(name="loop_var", op="Identity").input.append("acc")
    gd.node.add(name="x", op="Placeholder")
    gd.node.add(name="x_shape", op="Shape").input.append("x")
    gd.node.add(name="push", op="TensorListPushBack").input.extend(["loop_var", "x_shape"])
    gd.node.add(name="exit", op="Identity").input.append("loop_var")
    pop = gd.node.add(name="pop", op="TensorListPopBack")
    pop.input.extend(["exit", "element_shape"])
    pop.attr["element_dtype"].type = int32
    gd.node.add(name="grad", op="Placeholder")
    gd.node.add(name="reshaped", op="Reshape").input.extend(["grad", "pop:1"])
    return gd


def test_a_shape_a_loop_pops_is_the_shape_it_pushed():
    gd = _stored_shape_graph()
    assert grappler.stored_shapes(gd, {"x": [((4, 8), tf.float32)]})
    reshaped = next(n for n in gd.node if n.name == "reshaped")
    const = next(n for n in gd.node if n.name == reshaped.input[1])
    assert tf.make_ndarray(const.attr["value"].tensor).tolist() == [4, 8]
    # a shape known only at run time is left to the pop
    gd = _stored_shape_graph()
    assert not grappler.stored_shapes(gd, {"x": [(None, tf.float32)]})
    assert next(n for n in gd.node if n.name == "reshaped").input[1] == "pop:1"


def test_a_graph_grappler_cannot_export_runs_as_it_was_traced():
    # TF's function runtime logs "Ignoring multi-device function optimization
    # failure" and runs the graph it had when Grappler fails, as on float8
    # casts (Keras's float8 training); elsewhere the same reshape is dropped.
    def build(dtype):
        x = tf.compat.v1.placeholder(tf.float32, (4, 3), name="x")
        y = tf.cast(tf.cast(x, dtype), tf.float32)
        return tf.reshape(y * 2.0, (4, 3), name="same_shape")

    for dtype, kept in ((tf.dtypes.experimental.float8_e5m2, True), (tf.bfloat16, False)):
        gd, fetches = _graph(lambda dtype=dtype: build(dtype))
        out = grappler.optimize(gd, fetches)
        assert ("Reshape" in _ops(out)) is kept
        assert next(n for n in out.node if n.name == "x").op == "Placeholder"


def test_a_graph_grappler_returns_unbuildable_runs_as_it_was_given(monkeypatch):
    # Under float16 with oneDNN on, TF 2.21's remapper fuses MatMul + BiasAdd
    # + Add + Relu into a node with no op; TF's runtime cannot convert that
    # graph, logs "Ignoring multi-device function optimization failure" and
    # runs the one it had.  Here Grappler's output loses an op on purpose.
    def build():
        x = tf.compat.v1.placeholder(tf.float32, (4, 3), name="x")
        return tf.reshape(x * 2.0, (4, 3), name="same_shape")

    gd, fetches = _graph(build)
    assert "Reshape" not in _ops(grappler.optimize(gd, fetches))  # Grappler drops it
    real = grappler.tf_optimizer.OptimizeGraph

    def breaking(config, metagraph, verbose=False):
        out = real(config, metagraph, verbose=verbose)
        next(n for n in out.node if n.op == "Mul").op = ""
        return out

    monkeypatch.setattr(grappler.tf_optimizer, "OptimizeGraph", breaking)
    out = grappler.optimize(gd, fetches)
    assert "Reshape" in _ops(out) and "" not in _ops(out)
    assert next(n for n in out.node if n.name == "x").op == "Placeholder"


def test_a_float16_dense_added_to_another_tensor_and_rectified_is_estimated():
    # the graph of the remapper's broken fusion (above) on a oneDNN build
    keras = pytest.importorskip("keras")
    from jupyter_tfmem import estimate

    keras.config.set_dtype_policy("float16")
    try:
        a, c = keras.Input((24,)), keras.Input((32,))
        summed = keras.layers.Lambda(lambda t: keras.ops.relu(t[0] + t[1]))(
            [keras.layers.Dense(32)(a), c]
        )
        model = keras.Model([a, c], keras.layers.Dense(4)(summed))
    finally:
        keras.config.set_dtype_policy("float32")
    footprint = estimate(model, 8, training=False)
    assert footprint.peak_bytes >= 8 * (24 + 32 + 32 + 4) * 2


def test_a_raw_while_that_declares_no_shapes_keeps_its_inputs_shapes():
    # tf.nn.ctc_loss on dense labels (Keras's CTC loss) scans with a raw While
    # whose output_shapes are all unknown: the logits' gradient after it was
    # of unknown size until the loop's outputs took its inputs' shapes.
    def build():
        logits = tf.compat.v1.placeholder(tf.float32, (4, 50, 12), name="logits")
        labels = tf.compat.v1.placeholder(tf.int32, (4, 9), name="labels")
        loss = tf.nn.ctc_loss(
            labels, logits, tf.fill([4], 9), tf.fill([4], 50), logits_time_major=False
        )
        (grad,) = tf.gradients(tf.reduce_sum(loss), [logits])
        return tf.identity(grad, name="grad")

    gd, fetches = _graph(build)
    loops = [n for n in gd.node if n.op == "While"]
    assert loops
    for node in loops:  # as the traced Keras step declares them
        del node.attr["output_shapes"].list.shape[:]
        for _ in node.attr["T"].list.type:
            node.attr["output_shapes"].list.shape.add().unknown_rank = True
    props = grappler.infer_shapes(gd, fetches)
    assert props["grad"][0][0] is None
    assert grappler.while_shapes(gd, props)
    props = grappler.infer_shapes(gd, fetches)
    assert props["grad"][0][0] == (4, 50, 12)
    assert not grappler.while_shapes(gd, props)  # declared now: nothing more to give


@pytest.mark.parametrize("hashed", [True, False])
def test_a_sparse_cross_of_dense_inputs_is_sized_and_so_is_what_reads_it(hashed):
    # A cross's outputs depend on its data, so TF's shape functions leave them
    # (and the SparseToDense HashedCrossing makes of them) unknown; with dense
    # inputs only, each row crosses 2 x 3 values: 6 crosses per row.
    def build():
        a = tf.compat.v1.placeholder(tf.int64, (16, 2), name="a")
        b = tf.compat.v1.placeholder(tf.int64, (16, 3), name="b")
        if hashed:
            crossed = tf.sparse.cross_hashed([a, b], num_buckets=100)
        else:
            crossed = tf.sparse.cross([tf.strings.as_string(a), tf.strings.as_string(b)])
        dense = tf.sparse.to_dense(crossed, default_value=0 if hashed else "")
        return tf.identity(dense, name="dense")

    gd, fetches = _graph(build)
    props = grappler.infer_shapes(gd, fetches)
    assert props["dense"][0][0] is None
    crosses = grappler.dense_crosses(gd, props)
    assert list(crosses.values()) == [(16, 6)]
    assert grappler.cross_shapes(gd, crosses)
    props = grappler.infer_shapes(gd, fetches)
    assert props["dense"][0][0] == (16, 6)
    grappler.size_crosses(props, crosses)
    (name,) = crosses
    assert [entry[0] for entry in props[name]] == [(96, 2), (96,), (2,)]


def test_a_sparse_cross_with_a_sparse_input_is_left_unknown():
    def build():
        a = tf.compat.v1.placeholder(tf.int64, (16, 2), name="a")
        ids = tf.compat.v1.placeholder(tf.int64, (None, 2), name="ids")
        values = tf.compat.v1.placeholder(tf.int64, (None,), name="values")
        sparse = tf.SparseTensor(ids, values, [16, 4])
        crossed = tf.sparse.cross_hashed([a, sparse], num_buckets=100)
        return tf.identity(tf.sparse.to_dense(crossed), name="dense")

    gd, fetches = _graph(build)
    props = grappler.infer_shapes(gd, fetches)
    assert grappler.dense_crosses(gd, props) == {}


_ADAM_RUNTIME = """
import sys

import keras
import numpy as np
from tensorflow.python.eager import context

sys.path.insert(0, sys.argv[2])
from test_grappler import _dense_pair

model = _dense_pair()
model.compile(optimizer="adam", loss="mse")
context.context().enable_run_metadata()
model.train_on_batch(np.ones((8, 16), "float32"), np.ones((8, 4), "float32"))
metadata = context.context().export_run_metadata()
graphs = [g.post_optimization_graph for g in metadata.function_graphs]
graph = max(graphs, key=lambda g: len(g.node))
open(sys.argv[1], "wb").write(graph.SerializeToString())
"""


def _dense_pair():
    import keras

    keras.backend.clear_session()  # the layer names TF's process gives them
    inp = keras.Input((16,))
    x = keras.layers.Dense(32, activation="relu")(inp)
    return keras.Model(inp, keras.layers.Dense(4)(keras.layers.Dense(32)(x)))


def _consumers(graph_def, ops):
    """Per tensor, its consumers among ``ops``, in graph order."""
    out = {}
    for node in graph_def.node:
        if node.op in ops:
            for ref in node.input:
                if not ref.startswith("^"):
                    out.setdefault(ref.split(":")[0], []).append(node.op)
    return out


def test_each_gradients_adam_updates_come_in_the_order_of_tfs_runtime_graph(tmp_path):
    # Adam reads each gradient twice, in Sub (the first moment) and Square
    # (the second).  TF's executor runs the last consumer of a tensor inline
    # and queues the others, so the order of the two in the graph TF runs
    # decides which runs first and how long the gradient lives.  Grappler
    # breaks ties by name, so it orders them as TF's runtime does only when
    # it sees the arguments and return nodes named as TF's runtime names
    # them.
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run(
        [sys.executable, "-c", _ADAM_RUNTIME, str(tmp_path / "g.pb"), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    runtime = tf.compat.v1.GraphDef.FromString((tmp_path / "g.pb").read_bytes())
    traced = _traced_step(_dense_pair(), (8, 16), (8, 4))
    ours = grappler.optimize(traced.graph_def, traced.fetches)

    theirs = _consumers(runtime, ("Sub", "Square"))
    mine = _consumers(ours, ("Sub", "Square"))
    pairs = {k: v for k, v in theirs.items() if sorted(v) == ["Square", "Sub"]}
    assert len(pairs) == 6, theirs  # a kernel and a bias gradient per layer
    assert {k: mine.get(k) for k in pairs} == pairs


def test_nodes_grappler_names_after_an_argument_get_the_traces_name_back():
    # Grappler sees the arguments under their FunctionDef names (``data``,
    # ``scope_captured_7``) and names a lowered cond's Switch on each input
    # after it.  Two traces of one step are compared by node name, so those
    # Switches must carry the trace's name again, as the arguments do.
    def build():
        x = tf.compat.v1.placeholder(tf.float32, (4, 3), name="x")
        total = tf.reduce_sum(x)
        captured = tf.compat.v1.placeholder(tf.float32, (4, 3), name="Scope/Captured_7")
        out = tf.cond(total > 0, lambda: captured * 2.0, lambda: captured + x)
        return tf.identity(out, name="out")

    gd, fetches = _graph(build)
    names = {n.name for n in grappler.optimize(gd, fetches).node}
    assert any(name.startswith("cond/Scope/Captured_7/") for name in names), names
    assert any(name.startswith("cond/x/") for name in names), names
    parts = {part for name in names for part in name.split("/")}
    assert not parts & {"data", "scope_captured_7"}, names


def test_renaming_a_node_renames_what_is_colocated_with_it():
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="a/B", op="Placeholder")
    reader = gd.node.add(name="reader", op="Identity", input=["a/B:0"])
    reader.attr["_class"].list.s.extend([b"loc:@a/B", b"loc:@other"])
    grappler._rename(gd, {"a/B": "a_b"})
    assert [n.name for n in gd.node] == ["a_b", "reader"]
    assert list(reader.input) == ["a_b:0"]
    assert list(reader.attr["_class"].list.s) == [b"loc:@a_b", b"loc:@other"]


def _cond_graph(pred_value):
    """x -> Switch on a constant -> a product on the taken side, a sum on the other -> Merge."""

    def build():
        x = tf.compat.v1.placeholder(tf.float32, (4, 3), name="x")
        pred = tf.constant(pred_value, name="pred")
        off, on = tf.raw_ops.Switch(data=x, pred=pred, name="switch")
        when_false = tf.identity(off + 1.0, name="when_false")
        when_true = tf.identity(on * 2.0, name="when_true")
        merged, _ = tf.raw_ops.Merge(inputs=[when_false, when_true], name="merge")
        return tf.identity(merged, name="out")

    return _graph(build)


@pytest.mark.parametrize(
    ("pred", "kept", "gone"),
    [(True, "when_true", "when_false"), (False, "when_false", "when_true")],
)
def test_the_branch_a_constant_predicate_never_takes_is_dropped(pred, kept, gone):
    gd, _ = _cond_graph(pred)
    assert grappler.decided_switches(gd) == {"switch": 1 if not pred else 0}
    out = grappler.without_dead_branches(gd)
    names = {n.name: n for n in out.node}
    assert kept in names and gone not in names
    assert names["switch"].op == "Identity" and names["merge"].op == "Identity"
    # what read the taken output reads the Identity, and the graph builds
    assert all(":1" not in i for n in out.node for i in n.input if i.startswith("switch"))
    assert grappler.infer_shapes(out, ["out"])["out"][0][0] == (4, 3)


def test_a_graph_without_constant_predicates_comes_back_as_it_is():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, (4, 3), name="x")
        p = tf.compat.v1.placeholder(tf.bool, (), name="p")
        off, on = tf.raw_ops.Switch(data=x, pred=p)
        return tf.raw_ops.Merge(inputs=[off + 1.0, on * 2.0])[0]

    gd, _ = _graph(build)
    assert grappler.decided_switches(gd) == {}
    assert grappler.without_dead_branches(gd) is gd


def test_a_predicate_the_shapes_decide_is_evaluated_and_the_contradicting_branch_cut():
    # The untaken branch concatenates 3 columns with 4 along the rows: once
    # the input's width is known (4, even), its shapes contradict each other
    # and the import fails on it; the predicate says TF never runs it.
    def build():
        x = tf.compat.v1.placeholder(tf.float32, (2, None), name="x")
        width = tf.shape(x)[1]
        pred = tf.equal(tf.math.floormod(width, 2), 0, name="even")
        off, on = tf.raw_ops.Switch(data=x, pred=pred, name="switch")
        odd = tf.concat([off[:, :3], off], axis=0, name="odd")
        even = tf.identity(on * 2.0, name="even_branch")
        return tf.raw_ops.Merge(inputs=[odd, even], name="merge")[0]

    gd, _ = _graph(build)
    x = next(n for n in gd.node if n.name == "x")
    x.attr["shape"].shape.dim[1].size = 4  # as with_batch sizes an input
    with pytest.raises(ValueError, match="odd"):
        grappler.infer_shapes(gd, ["merge"])
    preds = grappler.switch_predicates(gd)
    assert preds == {"switch": "even"}
    assert grappler.evaluated_switches(gd, preds) == {"switch": 0}  # output 0 (false) is dead
    pruned = grappler.without_dead_branches(gd, {"switch": 0})
    assert "odd" not in {n.name for n in pruned.node}
    assert grappler.infer_shapes(pruned, ["merge"])["merge"][0][0] == (2, 4)
