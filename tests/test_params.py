"""Notebook parameters: typed from each parameters cell, validated in one place (itmlib.course.params)."""

import pytest

from itmlib.course.notebooks import notebook_paths
from itmlib.course.params import declared_parameters, validate_parameters

LIST_KNOBS = [(p.stem, name) for p in notebook_paths() for name, (typ, _) in declared_parameters(p.stem).items()
              if typ == "list"]


def test_every_list_knob_is_found():
    assert ("05_sam_reduced_data", "fractions") in LIST_KNOBS and ("04_sam", "taus") in LIST_KNOBS
    assert len(LIST_KNOBS) >= 6


@pytest.mark.parametrize("notebook,name", LIST_KNOBS, ids=[f"{n}:{k}" for n, k in LIST_KNOBS])
def test_a_list_knob_typed_with_p_arrives_as_a_list(notebook, name):
    """`papermill ... -p fractions [0.05]` delivers the string "[0.05]": it is parsed, not rejected."""
    default = declared_parameters(notebook)[name][1]
    as_typed = "[" + ", ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in default) + "]"
    assert validate_parameters(notebook, {name: as_typed})[name] == default
    assert validate_parameters(notebook, {name: default})[name] == default


def test_the_papermill_p_form_of_fractions():
    assert validate_parameters("05_sam_reduced_data", {"fractions": "[0.05]"})["fractions"] == [0.05]
    with pytest.raises(ValueError, match=r'-y "fractions: \[0.05, 0.1\]"'):
        validate_parameters("05_sam_reduced_data", {"fractions": "0.05, oops: ["})
    with pytest.raises(ValueError, match="fraction must be a fraction in"):
        validate_parameters("05_sam_reduced_data", {"fractions": "[0.0]"})


@pytest.mark.parametrize("notebook,values,match", [
    ("08_teran", {"pooling": "maxmax"}, "pooling must be one of"),
    ("04_sam", {"taus": [3, -1]}, "tau must be > 0"),
    ("04_sam", {"samplings": ["closest"]}, "sampling must be one of"),
    ("04_sam", {"keep_triplets": ["yes"]}, "keep_triplet must be true or false"),
    ("05_sam_reduced_data", {"n_seeds": 0}, "n_seeds must be > 0"),
    ("05_sam_reduced_data", {"epochs": -1}, "epochs must be an integer >= 0"),
    ("03_vse_baseline", {"scale": "huge"}, "scale must be one of"),
    ("02_semantic_metrics", {"sg_backend": "corenlp"}, "sg_backend must be one of"),
    ("01_recall_metrics", {"seed": "x"}, "seed must be a int"),
    ("00_data_tour", {"coco": "maybe"}, "coco must be a bool"),
])
def test_bad_values_name_the_parameter(notebook, values, match):
    with pytest.raises(ValueError, match=match):
        validate_parameters(notebook, values)


def test_numbers_and_booleans_typed_as_strings_are_coerced():
    got = validate_parameters("05_sam_reduced_data", {"tau": 5, "keep_triplet": "False", "n_seeds": "3"})
    assert got["tau"] == 5.0 and isinstance(got["tau"], float) and got["keep_triplet"] is False and got["n_seeds"] == 3
    assert got["dataset"] == "synthetic"   # undeclared in the namespace: the cell's default


def test_ci_medium_chooses_grids_seeds_and_executors_and_the_recipes_live_beside_their_probes():
    """ci/medium.yaml restates no recipe (epochs, patience, warm-up, learning rate, selection): each lives in its
    paper's home beside the probe that chose it, and a parameter left at its default takes it at that scale."""
    import re

    import yaml

    from itmlib.course.params import RECIPE_TABLES, recipes, run_parameters
    from itmlib.paths import repo_root

    doc = yaml.safe_load((repo_root() / "ci" / "medium.yaml").read_text())
    for notebook, over in doc.items():
        bad = [k for k in over if k != "warmups" and re.search(r"epochs|patience|warmup|(^|_)lr$|select", k)]
        assert not bad, f"ci/medium.yaml restates {notebook}'s recipe {bad}"
    assert recipes("08_teran", "medium") == {"epochs": 20, "patience": 3, "figure_epochs": 4}
    assert recipes("08_teran", "smoke") == {} and recipes("04_sam", "medium") == {}
    assert {n: run_parameters(n, "medium")[k] for n, k in (("05_sam_reduced_data", "no_warmup_epochs"),
                                                            ("07_semantic_neighborhoods", "news_lr"))} == \
        {"05_sam_reduced_data": 240, "07_semantic_neighborhoods": 1e-4}
    assert run_parameters("08_teran", "smoke")["patience"] == 0            # smoke keeps the scale's defaults
    assert set(RECIPE_TABLES) <= {p.stem for p in (repo_root() / "notebooks").glob("*.ipynb")}
