"""A distributed checkpoint is written file by file, each whole or not at all; a save that
fails to write on a rank leaves an earlier checkpoint in its directory whole; a save that
stops half-way over an earlier checkpoint leaves files of two saves, which loading refuses
(before touching the state dict) instead of mixing them."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import disttorch as dt
import disttorch.distributed.checkpoint as dcp


def _state(value: float) -> dict:
    return {"w": dt.full((3, 2), value), "step": int(value)}


def test_a_save_writes_only_its_files(tmp_path):
    dcp.save(_state(1.0), checkpoint_id=str(tmp_path), no_dist=True)
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]  # no temporary left


def test_a_save_removes_what_a_killed_save_of_its_files_left(tmp_path):
    # a rank SIGKILLed while writing leaves its temporary file; the next save over it removes it
    stale = [".__0_0.distcp.0123456789ab.tmp", "..metadata.ba9876543210.tmp"]
    others = [".__1_0.distcp.0123456789ab.tmp", "notes.txt"]  # another rank's, and not a save's
    for name in stale + others:
        (tmp_path / name).write_bytes(b"half")
    dcp.save(_state(1.0), checkpoint_id=str(tmp_path), no_dist=True)
    assert sorted(os.listdir(tmp_path)) == sorted([".metadata", "__0_0.distcp", *others])


def test_pieces_of_another_save_are_refused_before_anything_is_loaded(tmp_path):
    dcp.save(_state(1.0), checkpoint_id=str(tmp_path), no_dist=True)
    earlier = (tmp_path / ".metadata").read_bytes()
    dcp.save(_state(2.0), checkpoint_id=str(tmp_path), no_dist=True)
    (tmp_path / ".metadata").write_bytes(earlier)  # the second save stopped before its metadata
    target = _state(0.0)
    with pytest.raises(RuntimeError, match=r"__0_0\.distcp was written by another save .* mixes two saves"):
        dcp.load(target, checkpoint_id=str(tmp_path), no_dist=True)
    assert target["step"] == 0 and np.all(target["w"].numpy() == 0)


def test_a_checkpoint_written_before_saves_had_ids_loads(tmp_path):
    dcp.save(_state(3.0), checkpoint_id=str(tmp_path), no_dist=True)
    metadata = json.loads((tmp_path / ".metadata").read_text())
    del metadata["save_ids"]
    (tmp_path / ".metadata").write_text(json.dumps(metadata))
    target = _state(0.0)
    dcp.load(target, checkpoint_id=str(tmp_path), no_dist=True)
    assert target["step"] == 3 and np.all(target["w"].numpy() == 3)


def test_a_checkpoint_with_the_earlier_piece_file_names_loads(tmp_path):
    """disttorch named its piece files ``__<rank>_0.npz`` before it took PyTorch's names."""
    dcp.save(_state(4.0), checkpoint_id=str(tmp_path), no_dist=True)
    os.rename(tmp_path / "__0_0.distcp", tmp_path / "__0_0.npz")
    target = _state(0.0)
    dcp.load(target, checkpoint_id=str(tmp_path), no_dist=True)
    assert target["step"] == 4 and np.all(target["w"].numpy() == 4)


def _save_with_a_full_disk_on_rank_1(rank: int, world: int, directory: str) -> str:
    import errno

    import disttorch.distributed as dist

    dist.init_process_group()
    dcp.save(_state(7.0), checkpoint_id=directory)  # the earlier checkpoint
    if rank == 1:  # this rank's disk is full

        def enospc(fd):
            raise OSError(errno.ENOSPC, "No space left on device")

        os.fsync = enospc
    try:
        dcp.save(_state(float(rank)), checkpoint_id=directory)
    except dcp.CheckpointException as e:
        assert list(e.failures) == [1] and e.failures[1][0].errno == errno.ENOSPC
        earlier = _state(0.0)
        dcp.load(earlier, checkpoint_id=directory)  # untouched: rank 0's new piece was not renamed in
        assert earlier["step"] == 7 and np.all(earlier["w"].numpy() == 7), earlier
        return str(e)
    return "saved"


@pytest.mark.timeout(60)
def test_a_rank_that_cannot_write_fails_the_save_on_every_rank_and_the_earlier_checkpoint_stays(tmp_path):
    from dist_helpers import run_ranks

    texts = run_ranks(_save_with_a_full_disk_on_rank_1, 2, args=(str(tmp_path),), timeout=50)
    for text in texts:
        assert text.startswith("CheckpointException ranks:dict_keys([1])") and "(RANK 1)" in text, text
        assert "No space left on device" in text and "__1_0.distcp" in text, text
    # the earlier checkpoint's files only: no new piece, no temporary
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp", "__1_0.distcp"]


def test_a_peer_dying_before_every_rank_wrote_leaves_no_piece_and_the_earlier_checkpoint(
    tmp_path, monkeypatch
):
    from disttorch.distributed.base.errors import PeerDiedError
    from disttorch.distributed.checkpoint import state_dict_saver

    dcp.save(_state(5.0), checkpoint_id=str(tmp_path), no_dist=True)

    def peer_died(self, value):
        raise PeerDiedError("rank 1 died or stopped responding", 1)

    monkeypatch.setattr(state_dict_saver._Save, "_everyone", peer_died)
    with pytest.raises(PeerDiedError):
        dcp.save(_state(6.0), checkpoint_id=str(tmp_path), no_dist=True)
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]  # its temporary removed
    monkeypatch.undo()
    target = _state(0.0)
    dcp.load(target, checkpoint_id=str(tmp_path), no_dist=True)
    assert target["step"] == 5 and np.all(target["w"].numpy() == 5)


def test_a_save_stopped_between_its_renames_and_its_metadata_leaves_the_earlier_checkpoint(
    tmp_path, monkeypatch
):
    from disttorch.distributed.checkpoint import state_dict_saver

    dcp.save(_state(5.0), checkpoint_id=str(tmp_path), no_dist=True)

    def killed(directory, metadata):  # (as a rank killed after the renames: the metadata unwritten)
        raise OSError("killed")

    monkeypatch.setattr(state_dict_saver, "write_metadata", killed)
    for _ in range(2):  # twice: the second keeps what the first kept
        with pytest.raises(dcp.CheckpointException):
            dcp.save(_state(6.0), checkpoint_id=str(tmp_path), no_dist=True)
    monkeypatch.undo()
    target = _state(0.0)
    dcp.load(target, checkpoint_id=str(tmp_path), no_dist=True)
    assert target["step"] == 5 and np.all(target["w"].numpy() == 5)
    dcp.save(_state(7.0), checkpoint_id=str(tmp_path), no_dist=True)  # a whole save drops the kept file
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp"]
    dcp.load(target, checkpoint_id=str(tmp_path), no_dist=True)
    assert target["step"] == 7


def test_a_save_leaves_alone_the_temporaries_of_a_save_still_running(tmp_path):
    # another job saving into the directory at once: its piece file waits for its ranks
    from disttorch._atomic_file import stage_write

    running = stage_write(str(tmp_path / "__0_0.distcp"), lambda f: f.write(b"another job's"))
    dcp.save(_state(1.0), checkpoint_id=str(tmp_path), no_dist=True)  # (it removes stale temporaries)
    running.commit()  # its temporary was still there to rename
    assert (tmp_path / "__0_0.distcp").read_bytes() == b"another job's"
