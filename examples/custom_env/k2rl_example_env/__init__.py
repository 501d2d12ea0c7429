"""An environment package outside k2rl: `myorg/Echo-v0`, repeat a short word back.

It depends only on gymnasium and k2rl's `envs.base.TextEnv`; k2rl finds it through
(a) `env_modules: [k2rl_example_env]` in a config, (b) the `k2rl.envs` entry point of this
package once installed (`pip install examples/custom_env`), or (c) an `entry_point` string.
"""
import gymnasium

ENV_ID = "myorg/Echo-v0"


def register() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="k2rl_example_env.echo:EchoEnv")


register()
