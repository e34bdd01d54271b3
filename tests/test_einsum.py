"""The Einsum kernel's operand copies: the rule, and TF's own allocator log for it."""

from __future__ import annotations

import math

import pytest
from _tflog import step_allocations

from jupyter_tfmem.engine.einsum import einsum_flops, einsum_temporaries

B, T, N, H = 8, 64, 4, 32


def test_attention_scores_copy_both_operands_and_write_in_place():
    # Keras' MultiHeadAttention: query and key are reordered to B,N,T,H first.
    assert einsum_temporaries("BTNH,BSNH->BNTS", [(B, T, N, H)] * 2, (B, N, T, T)) == [
        B * T * N * H,
        B * T * N * H,
    ]


def test_attention_output_copies_the_values_and_reorders_the_product():
    temps = einsum_temporaries("BNTS,BSNH->BTNH", [(B, N, T, T), (B, T, N, H)], (B, T, N, H))
    assert temps == [B * T * N * H, B * N * T * H]  # V reordered; the product before reordering


def test_operands_already_in_order_are_not_copied():
    assert einsum_temporaries("abc,cde->abde", [(B, T, 128), (128, N, H)], (B, T, N, H)) == []
    assert einsum_temporaries("bij,bjk->bik", [(B, 16, 32), (B, 32, 8)], (B, 16, 8)) == []
    # contracted before free: the product transposes it in place
    assert einsum_temporaries("ij,jk->ik", [(4, 5), (5, 6)], (4, 6)) == []


def test_a_transposed_output_keeps_the_product_as_a_temporary():
    assert einsum_temporaries("ij,jk->ki", [(4, 5), (5, 6)], (6, 4)) == [24]


def test_summed_axes_and_single_operands():
    # j appears in one operand only and not in the output: summed first
    assert einsum_temporaries("ij,ik->ik", [(4, 5), (4, 6)], (4, 6)) == [4]
    assert einsum_temporaries("ij->i", [(4, 5)], (4,)) == []  # the sum is the output
    assert einsum_temporaries("ij->ji", [(4, 5)], (5, 4)) == []  # the copy is the output


def test_ellipsis_axes_count_as_batch():
    assert (
        einsum_temporaries("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)], (2, 3, 4, 6)) == []
    )


@pytest.mark.parametrize(
    "equation, shapes, out",
    [
        ("ij,jk", [(4, 5), (5, 6)], (4, 6)),  # no output given
        ("ij,jk->ik", [(4, 5), None], (4, 6)),  # unknown shape
        ("ijk,jk->ik", [(4, 5), (5, 6)], (4, 6)),  # rank mismatch
        ("i->ii", [(4,)], (4, 4)),  # inflated output
    ],
)
def test_what_is_not_understood_is_not_charged(equation, shapes, out):
    assert einsum_temporaries(equation, shapes, out) is None


def test_a_products_flops_count_every_batch_free_and_contracted_axis():
    # the attention scores: B, N, T and S kept, H contracted
    scores = einsum_flops("BTNH,BSNH->BNTS", [(B, T, N, H)] * 2, (B, N, T, T))
    assert scores == 2 * B * N * T * T * H
    # a projection whose weight has no batch axis: every batch entry uses it
    flops = einsum_flops("abc,cde->abde", [(B, T, 128), (128, N, H)], (B, T, N, H))
    assert flops == 2 * B * T * 128 * N * H
    # an axis summed out of one operand first is not part of the product
    assert einsum_flops("ij,ik->ik", [(4, 5), (4, 6)], (4, 6)) == 2 * 4 * 6
    # an axis broadcast from 1 runs as often as the other operand's
    broadcast = einsum_flops("...ij,...jk->...ik", [(1, 4, 5), (3, 5, 6)], (3, 4, 6))
    assert broadcast == 2 * 3 * 4 * 5 * 6


def test_a_one_operand_einsum_only_moves_memory():
    assert einsum_flops("ij->ji", [(4, 5)], (5, 4)) == 0.0
    assert einsum_flops("ij,jk", [(4, 5), (5, 6)], (4, 6)) is None  # not understood


_CHECKED = [
    ("BTNH,BSNH->BNTS", [(B, T, N, H), (B, T, N, H)]),
    ("BNTS,BSNH->BTNH", [(B, N, T, T), (B, T, N, H)]),
    ("ij,jk->ki", [(512, 256), (256, 1024)]),
    ("abc,cde->abde", [(B, T, 128), (128, N, H)]),
]


def test_the_rule_matches_tfs_allocator_log():
    """Every buffer of 256 KiB or more the kernel allocates is a predicted one.

    (oneDNN also takes a scratchpad of up to ~130 KiB for a product: not modelled.)
    """
    cases = [
        {"equation": eq, "inputs": [(list(s), "float32") for s in shapes]}
        for eq, shapes in _CHECKED
    ]
    logged = step_allocations("RUN = lambda case, *t: tf.einsum(case['equation'], *t)", cases)
    for (equation, shapes), sizes in zip(_CHECKED, logged, strict=True):
        out_shape = _einsum_shape(equation, shapes)
        temps = einsum_temporaries(equation, shapes, out_shape)
        assert temps is not None
        predicted = sorted(4 * e for e in [*temps, math.prod(out_shape)])
        assert sorted(s for s in sizes if s >= 262144) == predicted, equation


def _einsum_shape(equation: str, shapes) -> list[int]:
    dims = {}
    for sub, shape in zip(equation.split("->")[0].split(","), shapes, strict=True):
        dims.update(zip(sub, shape, strict=True))
    return [dims[ch] for ch in equation.split("->")[1]]


def test_the_output_is_allocated_last_exactly_where_the_product_is_copied_into_its_order():
    from jupyter_tfmem.engine.einsum import einsum_output_late

    B, T, N, H = 2, 5, 3, 4
    # attention's scores come out of the product in order; its combine does not
    assert not einsum_output_late("BTNH,BSNH->BNTS", [(B, T, N, H)] * 2, (B, N, T, T))
    assert einsum_output_late("BNTS,BSNH->BTNH", [(B, N, T, T), (B, T, N, H)], (B, T, N, H))
    # a per-example weight's gradient (ac,ab->abc): the product is laid out a, c, b
    assert einsum_output_late("ac,ab->abc", [(4, 6), (4, 5)], (4, 5, 6))
    assert not einsum_output_late("ij,jk->ik", [(4, 5), (5, 6)], (4, 6))
    assert einsum_output_late("ij->ji", [(4, 5)], (5, 4))
    assert not einsum_output_late("ij->i", [(4, 5)], (4,))
    # a late output goes with a reordered product's temporary, and only then
    for eq, shapes, out in (
        ("ac,ab->abc", [(4, 6), (4, 5)], (4, 5, 6)),
        ("ij,jk->ik", [(4, 5), (5, 6)], (4, 6)),
    ):
        temps = einsum_temporaries(eq, shapes, out)
        assert einsum_output_late(eq, shapes, out) == (math.prod(out) in temps)
