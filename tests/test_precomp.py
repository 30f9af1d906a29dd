import shutil

import numpy as np
import pytest

from itmlib.data import load_dataset
from itmlib.paths import resolve_path

FIX = "tests/fixtures/precomp"  # relative: resolved against the repo root


def test_loads_scan_layout_with_boxes_and_ids(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the cwd must not matter
    ds = load_dataset("precomp", "test", data_dir=FIX)
    assert ds.regions.shape == (3, 4, 6) and ds.regions.dtype == np.float32
    assert ds.n_captions == 15 and ds.captions[7] == "a caption 2 of image 1"
    assert ds.img_of_caption.tolist() == [0] * 5 + [1] * 5 + [2] * 5
    assert ds.boxes.shape == (3, 4, 4) and ds.image_ids.tolist() == [101, 102, 103]


def test_per_caption_rows_and_crlf(tmp_path):
    ds = load_dataset("precomp", "dev", data_dir=FIX)
    ref = np.load(resolve_path(FIX) / "dev_ref_global.npy")
    assert ds.regions.shape == (2, 1, 5)
    assert np.array_equal(ds.regions[:, 0], ref)
    assert ds.captions[0] == "dev caption 0 of image 0" and not any("\r" in c for c in ds.captions)


@pytest.fixture
def copy(tmp_path):
    d = tmp_path / "precomp"
    shutil.copytree(resolve_path(FIX), d)
    return d


def test_missing_file_names_path(copy):
    (copy / "test_caps.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"test_caps\.txt"):
        load_dataset("precomp", "test", data_dir=copy)
    with pytest.raises(FileNotFoundError, match="data_dir .* does not exist"):
        load_dataset("precomp", "test", data_dir=copy / "nope")
    with pytest.raises(ValueError, match="needs data_dir"):
        load_dataset("precomp", "test")


def test_caption_count_gives_both_counts(copy):
    lines = (copy / "test_caps.txt").read_text().splitlines()
    (copy / "test_caps.txt").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ValueError, match=r"14 captions for 3 images"):
        load_dataset("precomp", "test", data_dir=copy)


def test_empty_caption_line(copy):
    lines = (copy / "test_caps.txt").read_text().splitlines()
    lines[6] = "   "
    (copy / "test_caps.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 7 is empty"):
        load_dataset("precomp", "test", data_dir=copy)


def test_nan_features(copy):
    ims = np.load(copy / "test_ims.npy")
    ims[2, 1, 3] = np.nan
    np.save(copy / "test_ims.npy", ims)
    with pytest.raises(ValueError, match="NaN/inf features, first at image index 2"):
        load_dataset("precomp", "test", data_dir=copy)


def test_boxes_shape_mismatch(copy):
    np.save(copy / "test_boxes.npy", np.zeros((3, 5, 4), np.float32))
    with pytest.raises(ValueError, match=r"test_boxes\.npy has shape \(3, 5, 4\)"):
        load_dataset("precomp", "test", data_dir=copy)


def test_pixel_boxes_need_sizes(copy):
    np.save(copy / "test_boxes.npy", np.full((3, 4, 4), 200, np.float32))
    with pytest.raises(FileNotFoundError, match="image sizes"):
        load_dataset("precomp", "test", data_dir=copy)
    np.save(copy / "test_sizes.npy", np.array([[400, 200]] * 3, np.float32))
    ds = load_dataset("precomp", "test", data_dir=copy)
    assert np.allclose(ds.boxes[0, 0], [0.5, 1.0, 0.5, 1.0])


def test_wrong_rank(copy):
    np.save(copy / "test_ims.npy", np.zeros((3,), np.float32))
    with pytest.raises(ValueError, match="expected shape"):
        load_dataset("precomp", "test", data_dir=copy)
