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

Processes
---------
``fork()`` copies a process's memory, and with it the state of every stream:
two children of one parent (a multiprocessing pool with the ``fork`` start
method, a pre-fork server) would continue the *same* keystream, so two
releases made in them would share every flip, and their difference would
reveal exactly the pairs in which the inputs differ.  A :class:`SecureRandom`
therefore notes the process it belongs to (the pid and a count of forks kept
by an ``os.register_at_fork`` hook) and checks it on every draw:

* keyed from OS entropy (``SecureRandom()``, the default of every release,
  and every substream of one): the copy in a new process rekeys itself from
  ``os.urandom`` before its first draw.  No one knew the old key, so nothing
  reproducible is lost, and the child's stream is independent of the
  parent's and of every sibling's.
* keyed by the caller (``SecureRandom(key=...)``): its stream is meant to be
  reproduced by whoever holds the key, so it cannot be silently rekeyed, and
  continuing it would repeat the parent's keystream: a draw in another
  process is refused with a RuntimeError.  :meth:`SecureRandom.substream`
  stays available there (it depends on the key, not on the position in the
  stream): give each process its own coordinates.
* a :class:`SeededRandom` is reproducible by design: a copy continues the same
  PCG64 stream in every process, as numpy's generators do.  Releases made
  with it already carry :class:`~dpgraph.SeededReleaseWarning` and are never
  for publication.

A SecureRandom cannot be pickled (a copy sent to another process would repeat
its keystream); create one in each process.
"""

from __future__ import annotations

import hashlib
import hmac
import numbers
import os
import random
import struct
import sys
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
    "user_stacklevel",
    "warn_if_seeded",
]

SeedLike = Union[
    None, int, np.integer, np.random.Generator, np.random.RandomState, random.Random, "RandomSource"
]

_CHUNK_WORDS = 1 << 20  # 8 MiB of keystream per cipher call
_ZEROS = memoryview(bytes(8 * _CHUNK_WORDS))  # plaintext: the keystream is AES-CTR of zeros


_FORKS = 0  # forks this process descends from (through Python), counted in each child


def _count_fork() -> None:
    global _FORKS
    _FORKS += 1


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_count_fork)


def _process_mark() -> tuple[int, int]:
    """Which process this is: the pid (catches any fork) and the fork count (catches a
    descendant that happens to get a dead ancestor's pid back)."""
    return os.getpid(), _FORKS


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
        key makes the stream reproducible for whoever holds the key.  After a
        ``fork()``, a source keyed from OS entropy rekeys itself in the child
        and a fixed key refuses to draw there (RuntimeError; see the module
        notes on processes).
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
        #: keyed from OS entropy (not by the caller): rekeyed in a forked child
        self._ephemeral = key is None
        if key is None:
            key = os.urandom(16)
        if not isinstance(key, (bytes, bytearray)) or len(key) not in (16, 32):
            raise ValueError("key must be 16 or 32 bytes (AES-128 or AES-256)")
        if nonce is None:
            nonce = bytes(16)
        if not isinstance(nonce, (bytes, bytearray)) or len(nonce) != 16:
            raise ValueError("nonce must be 16 bytes")
        self._set_key(bytes(key), bytes(nonce))

    def _set_key(self, key: bytes, nonce: bytes) -> None:
        self._key = key
        self._encryptor = Cipher(algorithms.AES(key), modes.CTR(nonce)).encryptor()
        self._process = _process_mark()

    def _check_process(self) -> None:
        """Rekey (entropy-keyed) or refuse (caller-keyed) a stream copied into another process."""
        if self._process == _process_mark():
            return
        if self._ephemeral:
            self._set_key(os.urandom(16), bytes(16))
            return
        raise RuntimeError(
            "this SecureRandom was keyed by the caller in another process and copied here by "
            "fork(); drawing from it would repeat that process's keystream (two releases "
            "sharing their flips). Create the source in this process, give each process its "
            "own source.substream(i), or use SecureRandom() (OS entropy, rekeyed after a fork)"
        )

    def __reduce__(self) -> Any:
        raise TypeError(
            "a SecureRandom cannot be pickled: a copy in another process would repeat its "
            "keystream; create one in each process (SecureRandom() or seed=None)"
        )

    def uint64(self, n: int) -> np.ndarray:
        n = int(n)
        if n < 0:
            raise ValueError("n must be >= 0")
        self._check_process()
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
        if self._ephemeral:  # in a forked child: derive from this process's own key
            self._check_process()
        if coords and all(c < 1 << 63 for c in coords):  # the original label (streams kept)
            label = b"dpgraph-substream" + b"".join(struct.pack("<q", c) for c in coords)
        else:  # any other list: 8-byte aligned, so never the length of an original label
            label = b"dpgraph-substream-v2".ljust(24, b"\0") + _encode_path((coords,))
        derived = hmac.new(self._key, label, hashlib.sha256).digest()
        child = SecureRandom(key=derived[:16], nonce=derived[16:32])
        child._ephemeral = self._ephemeral  # a substream of an unknown key is unknown too
        return child

    def __repr__(self) -> str:  # never show the key
        return "SecureRandom(AES-128-CTR, key hidden)"


class SeededRandom(RandomSource):
    """Reproducible PCG64 stream from an int seed or a numpy Generator.

    For tests and experiments only: a statistical generator is predictable
    from its output, so a release made with it is not safe to publish.
    Reproducible by design, also across ``fork()``: a copy in a child process
    continues exactly the parent's stream (give each worker its own
    :meth:`substream` or seed).

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


def warn_if_seeded(source: RandomSource) -> None:
    """Warn (SeededReleaseWarning) when a release draws from a predictable stream.

    The warning names the user's line that called the public release function
    (:func:`user_stacklevel`), so ``warnings.filterwarnings(module=...)`` and
    the once-per-location default see each call site.
    """
    if not source.secure:
        warnings.warn(
            "a seeded release is reproducible and predictable: use it for tests and "
            "experiments only; publish releases made with seed=None",
            SeededReleaseWarning,
            stacklevel=user_stacklevel(),
        )


def user_stacklevel() -> int:
    """The ``stacklevel`` at which a ``warnings.warn`` made by the caller of this function
    names the first frame outside dpgraph: the user's line.

    Computed by walking the stack, so it stays right whatever lies between
    (``validate_params`` wrappers, the release transaction, a typed or
    blockwise path); a frame belongs to dpgraph when its module is
    ``dpgraph`` or ``dpgraph.*``.
    """
    level, frame = 1, sys._getframe(1)  # level 1 is the function that will call warn
    while frame is not None and _in_dpgraph(frame.f_globals.get("__name__")):
        level, frame = level + 1, frame.f_back
    return level


def _in_dpgraph(module: Any) -> bool:
    return isinstance(module, str) and (module == "dpgraph" or module.startswith("dpgraph."))
