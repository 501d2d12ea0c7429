import doctest

import pytest

from k2rl.config import load_config
from k2rl.step import schedules
from k2rl.step.schedules import temperature_at
from k2rl.step.schedules import decay


def test_doctests():
    assert doctest.testmod(schedules).failed == 0


@pytest.mark.parametrize("shape", ["linear", "cosine", "exponential"])
def test_decay_runs_from_start_to_end_monotonically(shape):
    values = [decay(s, 1.2, 0.6, 20, shape) for s in range(1, 26)]
    assert values[0] == pytest.approx(1.2) and values[19] == pytest.approx(0.6)
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:]))
    assert values[-1] == pytest.approx(0.6)  # held after the schedule ends


def test_run_temperature_follows_config():
    cfg = load_config(None, ["train.steps=11", "rollout.temperature_end=0.5"])
    assert [temperature_at(cfg, s) for s in (1, 6, 11)] == pytest.approx([1.0, 0.75, 0.5])
    assert temperature_at(load_config(None, ["rollout.temperature_end=null"]), 7) == 1.0


def test_per_task_temperature_overrides_the_global_schedule():
    cfg = load_config(None, ["train.steps=11", "rollout.temperature_end=0.5",
                             "tasks=[{id: k2rl/Arithmetic-v1, temperature: 1.2, temperature_end: 0.2},"
                             " {id: k2rl/Calculator-v1}]"])
    assert temperature_at(cfg, 11, "k2rl/Arithmetic-v1") == pytest.approx(0.2)
    assert temperature_at(cfg, 1, "k2rl/Arithmetic-v1") == pytest.approx(1.2)
    assert temperature_at(cfg, 11, "k2rl/Calculator-v1") == pytest.approx(0.5)
