"""examples/custom_env as its README runs it: the env and its own verifier (``exact_text``),
registered by the package that ``env_modules`` names, score a right and a wrong reply."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium
import pytest

import rewards
from k2rl.config import load_config
from k2rl.tasks import make as task_envs
from k2rl.tasks.make import make_env
from k2rl.tasks.registry import SOURCES, load_envs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "custom_env"


@pytest.fixture
def example(monkeypatch):
    """The README's `PYTHONPATH=$PWD/examples/custom_env`, undone afterwards (registries too)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    had_reward, kwargs = "exact_text" in rewards.REWARDS, task_envs._kwargs
    yield
    gymnasium.registry.pop("myorg/Echo-v0", None)
    for name in [m for m in sys.modules if m.split(".")[0] == "k2rl_example_env"]:
        sys.modules.pop(name)
    if not had_reward:
        rewards.REWARDS.pop("exact_text", None)
    task_envs.use_kwargs(kwargs)


def test_the_config_registers_the_env_and_its_verifier(example) -> None:
    load_envs(load_config(EXAMPLE / "config.yaml"))
    assert SOURCES["myorg/Echo-v0"] == "module k2rl_example_env"
    from k2rl_example_env.verifier import exact_text

    assert rewards.get_reward("exact_text") is exact_text
    # A second import, or the entry point called after it, registers nothing twice.
    import k2rl_example_env

    k2rl_example_env.register()


@pytest.mark.parametrize(("reply", "reward"), [("{word}", 1.0), (" {word}\n", 1.0),
                                               ("say {word}", 0.0), ("catcat dogdog", 0.0)])
def test_the_env_scores_a_right_and_a_wrong_reply(example, reply: str, reward: float) -> None:
    load_envs(load_config(EXAMPLE / "config.yaml"))
    env = make_env("myorg/Echo-v0")
    assert type(env).__name__ == "EchoEnv" and env.reward_name == "exact_text"
    own = [name for name, v in vars(type(env)).items() if callable(v) and not name.startswith("__")]
    assert own == ["_draw"]  # one method: the draw; scoring is the named verifier's
    prompt, _ = env.reset(seed=3)
    word = prompt.removeprefix("say ")
    _, got, terminated, _, info = env.step(reply.format(word=word))
    assert (got, terminated, info["correct"]) == (reward, True, reward == 1.0)
    assert "extracted" not in info  # exact_text reads the whole reply: no answer format


def test_the_docs_env_is_the_example_s() -> None:
    """docs/data-and-envs.md's single-turn environment is examples/custom_env's, as written."""
    import re

    doc = (ROOT / "docs" / "data-and-envs.md").read_text()
    shown = re.search(r"```python\n(from envs.base import Problem, TextEnv\n.*?)```", doc,
                      re.DOTALL).group(1)
    echo = (EXAMPLE / "k2rl_example_env" / "echo.py").read_text()
    assert echo.endswith(shown) and len(shown.splitlines()) <= 15


def test_the_docs_verifier_example_runs(tmp_path, monkeypatch) -> None:
    """docs/data-and-envs.md's "A verifier of your own", as written, through a config."""
    import re

    doc = (ROOT / "docs" / "data-and-envs.md").read_text()
    code = re.search(r"```python\n# my_rewards/__init__.py\n(.*?)```", doc, re.DOTALL).group(1)
    (tmp_path / "my_rewards").mkdir()
    (tmp_path / "my_rewards" / "__init__.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    had_reward, kwargs = "reversed_word" in rewards.REWARDS, task_envs._kwargs
    try:
        load_envs(load_config(None, ["env_modules=[my_rewards]",
                                     "tasks=[{id: myorg/Reverse-v0, weight: 1.0}]"]))
        scores = []
        for reply in ("{answer}", "Answer: **{answer}**", "{answer} or {word}", "{word}"):
            env = make_env("myorg/Reverse-v0")
            prompt, _ = env.reset(seed=0)
            word = prompt.split("'")[1]
            scores.append(env.step(reply.format(answer=word[::-1], word=word))[1])
        assert scores == [1.0, 1.0, 0.0, 0.0]
    finally:
        gymnasium.registry.pop("myorg/Reverse-v0", None)
        sys.modules.pop("my_rewards", None)
        if not had_reward:
            rewards.REWARDS.pop("reversed_word", None)
        task_envs.use_kwargs(kwargs)
