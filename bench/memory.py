"""One RL step of a model of Qwen2.5-0.5B's shape on this CPU, in k2rl and in TRL: peak memory
and seconds.

    python bench/memory.py [--prompts 4] [--k 4] [--part both|k2rl|trl]
                           [--out bench/results/memory.json]
    python bench/memory.py --part k2rl --label lora_r16 --lora 16        # a LoRA row
    python bench/memory.py --part k2rl --label lora_r16_1.5b_bf16 --lora 16 --shape 1.5b \
                           --dtype bfloat16                              # the 1.5B row
    python bench/memory.py --part update --label update_lora_r16_bf16 --lora 16 \
                           --dtype bfloat16 --threads 1                  # the update alone

A randomly initialised Qwen2 with Qwen2.5-0.5B's shape (vocabulary 151,936, 24 layers, hidden
896, 14 heads of 64, 2 key/value heads, MLP 4,864, tied embeddings: 494 M parameters, fp32) is
built with a ChatML byte-level BPE tokenizer made here (nothing is downloaded). Then, each in a
fresh child process so that neither measurement sees the other's memory:

- k2rl: one in-process hybrid worker (the vLLM engine and the trainer) does what a run step
  does: roll out `--prompts` k2rl/Calculator-v1 prompts K times each, one update of the Kimi
  loss (old log-probs, then two AdamW steps, the chunked log-prob path), and the weight push
  into the engine.
- TRL (if `trl` is installed, `pip install -e .[bench]`): GRPOTrainer on the same prompts, K,
  completion budget and batch, without vLLM (HF `generate`): one generation, old log-probs,
  and two AdamW steps on it (`num_iterations=2`, so `max_steps=2`: TRL counts each optimizer
  step as a step). `TRL_MATCHED` and `TRL_UNMATCHED` list what is and is not the same.

Each process records its peak resident memory (`ru_maxrss`) after each phase, with the seconds
the phase took (wall and CPU seconds, with the load average: the machine is shared). `--part
both` (the default) runs the two children one after the other and writes both results to
`--out`, TRL's under "trl_grpo". `--part update` times k2rl's update alone (`run_update`): no
engine and no rollout, so a full/LoRA comparison of the trainer costs a fraction of a step.
"""
import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPE = dict(vocab_size=151_936, hidden_size=896, intermediate_size=4_864, num_hidden_layers=24,
             num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=512,
             tie_word_embeddings=True, rope_theta=1_000_000.0)
# Qwen2.5-1.5B's shape (1.54 B parameters): for the LoRA + bf16-base row (issue 31).
SHAPES = {"0.5b": SHAPE,
          "1.5b": dict(SHAPE, hidden_size=1_536, intermediate_size=8_960, num_hidden_layers=28,
                       num_attention_heads=12, num_key_value_heads=2)}
TASK = "k2rl/Calculator-v1"
K2RL_TRAIN_PHASE = "train (Kimi loss, 2 AdamW steps)"

TRL_MATCHED = {
    "model": "same random Qwen2 (seed 0, fp32 weights), same tokenizer",
    "prompts": "the same k2rl/Calculator-v1 prompts (seeds 0..prompts-1), same ChatML rendering",
    "k": "num_generations = K; one generation batch of prompts x K completions",
    "completion_length": "max_completion_length = the environment's token budget (24)",
    "sampling": "temperature 1.0, top_p 1.0, no top-k (k2rl's step-1 sampling)",
    "precision": "fp32 (bf16=False, fp16=False)",
    "optimizer": "torch AdamW (optim=adamw_torch), lr 5e-5 constant, weight decay 0, "
                 "betas (0.9, 0.999), grad-norm clip 1.0",
    "updates": "old log-probs of the batch, then 2 optimizer steps on it (k2rl inner_steps=2 "
               "<-> TRL num_iterations=2, max_steps=2)",
    "gradient_checkpointing": "off on both sides (TRL's default is on)",
    "reference_model": "none (beta=0; k2rl's loss has no KL to a reference either)",
    "log_probs": "both compute token log-probs without all logits at once (k2rl chunked head, "
                 "TRL's fused LM head)",
    "threads": "2 OpenMP threads on 2 cores",
}
TRL_UNMATCHED = {
    "loss": "TRL's clipped GRPO surrogate (loss_type dapo, epsilon 0.2, advantages scaled by the "
            "group std) instead of the Kimi squared loss; the same forward/backward cost",
    "rollout": "HF generate on the training model (no vLLM on CPU in TRL here), so there is no "
               "engine, no KV-cache reservation and no weight push",
    "episodes": "single turn: TRL's prompt-only dataset has no calculator tool loop. The random "
                "model never ends its reply, so k2rl's episodes also stop at the 24-token budget "
                "after one turn",
    "reward": "a plain exact-integer reward function on the completion text (the environment's "
              "verifier in k2rl); on random text both give 0",
}


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # kB -> GiB


def cpu_seconds() -> float:
    """CPU time of this process so far (all its threads): on a machine shared with other work,
    a phase's CPU seconds move much less with the load than its wall-clock seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Phases(dict):
    """{phase name: {"seconds", "cpu_seconds", "peak_rss_gib"}}, printed as each phase ends
    (`begin` starts the next phase's clocks)."""

    def begin(self) -> float:
        self.cpu = cpu_seconds()
        return time.perf_counter()

    def end(self, name: str, start: float) -> None:
        self[name] = {"seconds": round(time.perf_counter() - start, 2),
                      "cpu_seconds": round(cpu_seconds() - getattr(self, "cpu", 0.0), 2),
                      "peak_rss_gib": round(peak_gib(), 2),
                      "load_average": [round(x, 2) for x in os.getloadavg()]}
        print(name, self[name], flush=True)

    def total(self, names) -> float:
        return round(sum(self[n]["seconds"] for n in names), 2)


def make_model(shape: dict = SHAPE, dtype: str = "float32"):
    """A random model of `shape` (seed 0; Qwen2.5-0.5B's by default) and its ChatML tokenizer."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    from tests.k2rl.fixtures import chatml_tokenizer

    tok = chatml_tokenizer()
    torch.manual_seed(0)
    torch.set_default_dtype(getattr(torch, dtype))  # a 1.5B fp32 build would need 6 GiB more
    model = Qwen2ForCausalLM(Qwen2Config(**shape, eos_token_id=tok.eos_token_id,
                                         pad_token_id=tok.pad_token_id))
    torch.set_default_dtype(torch.float32)
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id)
    return model, tok


def build(folder: Path, shape: dict = SHAPE, dtype: str = "float32") -> Path:
    """`make_model`'s model and tokenizer saved as an HF folder."""
    model, tok = make_model(shape, dtype)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


# ---- k2rl


def run_k2rl(prompts: int, k: int, lora: int = 0, shape: str = "0.5b", dtype: str = "float32",
             checkpointing: bool = False) -> dict:
    """One k2rl step in one in-process hybrid worker (this process): full fine-tuning, or
    with `lora` > 0 a LoRA adapter of that rank on every attention and MLP projection."""
    from k2rl.device import engine

    engine.configure_env(2, kv_cache_gib=2)
    from k2rl.config import load_config
    from k2rl.runtime.hybrid import HybridWorker
    from k2rl.step.group import Request, trajectories

    phases = Phases()
    with tempfile.TemporaryDirectory() as tmp:
        t = phases.begin()
        folder = build(Path(tmp) / f"qwen2.5-{shape}-shape", SHAPES[shape], dtype)
        phases.end("build and save", t)
        overrides = [f"model.path={folder}", "critic.refresh=false", "engine.kv_cache_gib=2",
                     f"model.dtype={dtype}"]
        if lora:
            overrides.append(f"model.lora={{rank: {lora}, alpha: {2 * lora}}}")
        if checkpointing:
            overrides.append("train.gradient_checkpointing=true")
        cfg = load_config(None, overrides)
        t = phases.begin()
        worker = HybridWorker(str(folder), cfg)
        phases.end("start (trainer + vLLM engine)", t)
        reqs = [Request(TASK, s, group=s, k=k) for s in range(prompts)]
        t = phases.begin()
        groups = worker.rollout(reqs, 1)
        phases.end("rollout", t)
        t = phases.begin()
        metrics = worker.train(groups, 1)
        phases.end(K2RL_TRAIN_PHASE, t)
        t = phases.begin()
        sync = worker.sync()
        phases.end("weight push", t)
    trainable = sum(p.numel() for p in worker.model.parameters() if p.requires_grad)
    return {"shape": SHAPES[shape], "dtype": dtype, "lora_rank": lora or None,
            "gradient_checkpointing": checkpointing, "parameters": worker.param_count(), "trainable_parameters": trainable,
            "trajectories": len(groups) * k,
            "tokens": sum(len(x.ids) for x in trajectories(groups)), "phases": phases,
            "seconds_per_step": phases.total(["rollout", K2RL_TRAIN_PHASE, "weight push"]),
            "peak_rss_gib": round(peak_gib(), 2), "logp_gap": metrics["logp_gap"],
            "sync_gb": sync["sync_bytes"] / 1e9}


def vm_gib(field: str) -> float:
    """VmRSS or VmHWM (peak RSS) of this process from /proc/self/status, in GiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 2 ** 20
    raise KeyError(field)


def update_batch(prompts: int, k: int, prompt_len: int = 17, reply_len: int = 24) -> list:
    """`prompts` groups of K random-token trajectories shaped like the k2rl step's (a 17-token
    Calculator prompt, a 24-token reply: 656 tokens for 4 x 4), half of them rewarded."""
    import numpy as np

    from k2rl.step.group import Group, Request, Status, Trajectory

    rng = np.random.default_rng(0)
    groups = []
    for g in range(prompts):
        prompt = [int(x) for x in rng.integers(10, 150_000, size=prompt_len)]
        group = Group(Request(TASK, g, group=g, k=k), 1)
        for i in range(k):
            reply = [int(x) for x in rng.integers(10, 150_000, size=reply_len)]
            group.trajectories.append(Trajectory(
                f"1:{g}:{i}", TASK, "calculator", str(g), i, ids=prompt + reply,
                mask=[0] * prompt_len + [1] * reply_len, rewards={"task": float(i % 2)},
                n_tokens=reply_len, status=Status.DONE))
        groups.append(group)
    return groups


def run_update(prompts: int, k: int, lora: int = 0, shape: str = "0.5b", dtype: str = "float32",
               threads: int = 2) -> dict:
    """The trainer's update alone (no engine, no rollout), as the hybrid worker runs it: the
    model in memory, autocast and attention as `model.*: auto` resolve here, π_old the
    trainer's own log-probs (so no extra pass), one update of the Kimi loss (2 AdamW steps).
    Peak RSS is measured from just before the update (VmHWM reset through clear_refs)."""
    import torch

    from k2rl.config import LoraConfig, TrainConfig
    from k2rl.device import lora as k2rl_lora
    from k2rl.lm import precision
    from k2rl.step.trainer import batch_of, make_optimizer, old_logp, update

    torch.set_num_threads(threads)
    phases = Phases()
    t = phases.begin()
    model, tok = make_model(SHAPES[shape], dtype)
    model.set_attn_implementation(precision.attention("auto", "cpu"))
    if lora:
        k2rl_lora.wrap(model, LoraConfig(rank=lora, alpha=2 * lora), "/base")
    precision.enable(model, precision.autocast_dtype("auto", "cpu"),
                     precision.long_attention("auto", "cpu"))
    model.eval()
    groups = update_batch(prompts, k)
    batch = batch_of(groups, tok.pad_token_id)
    _, tok_logp = old_logp(model, batch, "sum")
    for i, traj in enumerate(x for g in groups for x in g.trajectories):
        traj.logp_engine = tok_logp[i][batch["loss_mask"][i] > 0].tolist()
    cfg = TrainConfig()
    optimizers = make_optimizer(model, cfg)
    phases.end("build, old log-probs", t)
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM from here
    before = vm_gib("VmRSS")
    t = phases.begin()
    metrics = update(model, optimizers, groups, cfg, tok.pad_token_id)
    phases.end(K2RL_TRAIN_PHASE, t)
    return {"shape": SHAPES[shape], "dtype": dtype, "lora_rank": lora or None,
            "threads": threads, "autocast": precision.autocast_dtype("auto", "cpu"),
            "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "tokens": int(batch["attention_mask"].sum()), "phases": phases,
            "rss_before_update_gib": round(before, 2),
            "update_peak_rss_gib": round(vm_gib("VmHWM"), 2),
            "update_peak_above_before_gib": round(vm_gib("VmHWM") - before, 2),
            "logp_gap": metrics["logp_gap"]}


# ---- TRL


def calculator_prompts(n: int) -> list[dict]:
    """The first user turn (and answer) of k2rl/Calculator-v1 for seeds 0..n-1, as k2rl's
    rollout resets them."""
    import gymnasium

    importlib.import_module("envs")  # registers the k2rl environments

    rows = []
    for seed in range(n):
        env = gymnasium.make(TASK).unwrapped
        obs, info = env.reset(seed=seed, options={"split": "train"})
        system = [{"role": "system", "content": info["system"]}] if info.get("system") else []
        rows.append({"prompt": system + [{"role": "user", "content": obs}],
                     "answer": str(env.problem.answer), "budget": info["budget"]})
    return rows


def exact_answer(completions, answer, **_) -> list[float]:
    """1 if the reply is the product, else 0 (conversational completions)."""
    return [float(c[0]["content"].strip() == a) for c, a in zip(completions, answer)]


def trl_config(out_dir: str, prompts: int, k: int, budget: int):
    """GRPOConfig matching the k2rl step (see TRL_MATCHED)."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=out_dir, use_cpu=True, bf16=False, fp16=False, seed=0,
        per_device_train_batch_size=prompts * k, gradient_accumulation_steps=1,
        num_generations=k, max_completion_length=budget, use_vllm=False,
        temperature=1.0, top_p=1.0, top_k=0,
        num_iterations=2, max_steps=2, beta=0.0,
        optim="adamw_torch", learning_rate=5e-5, lr_scheduler_type="constant", warmup_steps=0,
        weight_decay=0.0, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, max_grad_norm=1.0,
        gradient_checkpointing=False,
        logging_steps=1, save_strategy="no", report_to="none", disable_tqdm=True,
        dataloader_pin_memory=False)


def step_clock(phases: Phases):
    """A TrainerCallback that ends a phase at every optimizer step."""
    from transformers import TrainerCallback

    names = ["generate + old log-probs + AdamW step 1", "AdamW step 2 (same generation)"]

    class StepClock(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.start = phases.begin()

        def on_step_end(self, args, state, control, **kwargs):
            phases.end(names[state.global_step - 1], self.start)

    return StepClock(), names


def run_trl(prompts: int, k: int) -> dict:
    """One GRPO step of TRL's GRPOTrainer (this process), as close to k2rl's as TRL allows."""
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    import transformers
    import trl
    from datasets import Dataset
    from trl import GRPOTrainer

    phases = Phases()
    t = phases.begin()
    model, tok = make_model()
    rows = calculator_prompts(prompts)
    phases.end("build", t)
    clock, step_names = step_clock(phases)
    with tempfile.TemporaryDirectory() as tmp:
        t = phases.begin()
        trainer = GRPOTrainer(model=model, reward_funcs=exact_answer, processing_class=tok,
                              args=trl_config(tmp, prompts, k, rows[0]["budget"]),
                              train_dataset=Dataset.from_list(rows), callbacks=[clock])
        phases.end("start (GRPOTrainer)", t)
        trainer.train()
    logs = [x for x in trainer.state.log_history if "loss" in x]
    return {"parameters": sum(p.numel() for p in model.parameters()),
            "trajectories": prompts * k, "phases": phases,
            "seconds_per_step": phases.total(step_names), "peak_rss_gib": round(peak_gib(), 2),
            "completion_length_mean": logs[0].get("completions/mean_length"),
            "reward_mean": logs[0].get("reward"),
            "versions": {"trl": trl.__version__, "transformers": transformers.__version__,
                         "torch": torch.__version__},
            "matched": TRL_MATCHED, "not_matched": TRL_UNMATCHED}


# ---- driver


def in_child(part: str, prompts: int, k: int, extra: tuple = ()) -> dict:
    """Run `part` in a fresh Python process, so its peak memory is its own."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([sys.executable, __file__, "--part", part, "--prompts", str(prompts),
                        "--k", str(k), "--out", f.name, *extra], check=True)
        return json.loads(Path(f.name).read_text())


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def trl_missing() -> str | None:
    for name in ("trl", "accelerate"):
        if importlib.util.find_spec(name) is None:
            return f"not run: {name} is not installed (`pip install -e .[bench]` adds it)"
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=int, default=4)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--part", choices=["both", "k2rl", "trl", "update"], default="both",
                   help="both: k2rl then TRL, each in a child process; k2rl or trl: that one, "
                        "in this process; update: k2rl's update alone (no engine)")
    p.add_argument("--threads", type=int, default=2,
                   help="--part update: torch threads (1 keeps a loaded machine's scheduler "
                        "from stalling an OpenMP team)")
    p.add_argument("--checkpointing", action="store_true",
                   help="--part k2rl: train.gradient_checkpointing (recompute each block's "
                        "activations in the backward pass)")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "memory.json"))
    p.add_argument("--lora", type=int, default=0,
                   help="k2rl with a LoRA adapter of this rank (0: full fine-tuning)")
    p.add_argument("--shape", choices=sorted(SHAPES), default="0.5b")
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                   help="the weights (a LoRA adapter and its optimizer stay fp32)")
    p.add_argument("--label", default=None,
                   help="with --part k2rl or update: write the result under this key of --out, "
                        "keeping "
                        "the file's other keys (e.g. lora_r16)")
    args = p.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]  # a busy machine slows both sides
    if args.part in ("k2rl", "update") and args.label:
        result = in_child(args.part, args.prompts, args.k,
                          ("--lora", str(args.lora), "--shape", args.shape, "--dtype", args.dtype,
                           "--threads", str(args.threads))
                          + (("--checkpointing",) if args.checkpointing else ()))
        result["load_average_at_start"] = load
        result["cpu"] = cpu_model()
        out = Path(args.out)
        merged = json.loads(out.read_text()) if out.exists() else {}
        merged[args.label] = result
        out.write_text(json.dumps(merged, indent=1))
        print(json.dumps({k: v for k, v in result.items() if k != "shape"}, indent=1))
        return
    if args.part == "k2rl":
        result = run_k2rl(args.prompts, args.k, args.lora, args.shape, args.dtype,
                          args.checkpointing)
    elif args.part == "update":
        result = run_update(args.prompts, args.k, args.lora, args.shape, args.dtype, args.threads)
    elif args.part == "trl":
        if missing := trl_missing():
            sys.exit(f"TRL {missing}.")
        result = run_trl(args.prompts, args.k)
    else:
        result = in_child("k2rl", args.prompts, args.k)
        if missing := trl_missing():
            print(f"Skipping TRL's GRPOTrainer: {missing}.", flush=True)
            result["trl_grpo"] = missing
        else:
            result["trl_grpo"] = in_child("trl", args.prompts, args.k)
        result["machine"] = platform.platform()
    if args.part != "both":
        result["load_average_at_start"] = load
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "shape"}, indent=1))


if __name__ == "__main__":
    main()
