"""Bootstrap index draws on two cores, bit for bit what one ``Generator.integers`` call gives.

Drawing 10,000 x 100,000 indices is most of a large score, and one call uses one core. The
stream numpy reads is fixed in advance: PCG64 words, each split into two 32-bit halves (low
first), and ``integers(0, n)`` turns each half h into ``(h * n) >> 32`` unless
``(h * n) mod 2**32`` falls below ``2**32 mod n`` (Lemire's rejection, which then takes the
next half). Whether a half is rejected depends on that half alone, so a chunk can be drawn
by a second generator started where the chunk *at least* begins (jumped there with PCG64's
``advance``), and the few outputs that belong to the chunk before it dropped afterwards. Where
a generator stands is read back from its state with PCG's own distance algorithm.

Only PCG64 (``default_rng``) with ``n`` below ``2**32`` takes this path; anything else is drawn
by the one generator, chunk after chunk, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# numpy's PCG64 multiplier (PCG_DEFAULT_MULTIPLIER_128): state <- state * MULT + inc, mod 2**128
MULT = (2549297995355413924 << 64) | 4865540595714422341
MASK = (1 << 128) - 1


def distance(start: int, end: int, inc: int) -> int:
    """How many PCG64 steps lead from state ``start`` to ``end`` (pcg_random.hpp's distance)."""
    mult, plus, bit, steps = MULT, inc, 1, 0
    while start != end:
        if start & bit != end & bit:
            start = (start * mult + plus) & MASK
            steps |= bit
        bit <<= 1
        plus = ((mult + 1) * plus) & MASK
        mult = (mult * mult) & MASK
    return steps


class HalfStream:
    """The 32-bit halves a PCG64 generator reads, addressed by position from its first state."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.pending = int(state["has_uint32"])  # a half left over from the last word drawn
        self.start = int(state["state"]["state"])
        self.inc = int(state["state"]["inc"])

    def generator(self, position: int) -> np.random.Generator:
        """A generator whose next half is the one at ``position``."""
        import numpy as np

        if position == 0:
            bits: Any = np.random.PCG64()
            bits.state = self.state
            return np.random.Generator(bits)
        words, odd = divmod(position - self.pending, 2)
        bits = np.random.PCG64()
        bits.state = {**self.state, "has_uint32": 0}
        if odd or words:  # draw the word read last: numpy keeps its high half, used or not
            bits.advance(words - 1 + odd)
            high = int(bits.random_raw()) >> 32
            bits.state = {**bits.state, "has_uint32": odd, "uinteger": high}
        return np.random.Generator(bits)

    def position(self, generator: np.random.Generator) -> int:
        """Which half ``generator`` reads next."""
        state = generator.bit_generator.state
        words = distance(self.start, int(state["state"]["state"]), self.inc)
        return self.pending + 2 * words - int(state["has_uint32"])

    def halves(self, start: int, stop: int) -> npt.NDArray[np.uint64]:
        """The halves at positions [start, stop), as uint64 for the multiplication."""
        import numpy as np

        if stop <= start:
            return np.empty(0, np.uint64)
        head = [self.state["uinteger"]] if start == 0 and self.pending else []
        first = max(start, self.pending)
        words, odd = divmod(first - self.pending, 2)
        count = (stop - first + odd + 1) // 2
        bits: Any = np.random.PCG64()
        bits.state = {**self.state, "has_uint32": 0, "uinteger": 0}
        bits.advance(words)
        raw = bits.random_raw(count).view(np.uint32)[odd : odd + stop - first]
        return np.concatenate([np.asarray(head, np.uint64), raw.astype(np.uint64)])


def _accepted(halves: npt.NDArray[np.uint64], bound: int) -> npt.NDArray[np.bool_]:
    import numpy as np

    threshold = (1 << 32) % bound
    return ((halves * np.uint64(bound)) & np.uint64(0xFFFFFFFF)) >= np.uint64(threshold)


def _end_of(stream: HalfStream, final: int, surplus: int, bound: int) -> int:
    """The position just after the half of the output ``surplus`` outputs before ``final``."""
    import numpy as np

    if surplus == 0:
        return final
    window = 2 * surplus + 64
    while True:
        lo = max(0, final - window)
        ok = np.flatnonzero(_accepted(stream.halves(lo, final), bound))
        if len(ok) > surplus:  # ok[-surplus] is the first surplus output: the one before it ends
            return lo + int(ok[-surplus - 1]) + 1
        window *= 4


def _spare(size: int, rate: float) -> int:
    """Outputs drawn beyond a chunk: room for the previous chunk's rejections, four times over."""
    return int(size * rate * 4) + 64


def draw_chunks(
    rng: np.random.Generator, bound: int, sizes: Sequence[int], dtype: Any
) -> Iterator[npt.NDArray[Any]]:
    """``rng.integers(0, bound, size, dtype)`` for each size in turn, drawn on two threads.

    Leaves ``rng`` where those calls would. Each chunk is yielded in order; at most four are
    held at once.
    """
    import numpy as np

    wide = np.dtype(dtype) in (np.dtype(t) for t in ("int32", "int64", "uint32", "uint64"))
    if not isinstance(rng.bit_generator, np.random.PCG64) or not 2 <= bound < 1 << 32 or not wide:
        for size in sizes:
            yield rng.integers(0, bound, size, dtype=dtype)
        return
    stream = HalfStream(rng.bit_generator.state)
    rate = ((1 << 32) % bound) / (1 << 32)  # rejected share of halves

    def draw(start: int, size: int) -> tuple[np.random.Generator, npt.NDArray[Any]]:
        generator = stream.generator(start)
        return generator, generator.integers(0, bound, size + _spare(size, rate), dtype=dtype)

    with ThreadPoolExecutor(max_workers=2) as pool:
        pending: list[Future[tuple[np.random.Generator, npt.NDArray[Any]]]] = []
        starts: list[int] = []  # the position each pending chunk was drawn from
        begin = 0  # the exact position of the next chunk to yield
        lower = 0  # a position no later than where the next chunk to submit begins
        submitted = 0

        def submit() -> None:
            nonlocal lower, submitted
            size = sizes[submitted]
            pending.append(pool.submit(draw, lower, size))
            starts.append(lower)
            lower += size  # a chunk reads at least one half per output
            submitted += 1

        while submitted < min(2, len(sizes)):
            submit()
        for k, size in enumerate(sizes):
            generator, drawn = pending.pop(0).result()
            start = starts.pop(0)
            assert start <= begin, "a chunk was drawn from past where it begins"
            skip = int(_accepted(stream.halves(start, begin), bound).sum())
            if skip > len(drawn) - size:  # more rejections than spared for: draw it exactly
                generator = stream.generator(begin)
                chunk = generator.integers(0, bound, size, dtype=dtype)
                begin = stream.position(generator)
            else:
                chunk = drawn[skip : skip + size]
                surplus = len(drawn) - size - skip
                begin = _end_of(stream, stream.position(generator), surplus, bound)
            lower = max(lower, begin + sum(sizes[k + 1 : submitted]))
            if submitted < len(sizes):
                submit()
            yield chunk
        end: Any = stream.generator(begin).bit_generator.state
        rng.bit_generator.state = end
