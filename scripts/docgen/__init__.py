"""The docs' generators, one module per study (and what they share): registered by scripts/regenerate_docs.py."""
