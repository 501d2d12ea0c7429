"""An environment package outside k2rl: `myorg/Echo-v0`, repeat a short word back.

It depends only on gymnasium and k2rl's `envs.base.TextEnv` and `rewards` registry; k2rl finds
it through (a) `env_modules: [k2rl_example_env]` in a config, (b) the `k2rl.envs` entry point
of this package once installed (`pip install examples/custom_env`), or (c) an `entry_point`
string. Each way imports this module, whose `register()` adds the environment to gymnasium's
registry and its verifier, `exact_text`, to k2rl's (`rewards.register_reward`). k2rl imports
the modules of `env_modules` in the driver and in every worker process, so both registries
hold them wherever an episode is scored.
"""
import gymnasium

from rewards import REWARDS, register_reward

from k2rl_example_env.verifier import exact_text

ENV_ID = "myorg/Echo-v0"
REWARD_NAME = "exact_text"


def register() -> None:
    """Register the env and its verifier; a second call (or a second import) is a no-op."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="k2rl_example_env.echo:EchoEnv")
    if REWARD_NAME not in REWARDS:  # register_reward refuses to replace a verifier
        register_reward(REWARD_NAME, exact_text)


register()
