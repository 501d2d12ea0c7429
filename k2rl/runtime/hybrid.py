"""The hybrid worker: a vLLM engine and the trainable policy with its optimizer, in one process.

The controller runs it as a Ray actor inside a k2rl.runtime.worker_group.WorkerGroup, which offers the
same methods (`WORKER_API`) with the same signatures over N of them; tests may build one
directly. Engine and trainer hold the same weights: after each update `sync` pushes the
trainer's parameters into the engine in place. Every setting comes from the run's config; the
arguments are the step's data.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import torch

from critic.evaluate import evaluate_critic
from critic.pairs import Pair, comparison_of
from critic.rubrics import load_rubrics
from k2rl.bootstrap.model import critic_scripts
from k2rl.bootstrap.ptx import curated_judgments, curated_messages, encode_messages, load_ptx
from k2rl.bootstrap.recipe import recipe_for
from k2rl.config import Config
from k2rl.device import distributed, engine, lora
from k2rl.device.colocate import Colocation
from k2rl.device.offload import trim_heap
from k2rl.lm import precision
from k2rl.lm.chat import load_tokenizer, pad_id, stop_ids
from k2rl.lm.hf import built_recipe, param_count
from k2rl.step import critic_sft
from k2rl.step.critic_engine import critic_rank_groups, make_critic, run_layout
from k2rl.step.critic_ids import check_tokens
from k2rl.step.critic_loop import check_correctors, corrected, critic_examples, reasoned
from k2rl.step.group import Group, Request
from k2rl.step.rollout import rollout
from k2rl.step.trainer import (critic_step, lr_at, make_optimizer, passes_of, set_lr, trainable,
                               update)
from k2rl.tasks.registry import load_envs
from rewards.deadline import timeouts

# The methods a HybridWorker and a WorkerGroup share, with the same signatures.
WORKER_API = ("rollout", "critic_rank", "train", "sync", "critic_eval", "save", "param_count",
              "rss_mb", "reward_timeouts", "engine_settings")


class HybridWorker:
    def __init__(self, model_dir: str, cfg: Config, optimizer_state: str | None = None,
                 rank: int = 0, world: int = 1):
        engine.configure_env(cfg.engine.threads, cfg.engine.kv_cache_gib)
        load_envs(cfg)  # this process makes its own environments
        from transformers import AutoModelForCausalLM

        torch.set_num_threads(cfg.engine.threads)
        torch.manual_seed(cfg.train.seed)
        self.cfg = cfg
        self.tokenizer = load_tokenizer(model_dir)
        device, dtype = cfg.ray.device, cfg.model.dtype
        base_dir = lora.base_of(model_dir)  # a LoRA checkpoint holds the adapter alone
        self.built = built_recipe(base_dir)  # how k2rl built it, kept in every checkpoint
        self.model = AutoModelForCausalLM.from_pretrained(
            base_dir, dtype=getattr(torch, dtype),
            attn_implementation=precision.attention(cfg.model.attention, device)).to(device).eval()
        self.peft = (lora.wrap(self.model, cfg.model.lora, base_dir,
                               model_dir if lora.is_adapter(model_dir) else None)
                     if cfg.model.lora else None)  # self.model stays the HF model, adapted
        # vLLM's LoRA serving: the engine holds the base and gets the adapter at each push
        self.serves_adapter = bool(self.peft) and cfg.model.lora.serve == "adapter"
        self.adapter_dir = lora.push_folder() if self.serves_adapter else None
        precision.enable(self.model, precision.autocast_dtype(cfg.model.autocast, device),
                         precision.long_attention(cfg.model.attention, device))
        if cfg.train.gradient_checkpointing:
            self.model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False})
        self.stops = stop_ids(self.tokenizer, self.model.generation_config)
        self.pad_id = pad_id(self.tokenizer)
        self.rank, self.world = rank, world
        self.max_len = engine.fitted_max_len(base_dir, cfg.engine.max_model_len)
        self.llm = engine.start_engine(base_dir, self.max_len, cfg.train.seed + rank,
                                       cfg.engine.dtype or dtype,
                                       device=device, sleep_mode=cfg.engine.sleep_mode,
                                       gpu_memory_utilization=cfg.engine.gpu_memory_utilization,
                                       compile=cfg.engine.compile,
                                       prefix_caching=cfg.engine.prefix_caching,
                                       **(lora.engine_settings(cfg.model.lora) if self.serves_adapter
                                          else {}))
        # One greedy token now, so that a model the engine loads but cannot run (an attention
        # shape the CPU kernels lack, say) fails at start, not in the middle of the first step.
        engine.generate(self.llm, [[self.tokenizer.eos_token_id]], [1], [0.0])
        self.colocation = Colocation(self.llm, cfg.engine.sleep_mode, device)
        self.pushed = False  # LoRA: whether the engine holds the base from a first full push
        if self.serves_adapter or (self.peft and lora.is_adapter(model_dir)):
            self._push()  # the engine loaded the base: give it the (fresh or resumed) adapter
        self.optimizers = make_optimizer(self.model, cfg.train)
        self.critic_opt = torch.optim.AdamW(trainable(self.model), lr=cfg.critic.lr)
        self.ptx = self._load_ptx(cfg)
        self.rubrics = load_rubrics()
        self.correctors = (check_correctors([t.id for t in cfg.tasks],
                                            critic_scripts(self.built, recipe_for(cfg.model)))
                           if cfg.critic.correct_checks else {})
        self.layout = run_layout(cfg, self.built)  # chat or checks (critic.layout)
        self.critic = make_critic(self.llm, self.tokenizer, self.max_len,
                                  check_tokens=check_tokens(self.built, recipe_for(cfg.model)),
                                  layout=self.layout)
        self.rng = np.random.default_rng(cfg.train.seed + 7919 * rank)  # aux batches per rank
        if optimizer_state:
            states = torch.load(optimizer_state)
            for opt, state in zip(self.optimizers + [self.critic_opt], states):
                if opt is not None:
                    opt.load_state_dict(state)

    def _load_ptx(self, cfg: Config) -> list | None:
        if cfg.train.ptx_beta <= 0:
            return None
        if cfg.train.ptx_data:
            return load_ptx(cfg.train.ptx_data, self.tokenizer)
        tasks = [task.id for task in cfg.tasks]
        return ([encode_messages(self.tokenizer, m) for m in curated_messages(tasks)]
                + curated_judgments(self.tokenizer, tasks, cfg.train.ptx_judgments,
                                    scripts=critic_scripts(self.built, recipe_for(cfg.model))))

    # ---- data-parallel set-up (WorkerGroup.start)

    def address(self) -> str:
        """Where rank 0 listens for the other workers (torch.distributed init)."""
        return distributed.free_address()

    def join(self, address: str) -> int:
        """Join the data-parallel group; returns this worker's rank."""
        distributed.init(address, self.rank, self.world, self.cfg.ray.device)
        if (distributed.rank(), distributed.world_size()) != (self.rank, self.world):
            raise RuntimeError(f"worker {self.rank} of {self.world} joined the data-parallel "
                               f"group as {distributed.rank()} of {distributed.world_size()}")
        return distributed.rank()

    # ---- WORKER_API

    def rollout(self, requests: list[Request], step: int, carried: list[Group] = (),
                partial: bool = False) -> list[Group]:
        """A group per request (each at its own temperature, 0 greedy), after the `carried`
        groups' paused members have gone on. With `partial`, episodes pause at
        `rollout.partial_budget` tokens (k1.5 partial rollouts)."""
        r = self.cfg.rollout

        def generate(prompts, max_tokens, temperatures):
            return engine.generate(self.llm, prompts, max_tokens, temperatures, r.top_p)

        return rollout(requests, self.tokenizer, generate, step, r.truncation_penalty,
                       self.max_len, r.partial_budget if partial else 0, carried, self.stops)

    def critic_rank(self, groups: list[Group]) -> list[Group]:
        """The critic-rewarded groups get their pairwise win rates (k2rl.step.critic_engine)."""
        c = self.cfg.critic
        critic_rank_groups(groups, self.critic, self.rubrics, c.tie_margin, c.opponents)
        return groups

    def train(self, groups: list[Group], step: int, critic_pairs: list[Pair] | None = None
              ) -> dict:
        """One update: Kimi loss on `groups`, plus PTX and the critic's loss on `critic_pairs`
        if on (None: off): the critic first judges each pair with the engine, then trains on
        its judgment in both orders (k2rl.step.critic_loop.critic_examples); in the chat layout
        it trains on each pair's verdict in both orders (k2rl.step.critic_sft).

        With GPU sleep mode the engine sleeps from here until `sync` wakes it.
        """
        start = time.perf_counter()
        comparisons = [comparison_of(p, self.rubrics) for p in critic_pairs or []]
        if self.layout == "chat":  # no judging pass: the verdicts, as k2rl critic train
            judgments = []
            examples = critic_sft.examples(self.tokenizer, self.max_len, critic_pairs or [],
                                           self.rubrics)
        else:  # the critic's own judgments, its checks trained where they were right
            judgments = self.critic(comparisons)
            examples = critic_examples(self.tokenizer, comparisons, judgments, self.correctors)
        judged = {"time/critic_refresh": time.perf_counter() - start}
        if judgments:
            judged["critic/train_agreed"] = float(np.mean([j.preference > 0.5 for j in judgments]))
            judged["critic/train_reasoned"] = float(np.mean([reasoned(j) for j in judgments]))
        if judgments and self.correctors:  # the share trained on checks it did not write
            judged["critic/train_corrected"] = float(np.mean([
                (fixed := corrected(c, j, self.correctors)) is not None and fixed != j.checks
                for c, j in zip(comparisons, judgments)]))
        colocation = self.colocation.before_train(self._optimizers())
        t = self.cfg.train
        if t.reset_optimizer:  # k1.5: fresh optimizer state every iteration
            self.optimizers = make_optimizer(self.model, t)
        lr = lr_at(step, t, t.steps)
        set_lr(self.optimizers, lr)
        aux = {"ptx": (self.ptx, t.ptx_beta, t.ptx_batch)}
        start = time.perf_counter()
        metrics = update(self.model, self.optimizers, groups, t, self.pad_id,
                         aux, self.rng)
        if critic_pairs is not None:  # its own step at its own learning rate (critic.lr)
            critic_start = time.perf_counter()
            metrics["critic_loss"], flops = critic_step(self.model, self.critic_opt, examples,
                                                        self.pad_id, t.grad_clip, passes_of(t))
            metrics["train_flops"] += flops
            metrics["critic_train_seconds"] = time.perf_counter() - critic_start
        seconds = time.perf_counter() - start
        metrics["train_gflops_per_s"] = metrics["train_flops"] / seconds / 1e9
        trim_heap()
        return {**metrics, "lr": lr, **colocation, **judged}

    def sync(self) -> dict:
        """Push the trainer's weights into the engine (waking it first in GPU sleep mode)."""
        return self.colocation.before_generate(self._optimizers(), self._push)

    def _push(self) -> dict:
        """Full fine-tuning: every parameter; LoRA: the adapter (model.lora.serve adapter), or
        the merged target layers (merged; every tensor the first time and after each sleep,
        which discards the weights) (k2rl.device.lora)."""
        if not self.peft:
            return engine.push_weights(self.llm, self.model)
        lora.broadcast_adapter(self.model)  # data-parallel workers: rank 0's adapter
        if self.serves_adapter:
            return lora.push_adapter(self.llm, self.peft, self.adapter_dir)
        full = not self.pushed or self.cfg.engine.sleep_mode
        self.pushed = True
        return lora.push(self.llm, self.model, full)

    def _optimizers(self) -> list[torch.optim.Optimizer]:
        """The policy's optimizers and the critic's: offloaded together in GPU sleep mode."""
        return [*self.optimizers, self.critic_opt]

    def critic_eval(self, pairs: list[Pair]) -> dict:
        """The policy as critic on labelled pairs (its working, checks and verdicts)."""
        result, _ = evaluate_critic(pairs, self.rubrics, self.critic, 0.0)
        by_task = {f"critic/{task}/{k}": float(result["by_task"][task][k])
                   for task in result["by_task"] for k in ("accuracy", "n", "swap_consistency")}
        return {f"critic/{k}": float(v) for k, v in result.items()
                if isinstance(v, (int, float))} | by_task  # accuracy and the like, and n

    def save(self, path: str, extra: dict | None = None) -> str:
        """Policy, tokenizer and optimizer state as an HF folder, written atomically."""
        out = Path(path)
        tmp = out.with_name(out.name + ".tmp")
        if self.peft:  # the adapter in peft's format, naming its base folder
            lora.save(self.peft, tmp)
        else:
            self.model.save_pretrained(tmp)
        self.tokenizer.save_pretrained(tmp)
        torch.save([opt.state_dict() for opt in self._optimizers()], tmp / "optimizer.pt")
        (tmp / "trainer_state.json").write_text(json.dumps(extra or {}))
        if self.built is not None:
            (tmp / "recipe.json").write_text(json.dumps(self.built, indent=1))
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
        return str(out)

    def param_count(self) -> int:
        return param_count(self.model)

    def rss_mb(self) -> tuple[float, float]:
        """This process's resident memory and its peak so far, in MiB (the controller logs
        mem/worker_rss_mb and mem/worker_peak_rss_mb)."""
        import resource

        import psutil

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # KiB on Linux
        return psutil.Process().memory_info().rss / 2**20, peak

    def engine_settings(self) -> dict:
        """What this worker's engine runs with (k2rl.device.engine.settings), for the run's
        log, with the trainer's threads beside it."""
        return engine.settings(self.llm) | {"trainer_threads": torch.get_num_threads()}

    def reward_timeouts(self) -> int:
        """Verifier calls that hit their time limit in this process so far (each scored 0;
        rewards.deadline); the controller logs the workers' sum as reward/timeouts."""
        return timeouts()
