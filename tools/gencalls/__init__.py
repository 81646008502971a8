# SPDX-License-Identifier: MIT
"""tools/gen-calls.py's modules: one per concern."""
