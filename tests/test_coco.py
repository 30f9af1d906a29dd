import json
from pathlib import Path

import numpy as np
import pytest

import eccv_caption
from itmlib.data import coco_folds, load_dataset
from itmlib.data.stats import positives_summary


@pytest.fixture(scope="module")
def c5k():
    return load_dataset("coco", "test")


def test_karpathy_5k_test(c5k):
    assert (c5k.n_images, c5k.n_captions) == (5000, 25000)
    assert c5k.regions.shape == (5000, 0, 0)  # text only
    assert c5k.image_ids[0] == 391895  # first image of SCAN/VSE testall
    assert c5k.captions[0] == "A man with a red helmet on a small moped on a dirt road."
    assert len(set(c5k.image_ids.tolist())) == 5000


def test_positives_match_the_eccv_caption_files(c5k):
    data = Path(eccv_caption.__file__).parent / "data"
    cxc = json.loads((data / "cxc_image_to_caption.json").read_text())
    col = {int(c): k for k, c in enumerate(c5k.caption_ids)}
    row = {int(i): k for k, i in enumerate(c5k.image_ids)}
    mat = c5k.positives["cxc"].tocsr()
    for img in list(cxc)[:200]:
        got = set(mat[row[int(img)]].indices.tolist())
        assert got == {col[c] for c in cxc[img]}
    assert mat.nnz == sum(len(v) for v in cxc.values())


def test_positives_summary_numbers(c5k):
    s = positives_summary(c5k).set_index("positives")
    assert s.loc["cxc", "pairs"] == 35585 and s.loc["cxc", "non_gt_pairs"] == 10614
    assert s.loc["eccv", "images_with_extra"] == 1261


def test_folds(c5k):
    folds = coco_folds(c5k)
    assert [f.n_images for f in folds] == [1000] * 5
    assert np.array_equal(folds[2].image_ids, c5k.image_ids[2000:3000])
    direct = load_dataset("coco", "test1k-2")
    assert direct.captions == folds[2].captions
    assert direct.positives["cxc"].nnz == folds[2].positives["cxc"].nnz > 0
    with pytest.raises(ValueError, match="5k test split"):
        coco_folds(folds[0])


def test_train_text_is_disjoint_from_test(c5k):
    tr = load_dataset("coco", "train", scale="smoke", seed=0)
    assert tr.n_images == 2000 and tr.n_captions == 10000
    assert not set(tr.image_ids.tolist()) & set(c5k.image_ids.tolist())
    assert np.array_equal(load_dataset("coco", "train", scale="smoke", seed=0).image_ids, tr.image_ids)


def test_bad_split():
    with pytest.raises(ValueError, match="coco split must be one of"):
        load_dataset("coco", "val")
