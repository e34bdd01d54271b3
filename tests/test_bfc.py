"""The allocator model against TF's own BFC allocator, placement by placement."""

from __future__ import annotations

from _tflog import logged_allocations

from jupyter_tfmem.engine.bfc import BFCModel

# Two free chunks of one size, one in each of two regions: p and u fill the
# first 2 MiB region (p splits it, u takes the rest whole), q and v a new
# 4 MiB one; p and q are then freed between buffers still in use.
_TIE = """
import sys
print("MARK all", file=sys.stderr, flush=True)
import tensorflow as tf
one = tf.constant(1.0)
MiB = 2**18  # float32 elements
dims = {k: tf.constant([k]) for k in (MiB // 2, 3 * MiB // 4, 2 * MiB)}
def big(n):
    return tf.fill(dims[n], one)
p = big(MiB // 2); u = big(3 * MiB // 4); q = big(MiB // 2); v = big(2 * MiB)
del p, q
t = big(MiB // 2)
print("MARK end", file=sys.stderr, flush=True)
"""


def _placements(events) -> tuple[list[int], list[int], list[tuple[int, ...]]]:
    """TF's address and the model's chunk for each allocation, and the model's free
    chunk sizes just before each one."""
    model = BFCModel()
    key_at: dict[str, int] = {}
    tf_addr, model_addr, free_sizes = [], [], []
    for i, (kind, size, addr, _) in enumerate(events):
        if kind == "a":
            free_sizes.append(tuple(sorted(s for s, used, *_ in model.chunks.values() if not used)))
            model.alloc(i, size)
            key_at[addr] = i
            tf_addr.append(int(addr, 16))
            model_addr.append(model.owner[i])
        else:
            model.free(key_at.pop(addr))
    return tf_addr, model_addr, free_sizes


def test_of_two_equal_free_chunks_the_one_in_the_newer_region_is_taken():
    events = logged_allocations(_TIE)["all"]
    tf_addr, model_addr, free_sizes = _placements(events)
    # t is the last allocation; two free chunks of its size exist when it comes
    t_size = [size for kind, size, *_ in events if kind == "a"][-1]
    assert free_sizes[-1].count(t_size) == 2
    q = len(tf_addr) - 3  # p, u, q, v, t: q is the third from the end
    # TF's regions come from the C library, each below the last: of equal
    # chunks the lowest address, the newest region's, wins (here q's)
    assert tf_addr[-1] == tf_addr[q] < tf_addr[q - 2]
    # every allocation reuses the same earlier allocation's chunk in both
    for i in range(len(tf_addr)):
        same_tf = {j for j in range(i) if tf_addr[j] == tf_addr[i]}
        same_model = {j for j in range(i) if model_addr[j] == model_addr[i]}
        assert same_tf == same_model, f"allocation {i}"


def test_a_copy_runs_on_from_the_same_state_without_touching_the_original():
    events = [("a", "x", 3 << 20, 0, "t"), ("a", "y", 1 << 20, 0, "t"), ("f", "x", 0, 0, "")]
    start = BFCModel()
    start.run(events, 0)
    later = [("a", "z", 2 << 20, 0, "t"), ("f", "y", 0, 0, ""), ("a", "w", 5 << 20, 0, "t")]
    # the copy's replay of a later step is the replay of the whole sequence
    whole = BFCModel()
    whole.run(events + later, 0)
    copied = start.copy()
    copied.run(later, 0)
    assert (copied.peak, copied.in_use, copied.chunks) == (whole.peak, whole.in_use, whole.chunks)
    assert copied.bins == whole.bins
    # and the original still holds only its own step's buffers
    assert set(start.owner) == {"y"}
    assert start.in_use < copied.in_use
