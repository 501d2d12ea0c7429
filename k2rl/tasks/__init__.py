"""The run's tasks as environments: where they come from (registry: k2rl's own, the user's
modules, installed plugins, the config) and how the engine makes them, with their tasks'
kwargs (make).

May import: k2rl.config, envs, rewards.
"""
