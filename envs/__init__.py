"""k2rl's text environments, registered with gymnasium under the "k2rl/" namespace.

Entry points are strings so that ``gymnasium.make`` imports an env module only
when that env is built.
"""

from __future__ import annotations

import gymnasium

from envs.base import TextEnv, has_expert, split_of
from envs.judging import TeachesJudging

# A version is bumped where its scores change: Math-v2, Countdown-v1 and Code-v1 read the final
# answer of a reply in the styles real models write (rewards.extract), where v1, v0 and v0
# scored working, tags and code fences 0. Arithmetic, Calculator, Instructions, Chat and Lookup
# keep their ids: the embedded default's recipes name them (k2rl.bootstrap.recipe) and their
# terse replies read as before (bench/results/default_run_verifiers.json).
_ENTRY_POINTS = {
    "k2rl/Arithmetic-v1": "envs.arithmetic:ArithmeticEnv",
    "k2rl/Arithmetic-v2": "envs.arithmetic:WorkedArithmeticEnv",
    "k2rl/Calculator-v1": "envs.calculator:CalculatorEnv",
    "k2rl/Math-v2": "envs.math:MathEnv",
    "k2rl/Countdown-v1": "envs.countdown:CountdownEnv",
    "k2rl/Sudoku-v1": "envs.sudoku:SudokuEnv",
    "k2rl/Instructions-v0": "envs.instructions:InstructionsEnv",
    "k2rl/Instructions-v1": "envs.instructions:TopicInstructionsEnv",
    "k2rl/Lookup-v1": "envs.lookup:LookupEnv",
    "k2rl/Code-v1": "envs.code:CodeEnv",
    "k2rl/Chat-v1": "envs.chat:ChatEnv",
    # for pretrained chat models (configs/smollm2.yaml): IFEval-style wording, real answers
    "k2rl/WordSums-v0": "envs.word_sums:WordSumsEnv",
    "k2rl/ShortWriting-v1": "envs.short_writing:ShortWritingEnv",
    "k2rl/Describe-v0": "envs.describe:DescribeEnv",  # rewarded by the critic alone
}
# Environments that need arguments (a task's `kwargs` in the config) to be made at all.
_WITH_ARGUMENTS = {"k2rl/Dataset-v0": "envs.dataset:DatasetEnv"}
K2RL_ENV_IDS: tuple[str, ...] = tuple(_ENTRY_POINTS)
# Made only with a task's kwargs (tests/envs/test_dataset.py checks them with data of its own).
K2RL_ARGUMENT_ENV_IDS: tuple[str, ...] = tuple(_WITH_ARGUMENTS)

for _env_id, _entry_point in _ENTRY_POINTS.items():
    # The module can be imported twice (e.g. reloaded, or once as a different
    # path); registering an id again would warn or clash.
    if _env_id not in gymnasium.registry:
        gymnasium.register(id=_env_id, entry_point=_entry_point)
for _env_id, _entry_point in _WITH_ARGUMENTS.items():
    if _env_id not in gymnasium.registry:
        gymnasium.register(id=_env_id, entry_point=_entry_point)

__all__ = ["K2RL_ARGUMENT_ENV_IDS", "K2RL_ENV_IDS", "TeachesJudging", "TextEnv", "has_expert",
           "split_of"]
