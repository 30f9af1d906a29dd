import numpy as np
import pytest
import torch

from itmlib.config import (SCALES, check_choice, check_fraction, check_positive, get_scale, resolve_device,
                           set_seed)


def test_named_scales_and_sizes():
    assert set(SCALES) == {"smoke", "medium", "full"}
    full = get_scale("full")
    assert (full.n_train, full.n_dev, full.n_test) == (29000, 1014, 1000)  # Flickr30K-sized
    assert get_scale("smoke").n_images("val") == get_scale("smoke").n_dev
    assert get_scale("smoke", n_test=7).n_test == 7


@pytest.mark.parametrize("bad", ["tiny", "", None])
def test_unknown_scale_names_the_parameter(bad):
    with pytest.raises(ValueError, match="scale"):
        get_scale(bad)


def test_bad_scale_fields():
    with pytest.raises(ValueError, match="epochs"):
        get_scale("smoke", epochs=0)
    with pytest.raises(ValueError, match="unknown scale field"):
        get_scale("smoke", lr=1.0)


@pytest.mark.parametrize("v", [0, 0.0, -0.1, 1.5, float("nan"), "0.5", True])
def test_fraction_outside_unit_interval(v):
    with pytest.raises(ValueError, match="fraction"):
        check_fraction("fraction", v)


def test_fraction_ok():
    assert check_fraction("fraction", 1) == 1.0 and check_fraction("fraction", 0.1) == 0.1


@pytest.mark.parametrize("v", [0, -3, float("inf"), float("nan")])
def test_non_positive_tau_names_tau(v):
    with pytest.raises(ValueError, match="tau"):
        check_positive("tau", v)


def test_positive_integer_epochs():
    assert check_positive("epochs", 3, integer=True) == 3
    with pytest.raises(ValueError, match="epochs"):
        check_positive("epochs", 2.5, integer=True)


def test_check_choice():
    assert check_choice("sampling", "soft", ("soft", "hard")) == "soft"
    with pytest.raises(ValueError, match="sampling must be one of"):
        check_choice("sampling", "softest", ("soft", "hard"))


def test_set_seed_makes_python_numpy_torch_repeat():
    set_seed(123)
    a = (np.random.rand(3), torch.rand(3))
    set_seed(123)
    b = (np.random.rand(3), torch.rand(3))
    assert np.array_equal(a[0], b[0]) and torch.equal(a[1], b[1])
    set_seed(124)
    assert not torch.equal(torch.rand(3), b[1])
    with pytest.raises(ValueError, match="seed"):
        set_seed(-1)


def test_resolve_device():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto") == expected
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            resolve_device("cuda")
