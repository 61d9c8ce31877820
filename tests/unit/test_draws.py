"""The two-thread index draws against numpy's own ``Generator.integers``, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from flightdeck.scoring.draws import HalfStream, distance, draw_chunks


def sequential(seed: int, bound: int, sizes: list[int], dtype: str, skip: int = 0):
    rng = np.random.default_rng(seed)
    if skip:
        rng.integers(0, 2**32 - 1, skip, dtype=np.uint32)  # leaves a half pending when odd
    return rng, [rng.integers(0, bound, size, dtype=dtype) for size in sizes]


@pytest.mark.parametrize(
    ("bound", "sizes"),
    [
        (2, [1, 2, 3]),
        (3, [5] * 7),
        (100_000, [2_000_000, 2_000_000, 1_999_999, 7]),
        # 2**32 mod bound is a third of 2**32: a third of all halves are rejected
        (1_431_655_766, [1000, 999, 5000, 1, 1, 3000]),
        (2**31 - 1, [10_000] * 5),
        (3 * 2**30, [4_000] * 4),  # a quarter rejected, beyond int32
    ],
)
@pytest.mark.parametrize("skip", [0, 1, 4])
def test_chunks_equal_one_generator_chunk_after_chunk(bound, sizes, skip):
    dtype = "int64" if bound > 2**31 else "int32"
    expected_rng, expected = sequential(7, bound, sizes, dtype, skip)
    rng = np.random.default_rng(7)
    if skip:
        rng.integers(0, 2**32 - 1, skip, dtype=np.uint32)
    got = list(draw_chunks(rng, bound, sizes, dtype))
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert rng.bit_generator.state == expected_rng.bit_generator.state
    # and the generator goes on as numpy's would
    np.testing.assert_array_equal(rng.integers(0, 10, 100), expected_rng.integers(0, 10, 100))


def test_more_rejections_than_spared_still_give_numpys_draws(monkeypatch):
    import flightdeck.scoring.draws as draws

    monkeypatch.setattr(draws, "_spare", lambda size, rate: 0)
    bound, sizes = 1_431_655_766, [300, 300, 300]
    expected_rng, expected = sequential(3, bound, sizes, "int64")
    rng = np.random.default_rng(3)
    for a, b in zip(draw_chunks(rng, bound, sizes, "int64"), expected, strict=True):
        np.testing.assert_array_equal(a, b)
    assert rng.bit_generator.state == expected_rng.bit_generator.state


def test_other_generators_and_small_types_draw_in_turn():
    for make, dtype in ((np.random.MT19937, "int64"), (np.random.PCG64, "int16")):
        rng, twin = np.random.Generator(make(5)), np.random.Generator(make(5))
        got = list(draw_chunks(rng, 1000, [10, 20], dtype))
        assert [list(a) for a in got] == [
            list(twin.integers(0, 1000, s, dtype=dtype)) for s in (10, 20)
        ]


def test_distance_reads_back_an_advance():
    bits = np.random.PCG64(11)
    start = bits.state["state"]["state"]
    bits.advance(123_456_789_012)
    assert (
        distance(start, bits.state["state"]["state"], bits.state["state"]["inc"]) == 123_456_789_012
    )


def test_half_positions_round_trip():
    rng = np.random.default_rng(2)
    rng.integers(0, 2**32 - 1, 3, dtype=np.uint32)  # one half pending
    stream = HalfStream(rng.bit_generator.state)
    halves = stream.halves(0, 9)
    twin = np.random.Generator(np.random.PCG64())
    twin.bit_generator.state = rng.bit_generator.state
    np.testing.assert_array_equal(
        halves, twin.integers(0, 2**32 - 1, 9, dtype=np.uint32, endpoint=True)
    )
    for position in range(9):
        generator = stream.generator(position)
        assert stream.position(generator) == position
        assert (
            generator.integers(0, 2**32 - 1, 1, dtype=np.uint32, endpoint=True)[0]
            == halves[position]
        )
