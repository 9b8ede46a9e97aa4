"""The report wire format: one user's randomized row as a few hundred bytes.

A report is what a device sends to the collector.  The layout is fixed so
that a client in any language can produce it (all integers little-endian;
docs/local-collection.md has a worked test vector)::

    offset  size      field
    0       4         magic b"DPLR"
    4       1         format version (1)
    5       1         protocol: 1 = "one" (each pair by one endpoint), 2 = "both"
    6       1         flags: bit 0 set when a noisy degree follows the bits; others 0
    7       1         reserved, 0
    8       4         n, the size of the public vertex set (uint32)
    12      4         user, the reporter's position in the public order (uint32)
    16      8         flip numerator of the bits: P(flip) = numerator / 2^64 (uint64)
    24      8         epsilon, the user's whole budget (IEEE float64)
    32      8         degree_share, the part of epsilon spent on the degree (float64)
    40      8         discrete Laplace numerator of the degree: alpha = numerator / 2^64
                      (uint64; 0 without a degree)
    48      4         B, the number of bits that follow (uint32)
    52      ceil(B/8) the bits, least significant bit first: bit k is the report on the
                      pair {user, partner k}, partners in increasing position
    ...     8         the noisy degree (int64), only when flag bit 0 is set
    ...     4         CRC-32 (IEEE 802.3, as zlib.crc32) of every byte before it (uint32)

The CRC catches accidents in transit (a truncated or altered body); it is no
authentication: the collector authenticates the sender by a per-user token
(:mod:`dpgraph.local.tokens`).  Nothing else is sent: the report carries no
label and no true bit.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["MAGIC", "PROTOCOLS", "VERSION", "WireReport", "decode", "encode", "report_size"]

MAGIC = b"DPLR"
VERSION = 1
#: protocol name -> its code on the wire
PROTOCOLS = {"one": 1, "both": 2}
_NAMES = {v: k for k, v in PROTOCOLS.items()}
_HEAD = struct.Struct("<4sBBBBIIQddQI")  # 52 bytes
_DEGREE = struct.Struct("<q")
_CRC = struct.Struct("<I")
#: the largest vertex set a report can name (user and n are uint32)
MAX_NODES = (1 << 32) - 1


@dataclass(frozen=True)
class WireReport:
    """A decoded report: the fields of the wire format, checked for shape only.

    Attributes
    ----------
    protocol : str
        "one" or "both".
    n, user : int
        The vertex set's size and the reporter's position.
    flip_numerator : int
        P(flip) = flip_numerator / 2^64 of every bit.
    epsilon, degree_share : float
        The user's budget and the part of it spent on the degree.
    laplace_numerator : int
        alpha = laplace_numerator / 2^64 of the degree noise (0: no degree).
    bits : numpy.ndarray of bool
        The randomized bits, one per partner in increasing position.
    degree : int or None
        The noisy degree, when reported.
    """

    protocol: str
    n: int
    user: int
    flip_numerator: int
    epsilon: float
    degree_share: float
    laplace_numerator: int
    bits: np.ndarray
    degree: int | None

    def __repr__(self) -> str:  # never the bits
        return (f"WireReport(protocol={self.protocol!r}, n={self.n}, user={self.user}, "
                f"bits={self.bits.size}, degree={'yes' if self.degree is not None else 'no'})")


def report_size(bits: int, degree: bool) -> int:
    """Bytes of a report with ``bits`` bits, with or without a degree.

    Examples
    --------
    >>> report_size(2019, False)
    309
    """
    return _HEAD.size + (int(bits) + 7) // 8 + (_DEGREE.size if degree else 0) + _CRC.size


def encode(report: WireReport) -> bytes:
    """The bytes of a report (see the module docstring for the layout).

    Examples
    --------
    >>> r = WireReport("one", 3, 0, 1 << 62, 1.0, 0.0, 0, np.array([True, False]), None)
    >>> decode(encode(r)).bits.tolist()
    [True, False]
    """
    bits = np.asarray(report.bits, dtype=bool)
    flags = 1 if report.degree is not None else 0
    head = _HEAD.pack(MAGIC, VERSION, PROTOCOLS[report.protocol], flags, 0, report.n, report.user,
                      report.flip_numerator, report.epsilon, report.degree_share,
                      report.laplace_numerator, bits.size)
    body = head + np.packbits(bits, bitorder="little").tobytes()
    if report.degree is not None:
        body += _DEGREE.pack(int(report.degree))
    return body + _CRC.pack(zlib.crc32(body))


def decode(data: bytes) -> WireReport:
    """Parse and check the framing of a report (not whether it fits a collection).

    Raises
    ------
    ValueError
        A body that is not a report of this version: too short, another
        magic, another version, an unknown protocol or flag, a length that
        is not the one its header declares, a CRC mismatch, or set padding
        bits.  Each message says which.

    Examples
    --------
    >>> decode(b"hello")
    Traceback (most recent call last):
    ...
    ValueError: report: 5 bytes is shorter than the 56-byte minimum; it is truncated
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"report must be bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEAD.size + _CRC.size:
        raise ValueError(f"report: {len(data)} bytes is shorter than the "
                         f"{_HEAD.size + _CRC.size}-byte minimum; it is truncated")
    (magic, version, protocol, flags, reserved, n, user, flip, epsilon, share, lap,
     nbits) = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise ValueError("report: bad magic bytes; this is not a dpgraph local report")
    if version != VERSION:
        raise ValueError(f"report: wire format version {version}; this collector reads version "
                         f"{VERSION}. Update the client")
    if protocol not in _NAMES:
        raise ValueError(f"report: unknown protocol code {protocol}")
    if flags & ~1 or reserved:
        raise ValueError("report: unknown flags or a non-zero reserved byte")
    degree = bool(flags & 1)
    want = report_size(nbits, degree)
    if len(data) != want:
        raise ValueError(f"report: {len(data)} bytes but its header declares {want}; it is "
                         "truncated or padded")
    (crc,) = _CRC.unpack_from(data, want - _CRC.size)
    if zlib.crc32(data[: want - _CRC.size]) != crc:
        raise ValueError("report: CRC-32 mismatch; the report was altered in transit")
    nbytes = (nbits + 7) // 8
    raw = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=_HEAD.size)
    bits = np.unpackbits(raw, bitorder="little", count=nbits).astype(bool) if nbits else \
        np.zeros(0, dtype=bool)
    if nbits & 7 and int(raw[-1]) >> (nbits & 7):
        raise ValueError("report: padding bits after the last pair are set")
    value = _DEGREE.unpack_from(data, _HEAD.size + nbytes)[0] if degree else None
    return WireReport(_NAMES[protocol], n, user, flip, epsilon, share, lap, bits, value)
