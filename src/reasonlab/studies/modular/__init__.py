"""The modular study: in-context modular arithmetic. ``phase`` is the registered ``modular-phase`` study (the four
phases over tasks × data fraction); ``side_by_side`` runs the authors' own training script beside ours; ``docs``
renders the study's sections of docs/modular-icl.md from its committed records (the cpu grid, the routes R1–R3
and the memorizer's probes), ``route_r3`` those of route R3's seeds, shots, probes and verdict, ``findings`` the
study's rows of the results tables."""

PAPER = "2406.02550"  # the paper the modular study reproduces: its arXiv id
