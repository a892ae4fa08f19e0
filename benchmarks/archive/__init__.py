"""Builders of one-off studies, kept runnable beside the results they produced.

They are not benchmarks of the product as it is: each answered one question once, and its
numbers are quoted where they were used.

* ``scrubber``: the λ scrubber's frame rate, a former version's figure against this one's
  (``python -m benchmarks.archive.scrubber``; README's table, the "λ scrubber" row).
* ``multiclass``: SDWECClassifier on multi-class data with weak members against
  scikit-learn's ensembles (``python -m benchmarks.archive.multiclass``; the last section of
  ``results/estimator.md``, which ``benchmarks.estimator`` keeps when it rewrites the file).
"""
