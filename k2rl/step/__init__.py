"""One RL step as logic over typed groups: the unit of work (group) and its reward (reward),
which prompts (sampling, schedules), multi-turn rollouts over any generate function (rollout),
the policy losses (loss) and the update (trainer), the policy as judge, and what a run
measures itself on (heldout).

The policy as judge is the engine side of the critic (K2 sec. 3.2.2): critic/ holds the
rubrics, the judge's conversation (critic.layout), the pairwise arithmetic, the pairs and the
evaluation as pure logic; here is everything of it that needs the model, its tokenizer or the
run: the judge's conversation as token ids (judge_ids), the judge over the engine and ranking a
step's critic-rewarded groups (judging), the closed loop of labelled pairs and the judge's own
training examples (critic_loop), and the warm-start's scripted judgments (critic_demos).

May import: k2rl.config, k2rl.lm, k2rl.tasks, k2rl.device, envs, rewards, critic.
"""
