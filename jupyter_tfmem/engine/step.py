"""Trace one training or inference step into a graph, the way Keras runs it.

Tracing only builds graph ops: the user's variables are captured as handles
(no copy of the weights) and nothing executes, so the model's weights,
optimizer and metrics are left as they were.  While tracing, an op-creation
callback records which of the model's layers was being called, so every
tensor can later be charged to a row of the per-layer table.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
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
    #: the ops of the optimizer's update, in the order they were made; empty
    #: where the update may depend on the batch size (see
    #: ``_update_is_batch_free``)
    update_nodes: list[str] = dataclasses.field(default_factory=list)
    #: with ``update_nodes``: the ops tf.function made after the step returned
    #: (its outputs, made to wait for every side effect, the update's too)
    closing_nodes: list[str] = dataclasses.field(default_factory=list)
    #: placeholder of a variable the step's metrics own -> "tracker" (the loss
    #: tracker, made when the model is compiled) or "metric" (the compiled
    #: metrics' state, made as the first step is built)
    metric_roles: dict[str, str] = dataclasses.field(default_factory=dict)
    #: in a step traced without its update: how many nodes and function
    #: inputs it had made where the update would have begun, so that an
    #: update taken from another trace goes where a full trace has it
    update_at: tuple[int, int] | None = None


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
    update_from: TracedStep | None = None,
    metrics: Any = None,
) -> TracedStep | None:
    """Trace ``model``'s train (or predict) step for the given input specs.

    ``optimizer`` must already be built for ``model.trainable_variables``;
    the caller owns it, so building it never touches the user's optimizer.

    With ``update_from`` (a trace of the same training step at another batch
    size whose ``update_nodes`` are known), the step is traced without the
    optimizer's update (forward and backward passes, and ``metrics``, an
    ``engine.metrics.StepMetrics``, if given) and the update is taken from
    ``update_from``: the update reads only the gradients and the variables,
    and TF names every op of a retrace alike, so the result is the graph a
    full trace gives (``tests/test_tracing.py``).  That saves more than half
    of a retrace of a large model (BERT-base with AdamW: 394 variables, some
    twenty ops each).  Returns ``None`` if the two traces do not fit together.
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

    marks: dict[str, Any] = {"skip_update": update_from is not None}
    if update_from is not None:
        marks["update_names"] = update_from.update_nodes
    step = make_step(
        model,
        training=training,
        loss_fn=loss_fn,
        optimizer=optimizer,
        marks=marks,
        metrics=metrics,
    )

    def one_step_on_data(data):
        # Keras runs its step as a function of one argument, ``data``, so TF
        # names the step's inputs data, data_1, ...  Grappler orders the
        # operands of commutative ops by name, and those orders decide which
        # buffer an element-wise op writes into and how MinimizeBroadcasts
        # regroups a product: the trace names its inputs the same way.
        return step(*data)

    fn = tf.function(one_step_on_data, autograph=False)
    signature = ((x_specs, y_specs) if training else (x_specs,),)

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
    roles = metrics.roles() if metrics is not None else {}
    step_vars = [var for var, _ in roles.values()]
    for var in list(model.variables) + list(getattr(optimizer, "variables", [])) + step_vars:
        handle = _handle(var)
        if handle is not None and id(handle) in captured:
            variable_placeholders[captured[id(handle)].op.name] = var
    metric_roles = {
        ph: roles[id(var)][1] for ph, var in variable_placeholders.items() if id(var) in roles
    }
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
    _captures_as_arguments(graph_def, constant_placeholders)
    update_nodes: list[str] = []
    closing_nodes: list[str] = []
    update_at = None
    grads = marks.pop("grads", [])  # the step function must not keep the graph alive
    if "update_start" in marks:
        made = [op.name for op in graph.get_operations()]
        if update_from is not None:
            # the function's inputs are its arguments, then its captures in order
            args = len(graph.inputs) - len(graph.captures)
            update_at = (marks["update_start"], args + marks["update_captures"])
            kept = set(made[: marks["step_end"]])
            keep = [n for n in graph_def.node if n.name in kept]
            del graph_def.node[:]
            graph_def.node.extend(keep)
        else:
            update = made[marks["update_start"] : marks["update_end"]]
            if _update_is_batch_free(graph_def, update, grads):
                update_nodes, closing_nodes = update, made[marks["step_end"] :]
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
    traced = TracedStep(
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
        update_nodes=update_nodes,
        closing_nodes=closing_nodes,
        metric_roles=metric_roles,
        update_at=update_at,
    )
    if update_from is None:
        return traced
    return _with_update(traced, update_from)


@contextlib.contextmanager
def tape_sizes(sizes: list[int], *, replay: bool) -> Iterator[None]:
    """Record the gradient sizes the tape reads in a trace, or give it those again.

    TF's tape sums a tensor's gradients early, as it goes, once more than
    four are pending and they hold over 128 MiB (``kMinAggregateCount`` and
    ``kMinAggregateBytes`` in ``tensorflow/c/eager/tape.h``, counting four
    bytes an element), reading the element count from the static shape (an
    unknown dimension counts as none at all).  So the graph depends on the
    batch: a TimeDistributed layer over 200 steps at batch 48 has its 200
    full-size input gradients summed by ``AddN``s of 44, 44, 44, 44 and 28,
    at batch 49 of 43 and so on, and with an open batch by one ``AddN`` of
    200.  The estimate needs the graph TF runs at the batch asked for and
    its sizes at a second batch: the trace at the batch asked for records
    the counts (``replay=False``), and the other traces are given the same
    counts in the same order, so they group the gradients the same way.
    """
    from tensorflow.python import pywrap_tfe
    from tensorflow.python.eager import backprop

    default = backprop._default_vspace
    given = iter(list(sizes))
    if not replay:
        sizes.clear()

    def num_elements(grad: Any) -> int:
        if replay:
            n = next(given, None)
            if n is not None:
                return n
        n = default.num_elements_fn(grad)
        if not replay:
            sizes.append(n)
        return n

    pywrap_tfe.TFE_Py_RegisterVSpace(default._replace(num_elements_fn=num_elements))
    try:
        yield
    finally:
        pywrap_tfe.TFE_Py_RegisterVSpace(default)


def _update_is_batch_free(graph_def: Any, update: list[str], grads: list[Any]) -> bool:
    """Whether the update ops of one trace serve a trace at another batch size.

    A dense gradient has its variable's shape.  A sparse one (an embedding's
    ``IndexedSlices``) has a row per looked-up id, so the batch reaches the
    update through its values: shape inference carries it through plain ops
    (Adam's and AdamW's sparse updates retrace identically), but not
    through a constant made from the rows' static count, nor into a
    branch function, whose signature holds the shapes of its trace (Adagrad
    updates sparse rows in a ``cond``).  Either makes the update unfit.
    """
    if not all(isinstance(g, (tf.Tensor, tf.IndexedSlices)) for g in grads):
        return False
    rows = {
        g.values.shape[0] for g in grads if isinstance(g, tf.IndexedSlices) and g.values.shape.rank
    }
    if not rows:
        return True
    if None in rows:
        return False
    names = set(update)
    for node in graph_def.node:
        if node.name not in names:
            continue
        if any(value.HasField("func") for value in node.attr.values()):
            return False
        if node.op == "Const" and node.attr["value"].tensor.dtype in _INT_TYPES:
            if rows & {int(v) for v in tf.make_ndarray(node.attr["value"].tensor).ravel()}:
                return False
    return True


_INT_TYPES = (tf.int32.as_datatype_enum, tf.int64.as_datatype_enum)


def _node_of(ref: str) -> str:
    """The node a graph input or fetch (``^name``, ``name:port``) names."""
    return ref.lstrip("^").partition(":")[0]


def _with_update(traced: TracedStep, other: TracedStep) -> TracedStep | None:
    """``traced`` (the step traced without its update) with ``other``'s update put in.

    The two traces name their ops alike, except perhaps the placeholders of
    captured tensors; those are matched by position, as the function's
    arguments list them in the order they were captured.  ``None`` if an
    update op reads a node ``traced`` does not have.
    """
    closing = set(other.closing_nodes)
    update = set(other.update_nodes) | closing
    if not other.update_nodes:
        return None
    other_args = [a for a in other.arg_names if a not in update]
    if len(other_args) != len(traced.arg_names):
        return None
    rename = {a: b for a, b in zip(other_args, traced.arg_names, strict=True) if a != b}

    def ref(r: str) -> str:
        ctrl = "^" if r.startswith("^") else ""
        name, sep, port = r.lstrip("^").partition(":")
        return ctrl + rename.get(name, name) + sep + port

    gd = traced.graph_def
    have = {n.name for n in gd.node}
    nodes = [n for n in other.graph_def.node if n.name in update]
    if have & update or len(nodes) != len(update) or traced.update_at is None:
        return None
    have |= update
    # The update goes where a full trace makes it, before the metrics; the
    # step's outputs, which wait for it, close the graph.
    at, at_arg = traced.update_at
    after = list(gd.node[at:])
    del gd.node[at:]
    copied_nodes = []
    for node in nodes:
        copied = type(node)()
        copied.CopyFrom(node)
        del copied.input[:]
        copied.input.extend(ref(r) for r in node.input)
        if any(_node_of(r) not in have for r in copied.input):
            return None
        copied_nodes.append(copied)
    gd.node.extend(n for n in copied_nodes if n.name not in closing)
    gd.node.extend(after)
    gd.node.extend(n for n in copied_nodes if n.name in closing)
    functions = {f.signature.name for f in gd.library.function}
    for f in other.graph_def.library.function:
        if f.signature.name not in functions:
            gd.library.function.add().CopyFrom(f)
    gradients = {g.function_name for g in gd.library.gradient}
    for g in other.graph_def.library.gradient:
        if g.function_name not in gradients:
            gd.library.gradient.add().CopyFrom(g)

    def pick(mapping: dict) -> dict:
        return {k: v for k, v in mapping.items() if k in update}

    # the update's side effects join the fetches, in the other trace's order
    fetches = [ref(f) for f in other.fetches]
    if any(_node_of(f) not in have for f in fetches):
        return None
    return dataclasses.replace(
        traced,
        fetches=fetches,
        outputs=[(rename.get(n, n), i) for n, i in other.outputs],
        variable_placeholders={**traced.variable_placeholders, **pick(other.variable_placeholders)},
        op_layer={**traced.op_layer, **pick(other.op_layer)},
        call_shapes={**traced.call_shapes, **pick(other.call_shapes)},
        constant_placeholders=traced.constant_placeholders
        + [c for c in other.constant_placeholders if c in update],
        arg_names=traced.arg_names[:at_arg]
        + [a for a in other.arg_names if a in update]
        + traced.arg_names[at_arg:],
        made_order={**traced.made_order, **pick(other.made_order)},
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


def _captures_as_arguments(graph_def: Any, captured: list[str]) -> None:
    """Make the small eager tensors the trace captured by value arguments again, in place.

    TF captures an eager tensor of up to 128 elements as a ``Const`` in the
    function's graph (``capture_container.py``), but lists it among the
    graph's inputs, so the function TF runs takes it as an argument: TF's
    runtime graph of the regularized MLP reads the activity regularizer's
    0.01 from ``_Arg regularized_mlp_1_dense_1_mul_x``.  As a ``Const``,
    Grappler would fold the products it feeds, which TF's Grappler cannot,
    and TF's runtime folding would then hold one more constant (a 256 KiB
    tile there; ``engine/folding.py``).
    """
    names = set(captured)
    for node in graph_def.node:
        if node.op != "Const" or node.name not in names:
            continue
        value = node.attr["value"].tensor
        dtype = node.attr["dtype"].type
        node.op = "Placeholder"
        node.ClearField("attr")
        node.attr["dtype"].type = dtype
        node.attr["shape"].shape.CopyFrom(value.tensor_shape)


def make_step(
    model: Any,
    *,
    training: bool,
    loss_fn: Any,
    optimizer: Any,
    marks: dict | None = None,
    metrics: Any = None,
) -> Any:
    """The Python function of one Keras train (or predict) step, to be traced.

    ``metrics`` (an ``engine.metrics.StepMetrics``) are updated where Keras's
    ``train_step`` updates them: the loss tracker before the loss is scaled,
    the compiled metrics after the optimizer's update.  ``marks``, if given,
    receives how many ops the graph held when the update began
    (``update_start``) and ended (``update_end``) and the gradients
    (``grads``); with ``marks["skip_update"]`` the update is left out.
    """
    trainable = list(model.trainable_variables)

    def made() -> int:
        return len(ops.get_default_graph().get_operations())

    def train_step(x, y):
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = loss_fn(y, y_pred)
            if model.losses:
                loss = loss + tf.add_n([tf.cast(v, loss.dtype) for v in model.losses])
            if metrics is not None:
                metrics.track_loss(loss, x)
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        grads = tape.gradient(scaled, trainable)
        if marks is not None:
            marks["update_start"] = made()
            marks["update_captures"] = len(ops.get_default_graph().captures)
            marks["grads"] = list(grads)
        if marks is None or not marks.get("skip_update"):
            optimizer.apply(grads, trainable)
        else:
            # The update's names stay taken, so the ops made after it (the
            # metrics) are named as in a full trace.
            for name in marks.get("update_names", ()):
                ops.get_default_graph().unique_name(name)
        if marks is not None:
            marks["update_end"] = made()
        results = loss if metrics is None else [loss, *metrics.update(y, y_pred)]
        if marks is not None:
            marks["step_end"] = made()
        return results

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
