"""The modular side by side's comparison (reasonlab.studies.modular.side_by_side): plateau exits and o.o.d. accuracy
of the reference code's runs (``ICL_Modular_Arithmetic``, as scripts/reference/modular_side_by_side.py stores them)
against reasonlab's, on histories built here."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reasonlab.errors import StoreError
from reasonlab.store import MetricRow, write_metrics
from reasonlab.studies.modular.side_by_side import (
    FOLDER,
    Committed,
    History,
    compare,
    draw,
    loss_levels,
    reasonlab_history,
    reference_history,
    verdict_lines,
)

P = 11
PLATEAU = math.log(P)


def history(code: str, seed: int, exit_step: int, ood: float, steps: range = range(1000, 11000, 1000)) -> History:
    """A run on the ln p plateau until ``exit_step``, then at half of it; o.o.d. accuracy ``ood`` throughout."""
    return History(code, seed, {s: PLATEAU if s < exit_step else PLATEAU / 2 for s in steps}, {s: ood for s in steps})


def test_codes_that_leave_the_plateau_together_and_agree_out_of_distribution_agree():
    runs = [history("reference", 1, 4000, 0.3), history("reference", 2, 6000, 0.5),
            history("reasonlab", 1, 5000, 0.35), history("reasonlab", 2, 6000, 0.4)]
    c = compare(runs, P)
    assert c.exits == {"reference": [4000, 6000], "reasonlab": [5000, 6000]}
    assert c.exit_ratio == pytest.approx(1.1) and c.exits_agree
    assert c.ood_gap == pytest.approx(0.025) and c.ood_agrees and c.holds
    assert verdict_lines(c, P)[-1].endswith("**the two codes agree**")


def test_a_late_exit_or_an_ood_gap_is_a_difference_and_a_run_that_never_leaves_is_no_ratio():
    late = compare([history("reference", 1, 4000, 0.3), history("reasonlab", 1, 6000, 0.3)], P)
    assert late.exit_ratio == pytest.approx(1.5) and not late.exits_agree and late.ood_agrees and not late.holds
    gap = compare([history("reference", 1, 4000, 0.3), history("reasonlab", 1, 4000, 0.45)], P)
    assert gap.exits_agree and gap.ood_gap == pytest.approx(0.15) and not gap.holds
    never = compare([history("reference", 1, 4000, 0.3), history("reasonlab", 1, 99_000, 0.3)], P)
    assert never.exits["reasonlab"] == [None] and never.exit_ratio is None and not never.holds
    assert "reasonlab never" in verdict_lines(never, P)[0]


def test_a_dip_below_the_line_on_the_plateau_is_not_its_exit():
    """The reference logs the loss of one batch of 64 sequences: it dips below 0.9·ln p on the plateau now and then."""
    dipping = History("reference", 1, {1000: PLATEAU, 2000: 0.8 * PLATEAU, 3000: PLATEAU, 4000: 0.8 * PLATEAU,
                                       5000: 0.5 * PLATEAU}, {})
    assert dipping.plateau_exit(P) == 4000
    back_up = History("reference", 1, {1000: PLATEAU, 2000: 0.5 * PLATEAU, 3000: PLATEAU}, {})
    assert back_up.plateau_exit(P) is None


def test_only_steps_every_run_logged_are_matched():
    c = compare([history("reference", 1, 4000, 0.3, range(1000, 9000, 1000)),
                 history("reasonlab", 1, 4000, 0.3, range(2000, 11000, 2000))], P)
    assert c.ood_steps == [2000, 4000, 6000, 8000]


def test_one_code_alone_is_refused():
    with pytest.raises(StoreError, match="both codes"):
        compare([history("reference", 1, 4000, 0.3)], P)


def reference_run(folder, seed: int, p: int = P):
    """A reference run as scripts/reference/modular_side_by_side.py stores it."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"args": {"seed": seed, "p": p}, "wall_seconds": 5400.0,
                                                    "cpu": "AMD EPYC"}))
    pq.write_table(pa.table({"step": [1, 1000, 2000], "tr_loss": [2.4, 2.3, 1.0], "test_acc": [0.1, 0.1, 0.5],
                             "ood_val_last_acc": [0.09, 0.1, 0.4]}), folder / "metrics.parquet")
    return folder


def reasonlab_run(folder, seed: int, p: int = P):
    """A finished reasonlab run's records, as far as the side by side reads them."""
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(f"seed: {seed}\ntask:\n  p: {p}\n")
    (folder / "summary.json").write_text(json.dumps({"config": {"seed": seed}, "wall_time_s": 3600.0,
                                                     "machine": {"cpu": "AMD EPYC"}}))
    write_metrics(folder / "metrics.parquet", [
        MetricRow(e, 1000 * e, split, metric, v) for e, loss, acc in ((1, 2.35, 0.1), (2, 1.2, 0.45))
        for split, metric, v in (("id/train:iid", "loss", loss), ("ood/test:iid", "acc_pos_15", acc),
                                 ("ood/test", "acc_pos_15", 0.0))], f"{seed:012x}")
    return folder


def test_stored_histories_are_read_and_drawn(tmp_path):
    ref = reference_run(tmp_path / "reference-s1", 1)
    ours = reasonlab_run(tmp_path / "run", 2)
    runs = [reference_history(ref), reasonlab_history(ours)]
    assert runs[0].plateau_exit(P) == 2000 and runs[0].ood[1] == 0.09 and runs[0].seed == 1
    assert runs[1].seed == 2 and runs[1].ood == {1000: 0.1, 2000: 0.45} and runs[1].plateau_exit(P) == 2000
    assert compare(runs, P).ood_steps == [1000, 2000]
    assert {p.suffix for p in draw(runs, P, tmp_path / "figure")} == {".png", ".svg"}
    (ref / "metrics.parquet").write_bytes(b"not parquet")
    with pytest.raises(StoreError, match="reference-s1/metrics.parquet: not a reference history"):
        reference_history(ref)


def test_the_docs_table_grows_with_the_committed_runs_and_gives_a_verdict_once_both_codes_have_one(tmp_path):
    committed = Committed(tmp_path)
    assert committed.inputs() == [] and committed.render().startswith("Not committed yet")
    reference_run(tmp_path / FOLDER / "reference-s1", 1)
    reasonlab_run(tmp_path / FOLDER / "reasonlab" / "abc.partial", 1)  # a packed unfinished run is not compared
    text = committed.render()
    assert not committed.both_codes() and "needs runs of both codes (1 reference, 0 reasonlab" in text
    assert "| reference | 1 | 2,000 | 2,000 | 0.400 | — | 1.5 h, AMD EPYC |" in text
    reasonlab_run(tmp_path / FOLDER / "reasonlab" / "abc", 1)
    text = committed.render()
    assert committed.both_codes() and "Partial: reference 1 of 2, reasonlab 1 of 2 seeds committed" in text
    assert "- side by side: pending" in text and "agree**" not in text and "figures/modular-side-by-side.png" in text
    assert len(committed.inputs()) == 5
    reference_run(tmp_path / FOLDER / "reference-s2", 2)
    reasonlab_run(tmp_path / FOLDER / "reasonlab" / "abd", 2)
    text = committed.render()
    assert "Partial" not in text and "**the two codes agree**" in text and "copied" not in text
    for folder in ("reference-s1", "reference-s2"):  # every run's tasks recorded: the levels beside the verdict
        (tmp_path / FOLDER / folder / "tasks.json").write_text(json.dumps({"id": [[1, 0], [0, 1]]}))
    for folder in ("abc", "abd"):
        (tmp_path / FOLDER / "reasonlab" / folder / "tasks.json").write_text(
            json.dumps({"id": [[1, 0], [0, 1]], "train_pairs": list(range(1, 100))}))
    for folder in ("reference-s1", "reference-s2"):
        config = tmp_path / FOLDER / folder / "config.json"
        config.write_text(json.dumps({**json.loads(config.read_text()), "args": {
            **json.loads(config.read_text())["args"], "data_pct": 80.0, "data_seed": 0}}))
    text = committed.render()
    assert len(committed.inputs()) == 14 and "the exit line 2.158 lies" in text
    assert text.count(" / ") >= 4 and "with the answers of a row's repeated pairs copied" in text
    reasonlab_run(tmp_path / FOLDER / "reasonlab" / "def", 2, p=13)
    with pytest.raises(StoreError, match="not one p"):
        committed.render()


def test_loss_levels_are_the_context_free_entropy_and_its_share_left_by_copying():
    assert loss_levels([[1, 0]], [5, 17, 40], P) == (0.0, 0.0)  # one task: z follows from the pair
    every_task = [[a, b] for a in range(P) for b in range(P)]
    free, copying = loss_levels(every_task, [1, 2, 3], P)  # z uniform over the residues for any pair but (0, 0)
    assert free == pytest.approx(math.log(P)) and copying == pytest.approx(
        math.log(P) * sum((2 / 3) ** k for k in range(16)) / 16)
    assert loss_levels(every_task, [1], P, shots=4)[1] == pytest.approx(math.log(P) / 4)  # one pair: only shot 0 new
    two = loss_levels([[1, 0], [0, 1]], [1 * P + 2], P)  # x = 1, y = 2: z is 1 or 2, one task each
    assert two[0] == pytest.approx(math.log(2))
