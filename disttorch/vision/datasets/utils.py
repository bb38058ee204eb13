"""``torchvision.datasets.utils``: fetching files (``download_url``), checking them against
their MD5 (``check_integrity``) and unpacking archives (``extract_archive``), as torchvision
does. Archives are unpacked with :mod:`tarfile`'s ``data`` filter: no member lands outside
the target folder, and no link or device file is made."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import pathlib
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable
from typing import Any

__all__ = [
    "calculate_md5",
    "check_integrity",
    "check_md5",
    "download_and_extract_archive",
    "download_url",
    "extract_archive",
    "verify_str_arg",
]

USER_AGENT = "pytorch/vision"
_Path = str | pathlib.Path


def calculate_md5(fpath: _Path, chunk_size: int = 1024 * 1024) -> str:
    """The hex MD5 digest of a file."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath: _Path, md5: str, **kwargs: Any) -> bool:
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath: _Path, md5: str | None = None) -> bool:
    """Whether ``fpath`` is a file (with digest ``md5`` when given)."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def _urlretrieve(url: str, filename: _Path, chunk_size: int = 1024 * 32) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request) as response, open(filename, "wb") as out:
        while chunk := response.read(chunk_size):
            out.write(chunk)


def download_url(
    url: str, root: _Path, filename: _Path | None = None, md5: str | None = None, max_redirect_hops: int = 3
) -> None:
    """Fetch ``url`` into ``root/filename`` (default: the URL's basename) unless a file with
    digest ``md5`` is already there; an ``https`` URL that fails is tried over ``http``.
    Raises RuntimeError ``File not found or corrupted.`` when the result does not check out."""
    root = os.path.expanduser(root)
    fpath = os.fspath(os.path.join(root, filename or os.path.basename(url)))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    try:
        _urlretrieve(url, fpath)  # urllib follows up to its own limit of redirects
    except (urllib.error.URLError, OSError):
        if url[:5] != "https":
            raise
        _urlretrieve(url.replace("https:", "http:"), fpath)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


_ARCHIVES = (".tar", ".zip")
_COMPRESSED_OPENERS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_ALIASES = {".tbz": (".tar", ".bz2"), ".tbz2": (".tar", ".bz2"), ".tgz": (".tar", ".gz")}
_ZIP_COMPRESSION = {".bz2": zipfile.ZIP_BZIP2, ".xz": zipfile.ZIP_LZMA}


def _detect_file_type(file: _Path) -> tuple[str, str | None, str | None]:
    """``(suffix, archive type, compression)`` from a file name's suffixes."""
    suffixes = pathlib.Path(file).suffixes
    if not suffixes:
        raise RuntimeError(
            f"File '{file}' has no suffixes that could be used to detect the archive type and compression."
        )
    suffix = suffixes[-1]
    if suffix in _ALIASES:
        return (suffix, *_ALIASES[suffix])
    if suffix in _ARCHIVES:
        return suffix, suffix, None
    if suffix in _COMPRESSED_OPENERS:
        if len(suffixes) > 1 and suffixes[-2] in _ARCHIVES:
            return suffixes[-2] + suffix, suffixes[-2], suffix
        return suffix, None, suffix
    valid = sorted(set(_ALIASES) | set(_ARCHIVES) | set(_COMPRESSED_OPENERS))
    raise RuntimeError(f"Unknown compression or archive type: '{suffix}'.\nKnown suffixes are: '{valid}'.")


def _extract(from_path: _Path, to_path: _Path, archive: str, compression: str | None) -> None:
    if archive == ".tar":
        with tarfile.open(from_path, f"r:{compression[1:]}" if compression else "r") as tar:
            tar.extractall(to_path, filter="data")
        return
    mode = _ZIP_COMPRESSION[compression] if compression else zipfile.ZIP_STORED
    with zipfile.ZipFile(from_path, "r", compression=mode) as archive_file:
        archive_file.extractall(to_path)


def extract_archive(from_path: _Path, to_path: _Path | None = None, remove_finished: bool = False) -> _Path:
    """Unpack a ``.tar``/``.zip`` (optionally compressed) into ``to_path`` (default: its
    folder), or decompress a lone ``.gz``/``.bz2``/``.xz`` file beside it; the path written."""
    to_path = os.path.dirname(from_path) if to_path is None else to_path
    suffix, archive, compression = _detect_file_type(from_path)
    if archive:
        _extract(from_path, to_path, archive, compression)
        result = pathlib.Path(to_path)
    else:
        result = pathlib.Path(to_path, os.path.basename(from_path).replace(suffix, ""))
        with _COMPRESSED_OPENERS[compression](from_path, "rb") as source, open(result, "wb") as out:
            out.write(source.read())
    if remove_finished:
        os.remove(from_path)
    return os.fspath(result) if isinstance(from_path, str) else result


def download_and_extract_archive(
    url: str,
    download_root: _Path,
    extract_root: _Path | None = None,
    filename: _Path | None = None,
    md5: str | None = None,
    remove_finished: bool = False,
) -> None:
    """:func:`download_url`, then :func:`extract_archive` into ``extract_root``."""
    download_root = os.path.expanduser(download_root)
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root or download_root, remove_finished)


def verify_str_arg(
    value: Any,
    arg: str | None = None,
    valid_values: Iterable[Any] | None = None,
    custom_msg: str | None = None,
) -> Any:
    """``value``, checked to be a string among ``valid_values`` (ValueError otherwise)."""
    if not isinstance(value, str):
        where = "" if arg is None else f" for argument {arg}"
        raise ValueError(f"Expected type str{where}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is None:
        listed = ", ".join(f"'{v}'" for v in valid_values)
        custom_msg = f"Unknown value '{value}' for argument {arg}. Valid values are {{{listed}}}."
    raise ValueError(custom_msg)
