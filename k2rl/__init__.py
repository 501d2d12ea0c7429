"""k2rl: RL post-training of a language model after the Kimi K2 recipe, in floors.

Each floor is a package of modules with one concept each; a module imports only from its own
floor and the floors below it (tests/test_layers.py checks this, and that no import makes a
cycle). From the bottom:

    k2rl.config       the run's settings (typed dataclasses, loaded from YAML)   imports no floor
    k2rl.lm           the language model: chat layout, log-probs, precision      config
    k2rl.tasks        the run's environments: where from, made with what         config
    k2rl.device       the weights on the machine: vLLM engine, weight push,      config, lm
                      LoRA, data-parallel groups, offload, colocation
    k2rl.step         one RL step as logic: groups, rewards, sampling, rollout,  the floors above
                      loss, update, the policy as critic, held-out sets          this line
    k2rl.bootstrap    the embedded default: its model, warm-start, PTX set       ... and step
    k2rl.runtime      the run's processes: hybrid workers, their group, the      ... and bootstrap
                      run store and its redis-server, the reaper
    k2rl (the app)    the `k2rl` command (cli), the RL loop (controller),        everything
                      metrics (loggers), a quiet terminal (terminal), report,
                      viewer

Beside k2rl, and below all of it: envs/ (the gym; imports rewards/ only), rewards/ (pure
verifiers; rewards.sandbox runs code) and critic/ (the critic's pure logic).
"""
