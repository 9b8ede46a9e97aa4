"""The compiled (numba) paths give the same bits and answers as the numpy paths.

numba is optional: every kernel has a numpy fallback that must give identical
results for a seed.  The numpy side runs in a fresh process with
``DPGRAPH_DISABLE_NUMBA=1``, exactly as a user without numba would run it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from dpgraph.core.probabilities import rr_probabilities
from dpgraph.core.randomness import SecureRandom, SeededRandom
from dpgraph.core.sampling import bernoulli_words

NUMERATORS = [rr_probabilities(e).move_numerator for e in (0.1, 1.0, 5.0, 40.0)] + [1, 1 << 63, (1 << 64) - 1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _digests() -> list[str]:
    """SHA-256 of bernoulli_words for every numerator, seeded and keyed streams, odd sizes."""
    out = []
    for m in NUMERATORS:
        for source in (SeededRandom(11), SecureRandom(key=bytes(range(16)))):
            for n_words in (1, 70_001):  # one word; more than two chunks with a ragged end
                words = bernoulli_words(n_words, m, source)
                out.append(hashlib.sha256(words.tobytes()).hexdigest()[:16])
    return out


def _run_without_numba(code: str) -> str:
    env = dict(os.environ, DPGRAPH_DISABLE_NUMBA="1", PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout


def test_sampler_numba_and_numpy_give_identical_words():
    from dpgraph.core import sampling

    here = _digests()
    assert sampling._numba_kernels() is not None, "numba is a test dependency: the kernels must load"
    code = ("from tests.test_fast_paths import _digests\n"
            "from dpgraph.core import sampling\n"
            "assert sampling._numba_kernels() is None\n"
            "print(' '.join(_digests()))\n")
    assert _run_without_numba(code).split() == here


def test_sampler_probability_is_exact_per_lane():
    """Each lane is 1 with probability numerator / 2^64: mean within 4 standard errors."""
    m = rr_probabilities(1.0).move_numerator
    p = m / 2**64
    words = bernoulli_words(200_000, m, SeededRandom(5))
    bits = np.unpackbits(words.view(np.uint8))
    se = np.sqrt(p * (1 - p) / bits.size)
    assert abs(bits.mean() - p) < 4 * se
    # every lane position is unbiased too (the bit-slicing treats lanes alike)
    lanes = np.unpackbits(words.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little").mean(axis=0)
    assert np.all(np.abs(lanes - p) < 4 * np.sqrt(p * (1 - p) / words.size))


def test_bernoulli_words_out_buffer_is_overwritten():
    m = rr_probabilities(2.0).move_numerator
    buf = np.full(40_000, 0xFFFF, dtype=np.uint64)  # stale contents must not leak into the result
    got = bernoulli_words(40_000, m, SeededRandom(3), out=buf)
    assert got is buf
    assert np.array_equal(buf, bernoulli_words(40_000, m, SeededRandom(3)))
    with pytest.raises(ValueError, match="out must be"):
        bernoulli_words(10, m, SeededRandom(3), out=np.zeros(9, dtype=np.uint64))


def test_kernel_loading_falls_back_silently(monkeypatch):
    """A numba that cannot compile or cache (e.g. no writable cache dir) means numpy, no error."""
    import importlib

    from dpgraph import _numba

    def broken(name, *args, **kwargs):
        raise RuntimeError("cannot cache function: no locator available")

    monkeypatch.setattr(importlib, "import_module", broken)
    assert _numba.load_kernels("dpgraph.core._samplekernel", ("dense_rounds",)) is None
