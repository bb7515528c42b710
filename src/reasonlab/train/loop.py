"""The one training loop: AdamW, per-batch schedule, clipping, periodic evaluation, checkpoints, resume.

A ``Trainer`` holds one run's training state and trains it; ``train/run.py`` owns the run directory around it.
Shuffling for epoch e is drawn from a generator seeded by (seed, e), so a run resumed from a checkpoint at the end of
epoch e replays exactly what an uninterrupted run would have done; a resume checkpoint inside an epoch (a stop asked
for, or ``train.checkpoint_minutes`` of wall time) also holds the losses of that epoch's steps so far, and the
resumed run skips those steps of the same order.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

from reasonlab.build import build_model, build_task
from reasonlab.checkpoint import complete_steps, load_latest, save_best, save_checkpoint, save_snapshot
from reasonlab.checkpoint_checks import bound_marker
from reasonlab.config import ConfigError, RunConfig, TrainConfig
from reasonlab.errors import Interrupted, StoreError
from reasonlab.evaluate import (
    diverged_report,
    progress_parts,
    summarize,
    weight_figures,
    weight_norms,
)
from reasonlab.evaluate.scoring import score_sets
from reasonlab.numerics import describe_machine
from reasonlab.records import write_progress
from reasonlab.schedule import lr_at, lr_sums
from reasonlab.seeds import subseed
from reasonlab.store import (
    MetricRow,
    append_event,
    read_metrics,
    write_metrics,
)
from reasonlab.tasks.base import IGNORE
from reasonlab.train.device import autocast, resolve_device
from reasonlab.train.interrupt import Due, Pace
from reasonlab.train.loggers import MetricLoggers
from reasonlab.train.progress import Mode, Progress, run_label
from reasonlab.train.step import decay_groups, decays, epoch_batches, epoch_order, training_loss

TIMES = ("data", "steps", "evaluation", "checkpoints")  # the parts of a run's time its summary reports


def log_spaced_epochs(cfg: TrainConfig) -> set[int]:
    """``checkpoint_log`` epochs spaced evenly in log scale from the end of warm-up (at least epoch 1) to the
    last epoch, so a run's dynamics can be read at its early, fast changes as well as its end."""
    if cfg.checkpoint_log == 0:
        return set()
    first = max(1.0, cfg.warmup_epochs)
    n = cfg.checkpoint_log
    return {round(first * (cfg.epochs / first) ** (i / max(n - 1, 1))) for i in range(n)}


class Trainer:
    def __init__(self, cfg: RunConfig, run_dir: Path, progress: bool | Mode = True,
                 log: Callable[[str], None] = print):
        self.cfg, self.run_dir, self.log = cfg, run_dir, log
        t = cfg.train
        if t.threads:
            torch.set_num_threads(t.threads)
        self.device = resolve_device(t.device)
        self.autocast = autocast(t, self.device)
        if t.tf32 and self.device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        torch.manual_seed(subseed(cfg.seed, "torch"))
        started = time.perf_counter()
        self.data = build_task(cfg)
        # where a run's time goes (seconds, summed over resumes): building its data, training steps, evaluation,
        # checkpoints and metric files; in the summary as ``time_s``
        self.times = dict.fromkeys(TIMES, 0.0) | {"data": time.perf_counter() - started}
        self.model = build_model(cfg, self.data).to(self.device)
        self.n_train = len(self.data.train_inputs)
        if self.data.batch_fn is not None:  # batches drawn per step
            self.steps_per_epoch = self.data.steps_per_epoch
        elif self.n_train < t.batch_size:
            raise ConfigError(
                f"train.batch_size: {t.batch_size} exceeds the {self.n_train} training sequences; lower it")
        else:
            self.steps_per_epoch = self.n_train // t.batch_size
        total = t.epochs * self.steps_per_epoch
        self.lr_sums = lr_sums(t, self.steps_per_epoch, total)
        self.snapshots = t.snapshot_plan(total)  # step -> fraction
        self.opt = torch.optim.AdamW(decay_groups(self.model, t), lr=t.base_lr, betas=t.betas, eps=t.eps,
                                     weight_decay=t.weight_decay)
        self.x = self.data.train_inputs.to(self.device)
        self.y = self.data.train_targets.to(self.device)
        self.lengths = (self.data.train_targets != IGNORE).cumsum(1).argmax(1) if self.data.right_padded else None
        self.rows: list[MetricRow] = []
        self.progress = progress
        self.log_epochs = log_spaced_epochs(t)
        # where training stands: a fresh run's start, until ``begin`` restores a checkpoint's
        self.epoch, self.step, self.wall = 0, 0, 0.0
        self.epoch_started = started  # a perf_counter reading, reset as each epoch starts
        self.epoch_losses: list[float] = []  # of the epoch a resume checkpoint was saved inside
        self.last_loss: float | None = None  # the last whole epoch's mean loss
        self.diverged: int | None = None  # the step whose loss was first not finite
        self.figures: dict[str, float] = {}
        self.figures_epoch: int | None = None  # the epoch those figures were evaluated at
        self.best_select = float("-inf")
        self.saved_step = 0  # the newest checkpoint's (0: none)
        self.touched = False  # whether this process trained a step of the run (its directory is then kept)
        self.pace = Pace(t.checkpoint_minutes, 0, total)  # restarted by ``fit``; one for a stacked ensemble's members
        self.loggers, self.logged = MetricLoggers(cfg, run_dir), 0  # rows up to `logged` were sent

    def _loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with self.autocast:
            return training_loss(self.model, x, y, mean=self.cfg.train.loss_mean)

    def train_step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """One optimizer step on a batch at the learning rate already set; returns the detached loss."""
        loss = self._loss(x, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.update()
        return loss.detach()

    def set_lr(self, step: int) -> None:
        """The schedule's learning rate for ``step`` (0-based) into the optimizer."""
        for group in self.opt.param_groups:
            group["lr"] = lr_at(step, self.cfg.train, self.steps_per_epoch)

    def update(self) -> None:
        """Clip the gradients the backward pass left (if the run clips), then step AdamW: the one optimizer
        update, also of each member of a stacked ensemble, whose gradients come from the stack's backward."""
        if self.cfg.train.grad_clip is not None:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.train.grad_clip)
        self.opt.step()

    # ---- one epoch -----------------------------------------------------------------------------------------
    def batch_order(self, epoch: int) -> torch.Tensor:
        """The row order of epoch ``epoch + 1``, drawn from (seed, epoch): a resumed run, or this run as a member
        of a stacked ensemble, replays it."""
        return epoch_order(self.n_train, subseed(self.cfg.seed, f"shuffle:{epoch}"), self.cfg.train.batch_size,
                           self.lengths).to(self.device)

    def _batches(self, epoch: int, first: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """The batches of epoch ``epoch + 1`` from its ``first``-th: drawn per step if the task draws them, else
        rows in the epoch's order (``epoch_batches``, as a stacked ensemble takes them)."""
        t = self.cfg.train
        if self.data.batch_fn is None:
            return epoch_batches(self.x, self.y, self.batch_order(epoch), t.batch_size, first, self.steps_per_epoch,
                                 self.data.right_padded)
        steps = range(epoch * self.steps_per_epoch + first, (epoch + 1) * self.steps_per_epoch)
        return (tuple(v.to(self.device) for v in self.data.batch_fn(s, t.batch_size)) for s in steps)

    def _epoch(self, epoch: int, step: int, bar: Progress) -> tuple[int, float]:
        losses = torch.zeros(self.steps_per_epoch, device=self.device)  # no sync per step; checked at the end
        done = self.resumed_losses(epoch, step)
        losses[: len(done)] = done
        for b, (x, y) in enumerate(self._batches(epoch, len(done)), start=len(done)):
            self.between_steps(epoch, step, losses[:b])
            self.set_lr(step)
            losses[b] = self.train_step(x, y)
            step += 1
            self.touched = True
            if step in self.snapshots:
                save_snapshot(self.run_dir / "checkpoints", step, self.snapshots[step],
                              {"epoch": epoch + 1, "run_id": self.cfg.run_id()}, self.model)
                self.rows += self.weight_rows(epoch + 1, step, weight_figures(self.cfg.task.kind, self.model,
                                                                              self.data))
            bar.advance()
        self.between_steps(epoch, step, losses)  # before the epoch's evaluation
        self.check_finite(losses, epoch * self.steps_per_epoch)
        return step, float(losses.mean())

    def resumed_losses(self, epoch: int, step: int) -> torch.Tensor:
        """The losses of epoch ``epoch + 1``'s steps before ``step`` that a resume checkpoint restored (none when
        the epoch starts afresh); handed over once."""
        done = torch.tensor(self.epoch_losses, dtype=torch.float32, device=self.device)
        if len(done) != step - epoch * self.steps_per_epoch:
            raise StoreError(f"{self.run_dir / 'checkpoints'}: the checkpoint at step {step} holds {len(done)} "
                             "losses of its epoch, not one per step trained in it; delete it and rerun")
        self.epoch_losses = []
        return done

    def between_steps(self, epoch: int, step: int, losses: torch.Tensor) -> None:
        """Before a step, and after an epoch's last: whatever ``Pace`` says is due (``losses``: this epoch's so
        far). A stop saves a resume checkpoint here and raises ``Interrupted``."""
        due = self.pace.due()
        if due is not None:
            self.act(due, epoch, step, losses)
        if due == "stop":
            raise self.interrupted(step)

    def act(self, due: Due, epoch: int, step: int, losses: torch.Tensor) -> None:
        """A progress record, or a resume checkpoint (for a stop, or by wall time)."""
        if due == "progress":
            self.report_step(epoch, step, losses)
        else:
            self.save_resume(epoch, step, losses)

    def interrupted(self, step: int) -> Interrupted:
        return Interrupted(f"interrupted at step {step} of {self.pace.total}; run the same command to resume",
                           step, self.pace.total)

    def report_step(self, epoch: int, step: int, losses: torch.Tensor) -> None:
        """``progress.json`` inside an epoch: the step, the speed and ETA, the epoch's mean loss so far."""
        loss = float(losses.mean()) if len(losses) else self.last_loss
        self.record_progress(epoch, step, loss, self.wall + time.perf_counter() - self.epoch_started)

    def record_progress(self, epoch: int, step: int, loss: float | None, wall: float) -> None:
        rate, eta = self.pace.speed(step)
        write_progress(self.run_dir, epoch=epoch, epochs=self.cfg.train.epochs, step=step, steps=self.pace.total,
                       steps_per_s=rate, eta_s=eta, loss=loss, wall_time_s=wall, evaluated_epoch=self.figures_epoch,
                       figures=self.figures)

    def save_resume(self, epoch: int, step: int, losses: torch.Tensor) -> None:
        """A checkpoint to resume from at ``step``, inside epoch ``epoch + 1`` (with ``losses``, its steps' so far,
        which the epoch's mean needs); the next checkpoint supersedes it. Nothing if the newest is at ``step``."""
        if step == self.saved_step:
            return
        started = time.perf_counter()
        in_epoch = started - self.epoch_started
        times = self.times | {"steps": self.times["steps"] + in_epoch}
        write_metrics(self.run_dir / "metrics.parquet", self.rows, self.cfg.run_id())
        save_checkpoint(self.run_dir / "checkpoints", step,
                        {"epoch": epoch, "wall_time_s": self.wall + in_epoch, "run_id": self.cfg.run_id(),
                         "time_s": times, "epoch_losses": losses.tolist()}, self.model, self.opt, resume_only=True)
        self.saved_step = step
        append_event(self.run_dir, f"resume checkpoint epoch {epoch + 1} step {step}")
        self.report_step(epoch, step, losses)
        spent = time.perf_counter() - started
        self.times["checkpoints"] += spent
        self.times["steps"] -= spent  # the timer around the epoch's steps counts it too

    def check_finite(self, losses: torch.Tensor, first_step: int) -> None:
        """Mark the run diverged at the first step (1-based, counted over the run) whose loss is NaN or inf."""
        bad = (~torch.isfinite(losses)).nonzero()
        if len(bad) and self.diverged is None:
            self.diverged = first_step + int(bad[0, 0]) + 1

    def _evaluate(self, epoch: int, step: int, final: bool) -> dict[str, float]:
        limit = None if final else self.cfg.train.eval_max_per_set
        scores = score_sets(self.model, self.data.eval_sets, limit, self.device)
        for name, s in scores.items():
            self.rows += [MetricRow(epoch, step, name, f"acc_{kind}", s.acc(kind)) for kind in s.correct]
            if s.loss is not None:
                self.rows.append(MetricRow(epoch, step, name, "loss", s.loss))
        self.report = summarize(self.cfg.task.kind, scores, self.data.eval_sets, self.cfg.thresholds)
        select = self.report.select  # a task's early-stopping score, higher is better
        if select is not None and select > self.best_select:
            self.best_select = select
            save_best(self.run_dir / "checkpoints", self.model,
                      {"epoch": epoch, "step": step, "value": select, "run_id": self.cfg.run_id()})
        self.rows += [MetricRow(epoch, step, "pooled", k, v) for k, v in self.report.pooled.items()]
        return self.report.figures

    # ---- the run -------------------------------------------------------------------------------------------
    def begin(self, max_step: int | None = None) -> None:
        """Restore the newest checkpoint (at or before ``max_step``, if given), if any, into the model, the
        optimizer, the counters and the metric rows. Once, before training: the run directory must exist."""
        ckpt, metrics = self.run_dir / "checkpoints", self.run_dir / "metrics.parquet"
        rows: list[MetricRow] = []
        if complete_steps(ckpt):
            try:
                rows = read_metrics(metrics)
            except Exception:  # noqa: BLE001 - unreadable in any way: the history to resume with is lost
                self.warn(f"{metrics}: damaged or missing; restarting this run from the beginning")
                shutil.rmtree(ckpt)
                ckpt.mkdir()
        if (ckpt / "best.json").is_file():
            try:
                self.best_select = bound_marker(ckpt, "best", self.cfg.run_id())["value"]
            except (StoreError, OSError) as e:
                self.warn(f"{e}; the best checkpoint is chosen again from here on")
        state = load_latest(ckpt, self.model, self.opt, warn=self.warn, max_step=max_step, run_id=self.cfg.run_id())
        if state is not None:
            self.epoch, self.step, self.wall = state["epoch"], state["step"], state["wall_time_s"]
            self.epoch_losses = [math.nan if v is None else v for v in state.get("epoch_losses", [])]
            restored = state.get("time_s", {})
            self.times = {k: v + restored.get(k, 0.0) for k, v in self.times.items()}
            # up to the checkpoint's step (a snapshot's rows may precede it inside its epoch); sent to the loggers
            # again (MetricLoggers)
            self.rows = [r for r in rows if r.step <= self.step]
            append_event(self.run_dir, f"resume from epoch {self.epoch} step {self.step} on {describe_machine()}")
            self.log(f"resuming {self.run_dir.name} from epoch {self.epoch} step {self.step}")
        self.saved_step = self.step

    @staticmethod
    def weight_rows(epoch: int, step: int, figures: dict[str, float]) -> list[MetricRow]:
        return [MetricRow(epoch, step, "weights", name, v) for name, v in figures.items()]

    def warn(self, message: str) -> None:
        """A one-line report of damaged state, to the log and the run's event log."""
        self.log(message)
        append_event(self.run_dir, message)

    def end_epoch(self, loss: float, started: float, bar: Progress) -> None:
        """After epoch ``self.epoch`` was trained (from ``started``, a perf_counter reading): log, evaluate on
        cadence, report progress, checkpoint."""
        t, epoch, step = self.cfg.train, self.epoch, self.step
        self.rows += [MetricRow(epoch, step, "train", "loss", loss),
                      MetricRow(epoch, step, "train", "lr", lr_at(step - 1, t, self.steps_per_epoch)),
                      MetricRow(epoch, step, "train", "lr_sum", self.lr_sums[step])]
        self.last_loss = loss
        if t.weight_decay_switch is not None:
            self.switch_decay(loss)
        if self.diverged is not None:  # nothing worth evaluating or keeping: the last checkpoint stays the last
            self.wall += time.perf_counter() - started
            write_progress(self.run_dir, epoch=epoch, epochs=t.epochs, step=step, steps=self.pace.total, loss=loss,
                           wall_time_s=self.wall, diverged_step=self.diverged)
            append_event(self.run_dir, f"diverged: loss not finite at step {self.diverged}")
            self.send_rows()
            return
        self.rows += self.weight_rows(epoch, step, weight_norms(self.model)
                                      | weight_figures(self.cfg.task.kind, self.model, self.data))
        last = epoch == t.epochs
        if epoch % t.eval_every == 0 or last:
            with self.timed("evaluation"):
                self.figures, self.figures_epoch = self._evaluate(epoch, step, final=last), epoch
        bar.show(epoch, t.epochs, loss, progress_parts(self.cfg.task.kind, self.figures))
        self.wall += time.perf_counter() - started
        self.record_progress(epoch, step, loss, self.wall)
        if epoch % t.checkpoint_every == 0 or last or epoch in self.log_epochs:
            with self.timed("checkpoints"):
                write_metrics(self.run_dir / "metrics.parquet", self.rows, self.cfg.run_id())
                save_checkpoint(self.run_dir / "checkpoints", step,
                                {"epoch": epoch, "wall_time_s": self.wall, "run_id": self.cfg.run_id(),
                                 "time_s": self.times}, self.model, self.opt)
            self.saved_step = step
            append_event(self.run_dir, f"checkpoint epoch {epoch} step {step}")
        self.send_rows()

    def switch_decay(self, loss: float) -> None:
        """``train.weight_decay_switch``: the decaying parameters' decay raised once this epoch's mean loss is below
        the bar, and the decay in force logged every epoch. Where it stands lives in the optimizer's own state, so
        a resumed run carries on with the decay it had."""
        switch, decaying = self.cfg.train.weight_decay_switch, \
            [g for g in self.opt.param_groups if decays(g["params"][0], self.cfg.train)]
        if loss < switch.loss_below and any(g["weight_decay"] != switch.weight_decay for g in decaying):
            for g in decaying:
                g["weight_decay"] = switch.weight_decay
            append_event(self.run_dir, f"weight decay {self.cfg.train.weight_decay:g} -> {switch.weight_decay:g} "
                                       f"after step {self.step} (epoch-mean loss {loss:.4g} < {switch.loss_below:g})")
        self.rows.append(MetricRow(self.epoch, self.step, "train", "weight_decay", decaying[0]["weight_decay"]))

    @contextmanager
    def timed(self, part: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.times[part] += time.perf_counter() - started

    def send_rows(self) -> None:
        """The metric rows recorded since the last call, to the run's loggers (if any)."""
        self.loggers.log(self.rows[self.logged :])
        self.logged = len(self.rows)

    def fit(self) -> None:
        """Train from where ``begin`` restored to the last epoch."""
        t = self.cfg.train
        mode = {True: "bar", False: "off"}.get(self.progress, self.progress)
        if mode != "off":
            self.log(f"run {self.cfg.run_id()} · profile: {self.cfg.profile}")
        self.pace.start(self.step)
        with Progress(self.pace.total, self.step, run_label(self.cfg), mode, self.log) as bar:
            while self.epoch < t.epochs and self.diverged is None:
                started = self.epoch_started = time.perf_counter()
                with self.timed("steps"):
                    self.step, loss = self._epoch(self.epoch, self.step, bar)
                self.epoch += 1
                self.end_epoch(loss, started, bar)

    def conclude(self) -> None:
        """After the last epoch, the report the summary states: a diverged run's, or the final evaluation's (scored
        again if the run resumed from its final checkpoint, without duplicating that evaluation's rows)."""
        if self.diverged is not None:
            self.report = diverged_report(self.diverged)
        elif not self.figures:
            self.rows = [r for r in self.rows if r.epoch < self.epoch or r.split in ("train", "weights")]
            self.logged = min(self.logged, len(self.rows))
            with self.timed("evaluation"):
                self._evaluate(self.epoch, self.step, final=True)
