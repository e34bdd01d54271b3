"""Trace one training or inference step into a graph, the way Keras runs it.

Tracing only builds graph ops: the user's variables are captured as handles
(no copy of the weights) and nothing executes, so the model's weights,
optimizer and metrics are left as they were.  While tracing, an op-creation
callback records which of the model's layers was being called, so every
tensor can later be charged to a row of the per-layer table.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import tensorflow as tf
from keras.src.backend.common import global_state
from tensorflow.python.framework import op_callbacks, ops


@dataclasses.dataclass
class TracedStep:
    graph_def: Any  # tf.compat.v1.GraphDef, before Grappler
    fetches: list[str]  # node names that must run (outputs and side effects)
    input_placeholders: dict[str, str]  # placeholder node -> "x" or "y"
    variable_placeholders: dict[str, Any]  # placeholder node -> captured variable
    op_layer: dict[str, int]  # op name -> index into model.layers (-1: none)
    #: captured tensors that are not variables (constants the model holds)
    constant_placeholders: list[str] = dataclasses.field(default_factory=list)
    #: the step's returned tensors (the caller holds them); the other fetches
    #: only have to run, so what they produce is freed as usual
    outputs: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    #: function-call op -> its outputs' (shape with None, dtype) at trace time
    call_shapes: dict[str, list[tuple[tuple[int | None, ...] | None, Any]]] = dataclasses.field(
        default_factory=dict
    )
    #: the function's inputs (arguments, then captures) in order: two traces
    #: of one step name their captures differently, in the same order
    arg_names: list[str] = dataclasses.field(default_factory=list)
    #: captured placeholder -> the eager id of the tensor it stands for (a
    #: variable's handle or a constant): TF numbers eager tensors as they are
    #: made, so the ids give the order building the model made them in
    made_order: dict[str, int] = dataclasses.field(default_factory=dict)


def _layer_index_from_scope(model: Any, layer_ids: dict[int, int]) -> int:
    stack = global_state.get_global_attribute("name_scope_stack") or []
    seen_model = False
    for entry in stack:
        caller = getattr(entry, "caller", None)
        if caller is model:
            seen_model = True
            continue
        if seen_model and caller is not None and id(caller) in layer_ids:
            return layer_ids[id(caller)]
    # A layer called outside the model's own scope (e.g. Sequential internals).
    for entry in reversed(stack):
        caller = getattr(entry, "caller", None)
        if caller is not None and id(caller) in layer_ids:
            return layer_ids[id(caller)]
    return -1


def trace_step(
    model: Any,
    *,
    training: bool,
    x_specs: Any,
    y_specs: Any,
    loss_fn: Any,
    optimizer: Any,
) -> TracedStep:
    """Trace ``model``'s train (or predict) step for the given input specs.

    ``optimizer`` must already be built for ``model.trainable_variables``;
    the caller owns it, so building it never touches the user's optimizer.
    """
    layer_ids = {id(layer): i for i, layer in enumerate(model.layers)}
    op_layer: dict[str, int] = {}

    def on_op(op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if outputs:
            name = outputs[0].op.name if hasattr(outputs[0], "op") else op_name
        else:
            name = op_name
        if name:
            op_layer[name.decode() if isinstance(name, bytes) else name] = _layer_index_from_scope(
                model, layer_ids
            )
        return None

    step = make_step(model, training=training, loss_fn=loss_fn, optimizer=optimizer)

    fn = tf.function(step, autograph=False)
    signature = (x_specs, y_specs) if training else (x_specs,)

    # Graph-mode custom gradients register a gradient function in TF's global
    # registry, closing over this trace's tensors: drop what the trace adds so
    # the traced graph can be freed (otherwise every estimate leaks its graph).
    registered = gradient_registry_names()
    op_callbacks.add_op_callback(on_op)
    try:
        concrete = fn.get_concrete_function(*signature)
    finally:
        op_callbacks.remove_op_callback(on_op)

    graph = concrete.graph
    captured = {id(t): ph for t, ph in graph.captures}
    variable_placeholders: dict[str, Any] = {}
    for var in list(model.variables) + list(getattr(optimizer, "variables", [])):
        handle = _handle(var)
        if handle is not None and id(handle) in captured:
            variable_placeholders[captured[id(handle)].op.name] = var
    for outer, ph in graph.captures:
        if ph.dtype == tf.resource and ph.op.name not in variable_placeholders:
            stub = _stub_from_handle(outer)
            if stub is not None:
                variable_placeholders[ph.op.name] = stub
    n_x = len(tf.nest.flatten(x_specs))
    n_args = n_x + (len(tf.nest.flatten(y_specs)) if training else 0)
    inputs = [t for t in graph.inputs if t.op.name not in variable_placeholders]
    input_placeholders = {}
    constant_placeholders = []
    for i, t in enumerate(inputs):
        if t.dtype == tf.resource:
            continue
        if i < n_args:
            input_placeholders[t.op.name] = "x" if i < n_x else "y"
        else:  # a tensor the model captured (e.g. a constant built with keras.ops)
            constant_placeholders.append(t.op.name)
    made_order = {
        ph.op.name: outer._id
        for outer, ph in graph.captures
        if isinstance(getattr(outer, "_id", None), int)
    }
    fetches = [t.op.name for t in graph.outputs] + [op.name for op in graph.control_outputs]
    graph_def = graph.as_graph_def()
    # A function's resource arguments tell Grappler their variables' shapes
    # (TF's runtime sets these on the _Arg nodes; grappler.optimize turns
    # placeholders into _Arg nodes).
    for node in graph_def.node:
        var = variable_placeholders.get(node.name)
        if node.op == "Placeholder" and var is not None:
            node.attr["_handle_dtypes"].list.type.append(tf.as_dtype(var.dtype).as_datatype_enum)
            shape = node.attr["_handle_shapes"].list.shape.add()
            for d in var.shape:
                shape.dim.add().size = -1 if d is None else int(d)
    forget_gradients_since(registered)
    # Calls Grappler will not inline (e.g. XLA-compiled helpers) hide their
    # output shapes from graph shape inference; the trace knows them.
    call_shapes = {
        op.name: [
            (None if t.shape.rank is None else tuple(t.shape.as_list()), t.dtype)
            for t in op.outputs
        ]
        for op in graph.get_operations()
        if op.type in ("PartitionedCall", "StatefulPartitionedCall")
    }
    return TracedStep(
        graph_def=graph_def,
        fetches=fetches,
        input_placeholders=input_placeholders,
        variable_placeholders=variable_placeholders,
        op_layer=op_layer,
        call_shapes=call_shapes,
        constant_placeholders=constant_placeholders,
        outputs=[(t.op.name, t.value_index) for t in graph.outputs],
        arg_names=[t.op.name for t in graph.inputs],
        made_order=made_order,
    )


def gradient_registry_names() -> set[str] | None:
    """The names in TF's global gradient registry now (``None`` if it cannot be read)."""
    registry = getattr(getattr(ops, "_gradient_registry", None), "_registry", None)
    return set(registry) if isinstance(registry, dict) else None


def forget_gradients_since(registered: set[str] | None) -> None:
    """Drop gradient functions registered since ``registered`` was read.

    Graph-mode custom gradients register a function in TF's global registry
    that closes over the traced graph and everything it captured (variables
    included), so a trace would otherwise never be freed.
    """
    registry = getattr(getattr(ops, "_gradient_registry", None), "_registry", None)
    if registered is None or not isinstance(registry, dict):
        return
    for name in set(registry) - registered:
        registry.pop(name, None)


def make_step(model: Any, *, training: bool, loss_fn: Any, optimizer: Any) -> Any:
    """The Python function of one Keras train (or predict) step, to be traced."""
    trainable = list(model.trainable_variables)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = loss_fn(y, y_pred)
            if model.losses:
                loss = loss + tf.add_n([tf.cast(v, loss.dtype) for v in model.losses])
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        grads = tape.gradient(scaled, trainable)
        optimizer.apply(grads, trainable)
        return loss

    def predict_step(x):
        return model(x, training=False)

    return train_step if training else predict_step


@dataclasses.dataclass
class VariableStub:
    """Shape and dtype of a captured resource that is not one of the known variables."""

    shape: tuple[int, ...]
    dtype: Any
    path: str = ""


def _stub_from_handle(handle: Any) -> VariableStub | None:
    data = getattr(handle, "_handle_data", None)
    if data is None or not data.is_set or not data.shape_and_type:
        return None
    st = data.shape_and_type[0]
    if st.shape.unknown_rank or any(d.size < 0 for d in st.shape.dim):
        return None
    return VariableStub(tuple(int(d.size) for d in st.shape.dim), tf.as_dtype(st.dtype))


def _handle(var: Any) -> Any:
    return getattr(getattr(var, "_value", var), "handle", None)
