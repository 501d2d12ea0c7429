"""The hybrid worker: a vLLM engine and the trainable policy with its optimizer, in one process.

The controller runs it as a Ray actor (`ray.remote(HybridWorker)`); tests may build it
directly. Engine and trainer hold the same weights: after each update `sync` pushes the
trainer's parameters into the engine in place.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import torch

from k2rl import distributed, engine
from k2rl.chat import judge_example_ids
from k2rl.colocate import Colocation
from k2rl.config import Config
from k2rl.judge import make_scorer
from k2rl.model import param_count
from k2rl.ptx import load_ptx, write_curated
from k2rl.registry import load_envs
from k2rl.rollout import Request, rollout
from k2rl.trainer import critic_step, lr_at, make_optimizer, set_lr, update


class HybridWorker:
    def __init__(self, model_dir: str, cfg: Config, optimizer_state: str | None = None,
                 rank: int = 0, world: int = 1):
        engine.configure_env(cfg.rollout.threads, cfg.rollout.kv_cache_gib)
        load_envs(cfg)  # this process makes its own environments
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(cfg.rollout.threads)
        torch.manual_seed(cfg.train.seed)
        self.cfg = cfg
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        device, dtype = cfg.ray.device, cfg.model.dtype
        self.model = AutoModelForCausalLM.from_pretrained(
            model_dir, dtype=getattr(torch, dtype)).to(device).eval()
        self.rank, self.world = rank, world
        self.llm = engine.start_engine(model_dir, cfg.rollout.max_model_len, cfg.train.seed + rank,
                                       dtype, device=device, sleep_mode=cfg.rollout.sleep_mode,
                                       gpu_memory_utilization=cfg.rollout.gpu_memory_utilization)
        self.colocation = Colocation(self.llm, cfg.rollout.sleep_mode, device)
        self.optimizers = make_optimizer(self.model, cfg.train)
        self.critic_opt = (torch.optim.AdamW(self.model.parameters(), lr=cfg.critic.lr)
                           if cfg.critic.lr else None)
        self.ptx = self._load_ptx(cfg)
        self.rng = np.random.default_rng(cfg.train.seed + 7919 * rank)  # aux batches per rank
        if optimizer_state:
            states = torch.load(optimizer_state)
            for opt, state in zip(self.optimizers + [self.critic_opt], states):
                if opt is not None:
                    opt.load_state_dict(state)

    def address(self) -> str:
        """Where rank 0 listens for the other workers (torch.distributed init)."""
        return distributed.free_address()

    def join(self, address: str) -> int:
        """Join the data-parallel group; returns this worker's rank."""
        distributed.init(address, self.rank, self.world, self.cfg.ray.device)
        return distributed.rank()

    def param_count(self) -> int:
        return param_count(self.model)

    def rollout(self, requests: list[Request], k: int, step: int, temperature: float,
                resumed: list[dict] = (), partial: bool = False) -> list[dict]:
        """K trajectories per request, sampled at the request's temperature or `temperature`
        (0 is greedy); `resumed` paused trajectories go on first. With `partial`, episodes
        pause at `rollout.partial_budget` tokens (k1.5 partial rollouts)."""
        def gen(prompts, max_tokens, temperatures):
            return engine.generate(self.llm, prompts, max_tokens, temperatures,
                                   self.cfg.rollout.top_p)

        trajs = rollout(requests, k, self.tokenizer, gen, step=step,
                        truncation_penalty=self.cfg.rollout.truncation_penalty,
                        max_len=self.cfg.rollout.max_model_len, temperature=temperature,
                        partial_budget=self.cfg.rollout.partial_budget if partial else 0,
                        resumed=resumed)
        return [t.to_dict() for t in trajs]

    def judge(self, trajs: list[dict], k: int) -> list[dict]:
        """Critic-rewarded groups get their pairwise win rates as rewards (k2rl.judge)."""
        from critic.rubrics import load_rubrics
        from k2rl.judge import judge_rewards

        judge_rewards(trajs, k, make_scorer(self.llm, self.tokenizer), load_rubrics(),
                      self.cfg.critic.tie_margin, self.cfg.critic.opponents)
        return trajs

    def _load_ptx(self, cfg: Config) -> list | None:
        if cfg.train.ptx_beta <= 0:
            return None
        path = cfg.train.ptx_data or write_curated(Path(tempfile.mkdtemp()) / "curated.jsonl")
        return load_ptx(path, self.tokenizer)

    def train(self, trajs: list[dict], step: int, critic_examples: list[dict] | None = None) -> dict:
        """One update: Kimi loss on `trajs`, plus PTX and the critic's verdict loss if on.

        With GPU sleep mode the engine sleeps from here until `sync` wakes it.
        """
        colocation = self.colocation.before_train(self.optimizers)
        if self.cfg.train.reset_optimizer:  # k1.5: fresh optimizer state every iteration
            self.optimizers = make_optimizer(self.model, self.cfg.train)
        lr = lr_at(step, self.cfg.train, self.cfg.train.steps)
        set_lr(self.optimizers, lr)
        t, c = self.cfg.train, self.cfg.critic
        judge = [judge_example_ids(self.tokenizer, e["prompt"], e["response"])
                 for e in critic_examples or []]
        aux = {"ptx": (self.ptx, t.ptx_beta, t.ptx_batch)}
        if not c.lr:  # the verdict NLL joins the policy loss
            aux["critic"] = (judge, c.weight, len(judge))
        metrics = update(self.model, self.optimizers, trajs, self.cfg.rollout.k, t,
                         self.tokenizer.pad_token_id, step, aux, self.rng)
        if c.lr and critic_examples is not None:  # its own step at its own learning rate
            metrics["critic_loss"] = critic_step(self.model, self.critic_opt, judge,
                                                 self.tokenizer.pad_token_id, t.grad_clip)
        return {**metrics, "lr": lr, **colocation}

    def critic_eval(self, pairs: list[dict], tie_margin: float = 0.0) -> dict:
        """The policy as judge on labelled pairs, scored from the engine's log-probs."""
        from critic.evaluate import evaluate_scorer
        from critic.pairs import Pair
        from critic.rubrics import load_rubrics

        result = evaluate_scorer([Pair(**p) for p in pairs], load_rubrics(),
                                 make_scorer(self.llm, self.tokenizer), tie_margin)
        return {f"critic/{k}": v for k, v in result.items() if isinstance(v, float)}

    def ptx_nll(self, n: int = 128) -> float:
        """Mean NLL of the first n curated samples (how much PTX keeps them likely)."""
        from k2rl.sft import collate, token_nll

        with torch.no_grad():
            return token_nll(self.model, collate(self.ptx[:n], self.tokenizer.pad_token_id,
                                                 self.model.device)).item()

    def sync(self) -> dict:
        """Push the trainer's weights into the engine (waking it first in GPU sleep mode)."""
        return self.colocation.before_generate(self.optimizers,
                                               lambda: engine.push_weights(self.llm, self.model))

    def greedy_texts(self, prompts: list[list[int]], max_tokens: int) -> tuple[list[str], list[str]]:
        """Greedy replies from the engine and from the trainer (HF generate), for sync checks."""
        outs = engine.generate(self.llm, prompts, [max_tokens] * len(prompts), [0.0] * len(prompts))
        from_engine = [self.tokenizer.decode(ids) for ids, _ in outs]
        from_trainer = []
        for p in prompts:
            g = self.model.generate(torch.tensor([p], device=self.model.device),
                                    max_new_tokens=max_tokens, do_sample=False,
                                    eos_token_id=self.tokenizer.eos_token_id,
                                    pad_token_id=self.tokenizer.pad_token_id)
            from_trainer.append(self.tokenizer.decode(g[0, len(p):].tolist()))
        return from_engine, from_trainer

    def perturb(self, scale: float, seed: int) -> None:
        """Add Gaussian noise to every weight (tests: the engine must follow after sync)."""
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in self.model.parameters():
                p.add_(torch.randn(p.shape, generator=gen) * scale * p.std())

    def save(self, path: str, extra: dict | None = None) -> str:
        out = Path(path)
        tmp = out.with_name(out.name + ".tmp")
        self.model.save_pretrained(tmp)
        self.tokenizer.save_pretrained(tmp)
        opts = self.optimizers + ([self.critic_opt] if self.critic_opt else [])
        torch.save([opt.state_dict() for opt in opts], tmp / "optimizer.pt")
        (tmp / "trainer_state.json").write_text(json.dumps(extra or {}))
        if out.exists():
            import shutil
            shutil.rmtree(out)
        tmp.rename(out)
        return str(out)
