"""Users add environments without touching k2rl: module, plugin entry point, config string."""
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import gymnasium
import pytest

from k2rl import registry
from k2rl.config import ConfigError, load_config

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
           "model.hidden_size=64", "model.num_layers=2", "model.num_heads=2",
           "model.intermediate_size=128", "model.sft_steps=20", "model.sft_batch=16",
           "train.steps=2", "rollout.k=2", "rollout.prompts_per_step=4", "eval.prompts_per_task=4",
           "log.progress=false", f"log.run_dir={tmp_path}", "log.run_name=echo"]
    env = {**__import__("os").environ, "PYTHONPATH": str(EXAMPLE)}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "echo" in proc.stdout  # the held-out table has a row for the outside task
