"""A model of TF's BFC allocator: what ``get_memory_info()["peak"]`` counts.

The peak is the largest ``bytes_in_use``, and that sums *chunk* sizes, not
requests: every request is rounded up to 256 bytes, and a free chunk is split
only when it is at least twice the request (or the excess is 128 MiB or
more).  A 3.2 MB request served from a fresh 4 MiB region therefore counts
4 MiB.  Replaying the step's allocations through the same rules reproduces
that slack.  Regions grow as TF's do with ``allow_growth``: the first is
2 MiB, each new region doubles the size of the last (more if the request
needs it).

Where a region lies matters too: of two free chunks of the best-fitting
size, TF takes the one at the lower address.  TF's CPU regions come from
the C library, which maps each new one below the last (in TF's profile of
a step every region starts below the one before), so the model places them
that way and a tie goes to the newest region (``tests/test_bfc.py``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

MIN_ALLOCATION = 256
MAX_INTERNAL_FRAGMENTATION = 128 << 20
NUM_BINS = 21
INITIAL_REGION = 2 << 20


def _bin(size: int) -> int:
    return min(max((size >> 8).bit_length() - 1, 0), NUM_BINS - 1)


class BFCModel:
    """Best-fit with coalescing, over regions that never merge."""

    def __init__(self, memory_limit: int = 1 << 45) -> None:
        self.memory_limit = memory_limit
        self.region_bytes = INITIAL_REGION
        self.total_region = 0
        self.next_addr = 1 << 60  # where the next region ends: regions go downwards
        # chunk address -> [size, in_use, prev addr or -1, next addr or -1]
        self.chunks: dict[int, list[int]] = {}
        self.bins: list[list[tuple[int, int]]] = [[] for _ in range(NUM_BINS)]
        self.in_use = 0
        self.peak = 0
        self.owner: dict[object, int] = {}  # allocation key -> chunk address
        self.slack: dict[object, tuple[str, int]] = {}  # key -> (category, chunk - request)
        self.slack_by_cat: dict[str, int] = {}
        self.peak_slack: dict[str, int] = {}

    # -- free lists ----------------------------------------------------------
    # (the hot paths inline ``_bin``: the replay makes some 10^5 calls per
    # estimate of a large model, at every batch size of the slack ladder)
    def _insert_free(self, addr: int) -> None:
        size = self.chunks[addr][0]
        b = (size >> 8).bit_length() - 1
        bisect.insort(self.bins[b if b < NUM_BINS else NUM_BINS - 1], (size, addr))

    def _remove_free(self, addr: int) -> None:
        size = self.chunks[addr][0]
        b = (size >> 8).bit_length() - 1
        lst = self.bins[b if b < NUM_BINS else NUM_BINS - 1]
        key = (size, addr)
        i = bisect.bisect_left(lst, key)
        if i < len(lst) and lst[i] == key:
            del lst[i]

    def _extend(self, need: int) -> None:
        grew = False
        while need > self.region_bytes:
            self.region_bytes *= 2
            grew = True
        size = min(self.region_bytes, self.memory_limit - self.total_region)
        if size < need:
            raise MemoryError("simulated allocator out of memory")
        addr = self.next_addr - size
        self.next_addr = addr - MIN_ALLOCATION  # a gap: regions never coalesce
        self.total_region += size
        self.chunks[addr] = [size, 0, -1, -1]
        self._insert_free(addr)
        if not grew:
            self.region_bytes *= 2

    def _find(self, need: int) -> int | None:
        key = (need, -1)
        for lst in self.bins[_bin(need) :]:
            if lst and lst[-1] >= key:
                return lst[bisect.bisect_left(lst, key)][1]
        return None

    # -- public ----------------------------------------------------------------
    def alloc(self, key: object, nbytes: int, category: str = "temporaries") -> None:
        if key in self.owner:  # e.g. a constant, allocated once per function
            return
        need = (  # the request rounded up to whole 256-byte units
            (nbytes + MIN_ALLOCATION - 1) // MIN_ALLOCATION * MIN_ALLOCATION
            if nbytes > 0
            else MIN_ALLOCATION
        )
        addr = self._find(need)
        if addr is None:
            self._extend(need)
            addr = self._find(need)
            assert addr is not None
        self._remove_free(addr)
        chunk = self.chunks[addr]
        if chunk[0] >= 2 * need or chunk[0] - need >= MAX_INTERNAL_FRAGMENTATION:
            rest = addr + need
            self.chunks[rest] = [chunk[0] - need, 0, addr, chunk[3]]
            if chunk[3] != -1:
                self.chunks[chunk[3]][2] = rest
            chunk[0] = need
            chunk[3] = rest
            self._insert_free(rest)
        chunk[1] = 1
        self.in_use += chunk[0]
        self.owner[key] = addr
        extra = chunk[0] - max(int(nbytes), 0)
        self.slack[key] = (category, extra)
        self.slack_by_cat[category] = self.slack_by_cat.get(category, 0) + extra
        if self.in_use > self.peak:
            self.peak = self.in_use
            self.peak_slack = dict(self.slack_by_cat)

    def free(self, key: object) -> None:
        addr = self.owner.pop(key, None)
        if addr is None:
            return
        category, extra = self.slack.pop(key)
        self.slack_by_cat[category] -= extra
        chunk = self.chunks[addr]
        chunk[1] = 0
        self.in_use -= chunk[0]
        # coalesce with the next and the previous free neighbours
        nxt = chunk[3]
        if nxt != -1 and not self.chunks[nxt][1]:
            self._remove_free(nxt)
            n = self.chunks.pop(nxt)
            chunk[0] += n[0]
            chunk[3] = n[3]
            if n[3] != -1:
                self.chunks[n[3]][2] = addr
        prv = chunk[2]
        if prv != -1 and not self.chunks[prv][1]:
            self._remove_free(prv)
            p = self.chunks[prv]
            p[0] += chunk[0]
            p[3] = chunk[3]
            if chunk[3] != -1:
                self.chunks[chunk[3]][2] = prv
            del self.chunks[addr]
            addr = prv
        self._insert_free(addr)

    def copy(self) -> BFCModel:
        """An independent model in the same state, to run different steps from one start."""
        new = BFCModel.__new__(BFCModel)
        new.__dict__.update(self.__dict__)
        new.chunks = {addr: chunk[:] for addr, chunk in self.chunks.items()}
        new.bins = [lst[:] for lst in self.bins]
        new.owner = dict(self.owner)
        new.slack = dict(self.slack)
        new.slack_by_cat = dict(self.slack_by_cat)
        new.peak_slack = dict(self.peak_slack)
        return new

    def reset_peak(self) -> None:
        self.peak = self.in_use
        self.peak_slack = dict(self.slack_by_cat)

    def run(self, events: Iterable[tuple], n: int) -> None:
        """Replay ``(kind, key, a, b, category)`` events with sizes ``a + b * n``."""
        for kind, key, a, b, category in events:
            if kind == "a":
                self.alloc(key, int(a + b * n), category)
            else:
                self.free(key)
