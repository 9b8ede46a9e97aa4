"""Ed25519 signatures of release files: an analyst can check a file is the curator's.

The SHA-256 digest at the end of a dpgraph file detects accidents, not
forgery: anyone who edits a file can recompute it.  A curator who signs
(``R.save(path, signing_key=sk)``) appends an Ed25519 signature of that
digest; an analyst who loads with the curator's public key
(``dpgraph.load(path, verify_key=vk)``) gets the release only if it is
byte-for-byte what the holder of ``sk`` saved.

One workflow from the command line to Python: ``dpgraph keygen PREFIX`` (or
:func:`write_key_files`) writes ``PREFIX.key`` (the signing key, mode 0600)
and ``PREFIX.pub`` (the verify key, to publish) as PEM files, the standard
encodings OpenSSL reads too; every place that takes a key
(``R.save(signing_key=...)``, ``dpgraph.load(verify_key=...)``,
``--signing-key``, ``--verify-key``) accepts the path of such a file, its
PEM bytes, the raw bytes of :func:`generate_signing_key`, or a
:mod:`cryptography` key object.  Raw signing keys are 64 bytes (the 32-byte
secret seed followed by its 32-byte public key, as libsodium writes it) and
raw verify keys 32: the lengths differ on purpose, so a verify key passed
where the signing key belongs is refused, never used as a seed.  A signing key
passed where the verify key is expected (or the reverse) is refused with a
message saying which file to use.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
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
    "write_key_files",
]

SIGNATURE_BYTES = 64
SIGNING_KEY_BYTES = 64
VERIFY_KEY_BYTES = 32
_CONTEXT = b"dpgraph-file-signature-v1\x00"  # the signed message: context + SHA-256 of the file


def generate_signing_key() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair as raw bytes: ``(signing_key, verify_key)``.

    The signing key is 64 bytes (secret seed, then its public key); keep it
    secret (it is the curator's).  The verify key is 32 bytes; publish it.
    ``dpgraph keygen`` (:func:`write_key_files`) writes a pair as PEM files.

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


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_PEM = b"-----BEGIN"
_MAX_KEY_FILE = 4096  # a PEM Ed25519 key is about 120 bytes


def _key_material(key: Any, name: str) -> Any:
    """A key argument as given, or the bytes of the key file it names."""
    if isinstance(key, (str, os.PathLike)):
        path = Path(key)
        try:
            # non-blocking, then fstat: a FIFO (or device) is refused before any read could
            # block, and no other file can be swapped in between the check and the read
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            raise ValueError(f"{name}: no such key file {str(path)!r} (make a pair with "
                             "'dpgraph keygen PREFIX')") from None
        except IsADirectoryError:
            raise ValueError(f"{name}: {str(path)!r} is a directory, not a key file") from None
        except OSError as exc:  # the path is not quoted: it may be a key's text
            raise ValueError(f"{name}: the key file cannot be opened ({exc.strerror})") from None
        mode = os.fstat(fd).st_mode  # before fdopen, which refuses a folder naming the fd
        if not stat.S_ISREG(mode):
            os.close(fd)
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket " \
                "or device)"
            raise ValueError(f"{name}: {str(path)!r} is {what}, not a key file")
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(_MAX_KEY_FILE + 1)
        if len(data) > _MAX_KEY_FILE or not data.lstrip().startswith(_PEM):
            raise ValueError(f"{name}: {str(path)!r} is not a key file (a PEM file as written by "
                             "'dpgraph keygen')")
        return data
    if isinstance(key, bytearray):
        return bytes(key)
    return key


def _from_pem(data: bytes, name: str, want_private: bool) -> Any:
    other = "PUBLIC" if want_private else "PRIVATE"
    if f"-----BEGIN {other} KEY-----".encode() in data:
        raise ValueError(
            f"{name}: this is the {'verify (public)' if want_private else 'signing (private)'} "
            f"key; pass the {'.key' if want_private else '.pub'} file of the pair "
            f"({'sign with the secret key' if want_private else 'the verify key is the one to publish'})")
    try:
        key = (serialization.load_pem_private_key(data, password=None) if want_private
               else serialization.load_pem_public_key(data))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name}: not a readable PEM key ({exc})") from None
    kind = Ed25519PrivateKey if want_private else Ed25519PublicKey
    if not isinstance(key, kind):
        raise ValueError(f"{name}: an Ed25519 key is needed, got a {type(key).__name__}")
    return key


def signing_key(key: Any, name: str = "signing_key") -> Ed25519PrivateKey:
    """Validate a signing key: an Ed25519PrivateKey, its raw 64 bytes, or a PEM key file.

    Parameters
    ----------
    key : Ed25519PrivateKey, bytes, str or os.PathLike
        The key object, its raw 64 bytes (:func:`generate_signing_key`), the
        bytes of a PEM file, or the path of one (``PREFIX.key`` of
        ``dpgraph keygen``).
    name : str
        Argument name used in error messages.
    """
    key = _key_material(key, name)
    if isinstance(key, Ed25519PrivateKey):
        return key
    if isinstance(key, bytes) and key.lstrip().startswith(_PEM):
        return _from_pem(key, name, want_private=True)
    if isinstance(key, Ed25519PublicKey) or (isinstance(key, bytes) and len(key) == VERIFY_KEY_BYTES):
        raise ValueError(f"{name}: this is a verify (public) key (32 bytes); sign with the secret "
                         "key of the pair: its 64 raw bytes or the .key file")
    if isinstance(key, bytes) and len(key) == SIGNING_KEY_BYTES:
        sk = Ed25519PrivateKey.from_private_bytes(key[:32])
        if _raw_public(sk.public_key()) != key[32:]:
            raise ValueError(f"{name}: its second half is not the public key of its first; not a "
                             "signing key written by dpgraph.generate_signing_key")
        return sk
    raise TypeError(
        f"{name} must be an Ed25519PrivateKey, its raw 64 bytes (see "
        "dpgraph.generate_signing_key) or the path of a key file from 'dpgraph keygen', got "
        f"{type(key).__name__}" + (f" of length {len(key)}" if isinstance(key, bytes) else ""))


def verify_key(key: Any, name: str = "verify_key") -> Ed25519PublicKey:
    """Validate a verify key: an Ed25519PublicKey, its raw 32 bytes, or a PEM key file.

    Parameters
    ----------
    key : Ed25519PublicKey, bytes, str or os.PathLike
        The curator's published key: the object, its raw 32 bytes
        (:func:`generate_signing_key`), the bytes of a PEM file, or the path
        of one (``PREFIX.pub`` of ``dpgraph keygen``).
    name : str
        Argument name used in error messages.

    Examples
    --------
    >>> import os, tempfile
    >>> prefix = os.path.join(tempfile.mkdtemp(), "curator")
    >>> secret, public = write_key_files(prefix)
    >>> public_hex(verify_key(public)) == public_hex(signing_key(secret))
    True
    """
    key = _key_material(key, name)
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, bytes) and key.lstrip().startswith(_PEM):
        return _from_pem(key, name, want_private=False)
    if isinstance(key, Ed25519PrivateKey) or (isinstance(key, bytes)
                                              and len(key) == SIGNING_KEY_BYTES):
        raise ValueError(f"{name}: this is a signing (secret) key; pass the curator's published "
                         "verify key (its 32 raw bytes, or the .pub file), and keep the signing "
                         "key secret")
    if isinstance(key, bytes) and len(key) == VERIFY_KEY_BYTES:
        try:
            return Ed25519PublicKey.from_public_bytes(key)
        except ValueError:
            raise ValueError(f"{name}: not a valid Ed25519 public key") from None
    raise TypeError(
        f"{name} must be an Ed25519PublicKey, its raw 32 bytes or the path of the curator's "
        f"key file (.pub from 'dpgraph keygen'), got {type(key).__name__}"
        + (f" of length {len(key)}" if isinstance(key, bytes) else ""))


def write_key_files(prefix: str | os.PathLike) -> tuple[Path, Path]:
    """Make a key pair and write ``PREFIX.key`` (secret, mode 0600) and ``PREFIX.pub``.

    Both are PEM (PKCS#8 and SubjectPublicKeyInfo), read back by
    :func:`signing_key` and :func:`verify_key` from their paths.  Existing
    files are never overwritten.

    Returns
    -------
    (Path, Path)
        The signing key file and the verify key file.

    Raises
    ------
    FileExistsError
        If either file exists.
    """
    secret, public = Path(f"{os.fspath(prefix)}.key"), Path(f"{os.fspath(prefix)}.pub")
    for p in (secret, public):
        if p.exists():
            raise FileExistsError(f"{p} exists; not overwriting a key")
    sk = Ed25519PrivateKey.generate()
    pem_secret = sk.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
    pem_public = sk.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo)
    # O_EXCL with O_CREAT never follows a link, a dangling one included
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem_secret)
    fd = os.open(public, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem_public)
    return secret, public


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
