"""A run's processes: the hybrid worker (a vLLM engine and the trainer in one Ray actor), N of
them as one (worker_group), the run's redis-server (redis_server) and its durable state over it
(store), and the watchdog that stops them all when the driver dies (reaper).

May import: every floor below it (k2rl.config, lm, tasks, device, step, bootstrap), envs,
rewards, critic.
"""
