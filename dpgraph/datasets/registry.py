"""Where the real datasets live, how they are fetched and how they are verified.

Data files are never shipped with dpgraph.  :func:`fetch` looks for a file, in
order, in

1. the directory named by the environment variable ``DPGRAPH_DATA_DIR``;
2. the user cache directory, ``$XDG_CACHE_HOME/dpgraph`` or ``~/.cache/dpgraph``;
3. the publisher's address, downloaded with pooch into the cache directory.

Every file is checked against its published SHA-256 before use.  When the
download fails (no network, say) the error names the file, the address to get
it from and the directories to put it in.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

__all__ = [
    "REGISTRY",
    "DatasetInfo",
    "DatasetNotFoundError",
    "available",
    "cache_dir",
    "fetch",
    "locate",
    "search_dirs",
]


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """Provenance of one registered dataset.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"facebook"``.
    filename : str
        File name looked for in the data and cache directories.
    url : str
        Publisher's address.
    sha256 : str
        Expected SHA-256 (hex) of the file, or of its decompressed content when
        ``checksum_of == "uncompressed"``.
    checksum_of : str
        ``"file"`` (hash of the stored bytes) or ``"uncompressed"`` (hash after
        gzip decompression).
    archive_member : str or None
        When the publisher serves a zip archive, the member to extract; it is
        stored gzipped under ``filename``.
    description : str
        One line for humans.
    """

    name: str
    filename: str
    url: str
    sha256: str
    checksum_of: str = "file"
    archive_member: str | None = None
    description: str = ""


# Published SHA-256 of every registered file (of its decompressed content when
# the entry's checksum_of is "uncompressed"), as in a pooch registry.
_SHA256 = {
    "facebook": "125e84db872eeba443d270c70315c256b0af43a502fcfe51f50621166ad035d7",
    "email-eu-core": "275afe50e65b7cb3caadaa9e465e89e9b495b0e7b5a75058b29d70708cd73540",
    "email-eu-core-departments": "8724324273873bba3b4ba79444d5113bf8122cb76a51d5396b50f80c29b63f35",
    "movielens-100k": "06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
    "bitcoin-alpha": "1b2a970f327d0ceba0c57bd5919670257cbe4cc0704e2ddac09abc4b08e2ca4d",
}
_SNAP = "https://snap.stanford.edu/data/"


def _snap(name: str, filename: str, checksum_of: str, description: str) -> DatasetInfo:
    """A file of the SNAP collection, served at ``_SNAP + filename``."""
    return DatasetInfo(name=name, filename=filename, url=_SNAP + filename, sha256=_SHA256[name],
                       checksum_of=checksum_of, description=description)


REGISTRY: dict[str, DatasetInfo] = {info.name: info for info in (
    _snap("facebook", "facebook_combined.txt.gz", "file",
          "SNAP ego-Facebook, 4039 nodes, 88234 edges (McAuley & Leskovec 2012)"),
    _snap("email-eu-core", "email-Eu-core.txt.gz", "uncompressed",
          "SNAP email-Eu-core, 1005 nodes, 25571 directed lines (Leskovec et al. 2007)"),
    _snap("email-eu-core-departments", "email-Eu-core-department-labels.txt.gz", "uncompressed",
          "department of every email-Eu-core node, 42 departments"),
    _snap("bitcoin-alpha", "soc-sign-bitcoinalpha.csv.gz", "uncompressed",
          "SNAP Bitcoin Alpha trust network, 3783 users, 24186 signed directed ratings "
          "-10..10 (Kumar et al. 2016)"),
    DatasetInfo(
        name="movielens-100k",
        filename="ml-100k-u.data.gz",
        url="https://files.grouplens.org/datasets/movielens/ml-100k.zip",
        sha256=_SHA256["movielens-100k"],
        checksum_of="uncompressed",
        archive_member="ml-100k/u.data",
        description="MovieLens 100K ratings u.data (GroupLens; no redistribution)",
    ),
)}


class DatasetNotFoundError(FileNotFoundError):
    """A dataset is neither present locally nor downloadable."""


# --------------------------------------------------------------------------- locations


def cache_dir() -> Path:
    """Return the user cache directory for dpgraph data (not created here).

    ``$XDG_CACHE_HOME/dpgraph`` when ``XDG_CACHE_HOME`` is set, else
    ``~/.cache/dpgraph``.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> cache_dir().name
    'dpgraph'
    """
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "dpgraph"


def search_dirs() -> list[Path]:
    """Return the local directories searched for data files, in order.

    Returns
    -------
    list of pathlib.Path
        ``$DPGRAPH_DATA_DIR`` (if set) then :func:`cache_dir`.

    Examples
    --------
    >>> search_dirs()[-1] == cache_dir()
    True
    """
    dirs = []
    env = os.environ.get("DPGRAPH_DATA_DIR")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(cache_dir())
    return dirs


def _info(name: str) -> DatasetInfo:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str naming a dataset, got {type(name).__name__}")
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise ValueError(f"unknown dataset name {name!r}; known datasets: {known}") from None


def locate(name: str) -> Path | None:
    """Return the local path of a registered dataset, or None (no download, no hashing).

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.

    Returns
    -------
    pathlib.Path or None

    Examples
    --------
    >>> locate("facebook") is None or locate("facebook").name == "facebook_combined.txt.gz"
    True
    """
    info = _info(name)
    for d in search_dirs():
        p = d / info.filename
        if p.is_file():
            return p
    return None


def available(name: str) -> bool:
    """Tell whether a registered dataset is present locally (never downloads).

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`, e.g. ``"facebook"`` or ``"movielens-100k"``.

    Returns
    -------
    bool

    Examples
    --------
    >>> isinstance(available("movielens-100k"), bool)
    True
    """
    return locate(name) is not None


# --------------------------------------------------------------------------- checksums


def _sha256_of(path: Path, uncompressed: bool) -> str:
    if not uncompressed:
        import pooch

        return pooch.file_hash(str(path), alg="sha256")
    h = hashlib.sha256()
    with gzip.open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verify(path: Path, info: DatasetInfo) -> None:
    try:
        digest = _sha256_of(path, info.checksum_of == "uncompressed")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ValueError(
            f"dataset file {path} could not be read ({type(exc).__name__}); "
            f"replace it with a fresh copy of {info.url}"
        ) from None
    if digest != info.sha256:
        what = "decompressed content" if info.checksum_of == "uncompressed" else "file"
        raise ValueError(
            f"dataset file {path} does not match the published checksum "
            f"(sha256 of the {what} is {digest}, expected {info.sha256}); "
            f"replace it with a fresh copy of {info.url}"
        )


def _not_found_message(info: DatasetInfo, reason: str) -> str:
    dirs = " or ".join(str(d) for d in search_dirs())
    how = f"the file {info.filename!r}"
    if info.archive_member:
        how += f" (the member {info.archive_member} of {info.url}, gzip-compressed)"
    else:
        how += f" (from {info.url})"
    return (
        f"dataset {info.name!r} is not available locally and could not be downloaded "
        f"({reason}). Put {how} into {dirs}, or set DPGRAPH_DATA_DIR to the folder "
        f"that holds it."
    )


def _copy_local(url: str, output_file: str, pooch_obj: Any = None) -> None:
    """A pooch downloader for ``file://`` addresses (a local mirror of the data)."""
    shutil.copyfile(url2pathname(urlparse(url).path), output_file)


def _download(info: DatasetInfo, url: str, timeout: float) -> Path:
    """Download with pooch into a private temporary folder, verify, then move into the cache.

    pooch checks the SHA-256 of the served file when it is the registered one
    (``checksum_of == "file"``); archives and compressed copies are checked
    again after extraction, so nothing unverified ever lands in the cache.
    """
    import pooch

    target_dir = cache_dir()
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetNotFoundError(_not_found_message(info, f"cache folder unusable: {exc}")) from None
    served_hash = None if info.archive_member or info.checksum_of != "file" else f"sha256:{info.sha256}"
    local = url.startswith("file:")
    downloader = _copy_local if local else pooch.HTTPDownloader(timeout=timeout, progressbar=False)
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # pooch's INFO lines suggest hashes; ours are registered
    try:
        with tempfile.TemporaryDirectory(dir=target_dir, prefix=".download-") as tmp:
            try:
                payload = Path(pooch.retrieve(url, known_hash=served_hash, fname="payload",
                                              path=tmp, downloader=downloader))
            except ValueError as exc:
                if "hash" not in str(exc).lower():
                    raise
                raise ValueError(
                    f"the download of {url} does not match the published checksum "
                    f"(expected sha256 {info.sha256}); nothing was cached"
                ) from None
            except Exception as exc:  # network, HTTP status or file errors: say where to put it
                reason = getattr(exc, "strerror", None) or type(exc).__name__
                raise DatasetNotFoundError(
                    _not_found_message(info, f"download failed: {reason}")) from None
            staged = Path(tmp) / info.filename
            if info.archive_member:
                try:
                    with zipfile.ZipFile(payload) as zf:
                        member = zf.read(info.archive_member)
                except (zipfile.BadZipFile, KeyError) as exc:
                    raise DatasetNotFoundError(
                        _not_found_message(info, f"downloaded archive is unusable: {exc}")
                    ) from None
                staged.write_bytes(gzip.compress(member, mtime=0))
            else:
                payload.replace(staged)
            _verify(staged, info)
            final = target_dir / info.filename
            shutil.move(str(staged), final)
    finally:
        logger.setLevel(level)
    return final


def fetch(name: str, *, download: bool = True, verify: bool = True, timeout: float = 60.0) -> Path:
    """Return the local path of a registered dataset, downloading it if needed.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY`.
    download : bool, default True
        Try the publisher's address when the file is not found locally.
    verify : bool, default True
        Check the file against its published SHA-256.
    timeout : float, default 60
        Download timeout in seconds.

    Returns
    -------
    pathlib.Path
        Path of the verified file.

    Raises
    ------
    ValueError
        Unknown ``name``, or a local file that fails its checksum.
    DatasetNotFoundError
        Not present locally and not downloadable; the message says where to put it.

    Examples
    --------
    >>> p = fetch("facebook", download=False) if available("facebook") else None
    >>> p is None or p.name == "facebook_combined.txt.gz"
    True
    """
    info = _info(name)
    path = locate(name)
    if path is None:
        if not download:
            raise DatasetNotFoundError(_not_found_message(info, "download=False"))
        path = _download(info, info.url, timeout)  # _download always verifies
        return path
    if verify:
        _verify(path, info)
    return path


