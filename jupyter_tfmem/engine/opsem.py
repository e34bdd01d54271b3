"""What each kind of op does with memory, as TF's CPU and GPU kernels do it.

Three behaviours matter for the allocator's peak:

* aliasing ops hand out their input's buffer (Identity, Reshape, ...), so
  their output costs nothing and keeps the input alive;
* element-wise kernels call ``forward_input_or_allocate_output``: when an input
  of the same size is used by nobody else, the output reuses its buffer;
* everything else allocates fresh buffers for its outputs.
"""

from __future__ import annotations

#: Output i shares the buffer of input i (IdentityN) or input 0 (the rest).
ALIAS_OPS = frozenset(
    {
        "Identity",
        "IdentityN",
        "Reshape",
        "Squeeze",
        "ExpandDims",
        "StopGradient",
        "PreventGradient",
        "EnsureShape",
        "Snapshot",
        "_Retval",
        "Bitcast",
        "PlaceholderWithDefault",
        "CheckNumerics",
        "DebugIdentity",
        "DebugIdentityV3",
        "Enter",
        "Exit",
        "NextIteration",
        "Switch",
        "Merge",
        "RefIdentity",
        "OptionalFromValue",
        # Grappler's memory optimizer sums a large AddN into a TemporaryVariable
        # (which allocates) in place; these return that variable's buffer.
        "Assign",
        "AssignAdd",
        "AssignSub",
        "DestroyTemporaryVariable",
    }
)

#: Ops whose kernels may write their output into an input's buffer.
FORWARDING_OPS = frozenset(
    {
        # unary cwise
        "Abs",
        "Neg",
        "Sign",
        "Square",
        "Sqrt",
        "Rsqrt",
        "Exp",
        "Expm1",
        "Log",
        "Log1p",
        "Sigmoid",
        "Tanh",
        "Relu",
        "Relu6",
        "Elu",
        "Selu",
        "Softplus",
        "Softsign",
        "LeakyRelu",
        "Reciprocal",
        "Inv",
        "Erf",
        "Erfc",
        "Floor",
        "Ceil",
        "Round",
        "Rint",
        "Sin",
        "Cos",
        "IsNan",
        "LogicalNot",
        "Invert",
        "Tan",
        "Asin",
        "Acos",
        "Atan",
        "Sinh",
        "Cosh",
        "Asinh",
        "Acosh",
        "Atanh",
        "Lgamma",
        "Digamma",
        "Gelu",
        "Mish",
        "Swish",
        "OnesLike",
        "ZerosLike",
        "Cast",
        "ClipByValue",
        # binary cwise (forward when an input has the output's shape)
        "Add",
        "AddV2",
        "Sub",
        "Mul",
        "MulNoNan",
        "Div",
        "RealDiv",
        "DivNoNan",
        "FloorDiv",
        "FloorMod",
        "Maximum",
        "Minimum",
        "Pow",
        "SquaredDifference",
        "Xdivy",
        "Xlogy",
        "Atan2",
        "BiasAdd",
        "AddN",
        "Select",
        "SelectV2",
        "Greater",
        "GreaterEqual",
        "Less",
        "LessEqual",
        "Equal",
        "NotEqual",
        "LogicalAnd",
        "LogicalOr",
        # integer cwise: BinaryOp kernels too (cwise_ops_common.h forwards
        # input 0 or 1 into the output whenever dtype and shape allow)
        "LeftShift",
        "RightShift",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
        "TruncateDiv",
        "TruncateMod",
        # gradient cwise
        "ReluGrad",
        "Relu6Grad",
        "EluGrad",
        "SeluGrad",
        "LeakyReluGrad",
        "SigmoidGrad",
        "TanhGrad",
        "SqrtGrad",
        "RsqrtGrad",
        "ReciprocalGrad",
        "SoftplusGrad",
        "SoftsignGrad",
        # softmax (SoftmaxOp forwards its logits' buffer; TF's log shows no new allocation)
        "Softmax",
        "LogSoftmax",
        # fused
        "_FusedBatchNormEx",
        "FusedBatchNormGradV3",
    }
)

#: Ops whose kernel names the inputs an output may be written into:
#: op -> {output index: input indices}.  The cross-entropy kernels write the
#: gradient (output 1) into the logits' buffer (``sparse_xent_op.cc``,
#: ``xent_op.cc``: ``forward_input_or_allocate_output({0}, 1, ...)``), never
#: into the dense labels, even where those have the logits' shape; the sparse
#: kernel's loss may take its labels' buffer (of another dtype in practice).
FORWARDED_INPUTS: dict[str, dict[int, tuple[int, ...]]] = {
    "SparseSoftmaxCrossEntropyWithLogits": {0: (1,), 1: (0,)},
    "SoftmaxCrossEntropyWithLogits": {1: (0,)},
}

#: Ops whose outputs live as long as the function (held by the kernel).
CONSTANT_OPS = frozenset({"Const", "HostConst"})

#: A while loop's and a condition's plumbing (``Node::IsControlFlow``, and the
#: loop's condition): they route tensors, and run inline.
CONTROL_FLOW_OPS = frozenset(
    {
        "Switch",
        "RefSwitch",
        "Merge",
        "RefMerge",
        "Enter",
        "RefEnter",
        "Exit",
        "RefExit",
        "NextIteration",
        "RefNextIteration",
        "LoopCond",
    }
)

#: Ops that only hold a handle or produce nothing the allocator sees.
NO_BUFFER_OPS = frozenset(
    {
        "NoOp",
        "VarHandleOp",
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "ResourceScatterAdd",
        "ResourceScatterUpdate",
        "ResourceScatterSub",
        "ResourceApplyGradientDescent",
        "ResourceApplyAdam",
        "ResourceApplyKerasMomentum",
        "ResourceApplyRMSProp",
        "ResourceApplyAdagradV2",
    }
)

#: Ops that write into a variable: when a read of it is still alive, TF copies
#: the variable first (copy-on-write), which costs one variable's size.
VARIABLE_WRITE_OPS = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
