"""``torch.jit.load`` and ``torch.export.load`` run an archive's pickle only when this user's
archive key signed it: a crafted file, another key's archive or a changed record is refused
before anything is unpickled; ``DISTTORCH_TRUST_ARCHIVES=1`` or the writer's key lets one in."""

from __future__ import annotations

import os
import pickle
import stat
import zipfile

import pytest

import disttorch as dt
from disttorch import nn

MARK = "/tmp/disttorch-archive-pwned-{}".format(os.getpid())


class _RunsCode:
    def __reduce__(self):
        return (os.system, (f"touch {MARK}",))


@pytest.fixture
def key(tmp_path, monkeypatch):
    path = tmp_path / "keys" / "mine"
    monkeypatch.setenv("DISTTORCH_ARCHIVE_KEY_FILE", str(path))
    monkeypatch.delenv("DISTTORCH_TRUST_ARCHIVES", raising=False)
    return path


def _crafted(path, record: str) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"archive/{record}", pickle.dumps(_RunsCode()))
        z.writestr("archive/version", b"1\n")


@pytest.mark.parametrize(
    "record, load",
    [("disttorch_script.pkl", dt.jit.load), ("disttorch_exported_program.pkl", dt.export.load)],
)
def test_a_crafted_archive_is_refused_and_runs_nothing(key, tmp_path, record, load):
    path = tmp_path / "evil.pt"
    _crafted(path, record)
    with pytest.raises(RuntimeError, match="has no signature.*DISTTORCH_TRUST_ARCHIVES=1"):
        load(path)
    assert not os.path.exists(MARK)


def test_an_archive_of_another_key_loads_only_when_trusted_or_with_that_key(key, tmp_path, monkeypatch):
    theirs = tmp_path / "keys" / "theirs"
    monkeypatch.setenv("DISTTORCH_ARCHIVE_KEY_FILE", str(theirs))
    net = nn.Linear(3, 2)
    dt.jit.save(dt.jit.script(net), tmp_path / "net.pt")
    monkeypatch.setenv("DISTTORCH_ARCHIVE_KEY_FILE", str(key))
    with pytest.raises(RuntimeError, match="signature does not match"):
        dt.jit.load(tmp_path / "net.pt")
    monkeypatch.setenv("DISTTORCH_TRUST_ARCHIVES", "1")
    x = dt.randn(2, 3)
    assert dt.equal(dt.jit.load(tmp_path / "net.pt")(x), net(x))
    monkeypatch.delenv("DISTTORCH_TRUST_ARCHIVES")
    monkeypatch.setenv("DISTTORCH_ARCHIVE_KEY_FILE", str(theirs))  # the writer's key file, copied here
    assert dt.equal(dt.jit.load(tmp_path / "net.pt")(x), net(x))


def test_a_changed_record_breaks_the_signature(key, tmp_path):
    path = tmp_path / "net.pt"
    dt.jit.save(dt.jit.script(nn.Linear(3, 2)), path, _extra_files={"meta.txt": "epoch 3"})
    changed = tmp_path / "changed.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(changed, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, b"epoch 4" if name.endswith("meta.txt") else data)
    extra = {"meta.txt": ""}
    with pytest.raises(RuntimeError, match="signature does not match"):
        dt.jit.load(changed, _extra_files=extra)
    assert extra == {"meta.txt": ""}  # nothing read from a refused archive


def test_the_key_is_made_private_and_a_shared_one_is_refused(key, tmp_path):
    dt.jit.save(dt.jit.script(nn.Linear(1, 1)), tmp_path / "a.pt")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    key.chmod(0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        dt.jit.save(dt.jit.script(nn.Linear(1, 1)), tmp_path / "b.pt")
    with pytest.raises(PermissionError, match="another user"):
        dt.jit.load(tmp_path / "a.pt")


def test_without_a_writable_config_folder_the_key_lives_in_a_private_temporary_folder(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.delenv("DISTTORCH_ARCHIVE_KEY_FILE", raising=False)
    monkeypatch.delenv("DISTTORCH_TRUST_ARCHIVES", raising=False)
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "not-a-folder"))  # (root may write anywhere else)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    net = nn.Linear(2, 2)
    dt.jit.save(dt.jit.script(net), tmp_path / "net.pt")
    private = tmp_path / "tmp" / f"disttorch-{os.geteuid()}"
    assert (private / "archive-key").is_file() and stat.S_IMODE(private.stat().st_mode) == 0o700
    x = dt.randn(1, 2)
    assert dt.equal(dt.jit.load(tmp_path / "net.pt")(x), net(x))
    # a folder of that name another could have made (not this user's alone) is refused
    (private / "archive-key").unlink()
    private.chmod(0o777)
    with pytest.raises(OSError, match="cannot make an archive key"):
        dt.jit.save(dt.jit.script(net), tmp_path / "again.pt")
