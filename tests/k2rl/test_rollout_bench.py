"""bench/rollout.py's pure parts: its engine settings are k2rl's plus its flags, and the step
phase timer leaves the engine as it found it (fakes stand in for vLLM)."""
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from k2rl.device import engine

PATH = Path(__file__).resolve().parents[2] / "bench" / "rollout.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_rollout", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_engine_settings_are_k2rl_s_unless_a_flag_overrides_them(bench):
    args = bench.parse_args([])
    assert bench.llm_kwargs(args, "/m", 256) == engine.engine_kwargs("/m", 256, args.seed)
    args = bench.parse_args(["--block-size", "128", "--max-num-seqs", "64", "--compile",
                             "--max-num-batched-tokens", "8192"])
    kw = bench.llm_kwargs(args, "/m", 256)
    assert (kw["block_size"], kw["max_num_seqs"], kw["max_num_batched_tokens"]) == (128, 64, 8192)
    assert kw["enforce_eager"] is False


class Part:
    """An engine part whose method logs its calls."""

    def __init__(self, name, log):
        self.name, self.log = name, log

    def run(self, *a, **k):
        self.log.append(self.name)
        return self.name


def fake_llm(log):
    runner = SimpleNamespace(_model_forward=Part("forward", log).run,
                             sample_tokens=Part("sample", log).run)
    scheduler = SimpleNamespace(schedule=Part("schedule", log).run,
                                update_from_output=Part("update", log).run)
    core = SimpleNamespace(scheduler=scheduler, model_executor=SimpleNamespace(
        driver_worker=SimpleNamespace(worker=SimpleNamespace(model_runner=runner))))
    eng = SimpleNamespace(engine_core=SimpleNamespace(engine_core=core),
                          output_processor=SimpleNamespace(process_outputs=Part("out", log).run))
    llm = SimpleNamespace(llm_engine=eng)

    def step():
        for f in (scheduler.schedule, runner._model_forward, runner.sample_tokens,
                  scheduler.update_from_output, eng.output_processor.process_outputs):
            f()

    eng.step = step
    return llm, (scheduler, runner, eng)


def test_phase_profile_times_each_phase_per_step_and_restores_the_engine(bench):
    log = []
    llm, (scheduler, runner, eng) = fake_llm(log)
    before = (scheduler.schedule, runner._model_forward, eng.step)

    def call(round_):
        for _ in range(3):
            llm.llm_engine.step()
        return 0.5, 300

    out = bench.phase_profile(llm, call)
    assert out["steps"] == 3 and out["tokens_per_s"] == 600
    assert set(out["ms_per_step"]) == {"step", "schedule", "model_forward", "sample",
                                       "update_from_output", "process_outputs", "other"}
    assert all(v >= 0 for v in out["ms_per_step"].values())
    assert log == ["schedule", "forward", "sample", "update", "out"] * 3
    assert (scheduler.schedule, runner._model_forward, eng.step) == before


def test_phase_profile_says_so_for_an_engine_it_does_not_know(bench):
    llm = SimpleNamespace(llm_engine=SimpleNamespace(step=lambda: None))
    out = bench.phase_profile(llm, lambda r: (1.0, 1))
    assert "unavailable" in out
    assert llm.llm_engine.step() is None and "step" in vars(llm.llm_engine)
