"""Ed25519 signatures of release files: an analyst can check a file is the curator's.

The SHA-256 digest at the end of a dpgraph file detects accidents, not
forgery: anyone who edits a file can recompute it.  A curator who signs
(``R.save(path, signing_key=sk)``) appends an Ed25519 signature of that
digest; an analyst who loads with the curator's public key
(``dpgraph.load(path, verify_key=vk)``) gets the release only if it is
byte-for-byte what the holder of ``sk`` saved.  Keys are
:mod:`cryptography` key objects or raw bytes: a signing key is 64 bytes (the
32-byte secret seed followed by its 32-byte public key, as libsodium writes
it), a verify key 32 bytes.  The two lengths differ on purpose: a verify key
passed where the signing key belongs is refused, never used as a seed.  Make
a pair with :func:`generate_signing_key` and publish the verify key.
"""

from __future__ import annotations

from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "SIGNATURE_BYTES",
    "SIGNING_KEY_BYTES",
    "VERIFY_KEY_BYTES",
    "check_signature",
    "generate_signing_key",
    "public_hex",
    "sign_digest",
    "signing_key",
    "verify_key",
]

SIGNATURE_BYTES = 64
SIGNING_KEY_BYTES = 64
VERIFY_KEY_BYTES = 32
_CONTEXT = b"dpgraph-file-signature-v1\x00"  # the signed message: context + SHA-256 of the file


def generate_signing_key() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair as raw bytes: ``(signing_key, verify_key)``.

    The signing key is 64 bytes (secret seed, then its public key); keep it
    secret (it is the curator's).  The verify key is 32 bytes; publish it.

    Examples
    --------
    >>> sk, vk = generate_signing_key()
    >>> len(sk), len(vk), sk[32:] == vk
    (64, 32, True)
    """
    sk = Ed25519PrivateKey.generate()
    raw = sk.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                           serialization.NoEncryption())
    public = _raw_public(sk.public_key())
    return raw + public, public


def _raw_public(pk: Ed25519PublicKey) -> bytes:
    return pk.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def signing_key(key: Any) -> Ed25519PrivateKey:
    """Validate ``signing_key``: an Ed25519PrivateKey or its 64 raw bytes (seed, public key).

    Raises
    ------
    ValueError
        For 32 bytes (a verify key's length: a public key is never a signing
        key) or 64 bytes whose second half is not the public key of the first.
    TypeError
        For anything else.
    """
    if isinstance(key, Ed25519PrivateKey):
        return key
    if isinstance(key, (bytes, bytearray)) and len(key) == VERIFY_KEY_BYTES:
        raise ValueError("signing_key: 32 bytes is a verify (public) key; sign with the 64-byte "
                         "signing key of the pair (dpgraph.generate_signing_key)")
    if isinstance(key, (bytes, bytearray)) and len(key) == SIGNING_KEY_BYTES:
        sk = Ed25519PrivateKey.from_private_bytes(bytes(key[:32]))
        if _raw_public(sk.public_key()) != bytes(key[32:]):
            raise ValueError("signing_key: its second half is not the public key of its first; "
                             "not a signing key written by dpgraph.generate_signing_key")
        return sk
    raise TypeError(
        "signing_key must be an Ed25519PrivateKey or its raw 64 bytes (see "
        f"dpgraph.generate_signing_key), got {type(key).__name__}"
        + (f" of length {len(key)}" if isinstance(key, (bytes, bytearray)) else ""))


def verify_key(key: Any) -> Ed25519PublicKey:
    """Validate ``verify_key``: an Ed25519PublicKey or its raw 32 bytes."""
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, Ed25519PrivateKey) or (isinstance(key, (bytes, bytearray))
                                              and len(key) == SIGNING_KEY_BYTES):
        raise ValueError("verify_key: this is a signing (secret) key; pass the verify key of "
                         "the pair, and keep the signing key secret")
    if isinstance(key, (bytes, bytearray)) and len(key) == VERIFY_KEY_BYTES:
        try:
            return Ed25519PublicKey.from_public_bytes(bytes(key))
        except ValueError:
            raise ValueError("verify_key: not a valid Ed25519 public key") from None
    raise TypeError(
        "verify_key must be an Ed25519PublicKey or its raw 32 bytes (the curator's published "
        f"key), got {type(key).__name__}"
        + (f" of length {len(key)}" if isinstance(key, (bytes, bytearray)) else ""))


def public_hex(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """Hex of the raw public key (what a signed file's header names as its signer)."""
    pk = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return _raw_public(pk).hex()


def sign_digest(key: Ed25519PrivateKey, digest: bytes) -> bytes:
    """Signature of a file whose SHA-256 is ``digest``."""
    return key.sign(_CONTEXT + digest)


def check_signature(key: Ed25519PublicKey, digest: bytes, signature: bytes) -> bool:
    """True if ``signature`` is ``key``'s signature of a file whose SHA-256 is ``digest``."""
    try:
        key.verify(signature, _CONTEXT + digest)
    except InvalidSignature:
        return False
    return True
