"""A compatibility corpus: real public tf.estimator programs, run on tf.estimator 2.15 and here.

Recipes, not copies: `recipes.py` names each program (repository, commit, entry point,
arguments), the tiny data it reads (made by our generators in `datagen.py`) and the smallest
edits that make it run on tensorflow-estimator 2.15. No third-party code lives in this folder;
checkouts are made outside the project (`python -m tools.corpus checkout`). See README.md.
"""
