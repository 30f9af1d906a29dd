"""One category per object: CHAIR's synonym list, read as CHAIR reads it."""

from itmlib.data.categories import NOT_OBJECTS, canonical, categories, category_table, synonyms


def test_the_list_is_chairs_eighty_coco_categories():
    cats = categories()
    assert len(cats) == 80 and cats[0] == "person" and "toothbrush" in cats and "dining table" in cats
    assert synonyms()["cellphone"] == "cell phone" and synonyms()["puppy"] == "dog"


def test_common_synonyms_share_one_category():
    # COCO 483108's regions: guy, man, person -> one category; bicycle and bike -> one
    assert canonical(["a", "guy", "ride", "his", "bike"]) == ["person", "bicycle"]
    assert set(canonical(["man", "person", "guy"])) == {"person"}
    assert canonical(["bicycle"]) == canonical(["bike"]) == ["bicycle"]


def test_two_word_names_match_before_their_words_and_baby_animals_are_the_animal():
    assert canonical(["a", "motor", "bike", "and", "a", "cell", "phone"]) == ["motorcycle", "cell phone"]
    assert canonical(["baby", "elephant"]) == ["elephant"]
    assert canonical(["teddy", "bear"]) == ["teddy bear"] and canonical(["brown", "bear"]) == ["bear"]


def test_no_place_or_picture_word_is_a_category():
    assert not NOT_OBJECTS & set(categories())
    words = ["background", "area", "front", "side", "top", "picture", "view"]
    assert canonical(words) == [] and canonical(words, keep_other=True) == []
    assert canonical(["street", "area"], keep_other=True) == ["street"]
    assert canonical(["street"], others={"street"}) == ["street"] and canonical(["street"]) == []


def test_the_category_table_counts_captions_not_mentions():
    t = category_table([["man", "guy", "bike"], ["dog", "puppy"], ["person"]]).set_index("category")
    assert t.loc["person", "captions"] == 2 and t.loc["dog", "captions"] == 1 and t.loc["bicycle", "captions"] == 1
    assert t.loc["person", "share of captions (%)"] == 66.67 and "guy" in t.loc["person", "synonyms"]
    assert len(t) == 80


def test_the_category_table_lists_the_kept_heads_after_the_eighty():
    t = category_table([["man", "street"], ["street", "grass"], ["background"]], others=["street", "grass"])
    assert len(t) == 82 and list(t.category[80:]) == ["street", "grass"] and (t.synonyms[80:] == "").all()
    assert t.set_index("category").loc["street", "captions"] == 2 and "background" not in set(t.category)
