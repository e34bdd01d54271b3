"""Which graph the estimate is read from: the one Keras runs, with the batch in every shape."""

from __future__ import annotations

import pytest

keras = pytest.importorskip("keras")

import jupyter_tfmem as jt  # noqa: E402
from jupyter_tfmem.engine import grappler, helper_process  # noqa: E402

FALLBACK = "estimated on the graph traced with an open batch dimension"


def normed_mlp() -> keras.Model:
    inp = keras.Input((32,))
    x = keras.layers.Dense(64, name="dense")(inp)
    x = keras.layers.LayerNormalization(name="norm")(x)  # a broadcast multiply by gamma
    out = keras.layers.Dense(4, name="logits")(x)
    return keras.Model(inp, out)


@pytest.fixture
def optimized_graphs(monkeypatch):
    # every graph is optimized here, in order, for the spy to see
    monkeypatch.setenv(helper_process.ENV_SWITCH, "0")
    graphs = []
    first_pass = grappler.first_pass

    def spy(graph_def, fetches):
        out = first_pass(graph_def, fetches)
        graphs.append(grappler.restored(out))
        return out

    monkeypatch.setattr(grappler, "first_pass", spy)
    return graphs


def _ops(graph_def) -> set[str]:
    return {node.op for node in graph_def.node}


def test_the_step_is_traced_with_the_batch_in_its_shapes(optimized_graphs):
    fp = jt.estimate(normed_mlp(), 16, optimizer="sgd", loss="mse")
    # train_on_batch traces with the batch size known, so TF's gradient code
    # writes no BroadcastGradientArgs (it knows every shape at trace time).
    assert len(optimized_graphs) == 2  # batch 16 and batch 17, one structure
    assert all("BroadcastGradientArgs" not in _ops(g) for g in optimized_graphs)
    assert not any(FALLBACK in note for note in fp.notes)


def test_a_graph_that_depends_on_the_batch_size_falls_back_to_an_open_batch(
    optimized_graphs, monkeypatch
):
    calls = iter(range(100))
    monkeypatch.setattr(
        grappler, "structure", lambda graph_def, names=None: {(str(next(calls)), "Op", ())}
    )
    model = normed_mlp()
    fp = jt.estimate(model, 16, optimizer="sgd", loss="mse")
    assert any(FALLBACK in note for note in fp.notes)
    assert len(optimized_graphs) == 4  # batch 16, 17, 15, then the open batch
    # The open batch is what makes TF's gradients broadcast at run time.
    assert "BroadcastGradientArgs" in _ops(optimized_graphs[-1])
    assert fp.peak_bytes > 0
    assert fp.at(64).peak_bytes > fp.peak_bytes


def test_a_graph_that_changes_above_the_batch_is_paired_with_the_batch_below(monkeypatch):
    """Grappler's AddN rewrite has a size threshold: MobileNetV2 at batch 16
    got it at 17 only, and fell back to an open batch that TF does not run."""
    from jupyter_tfmem import estimator

    traced_at = []
    first_pass = grappler.first_pass

    def rewritten_above_16(graph_def, fetches):
        out = first_pass(graph_def, fetches)
        batch = next(
            n.attr["shape"].shape.dim[0].size
            for n in graph_def.node
            if n.op in ("Placeholder", "PlaceholderWithDefault") and n.attr["shape"].shape.dim
        )
        traced_at.append(batch)
        if batch > 16:
            out.graph.node.add(name="rewritten_above_16", op="NoOp")
        return out

    model = normed_mlp()
    plain = jt.estimate(model, 16, optimizer="sgd", loss="mse")
    monkeypatch.setenv(helper_process.ENV_SWITCH, "0")
    monkeypatch.setattr(grappler, "first_pass", rewritten_above_16)
    paired = jt.estimate(model, 16, optimizer="sgd", loss="mse")
    assert traced_at == [16, 17, 15]
    assert not any(FALLBACK in note for note in paired.notes)
    # sizes fitted through 15 and 16 are the ones fitted through 16 and 17
    assert paired.peak_bytes == plain.peak_bytes
    assert paired.at(64).peak_bytes == plain.at(64).peak_bytes
    assert estimator._BATCHES.get() == (estimator._B1, estimator._B2)  # reset after


def test_renaming_a_graphs_nodes_renames_every_reference():
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    a = gd.node.add(name="captured_1", op="Placeholder")
    b = gd.node.add(name="use", op="Identity")
    b.input.extend(["captured_1:0", "^captured_1", "other"])
    out = grappler.structure(gd, {"captured_1": "captured_9"})
    assert out == {
        ("captured_9", "Placeholder", ()),
        ("use", "Identity", ("captured_9:0", "^captured_9", "other")),
    }
    assert a.name == "captured_1"  # the input graph is left alone
    assert out != grappler.structure(gd)


def test_a_name_built_from_a_renamed_capture_is_renamed_alike():
    from tensorflow.core.framework import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="model/conv/567", op="Placeholder")
    # Grappler's cond lowering names a Switch after the input it guards
    gd.node.add(name="cond/model/conv/567/_12", op="Switch").input.append("model/conv/567")
    gd.node.add(name="model/conv/5678", op="Identity")  # not a whole part: left alone
    names = grappler.with_derived_names({"model/conv/567": "model/conv/117", "x": "x"}, gd)
    assert names["cond/model/conv/567/_12"] == "cond/model/conv/117/_12"
    assert "model/conv/5678" not in names
    assert grappler.with_derived_names({"x": "x"}, gd) == {"x": "x"}


def grouped_conv(policy: str) -> keras.Model:
    # Keras's grouped convolution captures a tensor TF names with a counter
    inp = keras.Input((12, 12, 8))
    x = keras.layers.Conv2D(16, 3, groups=4, dtype=policy)(inp)
    x = keras.layers.GlobalAveragePooling2D(dtype=policy)(x)
    return keras.Model(inp, keras.layers.Dense(3)(x))


@pytest.mark.parametrize("policy", ["float32", "mixed_float16"])
def test_a_captured_tensor_named_by_a_counter_keeps_one_graph_and_its_shape(policy):
    """The two traces name the capture differently; under mixed precision the
    loss-scale cond's lowered Switch embeds that name (a 45 s fallback for
    ConvNeXtTiny), and in float32 the capture's size at the second batch was lost."""
    fp = jt.estimate(grouped_conv(policy), 8, optimizer="adam", loss="mse")
    assert not any(FALLBACK in note for note in fp.notes)
    assert not any("cannot infer statically" in note for note in fp.notes)


def test_graphs_that_read_equal_constants_under_other_names_have_one_structure():
    """Grappler keeps one of equal constants: at batch 64 a ``[64]`` multiples
    constant and a ``[64]`` shape constant become one, at batch 65 they stay two."""
    from tensorflow.core.framework import graph_pb2

    def graph(multiples: str, extra_const: bool) -> graph_pb2.GraphDef:
        gd = graph_pb2.GraphDef()
        gd.node.add(name="x", op="Placeholder")
        gd.node.add(name="shape_1", op="Const")
        if extra_const:
            gd.node.add(name="const_1", op="Const")
        gd.node.add(name="tile", op="Tile").input.extend(["x", multiples])
        gd.node.add(name="mul", op="Mul").input.extend(["tile", "shape_1"])
        return gd

    merged, separate = graph("shape_1", False), graph("const_1", True)
    assert grappler.structure(merged) == grappler.structure(separate)
    # an op that reads another op instead of a constant is another graph
    other = graph("shape_1", False)
    other.node[2].input[1] = "x"
    assert grappler.structure(other) != grappler.structure(merged)


def test_under_mixed_float16_the_update_is_loss_scaled_as_compile_makes_it(optimized_graphs):
    # compile() wraps the optimizer in a LossScaleOptimizer under mixed_float16:
    # its step checks every gradient for inf/NaN (a bool tensor per gradient).
    jt.estimate(normed_mlp(), 16, optimizer="adam", loss="mse", precision="mixed_float16")
    assert "IsFinite" in _ops(optimized_graphs[0])
    optimized_graphs.clear()
    jt.estimate(normed_mlp(), 16, optimizer="adam", loss="mse")
    assert "IsFinite" not in _ops(optimized_graphs[0])


def test_the_step_is_traced_at_the_batch_asked_for_and_the_next(monkeypatch):
    # Grappler's rewrites depend on tensor sizes (small tensors fold into
    # constants), so the graph is the one TF runs at this batch size.
    from jupyter_tfmem.engine import step

    batches = []
    trace_step = step.trace_step

    def spy(model, *, x_specs, **kwargs):
        batches.append(x_specs.shape[0])
        return trace_step(model, x_specs=x_specs, **kwargs)

    monkeypatch.setattr(step, "trace_step", spy)
    model = normed_mlp()
    jt.estimate(model, 24, optimizer="sgd", loss="mse")
    assert batches == [24, 25]
    batches.clear()
    # Batch 1 broadcasts differently; the lines come from two other sizes.
    assert jt.estimate(model, 1, optimizer="sgd", loss="mse").peak_bytes > 0
    assert batches == [4, 7]


def token_classifier() -> keras.Model:
    """An embedding (sparse gradient rows, one per token of the batch) and a dense head."""
    inp = keras.Input((12,), dtype="int32")
    x = keras.layers.Embedding(50, 8, name="embed")(inp)
    x = keras.layers.BatchNormalization(name="bn")(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, keras.layers.Dense(3, name="head")(x))


def _retraces(monkeypatch) -> list:
    """Spy: each retrace that reuses an update, with a full retrace of the same step."""
    from jupyter_tfmem.engine import step

    pairs = []
    trace_step = step.trace_step

    def spy(model, **kwargs):
        traced = trace_step(model, **kwargs)
        if kwargs.get("update_from") is not None:
            pairs.append((traced, trace_step(model, **{**kwargs, "update_from": None})))
        return traced

    monkeypatch.setattr(step, "trace_step", spy)
    return pairs


def _canonical(traced) -> tuple:
    """The graph's nodes in order, blind to names TF numbers per trace.

    A branch function's name and a custom gradient's registry key carry a
    counter; everything else (inputs, shapes, constants) must be equal.
    """
    nodes = []
    for node in traced.graph_def.node:
        node = type(node).FromString(node.SerializeToString())
        for value in node.attr.values():
            if value.HasField("func"):
                value.func.name = ""
        if "_gradient_op_type" in node.attr:
            node.attr["_gradient_op_type"].s = b""
        nodes.append(node.SerializeToString(deterministic=True))
    return nodes, sorted(traced.fetches), traced.outputs, traced.arg_names


def scored_mlp() -> keras.Model:
    """``normed_mlp`` compiled with metrics, which the step updates after the optimizer."""
    model = normed_mlp()
    model.compile("sgd", "mse", metrics=["mae", keras.metrics.AUC(num_thresholds=50)])
    return model


@pytest.mark.parametrize(
    ("build", "optimizer", "precision"),
    [
        (normed_mlp, "adam", None),
        (token_classifier, "adamw", None),  # sparse rows through AdamW's plain ops
        (normed_mlp, "sgd", "mixed_float16"),  # a loss-scale cond in the update
        (scored_mlp, "adam", None),  # metrics read the batch after the update
    ],
)
def test_a_retrace_that_reuses_the_first_update_is_the_graph_a_full_retrace_gives(
    monkeypatch, build, optimizer, precision
):
    pairs = _retraces(monkeypatch)
    jt.estimate(build(), 6, optimizer=optimizer, loss="mse", precision=precision)
    assert len(pairs) == 1
    spliced, full = pairs[0]
    assert spliced is not None
    assert _canonical(spliced) == _canonical(full)
    assert spliced.variable_placeholders.keys() == full.variable_placeholders.keys()
    assert len(spliced.graph_def.library.function) == len(full.graph_def.library.function)


def test_sparse_rows_updated_in_a_branch_function_are_traced_again_in_full(monkeypatch):
    # Adagrad updates an embedding's rows inside a cond whose branch function
    # was traced with the first batch's row count: that update is not reused.
    pairs = _retraces(monkeypatch)
    footprint = jt.estimate(token_classifier(), 6, optimizer="adagrad", loss="mse")
    assert pairs == []
    assert footprint.peak_bytes > 0


def test_the_second_batch_gets_grapplers_second_pass_only_where_it_makes_nodes(monkeypatch):
    # The second batch's graph is compared after Grappler's first pass; its
    # second pass is needed only for nodes that pass makes (Adafactor's
    # scalar divisions become _UnaryOpsComposition nodes there), whose sizes
    # would otherwise be unknown.
    monkeypatch.setenv(helper_process.ENV_SWITCH, "0")
    calls = []
    second_pass = grappler.second_pass

    def spy(first, fetches):
        calls.append(first)
        return second_pass(first, fetches)

    monkeypatch.setattr(grappler, "second_pass", spy)
    for optimizer, passes in (("adam", 1), ("adafactor", 2)):
        calls.clear()
        keras.backend.clear_session()
        fp = jt.estimate(normed_mlp(), 16, optimizer=optimizer, loss="mse")
        assert len(calls) == passes, optimizer
        assert not any("cannot infer" in note for note in fp.notes)


def _sliced_sum_graph(batch, sizes, replay):
    """A traced gradient of 50 slices of one large tensor, and its AddNs' input counts.

    Each slice's gradient is a full-size tensor (80 MB at batch 4), so TF's
    tape sums them early, five at a time, when it can count their elements.
    """
    import tensorflow as tf

    from jupyter_tfmem.engine.step import tape_sizes

    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = sum(tf.reduce_sum(x[:, i]) for i in range(50))  # AddV2s, no AddN
        return tape.gradient(y, x)

    spec = tf.TensorSpec((batch, 5000, 1000), tf.float32)
    with tape_sizes(sizes, replay=replay):
        graph = tf.function(grad).get_concrete_function(spec).graph
    return sorted(len(op.inputs) for op in graph.get_operations() if op.type == "AddN")


def test_an_open_batch_trace_sums_gradients_early_as_the_trace_at_the_batch_does():
    sizes: list[int] = []
    at_batch = _sliced_sum_graph(4, sizes, replay=False)
    assert max(at_batch) < 50 and sum(at_batch) > 50  # summed early, in a chain
    assert sizes  # the tape asked for the gradients' sizes, and they were kept
    assert _sliced_sum_graph(None, [], replay=False)[-1] == 50  # open batch: never early
    assert _sliced_sum_graph(None, sizes, replay=True) == at_batch
    assert _sliced_sum_graph(5, sizes, replay=True) == at_batch


def test_two_graphs_that_differ_in_an_addn_summed_in_place_match_once_it_is_undone():
    plain = {
        ("a", "Mul", ("x",)),
        ("b", "Mul", ("y",)),
        ("c", "Mul", ("z",)),
        ("sum", "AddN", ("a", "b", "c")),
        ("out", "Neg", ("sum",)),
    }
    in_place = {
        ("a", "Mul", ("x",)),
        ("b", "Mul", ("y",)),
        ("c", "Mul", ("z",)),
        ("sum/tmp_var", "TemporaryVariable", ("^a",)),
        ("sum/tmp_var_zeros", "ZerosLike", ("a",)),
        ("sum/tmp_var_initializer", "Assign", ("sum/tmp_var", "sum/tmp_var_zeros")),
        ("sum/tmp_var_accum_0", "AssignAdd", ("sum/tmp_var_initializer", "a")),
        ("sum/tmp_var_accum_1", "AssignAdd", ("sum/tmp_var_initializer", "b")),
        ("sum/tmp_var_accum_2", "AssignAdd", ("sum/tmp_var_initializer", "c")),
        (
            "sum",
            "DestroyTemporaryVariable",
            ("sum/tmp_var_initializer", "^sum/tmp_var_accum_0", "^sum/tmp_var_accum_1"),
        ),
        ("out", "Neg", ("sum",)),
    }
    assert plain != in_place
    assert grappler.undo_in_place_sums(in_place) == grappler.undo_in_place_sums(plain) == plain
    other = (plain - {("out", "Neg", ("sum",))}) | {("out", "Abs", ("sum",))}
    assert grappler.undo_in_place_sums(in_place) != grappler.undo_in_place_sums(other)


def test_the_nodes_of_an_in_place_sum_get_the_addns_shape_from_the_other_trace():
    from tensorflow.core.framework import graph_pb2

    g = graph_pb2.GraphDef()
    for name in ("sum", "sum/tmp_var", "sum/tmp_var_accum_0", "other"):
        g.node.add(name=name, op="NoOp")
    props = {"sum": [((8, 3), "float32")], "other": [((2,), "float32")]}
    grappler.size_in_place_sums(g, props)
    assert props["sum/tmp_var"] == props["sum/tmp_var_accum_0"] == [((8, 3), "float32")]
    assert "other/tmp_var" not in props


def test_a_small_captured_eager_tensor_is_an_argument_of_the_step(monkeypatch):
    """An activity regularizer's factor is an eager tensor the layer made when
    it was built.  TF captures it by value, as a ``Const``, but the function it
    runs takes it as an argument (``_Arg regularized_mlp_1_dense_1_mul_x`` in
    TF's runtime graph of the zoo's regularized MLP), so neither Grappler nor
    TF's runtime folding sees a constant there: the trace keeps it a placeholder."""
    from jupyter_tfmem.engine import step

    traces = []
    trace_step = step.trace_step

    def spy(*args, **kwargs):
        traces.append(trace_step(*args, **kwargs))
        return traces[-1]

    monkeypatch.setattr(step, "trace_step", spy)
    inp = keras.Input((16,))
    out = keras.layers.Dense(8, activity_regularizer=keras.regularizers.L1(0.01))(inp)
    jt.estimate(keras.Model(inp, out), 4, optimizer="sgd", loss="mse")
    traced = traces[0]
    assert traced.constant_placeholders
    ops = {node.name: node.op for node in traced.graph_def.node}
    assert all(ops[name] == "Placeholder" for name in traced.constant_placeholders)
