"""Synthetic data and games with known answers, for the demo, tests and benchmarks.

Deterministic per seed.
"""
from __future__ import annotations

# --- sponsored search (auction replay) --------------------------------------

# --- agent-trajectory SCMs (permutation sampling) ---------------------------
