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
