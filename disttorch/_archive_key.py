"""The key that signs the archives ``torch.jit.save`` and ``torch.export.save`` write, so that
``load`` runs only the pickles this user wrote (see ``_module_archive.py``).

An archive's model is a pickle made by cloudpickle: code that runs when it is loaded. PyTorch's
archives hold TorchScript, which cannot reach the operating system; ours could. So every archive
carries an HMAC-SHA256 of its records under a key only its writer can read, and ``load`` checks
it before it unpickles anything:

- the key: 32 random bytes, hex, in ``$DISTTORCH_ARCHIVE_KEY_FILE`` or else
  ``$XDG_CONFIG_HOME/disttorch/archive-key`` (``~/.config/...``; where that cannot be written,
  ``<temporary folder>/disttorch-<uid>/archive-key``), made on first use with mode 0600 in a
  folder of mode 0700 (a folder that is not this user's alone is refused); a key file others
  may read or write is refused (anyone who can read it can sign archives that run code as you);
- an archive from elsewhere (another user, another machine, a crafted file) is refused, naming
  its two ways in: copy the writer's key file (machines sharing a home folder share it), or set
  ``DISTTORCH_TRUST_ARCHIVES=1`` for a file you trust as you would trust a program.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import stat
import tempfile

__all__ = ["TRUST_ENV", "key_path", "sign", "trusted_without_signature", "verify"]

KEY_ENV = "DISTTORCH_ARCHIVE_KEY_FILE"
TRUST_ENV = "DISTTORCH_TRUST_ARCHIVES"


def _places() -> list[str]:
    """Where this user's key may be, in order: ``$DISTTORCH_ARCHIVE_KEY_FILE`` alone when set;
    else the config folder's, then (where that cannot be written: no home, a read-only one)
    a private folder of this user's in the temporary folder."""
    given = os.environ.get(KEY_ENV)
    if given:
        return [os.path.abspath(os.path.expanduser(given))]
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    private = os.path.join(tempfile.gettempdir(), f"disttorch-{os.geteuid()}")
    return [os.path.join(config, "disttorch", "archive-key"), os.path.join(private, "archive-key")]


def key_path() -> str:
    """Where this user's archive key is (or will be made)."""
    places = _places()
    return next((p for p in places if os.path.exists(p)), places[0])


def _read(path: str) -> bytes:
    """The key in ``path``, after checking that only its owner, this user, can use it."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise PermissionError(
                f"the archive key {path} may be read or written by another user (mode "
                f"{stat.S_IMODE(info.st_mode):o}, owner uid {info.st_uid}): make it yours with mode 600 "
                "(chmod 600), or remove it to have a new one made"
            )
        key = bytes.fromhex(f.read().decode("ascii", "replace").strip())
    if len(key) < 16:
        raise ValueError(
            f"the archive key {path} is not 32 hex-encoded bytes: remove it to have a new one made"
        )
    return key


def _key() -> bytes:
    """This user's key: the first place's that has one or can be given one."""
    failure: OSError | None = None
    for path in _places():
        try:
            return _read(path)
        except (FileNotFoundError, NotADirectoryError):  # (no key there yet, or no such folder)
            pass
        try:
            return _make(path, shared_parent=path.startswith(tempfile.gettempdir() + os.sep))
        except OSError as e:
            failure = failure or e
    raise OSError(
        failure.errno,
        f"cannot make an archive key in {' or '.join(_places())} ({failure.strerror}): set {KEY_ENV} to a "
        "file in a folder you can write",
    )


def _make(path: str, shared_parent: bool) -> bytes:
    """A new key in ``path`` (atomically: a racing process reads the one that won), its folder
    made with mode 700; one in a folder others may write (``shared_parent``: the temporary
    folder), where another user could have made it first, is refused unless it is this
    user's alone."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    alone = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077
    if shared_parent and not alone:
        raise PermissionError(errno.EACCES, f"the folder {folder} is not this user's alone (mode 700)")
    draft = f"{path}.{secrets.token_hex(6)}.tmp"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
        try:
            os.link(draft, path)  # (fails if another process made the key first: use that one)
        except FileExistsError:
            pass
    finally:
        os.unlink(draft)
    return _read(path)


def _digest(key: bytes, records: list[tuple[str, bytes]]) -> bytes:
    mac = hmac.new(key, b"disttorch archive v1", hashlib.sha256)
    for name, data in records:
        mac.update(len(name).to_bytes(8, "little") + name.encode() + len(data).to_bytes(8, "little"))
        mac.update(data)
    return mac.hexdigest().encode()


def sign(records: list[tuple[str, bytes]]) -> bytes:
    """The signature of an archive's ``(name, bytes)`` records under this user's key."""
    return _digest(_key(), records)


def trusted_without_signature() -> bool:
    """Whether this process loads archives whatever signs them (``DISTTORCH_TRUST_ARCHIVES=1``)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def verify(records: list[tuple[str, bytes]], signature: bytes | None) -> bool:
    """Whether ``signature`` is this user's key's signature of ``records``."""
    if signature is None:
        return False
    return hmac.compare_digest(signature.strip(), _digest(_key(), records))
