"""The Ray backend against a real local Ray instance: same runs, same store, same results table as local."""

from __future__ import annotations

import pytest
from test_sweep import tiny_spec

from reasonlab.sweep.executors import LocalExecutor
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.results import read_results
from reasonlab.sweep.runner import run_sweep

ray = pytest.importorskip("ray", reason="the 'ray' extra is not installed (pip install 'reasonlab[ray]')")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # starts a Ray instance, one at a time

_RUN_ONLY = {"wall_time_s", "git_revision"}  # how long it took, not what it computed


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_ray_backend_matches_local_executor(local_ray, tmp_path):
    from reasonlab.sweep.executors import RayExecutor

    cfgs, axes = sweep_configs(tiny_spec())
    assert len(cfgs) == 4
    ray_report = run_sweep("tiny", cfgs, tmp_path / "ray", RayExecutor(threads=1), axes)
    local_report = run_sweep("tiny", cfgs, tmp_path / "local", LocalExecutor(2, 1), axes)
    assert not ray_report.failed and not local_report.failed
    by_id = {r["run_id"]: r for r in read_results(tmp_path / "local" / "tiny")}
    ray_rows = read_results(tmp_path / "ray" / "tiny")
    assert sorted(r["run_id"] for r in ray_rows) == sorted(by_id)
    for row in ray_rows:
        assert {k: v for k, v in row.items() if k not in _RUN_ONLY} == \
               {k: v for k, v in by_id[row["run_id"]].items() if k not in _RUN_ONLY}
    again = run_sweep("tiny", cfgs, tmp_path / "ray", RayExecutor(threads=1), axes)  # resume: nothing to do
    assert again.skipped == 4 and again.outcomes == []
