"""The embedded default model's recipes: how each is sized, warm-started and taught to judge.

A run that sets no `model.path` starts from the default model that `model.default` names here
("small" unless set); k2rl.bootstrap.model builds it (or takes its shipped weights) and caches
it under a hash of its fields. A recipe is a build, not a run setting: none of its fields is in
the user's config, and a variant is a new entry in `RECIPES` (a new name, so a new cache
folder), not an override. Light on purpose (no torch): `recipe_for` checks a run's name.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from k2rl.config import ConfigError, ModelConfig


@dataclass(frozen=True)
class Recipe:
    """One build of the default model. Its fields are hashed into its cache folder's name
    (k2rl.bootstrap.model.recipe_fields), so changing one builds another model. The judging
    phase's `judge_*` fields keep the critic's old name for that reason: renaming a field
    changes every cache key and forces a rebuild."""
    hidden_size: int = 256
    """Width of the Qwen2 residual stream."""
    num_layers: int = 4
    """Number of transformer blocks."""
    num_heads: int = 4
    """Attention heads (key/value heads are the same number)."""
    intermediate_size: int = 768
    """Width of the MLP."""
    sft_steps: int = 800
    """Supervised warm-start steps on generated demonstrations (800 for the four default
    families: as many demonstrations each as 600 gave three)."""
    sft_batch: int = 64
    """Sequences per warm-start step."""
    sft_lr: float = 2e-3
    """Peak AdamW learning rate of the warm-start."""
    tool_rate: float = 0.35
    """Share of calculator demonstrations that call the tool (the rest guess)."""
    word_demos: bool = True
    """Every k2rl/Instructions-v1 demonstration asks to include or avoid a quoted word (the
    environment's `word_constraint`); False: its own draw, where half do. True by default,
    because with half the default model does not learn to copy the word and RL does not teach
    it; False only to reproduce the older warm-start (measured: docs/controls.md, Why the
    defaults are what they are)."""
    demo_tasks: list[str] = field(default_factory=lambda: [
        "k2rl/Arithmetic-v2", "k2rl/Calculator-v1", "k2rl/Instructions-v1", "k2rl/Chat-v1"])
    """Environments whose scripted experts play the warm-start demonstrations, each as often as
    it is listed (default: the default tasks, k2rl.config.DEFAULT_TASKS, once each; written out
    here so that a change of the run's default mix does not change this build). List a task
    twice to give it two shares; a task whose expert shows its working (Arithmetic-v2's
    columns) teaches more from one share than one that answers at once (Arithmetic-v1) does
    from two (measured: docs/controls.md, Why the defaults are what they are)."""
    critic_demo_rate: float = 0.1
    """Share of warm-start sequences that are scripted judgments (k2rl.bootstrap.sft): on
    training-split prompts of the demo tasks that teach judging, the expert's answer against
    a wrong one, with the critic's own working, a check line per answer and the verdict
    (critic.layout), so the critic knows the format before RL refreshes it; 0: none."""
    copy_demo_rate: float = 0.0
    """Share of warm-start sequences that are copying drills (made-up words repeated or listed,
    k2rl.bootstrap.copying), so the model learns to copy what it has not seen, as the critic's
    checks must copy a reply's words; 0: none."""
    judge_steps: int = 3000
    """Steps of a judging phase after the warm-start: it continues the warm-started model (the
    build without this phase, cached apart) on batches of which `judge_share` are scripted
    judgments and the rest demonstrations, at `judge_lr` (down a cosine), so that the checks'
    one-character decisions (a mismatch mark, a finding) get the examples that the warm-start's
    small share of judgments does not give them; 0: none. 3000 steps take 3 minutes on an H200
    and 2-4 hours on 2 CPU cores, so the small recipe's weights are shipped (`model.prebuilt`);
    recipe 11's 200 steps judged the held-out pairs 77%, 3000 with the instruction scripts'
    options 97% (measured: bench/archive/notebook.md, The judging phase; The prebuilt
    default)."""
    judge_share: float = 0.5
    """Share of the judging phase's sequences that are scripted judgments."""
    judge_lr: float = 1e-3
    """Peak AdamW learning rate of the judging phase (warm-up, then a cosine to a tenth)."""
    instr_bounds: bool = True
    """The scripted instruction checks write each count beside its bound ("1 words, min 2 no")
    instead of the count alone ("1 words no"; envs.instructions, the critic's scripts)."""
    instr_misspell_rate: float = 0.5
    """Share of the scripted wrong instruction replies that misspell a word, as the policy's
    samples do. With `instr_bounds` and 0.5, a 1500-step judging phase (92 s on an H200, about
    90 minutes on 2 CPU cores) judges the held-out instruction pairs 69% (54% without); at
    recipe 11's 200 steps neither helps (bench/archive/notebook.md, "Misspelled wrong
    replies, bounds beside counts")."""
    instr_compare: bool = True
    """The scripted instruction checks compare each listed word with the quoted one, a letter
    pair at a time, and carry a running "found" flag ("1 plum+ pf!. 2 fig+ ffiigg=^";
    envs.instructions.word_list), so that the include and avoid findings read one flag
    instead of looking the word up among the listed ones (bench/archive/notebook.md,
    "Finding the quoted word"). With it, a 3000-step phase judges the held-out instruction
    pairs 91%, 73% without it."""
    seed: int = 0
    """Seed of initialisation and demonstration data."""

    def __post_init__(self) -> None:
        _require(self.hidden_size % self.num_heads == 0, "hidden_size",
                 "must be divisible by num_heads")
        _require(0.0 <= self.tool_rate <= 1.0, "tool_rate", "must lie in [0, 1]")
        _require(self.critic_demo_rate >= 0 and self.copy_demo_rate >= 0
                 and self.critic_demo_rate + self.copy_demo_rate <= 1.0,
                 "critic_demo_rate + copy_demo_rate", "must lie in [0, 1]")
        _require(self.judge_steps >= 0, "judge_steps", "must be >= 0 (0 is off)")
        _require(0.0 < self.judge_share <= 1.0, "judge_share", "must lie in (0, 1]")
        _require(self.judge_lr > 0, "judge_lr", "must be > 0")
        _require(0.0 <= self.instr_misspell_rate < 1.0, "instr_misspell_rate",
                 "must lie in [0, 1)")
        for name in ("hidden_size", "num_layers", "num_heads", "intermediate_size", "sft_batch"):
            _require(getattr(self, name) > 0, name, "must be > 0")


def _require(ok: bool, name: str, why: str) -> None:
    if not ok:
        raise ValueError(f"recipe field {name} {why}")


# The recipes `model.default` may name. Each configs/ file that once changed the recipe's fields
# names its recipe here instead; its cache folder (the hash of its fields) is the one it had.
RECIPES: dict[str, Recipe] = {
    # The default: 3.4 M parameters, the warm-start, then a 3000-step judging phase with the
    # instruction scripts' options; its weights ship with k2rl (k2rl/bootstrap/prebuilt).
    "small": Recipe(),
    # Seconds-long smoke tests (configs/tiny.yaml): an almost untrained model, no judging phase.
    "tiny": Recipe(hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128,
                   sft_steps=20, sft_batch=16, judge_steps=0),
    # Recipe 11, the default build until 2026-11-27 (configs/recipe11.yaml): a 200-step judging
    # phase and the instruction scripts' options off. Built here on first use.
    "recipe11": Recipe(judge_steps=200, instr_bounds=False, instr_misspell_rate=0.0,
                       instr_compare=False),
    # The small model without the critic's cold start (configs/critic.yaml): no scripted
    # judgments in the warm-start and no judging phase, so the critic meets its format only in
    # the closed-loop refresh.
    "no-cold-start": Recipe(critic_demo_rate=0.0, judge_steps=0),
    # Demonstrations of multi-turn lookup in place of instructions and chat (configs/gym-mix.yaml).
    "lookup": Recipe(demo_tasks=["k2rl/Arithmetic-v2", "k2rl/Calculator-v1", "k2rl/Lookup-v1"]),
}


def recipe_for(model: ModelConfig) -> Recipe:
    """The recipe a run's `model.default` names; ConfigError naming the choices where none is
    named so (the config floor cannot see this module, so the name is checked here)."""
    if model.default not in RECIPES:
        raise ConfigError(f"config key model.default must name a recipe of "
                          f"k2rl/bootstrap/recipe.py ({', '.join(RECIPES)}), "
                          f"not {model.default!r}")
    return RECIPES[model.default]
