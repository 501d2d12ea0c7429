"""LoRA adapters (model.lora, k2rl.device.lora): the config; only the adapter trains (policy update
and the critic's own step); the merged tensors are the trained policy; a checkpoint resumes
exactly; the merged export loads in transformers; and (slow, in a subprocess) the vLLM engine
follows the adapter after several pushes, merged into its weights on each fixture family, or
served as an adapter by a hybrid worker, and loads the export."""
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from k2rl.bootstrap.model import build_tokenizer
from k2rl.bootstrap.recipe import Recipe, recipe_for
from k2rl.config import (ConfigError, LoraConfig, ModelConfig, TrainConfig,
                         load_config)
from k2rl.device import lora
from k2rl.step.trainer import critic_step, make_optimizer, update
from tests.k2rl.test_pi_old import sampled, small_model

ROOT = Path(__file__).resolve().parents[2]
SMALL = LoraConfig(rank=4, alpha=8.0)


def test_lora_is_off_by_default_and_configured_by_key():
    assert load_config().model.lora is None
    cfg = load_config(None, ["model.lora={rank: 8, target_modules: [q_proj, v_proj]}"])
    assert cfg.model.lora == LoraConfig(rank=8, target_modules=["q_proj", "v_proj"])
    assert cfg.model.lora.serve == "adapter"  # vLLM's LoRA serving; "merged" the alternative
    with pytest.raises(ConfigError, match="model.lora.serve"):
        load_config(None, ["model.lora={serve: stacked}"])
    assert load_config(None, ["model.lora={}"]).model.lora == LoraConfig()
    with pytest.raises(ConfigError, match="model.lora.rnk .*did you mean model.lora.rank"):
        load_config(None, ["model.lora={rnk: 8}"])
    with pytest.raises(ConfigError, match="model.lora.rank"):
        load_config(None, ["model.lora={rank: 0}"])
    # how RL trains is not how the default model is built: the cached model stays the same
    assert recipe_for(ModelConfig(lora=LoraConfig())) == recipe_for(ModelConfig())


def wrapped(cfg: LoraConfig = SMALL, folder: str = "/base"):
    model = small_model()
    base = copy.deepcopy(model)
    peft_model = lora.wrap(model, cfg, folder)
    with torch.no_grad():  # B = 0 at start: give the adapter a value, as training would
        gen = torch.Generator().manual_seed(5)
        for name, p in lora.adapter_params(model).items():
            p.add_(torch.randn(p.shape, generator=gen) * 0.05)
    return model, base, peft_model


def test_only_the_adapter_trains_under_both_optimizers_and_the_critic_step():
    model, _, _ = wrapped()
    adapter = lora.adapter_params(model)
    assert adapter and all(".lora_A." in n or ".lora_B." in n for n in adapter)
    assert all(p.dtype == torch.float32 for p in adapter.values())
    frozen = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    before = {n: p.detach().clone() for n, p in adapter.items()}
    groups, _ = sampled(model)
    pad = build_tokenizer().pad_token_id
    for name in ("adamw", "muon"):
        cfg = TrainConfig(lr=1e-3, optimizer=name)
        opts = make_optimizer(model, cfg)
        held = {id(p) for opt in opts for g in opt.param_groups for p in g["params"]}
        assert held == {id(p) for p in adapter.values()}, name  # state for the adapter alone
        update(model, opts, groups, cfg, pad)
    moved = {n: p.detach().clone() for n, p in adapter.items()}
    critic = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    samples = [(t.ids, t.mask) for g in groups for t in g.trajectories]
    critic_step(model, critic, samples[:4], pad, 1.0)  # the critic steps the same adapter
    for n, p in model.named_parameters():
        if n in frozen:
            assert torch.equal(p, frozen[n]), n
    assert any(not torch.equal(moved[n], before[n]) for n in adapter)
    assert any(not torch.equal(adapter[n], moved[n]) for n in adapter)


def test_a_bf16_base_keeps_an_fp32_adapter_and_trains_it():
    model = small_model().to(torch.bfloat16)
    lora.wrap(model, SMALL, "/base")
    adapter = lora.adapter_params(model)
    assert all(p.dtype == torch.float32 for p in adapter.values())
    assert all(p.dtype == torch.bfloat16 for n, p in model.named_parameters() if n not in adapter)
    groups, _ = sampled(model)
    cfg = TrainConfig(lr=1e-3)
    before = {n: p.detach().clone() for n, p in adapter.items()}
    metrics = update(model, make_optimizer(model, cfg), groups, cfg, build_tokenizer().pad_token_id)
    assert torch.isfinite(torch.tensor(metrics["loss"]))
    assert any(not torch.equal(adapter[n], before[n]) for n in adapter)
    name = lora.merged(model, targets_only=True)[0][0]
    assert lora.merge_one(model, name).dtype == torch.float32  # the merge is fp32

def test_the_merged_tensors_are_the_trained_policy():
    model, base, _ = wrapped()
    names = dict(base.named_parameters())
    merged = {n: (lora.merge_one(model, n) if t is None else t)
              for n, t in lora.merged(model)}
    assert set(merged) == set(names)  # the engine's tensors, under the HF names
    targets = [n for n, t in lora.merged(model, targets_only=True)]
    assert targets and all(n.endswith("_proj.weight") for n in targets)
    assert len(targets) == 7 * base.config.num_hidden_layers
    with torch.no_grad():
        for n, p in base.named_parameters():
            p.copy_(merged[n])
        ids = torch.randint(7, 100, (3, 17))
        torch.testing.assert_close(base(ids).logits, model(ids).logits, atol=2e-5, rtol=1e-5)


def test_a_checkpoint_resumes_the_adapter_and_its_optimizer_exactly(tmp_path):
    model, base, peft_model = wrapped(folder=str(tmp_path / "base"))
    base.save_pretrained(tmp_path / "base")
    build_tokenizer().save_pretrained(tmp_path / "base")
    groups, _ = sampled(model)
    pad = build_tokenizer().pad_token_id
    cfg = TrainConfig(lr=1e-3)
    opts = make_optimizer(model, cfg)
    update(model, opts, groups, cfg, pad)
    lora.save(peft_model, tmp_path / "ckpt")
    torch.save([o.state_dict() for o in opts], tmp_path / "ckpt" / "optimizer.pt")
    assert lora.is_adapter(tmp_path / "ckpt") and not lora.is_adapter(tmp_path / "base")
    assert lora.base_of(tmp_path / "ckpt") == str((tmp_path / "base").resolve())

    from transformers import AutoModelForCausalLM

    again = AutoModelForCausalLM.from_pretrained(lora.base_of(tmp_path / "ckpt")).eval()
    lora.wrap(again, None, lora.base_of(tmp_path / "ckpt"), str(tmp_path / "ckpt"))
    opts2 = make_optimizer(again, cfg)
    for opt, state in zip(opts2, torch.load(tmp_path / "ckpt" / "optimizer.pt")):
        opt.load_state_dict(state)
    update(model, opts, groups, cfg, pad)
    update(again, opts2, groups, cfg, pad)
    mine, theirs = dict(model.named_parameters()), dict(again.named_parameters())
    assert mine.keys() == theirs.keys()
    for n, p in mine.items():
        assert torch.equal(p, theirs[n]), n


def test_the_merged_export_is_a_plain_model_with_the_adapters_log_probs(tmp_path):
    model, base, peft_model = wrapped(folder=str(tmp_path / "base"))
    base.save_pretrained(tmp_path / "base")
    build_tokenizer().save_pretrained(tmp_path / "base")
    lora.save(peft_model, tmp_path / "ckpt")
    build_tokenizer().save_pretrained(tmp_path / "ckpt")
    out = lora.export_merged(tmp_path / "ckpt", tmp_path / "merged")
    assert (out / "config.json").exists() and not lora.is_adapter(out)
    from transformers import AutoModelForCausalLM

    plain = AutoModelForCausalLM.from_pretrained(out).eval()
    assert not any(".lora_" in n or "base_layer" in n for n, _ in plain.named_parameters())
    ids = torch.randint(7, 100, (2, 11))
    with torch.no_grad():
        torch.testing.assert_close(plain(ids).logits, model(ids).logits, atol=2e-5, rtol=1e-5)


def test_k2rl_export_merges_a_runs_newest_or_named_checkpoint(tmp_path, capsys):
    from k2rl.cli import main

    model, base, peft_model = wrapped(folder=str(tmp_path / "base"))
    base.save_pretrained(tmp_path / "base")
    run = tmp_path / "run"
    for step in (10, 20):
        ckpt = run / "checkpoints" / f"step-{step:05d}"
        lora.save(peft_model, ckpt)
        build_tokenizer().save_pretrained(ckpt)
        torch.save([], ckpt / "optimizer.pt")
    assert main(["export", str(run), "--merged", str(tmp_path / "out")]) == 0
    assert "step-00020" in capsys.readouterr().out
    assert main(["export", str(run), "--step", "10", "--merged", str(tmp_path / "ten")]) == 0
    assert (tmp_path / "ten" / "config.json").exists()
    assert not (tmp_path / "ten" / "optimizer.pt").exists()
    assert main(["export", str(run), "--step", "7", "--merged", str(tmp_path / "x")]) == 2
    assert "no checkpoint of step 7 (checkpoints: 10, 20)" in capsys.readouterr().err
    with lora.as_model_folder(run / "checkpoints" / "step-00010") as folder:
        assert (Path(folder) / "config.json").exists()  # what `k2rl critic eval --model` loads


# --------------------------------------------------------------------------- real engine

def perturb_adapter(model, scale: float, seed: int) -> None:
    """A training-sized move of every adapter matrix (B starts at 0: give it a value)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in lora.adapter_params(model).values():
            p.add_(torch.randn(p.shape, generator=gen) * scale)


def engine_gaps(llm, model, prompts, temperature=1.0) -> dict:
    """Mean and max |trainer − engine| log-prob over the engine's sampled tokens."""
    from k2rl.device import engine

    outs = engine.generate(llm, prompts, [12] * len(prompts), [temperature] * len(prompts))
    diffs, argmax = [], True
    for p, (ids, logps) in zip(prompts, outs):
        with torch.no_grad():
            logits = model(torch.tensor([p + ids])).logits[0, len(p) - 1:-1]
        mine = logits.log_softmax(-1).gather(1, torch.tensor(ids)[:, None])[:, 0]
        diffs.append((mine - torch.tensor(logps)).abs())
        argmax &= logits.argmax(-1).tolist() == ids
    d = torch.cat(diffs)
    return {"mean": d.mean().item(), "max": d.max().item(), "argmax": argmax}


def lora_gaps(family: str, folder: str, pushes: int = 3) -> dict:
    """In a fresh process: the fixture model of `family` in `folder`, the trainer wrapped with
    LoRA (rank 8 on every projection), a vLLM engine on the base; after each of `pushes`
    adapter moves and pushes, the engine-vs-trainer gaps and the push's bytes and seconds.
    Leaves the adapter checkpoint in folder/ckpt and its merged export in folder/merged."""
    from k2rl.device import engine

    engine.configure_env(2, 1)
    from transformers import AutoModelForCausalLM

    from tests.k2rl.fixtures import llama3_dir, qwen2_dir

    base_dir = Path(folder) / "base"
    if family == "char":
        from transformers import Qwen2ForCausalLM

        from k2rl.bootstrap.model import build_config

        tok = build_tokenizer()
        Qwen2ForCausalLM(build_config(Recipe(), tok)).save_pretrained(base_dir)
        tok.save_pretrained(base_dir)
    else:
        {"qwen2-chatml": qwen2_dir, "llama3": llama3_dir}[family](base_dir)
    model = AutoModelForCausalLM.from_pretrained(base_dir).eval()
    wrapped = lora.wrap(model, LoraConfig(rank=8, alpha=16.0), str(base_dir))
    llm = engine.start_engine(str(base_dir), 256, 0)
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, model.config.vocab_size, (6,), generator=gen).tolist()
               for _ in range(8)]
    out = {"start": engine_gaps(llm, model, prompts), "pushes": []}
    for i in range(pushes):
        perturb_adapter(model, 0.05, seed=2 + i)
        stale = engine_gaps(llm, model, prompts)
        sync = lora.push(llm, model, full=i == 0)
        out["pushes"].append({"stale": stale, "pushed": engine_gaps(llm, model, prompts), **sync})
    out["greedy"] = engine_gaps(llm, model, prompts, 0.0)
    # what a full fine-tuning push of this model writes (fp32)
    out["full_bytes"] = 4.0 * sum(t.numel() for _, t in lora._named_base(model))
    out["adapter_params"] = sum(p.numel() for p in lora.adapter_params(model).values())
    lora.save(wrapped, Path(folder) / "ckpt")
    lora.export_merged(Path(folder) / "ckpt", Path(folder) / "merged")
    return out


def export_gaps(folder: str) -> dict:
    """In a fresh process: a vLLM engine on folder/merged against the adapter run (base +
    folder/ckpt through peft)."""
    import peft

    from k2rl.device import engine

    engine.configure_env(2, 1)
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(Path(folder) / "base")
    model = peft.PeftModel.from_pretrained(base, str(Path(folder) / "ckpt")).eval()
    llm = engine.start_engine(str(Path(folder) / "merged"), 256, 0)
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, base.config.vocab_size, (6,), generator=gen).tolist()
               for _ in range(8)]
    return {"sampled": engine_gaps(llm, model, prompts), "greedy": engine_gaps(llm, model,
                                                                               prompts, 0.0)}


def fresh(call: str) -> dict:
    """`call` (a function of this module) in a fresh process: one vLLM engine per process."""
    proc = subprocess.run(
        [sys.executable, "-c", "import json; from tests.k2rl.test_lora import *; "
         f"print(json.dumps({call}))"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("family", ["char", "qwen2-chatml", "llama3"])
def test_the_engine_follows_the_adapter_after_pushes_and_loads_the_export(family, tmp_path):
    out = fresh(f"lora_gaps({family!r}, {str(tmp_path)!r})")
    print(family, json.dumps(out))
    assert out["start"]["mean"] < 1e-4
    first, *rest = out["pushes"]
    for push in out["pushes"]:
        assert push["stale"]["mean"] > 1e-2  # the adapter moved the policy
        assert push["pushed"]["mean"] < 1e-4 and push["pushed"]["max"] < 1e-3, push
    assert out["greedy"]["argmax"]
    assert first["sync_bytes"] == out["full_bytes"]  # the first push writes every tensor
    assert all(p["sync_bytes"] < first["sync_bytes"] for p in rest)  # then the targets only
    exported = fresh(f"export_gaps({str(tmp_path)!r})")
    print(family, "export", json.dumps(exported))
    for key in ("sampled", "greedy"):
        assert exported[key]["mean"] < 1e-4 and exported[key]["max"] < 1e-3, exported[key]
    assert exported["greedy"]["argmax"]


def hybrid_run(folder: str, resume: bool) -> dict:
    """In a fresh process: a LoRA hybrid worker on the tiny config (the engine serving the
    adapter with vLLM's LoRA layers): train, sync and check the engine, then save (first run);
    or resume from that checkpoint and check the same."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import load_file

    from k2rl.bootstrap.model import default_model
    from k2rl.runtime.hybrid import HybridWorker
    from tests.k2rl.test_hybrid import informative, requests, trainer_engine_gap

    cfg = load_config("configs/tiny.yaml", ["model.lora={rank: 4, alpha: 8}", "train.lr=1e-2"])
    ckpt = Path(folder) / "ckpt"
    if resume:
        worker = HybridWorker(str(ckpt), cfg, str(ckpt / "optimizer.pt"))
        saved = load_file(ckpt / "adapter_model.safetensors")
        mine = get_peft_model_state_dict(worker.peft)  # under the saved names
        out = {"resumed_gap": trainer_engine_gap(worker),
               "adapter_equal": all(torch.equal(mine[n], t) for n, t in saved.items()),
               "optimizer_steps": [int(s["step"]) for s in worker.optimizers[0].state_dict()[
                   "state"].values()][:1]}
    else:
        worker = HybridWorker(str(default_model(cfg.model, progress=False)), cfg)
        out = {"start_gap": trainer_engine_gap(worker)}
    frozen = {n: p.detach().clone() for n, p in worker.model.named_parameters()
              if not p.requires_grad}
    for step in (1, 2):
        out[f"train_{step}"] = worker.train(informative(worker.rollout(requests(k=2), step)),
                                            step)["loss"]
        out[f"sync_{step}"] = worker.sync()
        out[f"gap_{step}"] = trainer_engine_gap(worker)
    out["frozen_unchanged"] = all(torch.equal(p, frozen[n])
                                  for n, p in worker.model.named_parameters() if n in frozen)
    out["adapter_params"] = sum(p.numel() for p in lora.adapter_params(worker.model).values())
    out["params"] = worker.param_count()
    worker.save(str(ckpt), {"step": 2})
    return out


@pytest.mark.slow
def test_a_lora_hybrid_worker_trains_syncs_saves_and_resumes(tmp_path):
    first = fresh(f"hybrid_run({str(tmp_path)!r}, False)")
    print("lora hybrid", json.dumps(first))
    assert first["frozen_unchanged"]
    for step in (1, 2):
        assert first[f"gap_{step}"] < 1e-4, first  # the engine samples the trained adapter
    # vLLM's LoRA serving (model.lora.serve adapter, the default): a push is the adapter alone
    sent = first["sync_1"]["sync_bytes"]
    assert sent == first["sync_2"]["sync_bytes"] < 4 * first["adapter_params"] + 2 ** 14  # + header
    assert sent < 0.5 * 4 * first["params"]  # the tiny model: its adapter is about a tenth of it
    assert (tmp_path / "ckpt" / "adapter_config.json").exists()
    assert not (tmp_path / "ckpt" / "model.safetensors").exists()  # the adapter alone
    again = fresh(f"hybrid_run({str(tmp_path)!r}, True)")
    print("lora hybrid resumed", json.dumps(again))
    assert again["adapter_equal"] and again["optimizer_steps"] == [4]  # 2 steps x inner_steps 2
    assert again["resumed_gap"] < 1e-4  # the engine follows the resumed adapter at once
    assert again["gap_2"] < 1e-4 and again["frozen_unchanged"]
