"""The embedded default: the small model k2rl builds when no model is given (model), its
supervised warm-start on the environments' scripted experts (sft), and the PTX set mixed into
every update (ptx).

May import: the floors below it (k2rl.config, lm, tasks, device, step), envs, rewards, critic.
"""
