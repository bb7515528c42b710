"""The plan of one benchmark arm: its three settings of (γ, weight decay), its nested training sizes and its
seeds, as the grid the sweep runs (``LINKED`` and ``SIZE`` are axes whose values move together)."""

from __future__ import annotations

from dataclasses import dataclass

LINKED = "init.gamma+train.weight_decay"
SIZE = "task.n_train+train.epochs+train.eval_every"
SETTINGS = ("large init + small wd", "small init + large wd", "small init + small wd")


@dataclass(frozen=True)
class Plan:
    """One profile of a benchmark study: (γ, weight decay) for large and small init and small and large decay,
    the nested training sizes, each with its epochs and evaluation period (so that every size trains for about
    the same number of steps and is evaluated about as often), the seeds, and the arm's stated cost."""

    gammas: tuple[float, float]  # large init (small γ), small init (large γ)
    decays: tuple[float, float]  # small, large
    sizes: tuple[tuple[int, int, int], ...]  # (training rows, epochs, evaluate every so many epochs)
    seeds: tuple[int, ...] = (1, 2, 3)
    cost: str = ""

    def settings(self) -> dict[str, tuple[float, float]]:
        (g_large, g_small), (wd_small, wd_large) = self.gammas, self.decays
        return dict(zip(SETTINGS, ((g_large, wd_small), (g_small, wd_large), (g_small, wd_small)), strict=True))

    def grid(self) -> dict[str, list]:
        return {LINKED: [list(v) for v in self.settings().values()],
                SIZE: [list(v) for v in self.sizes], "seed": list(self.seeds)}
