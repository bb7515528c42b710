"""``reasonlab report RUN_OR_SWEEP_DIR``: one self-contained HTML page per run or sweep."""
