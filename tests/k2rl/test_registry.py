"""Users add environments without touching k2rl: module, plugin entry point, config string."""
import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import gymnasium
import pytest

from k2rl.config import ConfigError, load_config
from k2rl.tasks import make as task_envs
from k2rl.tasks import registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "custom_env"


@pytest.fixture
def example_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield
    gymnasium.registry.pop("myorg/Echo-v0", None)
    sys.modules.pop("k2rl_example_env", None)


def test_module_named_in_config_registers_its_envs(example_on_path):
    registry.load_envs(load_config(EXAMPLE / "config.yaml"))
    assert "myorg/Echo-v0" in gymnasium.registry
    assert registry.SOURCES["myorg/Echo-v0"] == "module k2rl_example_env"


def test_plugin_entry_point_is_loaded_and_called(example_on_path, monkeypatch):
    ep = EntryPoint("example", "k2rl_example_env:register", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == ep.group else [])
    registry.load_envs(load_config(None, ["tasks=[{id: myorg/Echo-v0}]"]))
    assert "myorg/Echo-v0" in gymnasium.registry


def test_entry_point_string_in_config(example_on_path):
    gymnasium.registry.pop("myorg/Echo2-v0", None)
    cfg = load_config(None, ['tasks=[{id: myorg/Echo2-v0, entry_point: "k2rl_example_env.echo:EchoEnv"}]'])
    registry.load_envs(cfg)
    env = gymnasium.make("myorg/Echo2-v0").unwrapped
    obs, _ = env.reset(seed=0)
    assert env.step(obs.removeprefix("say "))[1] == 1.0
    gymnasium.registry.pop("myorg/Echo2-v0")


def test_broken_plugin_and_missing_module_are_clear_errors(monkeypatch):
    ep = EntryPoint("broken", "no_such_pkg_k2rl:register", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep])
    with pytest.raises(ConfigError, match="entry point broken = no_such_pkg_k2rl:register"):
        registry.load_envs(load_config(None))
    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    with pytest.raises(ConfigError, match="cannot import environment module 'nope_mod'"):
        registry.load_envs(load_config(None, ["env_modules=[nope_mod]"]))


@pytest.mark.slow
def test_custom_environment_trains_end_to_end(tmp_path):
    """The example package trains through `k2rl train` (tiny model, 2 steps)."""
    cmd = [sys.executable, "-m", "k2rl", "train", "examples/custom_env/config.yaml",
           "model.default=tiny",
           "train.steps=2", "rollout.k=2", "rollout.prompts_per_step=4", "eval.prompts_per_task=4",
           "log.progress=false", f"log.run_dir={tmp_path}", "log.run_name=echo"]
    # the example package and this checkout (so the Ray workers import the k2rl under test)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)])}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "echo" in proc.stdout  # the held-out table has a row for the outside task


@pytest.fixture
def long_prompts(tmp_path):
    """A dataset task whose last 10 train rows and 5 eval rows are too long for the engine."""
    import json

    from envs.dataset import fitting, load_splits, prompt_space
    from tests.k2rl.fixtures import chatml_tokenizer

    tok_dir = tmp_path / "tok"
    chatml_tokenizer().save_pretrained(tok_dir)
    short = [{"q": f"What is {a} plus {b}?", "a": str(a + b)} for a in range(10) for b in range(5)]
    long = [{"q": f"Add {a} and 1. " + "Please be careful. " * 40, "a": str(a + 1)}
            for a in range(15)]
    for name, rows in (("train", short + long[:10]), ("eval", short[:5] + long[10:])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for cache in (load_splits, prompt_space, fitting):
        cache.cache_clear()
    task = (f"{{id: k2rl/Dataset-v0, kwargs: {{files: {tmp_path}/train.jsonl, eval_files: "
            f"{tmp_path}/eval.jsonl, prompt_field: q, answer_field: a, budget: 8}}}}")
    kwargs = task_envs._kwargs
    yield task, str(tok_dir)
    task_envs.use_kwargs(kwargs)


def test_prompts_too_long_for_the_engine_are_left_out_where_the_engine_makes_the_env(
        long_prompts):
    task, tok_dir = long_prompts
    cfg = load_config(None, [f"tasks=[{task}]", "engine.max_model_len=72"])
    registry.load_envs(cfg)
    assert registry.limit_prompts(cfg, tok_dir) == [
        "tasks[0] (k2rl/Dataset-v0): skipped 10 train and 5 eval prompts longer than 64 tokens "
        "(engine.max_model_len 72 minus the budget)"]
    # The limit travels with the config (to the workers, and in a resumed run's config).
    assert cfg.tasks[0].kwargs["tokenizer"] == tok_dir
    assert cfg.tasks[0].kwargs["max_prompt_tokens"] == 64
    env = task_envs.make_env("k2rl/Dataset-v0")
    assert env.skipped == {"train": 10, "eval": 5}
    assert not any("careful" in row.prompt for rows in env.splits.values() for row in rows)
    # A worker process makes the same environment from the config it is given.
    registry.load_envs(cfg)
    assert task_envs.make_env("k2rl/Dataset-v0").skipped == {"train": 10, "eval": 5}
    assert gymnasium.spec("k2rl/Dataset-v0").kwargs == {}  # the registry is left as registered


def test_a_budget_that_leaves_no_room_or_a_prompt_too_long_is_an_error(long_prompts):
    task, tok_dir = long_prompts
    cfg = load_config(None, [f"tasks=[{task}]", "engine.max_model_len=8"])
    registry.load_envs(cfg)
    with pytest.raises(ConfigError, match=r"tasks\[0\] \(k2rl/Dataset-v0\): its budget of 8 "
                                          r"tokens leaves no room for a prompt"):
        registry.limit_prompts(cfg, tok_dir)
    strict = task.replace("budget: 8", "budget: 8, too_long: error")
    cfg = load_config(None, [f"tasks=[{strict}]", "engine.max_model_len=72"])
    registry.load_envs(cfg)
    with pytest.raises(ConfigError, match=r"cannot be made with its kwargs: DatasetError: line 51 "
                                          r"of .*train.jsonl: its prompt is \d+ tokens, more than "
                                          r"the 64"):
        registry.limit_prompts(cfg, tok_dir)
