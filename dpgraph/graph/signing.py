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
PEM text or bytes, the raw bytes of :func:`generate_signing_key` or their hex
(as ``dpgraph keygen`` prints the public key), or a :mod:`cryptography` key
object; :func:`key_source` says which form an argument is read as.  No
message ever quotes key material: text that is not a key, or a key given
where it does not belong, is named by its type and length only.  Raw signing keys are 64 bytes (the 32-byte
secret seed followed by its 32-byte public key, as libsodium writes it) and
raw verify keys 32: the lengths differ on purpose, so a verify key passed
where the signing key belongs is refused, never used as a seed.  A signing key
passed where the verify key is expected (or the reverse) is refused with a
message saying which file to use.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "KEY_SOURCES",
    "SIGNATURE_BYTES",
    "SIGNING_KEY_BYTES",
    "VERIFY_KEY_BYTES",
    "check_signature",
    "generate_signing_key",
    "key_source",
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
_HEX = re.compile(r"[0-9a-fA-F]+")
_HEX_LENGTHS = (2 * VERIFY_KEY_BYTES, 2 * SIGNING_KEY_BYTES)  # 64 and 128 hex digits
_KEY_SUFFIXES = (".key", ".pub", ".pem")

#: the forms :func:`key_source` tells apart
KEY_SOURCES = ("object", "raw bytes", "PEM bytes", "PEM text", "hex", "path")


def key_source(key: Any) -> str:
    """Which form a key argument has, decided from the argument alone (no file is read).

    Every place that takes a key reads it by this rule, so the answer says how
    ``signing_key``/``verify_key`` (and ``R.save``, ``dpgraph.load``,
    ``--signing-key``, ``--verify-key``) will read it:

    * ``"object"``: an Ed25519PrivateKey or Ed25519PublicKey;
    * ``"PEM bytes"``: bytes that start (after blanks) with ``-----BEGIN``;
    * ``"raw bytes"``: any other bytes (64 for a signing key, 32 for a verify key);
    * ``"PEM text"``: a str that starts (after blanks) with ``-----BEGIN``;
    * ``"hex"``: a str of exactly 64 or 128 hex digits (blanks around it
      ignored): a raw verify or signing key in hex, as ``dpgraph keygen``
      prints the public key;
    * ``"path"``: any other str, and every os.PathLike (a file whose name is
      64 hex digits is passed as a ``pathlib.Path``).

    Anything else gives ``"unknown"`` (refused by the readers).

    Examples
    --------
    >>> key_source("curator.pub"), key_source("ab" * 32), key_source("-----BEGIN PUBLIC KEY-----")
    ('path', 'hex', 'PEM text')
    >>> key_source(bytes(32)), key_source(12)
    ('raw bytes', 'unknown')
    """
    if isinstance(key, (Ed25519PrivateKey, Ed25519PublicKey)):
        return "object"
    if isinstance(key, (bytes, bytearray, memoryview)):
        return "PEM bytes" if bytes(key).lstrip().startswith(_PEM) else "raw bytes"
    if isinstance(key, str):
        text = key.strip()
        if text.startswith("-----BEGIN"):
            return "PEM text"
        if len(text) in _HEX_LENGTHS and _HEX.fullmatch(text):
            return "hex"
        return "path"
    if isinstance(key, os.PathLike):
        return "path"
    return "unknown"


def _described(key: Any) -> str:
    """A key argument named by its type and length only: never its content."""
    try:
        return f"a {type(key).__name__} of length {len(key)}"
    except TypeError:
        return f"a {type(key).__name__}"


def _shown(path: str) -> str:
    """The path quoted in a message, or a description when it might be key text.

    A path is quoted only when it names something on disk or ends like a key
    file's name: text that is neither (a key pasted in an unknown form, a typo
    of one) is never echoed, since it may be key material.
    """
    try:
        safe = (len(path) <= 1024 and path.isprintable()
                and (path.endswith(_KEY_SUFFIXES) or os.path.lexists(path)))
    except (OSError, ValueError):
        safe = False
    return repr(path) if safe else f"(not shown: {_described(path)})"


def _read_key_file(path: Path, name: str) -> bytes:
    """The bytes of the key file at ``path``; refusals quote it only if it is safe to."""
    problem = None
    try:
        # non-blocking, then fstat: a FIFO (or device) is refused before any read could
        # block, and no other file can be swapped in between the check and the read
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        problem = ("no such key file {} (make a pair with 'dpgraph keygen PREFIX', or pass a "
                   "key's PEM text or hex)")
    except IsADirectoryError:
        problem = "{} is a directory, not a key file"
    except (OSError, ValueError):  # a name too long, a NUL in it, no permission...
        problem = "cannot open the key file {} (pass a key file's path, its PEM text or its hex)"
    # raised here, outside the handler: the OSError's filename would travel as __context__
    if problem is not None:
        raise ValueError(f"{name}: " + problem.format(_shown(str(path))))
    mode = os.fstat(fd).st_mode  # before fdopen, which refuses a folder naming the fd
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket " \
            "or device)"
        raise ValueError(f"{name}: {_shown(str(path))} is {what}, not a key file")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(_MAX_KEY_FILE + 1)
    if len(data) > _MAX_KEY_FILE or not data.lstrip().startswith(_PEM):
        raise ValueError(f"{name}: {_shown(str(path))} is not a key file (a PEM file as written by "
                         "'dpgraph keygen')")
    return data


def _key_material(key: Any, name: str) -> tuple[Any, str]:
    """A key argument as a key object or bytes, and its :func:`key_source`.

    No message raised here or below quotes the argument unless it is a path
    that is safe to show (see :func:`_shown`): key text is never echoed.
    """
    source = key_source(key)
    if source == "path":
        return _read_key_file(Path(key), name), source
    if source == "PEM text":
        return key.strip().encode("utf-8", "replace"), source
    if source == "hex":
        return bytes.fromhex(key.strip()), source
    if source in ("raw bytes", "PEM bytes"):
        return bytes(key), source
    return key, source


def _from_pem(data: bytes, name: str, want_private: bool) -> Any:
    other = "PUBLIC" if want_private else "PRIVATE"
    if f"-----BEGIN {other} KEY-----".encode() in data:
        raise ValueError(
            f"{name}: this is the {'verify (public)' if want_private else 'signing (private)'} "
            f"key; pass the {'.key' if want_private else '.pub'} file of the pair "
            f"({'sign with the secret key' if want_private else 'the verify key is the one to publish'})")
    problem = None
    try:
        key = (serialization.load_pem_private_key(data, password=None) if want_private
               else serialization.load_pem_public_key(data))
    except TypeError:  # an encrypted private key
        problem = "an encrypted PEM key; dpgraph reads unencrypted PEM as 'dpgraph keygen' writes"
    except ValueError:  # the library's message is kept out: it is not needed to fix the key
        problem = "not a readable PEM key (a PEM file as written by 'dpgraph keygen' is needed)"
    if problem is not None:  # raised outside the handler: no chained exception
        raise ValueError(f"{name}: {problem}")
    kind = Ed25519PrivateKey if want_private else Ed25519PublicKey
    if not isinstance(key, kind):
        raise ValueError(f"{name}: an Ed25519 key is needed, got a {type(key).__name__}")
    return key


_FORMS = ("its PEM text or bytes, the path of its PEM file, its raw bytes ({n}) or their hex "
          "({h} hex digits)")


def signing_key(key: Any, name: str = "signing_key") -> Ed25519PrivateKey:
    """Validate a signing key: a key object, PEM text, PEM file, raw bytes or hex.

    Parameters
    ----------
    key : Ed25519PrivateKey, bytes, str or os.PathLike
        The key object; the path of a PEM key file (``PREFIX.key`` of
        ``dpgraph keygen``); its PEM text (a str starting with ``-----BEGIN``,
        e.g. ``open("curator.key").read()``) or PEM bytes; its raw 64 bytes
        (:func:`generate_signing_key`); or those 64 bytes in hex (128 hex
        digits).  :func:`key_source` says which of these a given argument is
        read as; a str that is neither PEM text nor 128 (or 64) hex digits is
        a path.
    name : str
        Argument name used in error messages.

    Raises
    ------
    ValueError
        A key that is not a signing key (a verify key, a PEM file of another
        kind, no such file).  No message quotes key material: text that may
        be a key is named by its type and length only.
    TypeError
        A key of another type, or raw bytes of another length.

    Examples
    --------
    >>> sk, vk = generate_signing_key()
    >>> public_hex(signing_key(sk.hex())) == vk.hex()
    True
    """
    material, source = _key_material(key, name)
    if isinstance(material, Ed25519PrivateKey):
        return material
    if source in ("path", "PEM text", "PEM bytes"):
        return _from_pem(material, name, want_private=True)
    if isinstance(material, Ed25519PublicKey) or (isinstance(material, bytes)
                                                  and len(material) == VERIFY_KEY_BYTES):
        raise ValueError(f"{name}: this is a verify (public) key (32 bytes, read as {source}); "
                         "sign with the secret key of the pair: its 64 raw bytes or the .key file")
    if isinstance(material, bytes) and len(material) == SIGNING_KEY_BYTES:
        sk = Ed25519PrivateKey.from_private_bytes(material[:32])
        if _raw_public(sk.public_key()) != material[32:]:
            raise ValueError(f"{name}: its second half is not the public key of its first; not a "
                             "signing key written by dpgraph.generate_signing_key")
        return sk
    raise TypeError(f"{name} must be an Ed25519PrivateKey, "
                    + _FORMS.format(n=SIGNING_KEY_BYTES, h=2 * SIGNING_KEY_BYTES)
                    + f"; got {_described(key)}")


def verify_key(key: Any, name: str = "verify_key") -> Ed25519PublicKey:
    """Validate a verify key: a key object, PEM text, PEM file, raw bytes or hex.

    Parameters
    ----------
    key : Ed25519PublicKey, bytes, str or os.PathLike
        The curator's published key: the object; the path of its PEM file
        (``PREFIX.pub`` of ``dpgraph keygen``); its PEM text (a str starting
        with ``-----BEGIN``, e.g. ``open("curator.pub").read()``) or PEM
        bytes; its raw 32 bytes (:func:`generate_signing_key`); or their hex
        (64 hex digits, as ``dpgraph keygen`` prints it and a signed file's
        header names its signer).  :func:`key_source` says which of these a
        given argument is read as.
    name : str
        Argument name used in error messages.

    Raises
    ------
    ValueError
        A key that is not a verify key (a signing key, a PEM file of another
        kind, no such file).  No message quotes key material.
    TypeError
        A key of another type, or raw bytes of another length.

    Examples
    --------
    >>> import os, tempfile
    >>> prefix = os.path.join(tempfile.mkdtemp(), "curator")
    >>> secret, public = write_key_files(prefix)
    >>> public_hex(verify_key(public)) == public_hex(signing_key(secret))
    True
    >>> pem_text = open(public).read()
    >>> key_source(pem_text), public_hex(verify_key(pem_text)) == public_hex(verify_key(public))
    ('PEM text', True)
    """
    material, source = _key_material(key, name)
    if isinstance(material, Ed25519PublicKey):
        return material
    if source in ("path", "PEM text", "PEM bytes"):
        return _from_pem(material, name, want_private=False)
    if isinstance(material, Ed25519PrivateKey) or (isinstance(material, bytes)
                                                   and len(material) == SIGNING_KEY_BYTES):
        raise ValueError(f"{name}: this is a signing (secret) key (read as {source}); pass the "
                         "curator's published verify key (its 32 raw bytes, their hex, or the "
                         ".pub file), and keep the signing key secret")
    if isinstance(material, bytes) and len(material) == VERIFY_KEY_BYTES:
        problem = None
        try:
            return Ed25519PublicKey.from_public_bytes(material)
        except ValueError:
            problem = f"{name}: not a valid Ed25519 public key (read as {source})"
        raise ValueError(problem)  # outside the handler: no chained exception
    raise TypeError(f"{name} must be an Ed25519PublicKey, "
                    + _FORMS.format(n=VERIFY_KEY_BYTES, h=2 * VERIFY_KEY_BYTES)
                    + f"; got {_described(key)}")


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
