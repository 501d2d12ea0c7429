"""One RL step as logic over typed groups: the unit of work (group) and its reward (reward),
which prompts (sampling, schedules), multi-turn rollouts over any generate function (rollout),
the policy losses (loss) and the update (trainer), the policy as critic, and what a run
measures itself on (heldout).

The policy as critic (K2 sec. 3.2.2) has two sides: critic/ holds the rubrics, the critic's
conversation (critic.layout), the pairwise arithmetic, the pairs and the evaluation as pure
logic; here is everything of it that needs the model, its tokenizer or the run: the critic's
conversation as token ids (critic_ids), the critic over the engine and ranking a step's
critic-rewarded groups (critic_engine), the closed loop of labelled pairs and the critic's own
training examples (critic_loop), and the warm-start's scripted judgments (critic_demos).

May import: k2rl.config, k2rl.lm, k2rl.tasks, k2rl.device, envs, rewards, critic.
"""
