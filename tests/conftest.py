"""Test-wide settings."""

import os

# scikit-learn's estimator checks include an array-API check that runs only when SciPy was
# imported with this set; setting it here (before any test imports SciPy) runs it instead of
# skipping it.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
