"""Read the anchor study authors' paper-scale training logs into the small reference file reasonlab ships.

    python scripts/authors_anchor_log.py REPO_GIT_DIR > src/reasonlab/data/anchor_trajectory/authors_log.json

REPO_GIT_DIR is a clone of the authors' public repository (spec anchor-composition.md §6b); the logs are
``code/book_jupyter_composition_task/result_{0.5,0.8}/train_log.log`` at its HEAD. Their layout: at the start of
every third epoch N (after N epochs of training) the accuracy of each of the 32 data groups (``43_xm0``: pair
(4,3), keys ≡ 0 mod 9, the test keys; ``43_xel``: the other keys) and the distribution of (prediction − target)
on ``43_xel``; then ``Epoch: N Train Loss`` = the mean loss over epoch N+1 (counting from 1, as reasonlab does).
Only numbers are kept: the seen-pair test-key accuracy (mean over the 15 seen pairs' ``xm0`` groups, equal in
size), (4,3) on its train keys: inferential (the group's accuracy) and symmetric (the share at deviation +4,
the answer of (3,4)), the modal deviation, and the losses.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

FOLDER = "code/book_jupyter_composition_task"
GROUP = re.compile(r"data type: (\d\d)_(xm0|xel)\s+Acc: ([0-9.e-]+)")
DEVIATION = re.compile(r"deviation: (-?\d+)\s+Acc: ([0-9.e-]+)")
LOSS = re.compile(r"Epoch: (\d+)\s+Train Loss: ([0-9.e+-]+)")
HELD_OUT, SYMMETRIC_OFFSET = "43", 4


def parse(text: str) -> dict:
    evaluations: list[dict] = []
    losses: dict[int, float] = {}
    groups: dict[str, float] = {}
    deviation: dict[int, float] = {}
    for line in text.splitlines():
        if m := GROUP.search(line):
            groups[f"{m[1]}_{m[2]}"] = float(m[3])
        elif m := DEVIATION.search(line):
            deviation[int(m[1])] = float(m[2])
        elif m := LOSS.search(line):
            epoch = int(m[1])
            losses[epoch + 1] = float(m[2])  # the mean over the (epoch+1)-th epoch
            if groups:  # the evaluation logged before this epoch's training: after `epoch` epochs
                seen = [v for k, v in groups.items() if k.endswith("_xm0") and not k.startswith(HELD_OUT)]
                modal = max(deviation, key=deviation.get)
                evaluations.append({
                    "epoch": epoch, "seen_test_acc": sum(seen) / len(seen),
                    "heldout_inferential": groups[f"{HELD_OUT}_xel"],
                    "heldout_symmetric": deviation.get(SYMMETRIC_OFFSET, 0.0),
                    "modal_deviation": modal, "modal_share": deviation[modal]})
                groups, deviation = {}, {}
    return {"evaluations": evaluations, "train_loss": [{"epoch": e, "loss": v} for e, v in sorted(losses.items())]}


def main() -> None:
    git_dir = sys.argv[1]
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    runs = {}
    for gamma in ("0.5", "0.8"):
        path = f"{FOLDER}/result_{gamma}/train_log.log"
        text = subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], capture_output=True, text=True,
                              check=True).stdout
        runs[gamma] = {"path": path, **parse(text)}
    json.dump({"source": {"repository": "xuzhiqin1990/understanding_dl", "commit": commit},
               "setting": "seed 1, d_model 400, depth 2, 1 head, batch 2048 (370 steps per epoch), peak multiplier "
                          "20, split modulus 9, warm-up 10 epochs, cosine over 200 epochs",
               "runs": runs}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
