"""PackedStates: rows over a packed token store, taken like the padded tensor they replace."""

import numpy as np
import pytest
import torch

from itmlib.models.packed_states import PackedStates, stored_flat


def _store():
    # three captions of 2, 3 and 1 tokens (h = 2), then a row sharing caption 0's tokens
    flat = torch.tensor([[1., 2.], [3., 4.], [5., 6.], [7., 8.], [9., 10.], [11., 12.]])
    return PackedStates(flat, torch.tensor([0, 2, 5, 0]), torch.tensor([2, 3, 1, 2]), width=4)


def test_padded_rows_hold_each_captions_tokens_then_zeros_by_hand():
    s = _store()
    assert s.shape == (4, 4, 2) and len(s) == 4
    want = torch.tensor([[[1., 2.], [3., 4.], [0., 0.], [0., 0.]],
                         [[5., 6.], [7., 8.], [9., 10.], [0., 0.]],
                         [[11., 12.], [0., 0.], [0., 0.], [0., 0.]],
                         [[1., 2.], [3., 4.], [0., 0.], [0., 0.]]])
    assert torch.equal(s.padded(), want)
    assert torch.equal(s[:, :3], want[:, :3]) and torch.equal(s[:, :], want)


def test_rows_are_taken_like_a_tensors_without_copying_the_store():
    s = _store()
    for idx in (torch.tensor([2, 0]), np.array([2, 0]), slice(1, 3), torch.tensor([False, True, True, False])):
        part = s[idx]
        assert isinstance(part, PackedStates) and part.flat is s.flat
        assert torch.equal(part[:, :3], s.padded()[idx][:, :3])
    assert s.to("cpu") is s


def test_bad_stores_and_indexing_fail_with_a_clear_error():
    flat = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="outside the store"):
        PackedStates(flat, torch.tensor([2]), torch.tensor([2]), width=4)
    with pytest.raises(ValueError, match="exceed"):
        PackedStates(flat, torch.tensor([0]), torch.tensor([3]), width=2)
    with pytest.raises(ValueError, match="flat"):
        PackedStates(torch.zeros(3), torch.tensor([0]), torch.tensor([1]), width=2)
    for bad in ((0, slice(None, 2)), (torch.tensor([0]), slice(None, 2)), (slice(None), 1)):
        with pytest.raises(IndexError, match="only states"):
            _store()[bad]


def test_a_large_store_is_built_once_and_read_back_from_disk_equal_and_a_small_one_stays_in_memory(tmp_path, monkeypatch):
    """``stored_flat``: a caption set at or above the threshold is built once and its store comes back from disk
    bit for bit (a restarted worker skips the encoder); below it nothing is written; another CPU or torch writes
    a file of its own (float32 kernels round differently)."""
    from itmlib.models import packed_states

    calls = []
    flat = torch.randn(7, 3)

    def build():
        calls.append(1)
        return flat.clone()
    a = stored_flat("k" * 64, 5, build, folder=tmp_path, min_captions=5)
    b = stored_flat("k" * 64, 5, build, folder=tmp_path, min_captions=5)
    assert len(calls) == 1 and torch.equal(a, flat) and torch.equal(b, flat) and len(list(tmp_path.iterdir())) == 1
    b[0, 0] = 99.0                       # copy-on-write: a reader's write never reaches the file
    assert torch.equal(stored_flat("k" * 64, 5, build, folder=tmp_path, min_captions=5), flat)
    assert torch.equal(stored_flat("s" * 64, 4, build, folder=tmp_path, min_captions=5), flat)
    assert len(calls) == 2 and len(list(tmp_path.iterdir())) == 1
    monkeypatch.setattr(packed_states, "_machine", lambda: "another-cpu")
    stored_flat("k" * 64, 5, build, folder=tmp_path, min_captions=5)
    assert len(calls) == 3 and len(list(tmp_path.iterdir())) == 2
