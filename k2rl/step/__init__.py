"""One RL step as logic over typed groups: the unit of work (group) and its reward (reward),
which prompts (sampling, schedules), multi-turn rollouts over any generate function (rollout),
the policy losses (loss) and the update (trainer), the policy as judge (self_critique), and
what a run measures itself on (heldout).

May import: k2rl.config, k2rl.lm, k2rl.tasks, k2rl.device, envs, rewards, critic.
"""
