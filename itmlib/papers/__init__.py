"""One module per paper of the course; everything below them stays paper-agnostic.

- :mod:`itmlib.papers.ncs_sam`  Biten et al., *Is an image worth five sentences?* (WACV 2022):
  Recall vs Semantic Recall / NCS, the SAM loss - notebooks 01-05
- :mod:`itmlib.papers.ssamt`    Fan et al., phrase-level semantic labels (SSAMT): the Table 3 arms,
  mismatch classification, Figure 3 measured, re-ranking - notebook 06_phrase_labels (labels in
  :mod:`itmlib.relevance.phrases`, model :mod:`itmlib.models.ssamt`, losses :mod:`itmlib.losses.phrase`)
- :mod:`itmlib.papers.neighborhoods` Thomas & Kovashka, *Preserving semantic neighborhoods*
  (ECCV 2020): the Table 1/2/4 arms, k-way accuracy and neighbourhood preservation, Doc2Vec
  neighbours of real COCO captions - notebook 07_semantic_neighborhoods (the non-literal world
  :mod:`itmlib.data.synthetic.news`, Ω :mod:`itmlib.relevance.doc2vec`, model
  :mod:`itmlib.models.neighborhoods`, losses :mod:`itmlib.losses.angular`)
- :mod:`itmlib.papers.teran`    Messina et al., *TERAN* (ACM TOMM 2021) - notebook 08

A paper module holds what is the paper's alone: its configs sized by scale, its
evaluation bundle, its analyses and the joins that put its numbers beside ours. Its
claims are data (``itmlib/paper_numbers/claims_<paper>.yaml``, read by
:mod:`itmlib.claims`, judged by :func:`itmlib.claims.verdicts.judge_claims`). Models and
losses keep their own files (:mod:`itmlib.models`, :mod:`itmlib.losses`); grids are
:mod:`itmlib.training.grid`; seed statistics and verdicts :mod:`itmlib.claims.verdicts`.
"""
