"""Benchmarks of SDWEC Explorer (``python -m benchmarks``); each prints ratios measured in one run."""
