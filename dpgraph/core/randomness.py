"""Sources of random bits for every sampler in dpgraph.

Why not just ``numpy.random.default_rng()``?  In a randomized-response release
an adversary who knows some true non-edges sees those pairs' flip bits directly
in the output.  With a statistical generator such as PCG64 or the Mersenne
Twister, enough observed output can reveal the generator state and with it the
flip bits of every other pair, undoing the privacy of the whole release.  The
default source here is therefore a cryptographically secure keystream
(AES-128 in counter mode from the well-kept ``cryptography`` package, keyed
from ``os.urandom``): seeing any part of it says nothing about the rest.

A ``seed`` (int or :class:`numpy.random.Generator`) selects a reproducible
PCG64 stream instead.  That is for tests, experiments and debugging only; it is
never appropriate for releasing real data.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import os
import random
import struct
import warnings
from typing import Any, Union

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..exceptions import SeededReleaseWarning

__all__ = [
    "RandomSource",
    "SecureRandom",
    "SeedLike",
    "SeededRandom",
    "resolve_random",
    "warn_if_seeded",
]

SeedLike = Union[
    None, int, np.integer, np.random.Generator, np.random.RandomState, random.Random, "RandomSource"
]

_CHUNK_WORDS = 1 << 20  # 8 MiB of keystream per cipher call
_ZEROS = memoryview(bytes(8 * _CHUNK_WORDS))  # plaintext: the keystream is AES-CTR of zeros


class RandomSource:
    """A stream of independent, uniform 64-bit words.

    Subclasses implement :meth:`uint64`.  Every sampler in dpgraph consumes
    randomness only through this interface, so the choice between the secure
    default and a reproducible seed is made in exactly one place.
    """

    #: True when the stream is unpredictable (suitable for a real release).
    secure: bool = False

    def uint64(self, n: int) -> np.ndarray:
        """Return ``n`` independent uniform words as a ``uint64`` array."""
        raise NotImplementedError

    def substream(self, *coordinates: int) -> RandomSource:
        """Return an independent source derived from this one and ``coordinates``.

        The derivation is deterministic: the same parent and coordinates give
        the same stream, whatever order substreams are requested in.  Any
        non-negative integers are accepted; distinct coordinate lists and
        distinct nestings give distinct streams (``s.substream(1).substream(2)``,
        ``s.substream(1, 2)``, ``s.substream()`` and ``s`` all differ).
        Blockwise releases use it to give every tile its own stream.
        """
        raise NotImplementedError

    def generator(self) -> np.random.Generator:
        """Return a numpy Generator seeded from this source.

        For randomness that is not part of a privacy mechanism (choosing query
        sets in an experiment, say).
        """
        words = self.uint64(4)
        return np.random.default_rng([int(w) for w in words])


class SecureRandom(RandomSource):
    """AES-128-CTR keystream, keyed from ``os.urandom`` unless a key is given.

    Parameters
    ----------
    key : bytes, optional
        16 or 32 bytes.  ``None`` (the default and the only safe choice for a
        real release) draws a fresh key from the operating system.  A fixed
        key makes the stream reproducible for whoever holds the key.
    nonce : bytes, optional
        16 bytes, the initial counter block.  Defaults to zeros; distinct
        streams under one key must use distinct nonces (use :meth:`substream`).

    Examples
    --------
    >>> src = SecureRandom()
    >>> src.uint64(3).dtype
    dtype('uint64')
    >>> SecureRandom(key=bytes(16)).uint64(2).tolist() == SecureRandom(key=bytes(16)).uint64(2).tolist()
    True
    """

    secure = True

    def __init__(self, key: bytes | None = None, nonce: bytes | None = None) -> None:
        if key is None:
            key = os.urandom(16)
        if not isinstance(key, (bytes, bytearray)) or len(key) not in (16, 32):
            raise ValueError("key must be 16 or 32 bytes (AES-128 or AES-256)")
        if nonce is None:
            nonce = bytes(16)
        if not isinstance(nonce, (bytes, bytearray)) or len(nonce) != 16:
            raise ValueError("nonce must be 16 bytes")
        self._key = bytes(key)
        self._encryptor = Cipher(algorithms.AES(self._key), modes.CTR(bytes(nonce))).encryptor()

    def uint64(self, n: int) -> np.ndarray:
        n = int(n)
        if n < 0:
            raise ValueError("n must be >= 0")
        # update_into writes the keystream straight into our buffer (no bytes
        # object, no copy; ~8x faster than update()).  It wants 15 spare bytes
        # past the output, so encrypt into a slightly larger buffer and view it.
        raw = np.empty(8 * n + 15, dtype=np.uint8)
        mv = memoryview(raw)
        for start in range(0, 8 * n, 8 * _CHUNK_WORDS):
            size = min(8 * _CHUNK_WORDS, 8 * n - start)
            self._encryptor.update_into(_ZEROS[:size], mv[start : start + size + 15])
        return raw[: 8 * n].view(np.uint64)

    def substream(self, *coordinates: int) -> SecureRandom:
        coords = _check_coordinates(coordinates)
        if coords and all(c < 1 << 63 for c in coords):  # the original label (streams kept)
            label = b"dpgraph-substream" + b"".join(struct.pack("<q", c) for c in coords)
        else:  # any other list: 8-byte aligned, so never the length of an original label
            label = b"dpgraph-substream-v2".ljust(24, b"\0") + _encode_path((coords,))
        derived = hmac.new(self._key, label, hashlib.sha256).digest()
        return SecureRandom(key=derived[:16], nonce=derived[16:32])

    def __repr__(self) -> str:  # never show the key
        return "SecureRandom(AES-128-CTR, key hidden)"


class SeededRandom(RandomSource):
    """Reproducible PCG64 stream from an int seed or a numpy Generator.

    For tests and experiments only: a statistical generator is predictable
    from its output, so a release made with it is not safe to publish.

    Examples
    --------
    >>> SeededRandom(7).uint64(2).tolist() == SeededRandom(7).uint64(2).tolist()
    True
    """

    secure = False

    def __init__(self, seed: int | np.integer | np.random.Generator) -> None:
        self._base: tuple = ()  # spawn key of the root stream
        self._path: tuple = ()  # coordinates of each substream call from the root
        if isinstance(seed, np.random.Generator):
            self._gen = seed
            self._seq = None
        else:
            self._seq = np.random.SeedSequence(int(seed))
            self._gen = np.random.Generator(np.random.PCG64(self._seq))

    def uint64(self, n: int) -> np.ndarray:
        return self._gen.bit_generator.random_raw(int(n)).astype(np.uint64, copy=False)

    def substream(self, *coordinates: int) -> SeededRandom:
        coords = _check_coordinates(coordinates)
        if self._seq is not None:
            entropy, base = self._seq.entropy, self._base
        else:  # a user Generator: derive from its current state, deterministically
            entropy, base = int(self._gen.bit_generator.random_raw()), ()
        path = self._path + (coords,)
        if len(path) == 1 and coords and all(c < 1 << 32 for c in coords):
            key = base + coords  # one call of small indices: the original spawn key
        else:
            # any other path (nested, empty, large indices) is length-prefixed and
            # hashed into 8 words, so s.substream(1).substream(2), s.substream(1, 2)
            # and s.substream() (vs s) all differ
            digest = hashlib.sha256(b"dpgraph-seeded-substream-v2" + _encode_path(path)).digest()
            key = base + tuple(int(w) for w in np.frombuffer(digest, dtype="<u4"))
        seq = np.random.SeedSequence(entropy, spawn_key=key)
        child = SeededRandom.__new__(SeededRandom)
        child._seq = seq
        child._base = base
        child._path = path
        child._gen = np.random.Generator(np.random.PCG64(seq))
        return child

    def generator(self) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(self.uint64(4).tolist()))

    def __repr__(self) -> str:
        return "SeededRandom(PCG64, reproducible; not for production releases)"


def _check_coordinates(coordinates: tuple) -> tuple[int, ...]:
    """Substream coordinates: any non-negative integers (arbitrarily large)."""
    out = []
    for c in coordinates:
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral):
            raise TypeError(f"substream coordinates must be integers, got {type(c).__name__}")
        if int(c) < 0:
            raise ValueError(f"substream coordinates must be >= 0, got {int(c)}")
        out.append(int(c))
    return tuple(out)


def _encode_path(path: tuple) -> bytes:
    """Injective encoding of a tuple of coordinate tuples: every count and every
    integer is length-prefixed, integers as little-endian 64-bit words."""
    parts = [struct.pack("<Q", len(path))]
    for coords in path:
        parts.append(struct.pack("<Q", len(coords)))
        for c in coords:
            words = max(1, (c.bit_length() + 63) // 64)
            parts.append(struct.pack("<Q", words) + c.to_bytes(8 * words, "little"))
    return b"".join(parts)


def resolve_random(seed: Any = None) -> RandomSource:
    """Turn a ``seed`` argument into a :class:`RandomSource`.

    Accepts what networkx's ``py_random_state`` / ``np_random_state`` accept,
    except that ``None`` means the secure stream, never a global generator.

    Parameters
    ----------
    seed : None, int, numpy.random.Generator, numpy.random.RandomState, random.Random or RandomSource
        ``None`` (default) gives a fresh :class:`SecureRandom` keyed from OS
        entropy: the only choice for a real release.  An int or a Generator
        gives a reproducible :class:`SeededRandom` (tests and experiments).
        A ``numpy.random.RandomState`` or ``random.Random`` (or the modules
        ``numpy.random`` and ``random``, meaning their global generators)
        gives the :class:`SeededRandom` seeded with 128 bits drawn from it:
        deterministic given its state, which it advances.  A RandomSource is
        used as is.

    Returns
    -------
    RandomSource

    Examples
    --------
    >>> resolve_random(None).secure
    True
    >>> resolve_random(3).secure
    False
    >>> import random
    >>> a = resolve_random(random.Random(5)).uint64(2)
    >>> bool((a == resolve_random(random.Random(5)).uint64(2)).all())
    True
    """
    if seed is None:
        return SecureRandom()
    if isinstance(seed, RandomSource):
        return seed
    if isinstance(seed, np.random.Generator):
        return SeededRandom(seed)
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("seed must be None, an int or a numpy Generator, not a bool")
    if isinstance(seed, numbers.Integral):
        if int(seed) < 0:
            raise ValueError(f"seed must be a non-negative integer, got {int(seed)}")
        return SeededRandom(int(seed))
    # the modules stand for their global generators (networkx's spelling)
    if seed is np.random or isinstance(seed, np.random.RandomState):
        return SeededRandom(int.from_bytes(seed.bytes(16), "little"))
    if seed is random or isinstance(seed, random.Random):
        return SeededRandom(seed.getrandbits(128))
    raise TypeError(
        "seed must be None (secure OS entropy), an int, a numpy.random.Generator, "
        f"a numpy.random.RandomState or a random.Random, got {type(seed).__name__}"
    )


def warn_if_seeded(source: RandomSource, stacklevel: int = 3) -> None:
    """Warn (SeededReleaseWarning) when a release draws from a predictable stream.

    ``stacklevel`` 3 points at the caller of the public release function.
    """
    if not source.secure:
        warnings.warn(
            "a seeded release is reproducible and predictable: use it for tests and "
            "experiments only; publish releases made with seed=None",
            SeededReleaseWarning,
            stacklevel=stacklevel,
        )
