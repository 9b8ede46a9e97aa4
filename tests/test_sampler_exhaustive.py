"""Exhaustive tests of the dyadic samplers with a mock source of random bits.

A sampler that should output 1 with probability m / 2^64 must output 1 for a
uniform 64-bit word u exactly when u < m.  We feed it every value of a 12-bit
draw and read off exact counts:

* top 12 bits enumerated (4096 values), low 52 bits all 0: the count of
  u < m is ceil(m / 2^52) (an upper count); low bits all 1: floor(m / 2^52)
  (a lower count).  The true probability times 4096 lies between them, so a
  sampler off by more than one 2^-12 step anywhere is caught.
* low 12 bits enumerated, high bits 0: the count is min(m, 4096): this
  resolves the tiny probabilities of large epsilon (m = 78 at eps = 40).

The bit-sliced sampler builds each lane's U from one bit of each successive
random word, so its mock hands lane l the bits of a chosen value U_l, most
significant first; any set of values must give exactly [U_l < m].
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _samplers import flip_mask

from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import RandomSource
from dpgraph.core.sampling import (
    bernoulli_words,
    kary_words,
    rr_sample,
    uniform_integers,
)

M_BITS = 12
T = np.arange(1 << M_BITS, dtype=np.uint64)
LOW = 64 - M_BITS
TOP_LOW0 = T << np.uint64(LOW)  # upper count
TOP_LOW1 = TOP_LOW0 | np.uint64((1 << LOW) - 1)  # lower count
BOTTOM = T.copy()  # u = t

# eps = 40: p' ~ 4e-18 (m = 78); 1e-6: p' just below 1/2; and ordinary levels
EPSILONS = [40.0, 20.0, 4.0, 1.0, 0.1, 1e-6]


class ListSource(RandomSource):
    """Hands out a fixed sequence of words, in order; fails if over-drawn."""

    def __init__(self, words: np.ndarray) -> None:
        self.words = np.asarray(words, dtype=np.uint64)
        self.pos = 0

    def uint64(self, n: int) -> np.ndarray:
        n = int(n)
        if self.pos + n > self.words.size:
            raise AssertionError("sampler drew more words than one per row")
        out = self.words[self.pos : self.pos + n]
        self.pos += n
        return out.copy()


class LaneSource(RandomSource):
    """For a single-word bit-sliced draw: lane l's U is ``values[l]``.

    The k-th word handed out (k = 0, 1, ...) has bit l equal to bit 63 - k of
    values[l]: one word per comparison round, however many rounds the
    sampler asks for per call.  It must never need more than 64 rounds.
    """

    def __init__(self, values: np.ndarray) -> None:
        assert values.size == 64
        self.values = np.asarray(values, dtype=np.uint64)
        self.step = 0

    def round_word(self) -> np.uint64:
        assert self.step < 64, "more than 64 rounds for one word"
        bits = (self.values >> np.uint64(63 - self.step)) & np.uint64(1)
        self.step += 1
        return np.bitwise_or.reduce(bits << np.arange(64, dtype=np.uint64))

    def uint64(self, n: int) -> np.ndarray:
        n = int(n)
        if self.step + n > 64:  # rounds drawn ahead but never needed: any value
            ahead = max(0, 64 - self.step)
            words = [self.round_word() for _ in range(ahead)]
            return np.array(words + [0] * (n - ahead), dtype=np.uint64)
        return np.array([self.round_word() for _ in range(n)], dtype=np.uint64)


def bit_sliced(values: np.ndarray, numerator: int) -> np.ndarray:
    """bernoulli_words on lanes with prescribed U values, 64 at a time."""
    out = []
    for c in range(0, values.size, 64):
        word = bernoulli_words(1, numerator, LaneSource(values[c : c + 64]))[0]
        out.append((word >> np.arange(64, dtype=np.uint64)) & np.uint64(1))
    return np.concatenate(out).astype(bool)


def kary_bit_sliced(values: np.ndarray, rr) -> np.ndarray:
    """kary_words on lanes with prescribed U values, 64 at a time: each lane's shift S."""
    out = []
    lanes = np.arange(64, dtype=np.uint64)
    for c in range(0, values.size, 64):
        planes = kary_words(1, rr, LaneSource(values[c : c + 64]))[:, 0]
        out.append(sum(((planes[k] >> lanes) & np.uint64(1)).astype(np.int64) << k
                       for k in range(planes.size)))
    return np.concatenate(out)


def expected_counts(m: int) -> dict[str, int]:
    return {
        "upper": -(-m // (1 << LOW)),  # ceil
        "lower": m >> LOW,  # floor
        "bottom": min(m, 1 << M_BITS),
    }


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_flip_mask_exact_counts(epsilon):
    m = rr_probabilities(epsilon).flip_numerator
    exp = expected_counts(m)
    for name, words in (("upper", TOP_LOW0), ("lower", TOP_LOW1), ("bottom", BOTTOM)):
        got = int(flip_mask(words.size, m, ListSource(words)).sum())
        assert got == exp[name], (epsilon, name, got, exp[name])
    # the true probability lies between the two exhaustive counts
    assert exp["lower"] <= m / 2**LOW <= exp["upper"]


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_bit_sliced_sampler_exact_counts(epsilon):
    m = rr_probabilities(epsilon).flip_numerator
    exp = expected_counts(m)
    for name, values in (("upper", TOP_LOW0), ("lower", TOP_LOW1), ("bottom", BOTTOM)):
        bits = bit_sliced(values, m)
        assert np.array_equal(bits, values < np.uint64(m)), (epsilon, name)
        assert int(bits.sum()) == exp[name], (epsilon, name)


def test_bit_sliced_sampler_at_the_numerator_boundary():
    """U = m - 1 gives 1; U = m and m + 1 give 0; extremes of the range."""
    for m in [1, 78, rr_probabilities(1.0).flip_numerator, (1 << 63) - 5, (1 << 64) - 1]:
        vals = [m - 1, m, min(m + 1, 2**64 - 1), 0, 2**64 - 1]
        values = np.array((vals * 13)[:64], dtype=np.uint64)
        assert np.array_equal(bit_sliced(values, m), values < np.uint64(m)), m
    # numerator 0 never fires and draws nothing
    assert bernoulli_words(3, 0, ListSource(np.zeros(0)))[0] == 0


def test_bit_sliced_sampler_compacts_finished_words_correctly():
    """Two output words: word 0 is decided in the first round (all its lanes get
    U-bit 1 where the numerator has 0), word 1 runs through every round.

    The sampler draws rounds for both words together (``2k`` words, round by
    round, word 0 then word 1) while both are open, then one word per round for
    word 1 alone; this mock serves any such schedule, as documented in
    ``bernoulli_words``.
    """
    m = rr_probabilities(1.0).flip_numerator  # < 2^63: top bit 0
    values = TOP_LOW0[64:128]  # lane values for word 1, all below 2^63
    lane = LaneSource(values)
    ones = np.uint64(0xFFFFFFFFFFFFFFFF)

    class Script(RandomSource):
        def uint64(self, n):
            n = int(n)
            if n == 1:  # word 0 has dropped out
                return lane.uint64(1)
            assert n % 2 == 0, "rounds for both words come in pairs"
            w1 = lane.uint64(n // 2)
            return np.column_stack([np.full(n // 2, ones), w1]).ravel()

    words = bernoulli_words(2, m, Script())
    assert words[0] == 0
    got = ((words[1] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    assert np.array_equal(got, values < np.uint64(m))


@pytest.mark.parametrize("K", [2, 3, 4, 6])
@pytest.mark.parametrize("epsilon", [40.0, 4.0, 1.0, 1e-6])
def test_kary_sampler_exact_shift_per_lane(K, epsilon):
    """kary_words gives every lane S = #{j in 1..K-1 : U < j m}: for the 3 x 4096 enumerated
    U values, and at every threshold (U = j m - 1, j m, j m + 1)."""
    rr = rr_probabilities(epsilon, K)
    m = rr.flip_numerator
    edges = [t for j in range(1, K) for t in (j * m - 1, j * m, j * m + 1) if 0 <= t < 1 << 64]
    boundary = np.array(((edges + [0, 2**64 - 1]) * 64)[:128], dtype=np.uint64)
    for values in (TOP_LOW0, TOP_LOW1, BOTTOM, boundary):
        want = sum((values < np.uint64(j * m)).astype(np.int64) for j in range(1, K))
        assert np.array_equal(kary_bit_sliced(values, rr), want), (K, epsilon)


@pytest.mark.parametrize("b", [2, 3, 7, 255])
def test_uniform_integers_exact(b):
    """u mod b for every word below b floor(2^64 / b), a redraw for the others (exactly uniform:
    each residue gets floor(2^64 / b) accepted words)."""
    limit = b * ((1 << 64) // b)
    words = np.concatenate([T << np.uint64(LOW), T])  # 8,192 words
    out = uniform_integers(words.size, b, ListSource(words))
    assert np.array_equal(out, (words % np.uint64(b)).astype(np.int64))  # all below the limit
    edge = [w for w in (limit - 1, limit, (1 << 64) - 1) if w < 1 << 64]
    got = uniform_integers(2, b, ListSource(np.array(edge + [7, 5], dtype=np.uint64)))
    want = [(limit - 1) % b] + ([7 % b] if limit < 1 << 64 else [limit % b])
    if limit == 1 << 64:  # a power of two: every word is accepted
        want = [(limit - 1) % b, ((1 << 64) - 1) % b]
    assert got.tolist() == want


@pytest.mark.parametrize("K", [2, 3, 5])
@pytest.mark.parametrize("epsilon", [40.0, 4.0, 1.0, 1e-6])
def test_rr_sample_exact_counts_per_output(K, epsilon):
    """Each other value gets exactly the words in [j m, (j+1) m); the rest keep."""
    rr = rr_probabilities(epsilon, K)
    m = rr.flip_numerator
    for x in range(K):
        others = [v for v in range(K) if v != x]
        for name, words in (("upper", TOP_LOW0), ("lower", TOP_LOW1), ("bottom", BOTTOM)):
            out = rr_sample(np.full(words.size, x), rr, ListSource(words))
            counts = np.bincount(out, minlength=K)
            for j, v in enumerate(others):
                lo, hi = j * m, (j + 1) * m
                if name == "upper":
                    want = -(-hi // (1 << LOW)) - -(-lo // (1 << LOW))
                elif name == "lower":
                    want = (hi >> LOW) - (lo >> LOW)
                else:
                    want = max(0, min(hi, 4096) - min(lo, 4096))
                assert counts[v] == want, (K, epsilon, x, name, v)
            assert counts[x] == words.size - counts[others].sum()
            # ordered mapping: the outcome is a function of the word alone
            moved = words < np.uint64((K - 1) * m)
            assert np.array_equal(out != x, moved)


def test_moved_probability_identity():
    """(K-1) m / 2^64 + keep = 1 exactly: the samplers' thresholds partition [0, 2^64)."""
    for K in (2, 3, 7):
        for eps in (40.0, 1.0, 1e-6):
            rr = rr_probabilities(eps, K)
            assert (K - 1) * rr.flip_numerator < 1 << 64
            assert rr.truth_fraction + (K - 1) * rr.flip_fraction == 1
            assert math.isclose(rr.truth_probability + (K - 1) * rr.flip_probability, 1.0)
