"""The hybrid worker with a real in-process vLLM engine on the tiny model."""
import pytest
import torch

from critic.pairs import Pair
from k2rl.bootstrap.model import default_model
from k2rl.config import load_config
from k2rl.step.group import Request, trajectories
from k2rl.step.trainer import batch_of, engine_gap, old_logp

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def worker():
    from k2rl.runtime.hybrid import HybridWorker

    cfg = load_config("configs/tiny.yaml")
    return HybridWorker(str(default_model(cfg.model, progress=False)), cfg)


def requests(n=8, k=1, temperature=1.0):
    return ([Request("k2rl/Arithmetic-v1", s, group=s, temperature=temperature, k=k)
             for s in range(n // 2)]
            + [Request("k2rl/Calculator-v1", s, group=n // 2 + s, temperature=temperature, k=k)
               for s in range(n // 2)])


def informative(groups, every=2):
    """Set task rewards so that every group has a spread (trajectory i gets i % every == 1)."""
    for i, t in enumerate(trajectories(groups)):
        t.rewards = {"task": float(i % every == 1)}
    return groups


# Test-only helpers: production workers carry none of these.

def greedy_texts(worker, prompts: list[list[int]], max_tokens: int) -> tuple[list[str], list[str]]:
    """Greedy replies from the engine and from the trainer (HF generate), for sync checks."""
    from k2rl.device import engine

    outs = engine.generate(worker.llm, prompts, [max_tokens] * len(prompts), [0.0] * len(prompts))
    from_engine = [worker.tokenizer.decode(ids) for ids, _ in outs]
    from_trainer = []
    for p in prompts:
        g = worker.model.generate(torch.tensor([p]), max_new_tokens=max_tokens, do_sample=False,
                                  eos_token_id=worker.tokenizer.eos_token_id,
                                  pad_token_id=worker.tokenizer.pad_token_id)
        from_trainer.append(worker.tokenizer.decode(g[0, len(p):].tolist()))
    return from_engine, from_trainer


def engine_logps(worker, prompts: list[list[int]], max_tokens: int) -> list[list[float]]:
    """The engine's log-probs of its own greedy replies."""
    from k2rl.device import engine

    outs = engine.generate(worker.llm, prompts, [max_tokens] * len(prompts), [0.0] * len(prompts))
    return [logps for _, logps in outs]


def perturb(worker, scale: float, seed: int) -> None:
    """Add Gaussian noise to every trainer weight (the engine must follow after sync)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in worker.model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * scale * p.std())


def ptx_nll(worker, n: int = 128) -> float:
    """Mean NLL of the first n curated samples (how much PTX keeps them likely)."""
    from k2rl.lm.logprobs import collate, token_nll

    with torch.no_grad():
        return token_nll(worker.model, collate(worker.ptx[:n], worker.tokenizer.pad_token_id)).item()


def trainer_engine_gap(worker) -> float:
    groups = worker.rollout(requests(k=2), 1)
    batch = batch_of(groups, worker.tokenizer.pad_token_id)
    _, tok = old_logp(worker.model, batch, "sum")
    return engine_gap(tok, groups, batch["loss_mask"])


def test_engine_and_trainer_agree_and_sync_follows_a_perturbation(worker):
    assert trainer_engine_gap(worker) < 1e-4
    prompts = [t.ids[: t.mask.index(1)]
               for t in trajectories(worker.rollout(requests(16, temperature=0.0), 0))]
    before = engine_logps(worker, prompts, 10)
    perturb(worker, 0.5, seed=1)
    assert trainer_engine_gap(worker) > 1e-2  # the engine still has the old weights
    sync = worker.sync()
    assert sync["sync_bytes"] == 4 * worker.param_count() and sync["sync_seconds"] > 0
    assert trainer_engine_gap(worker) < 1e-4  # every weight, the tied output head included
    from_engine, from_trainer = greedy_texts(worker, prompts, 10)
    assert from_engine == from_trainer
    # the engine's own greedy log-probs moved with the push (the tiny model's greedy texts
    # may not: it can answer "1111111111" before and after)
    after = engine_logps(worker, prompts, 10)
    assert max(abs(a - b) for x, y in zip(before, after) for a, b in zip(x, y)) > 1e-2


def test_train_step_changes_weights_and_reports_metrics(worker):
    groups = informative(worker.rollout(requests(k=4), 2))
    w0 = worker.model.model.layers[0].mlp.up_proj.weight.detach().clone()
    metrics = worker.train(groups, step=1)
    assert set(metrics) >= {"loss", "grad_norm", "logp_gap"} and metrics["logp_gap"] < 1e-3
    assert not torch.equal(w0, worker.model.model.layers[0].mlp.up_proj.weight)


def test_muon_puts_matrices_on_muon_and_the_rest_on_adamw(worker):
    from k2rl.config import TrainConfig
    from k2rl.step.trainer import make_optimizer

    muon, adamw = make_optimizer(worker.model, TrainConfig(optimizer="muon"))
    assert isinstance(muon, torch.optim.Muon) and isinstance(adamw, torch.optim.AdamW)
    assert all(p.ndim == 2 for g in muon.param_groups for p in g["params"])
    embed = worker.model.model.embed_tokens.weight
    assert any(p is embed for g in adamw.param_groups for p in g["params"])
    # and an RL update with them runs and moves both kinds of parameter
    saved = worker.optimizers
    worker.optimizers = [muon, adamw]
    up, emb = worker.model.model.layers[0].mlp.up_proj.weight, embed
    before = up.detach().clone(), emb.detach().clone()
    groups = informative(worker.rollout(requests(k=4), 5))
    metrics = worker.train(groups, step=1)
    worker.optimizers = saved
    assert metrics["loss"] > 0
    assert not torch.equal(before[0], up) and not torch.equal(before[1], emb)


def test_a_bf16_trainer_takes_pi_old_from_its_own_first_pass(worker):
    """With bf16 matmuls (model.autocast) the trainer's log-probs differ from the fp32 engine's
    by more than the tolerance: π_old is then the trainer's, from the loss's own first pass."""
    from k2rl.lm import precision

    groups = informative(worker.rollout(requests(k=4), 3))
    precision.enable(worker.model, "bfloat16")
    try:
        metrics = worker.train(groups, step=1)
    finally:
        precision.enable(worker.model, "float32")
    assert metrics["logp_gap"] > worker.cfg.train.old_logp_tolerance
    assert metrics["old_logp_recomputed"] == 1.0 and metrics["old_logp_extra_pass"] == 0.0
    assert metrics["train_gflops_per_s"] > 0


def test_critic_verdicts_come_from_the_engine_and_match_the_trainer(worker):
    """The critic's verdict log-probs after its own working and checks: engine == trainer."""
    from critic.compare import Comparison
    from critic.layout import verdict_messages
    from k2rl.step.critic_ids import open_ids, verdict_ids

    worker.sync()  # earlier tests updated the trainer; the engine must hold the same weights
    rubrics = tuple(worker.rubrics[:1])
    c = Comparison("2+2=", "4", "5", rubrics, "arithmetic")
    j = worker.critic([c])[0]
    assert j.shown == ("4", "5")  # (an almost untrained model may write nothing: EOS)
    ids = verdict_ids(worker.tokenizer)
    for (a, ca, b, cb), p in (((j.shown[0], j.checks[0], j.shown[1], j.checks[1]), j.p_ab),
                              ((j.shown[1], j.checks[1], j.shown[0], j.checks[0]), j.p_ba)):
        prompt = open_ids(worker.tokenizer, verdict_messages("2+2=", rubrics, j.working, a, ca, b, cb))
        with torch.no_grad():
            logits = worker.model(torch.tensor([prompt])).logits[0, -1]
        logp = torch.log_softmax(logits, -1)
        assert p == pytest.approx(torch.softmax(logp[ids], -1)[0].item(), abs=1e-4)


def test_critic_eval_and_verdict_loss_in_the_update(worker):
    pairs = [Pair("2+2=", "4", "5", "arithmetic")] * 2
    result = worker.critic_eval(pairs)
    assert {"critic/accuracy", "critic/swap_consistency", "critic/tie_rate"} <= set(result)
    assert result["critic/arithmetic/n"] == 2  # per task too
    assert result["critic/arithmetic/accuracy"] == result["critic/accuracy"]
    groups = worker.rollout(requests(k=2), 3)
    metrics = worker.train(groups, step=2, critic_pairs=pairs)
    assert metrics["critic_loss"] > 0 and 0.0 <= metrics["critic/train_agreed"] <= 1.0
    # critic.correct_checks (default): the run's arithmetic task corrects its slipped checks
    assert set(worker.correctors) == {"arithmetic"}
    assert 0.0 <= metrics["critic/train_corrected"] <= 1.0
    assert result["critic/brier"] >= 0 and "critic/arithmetic/swap_consistency" in result
    assert metrics["train_flops"] > 0 and metrics["train_gflops_per_s"] > 0


def test_the_closed_loop_trains_a_chat_critic_on_its_verdicts(worker, monkeypatch):
    """critic.layout chat with the refresh on: no judging pass, the verdicts of the labelled
    pairs in both orders (k2rl.step.critic_sft), the critic's own step."""
    from k2rl.step import critic_sft

    pairs = [Pair("2+2=", "4", "5", "arithmetic")] * 2
    trained, made = [], critic_sft.examples

    def examples(tokenizer, max_len, pairs_, rubrics):
        trained.append(made(tokenizer, max_len, pairs_, rubrics))
        return trained[-1]

    monkeypatch.setattr(worker, "layout", "chat")
    monkeypatch.setattr(worker, "critic", lambda comparisons: pytest.fail("no judging pass"))
    monkeypatch.setattr(critic_sft, "examples", examples)
    groups = worker.rollout(requests(k=2), 3)
    metrics = worker.train(groups, step=2, critic_pairs=pairs)
    assert metrics["critic_loss"] > 0 and "critic/train_agreed" not in metrics
    assert len(trained[0]) == 4  # two pairs, each in both orders


def fresh_optimizers(worker, **changes):
    from dataclasses import replace

    from k2rl.step.trainer import make_optimizer

    worker.cfg.train = replace(worker.cfg.train, **changes)
    worker.optimizers = make_optimizer(worker.model, worker.cfg.train)


def test_ptx_keeps_the_curated_set_likelier(worker, tmp_path):
    """Same start, same RL batches: with PTX the curated NLL ends lower than without."""
    from k2rl.bootstrap.ptx import load_ptx, write_curated

    worker.ptx = load_ptx(write_curated(tmp_path / "c.jsonl", n=64), worker.tokenizer)
    start = {k: v.clone() for k, v in worker.model.state_dict().items()}
    saved_cfg = worker.cfg.train
    batches = []
    for step in range(3):
        groups = worker.rollout(requests(k=4), 10 + step)
        for i, t in enumerate(trajectories(groups)):
            t.rewards = {"task": float(i % 3 == 0)}
        batches.append(groups)
    nll = {}
    for beta in (0.0, 1.0):
        worker.model.load_state_dict(start)
        fresh_optimizers(worker, ptx_beta=beta, ptx_batch=32, lr=3e-3)
        for step, groups in enumerate(batches, start=1):
            metrics = worker.train(groups, step)
        nll[beta] = ptx_nll(worker)
        assert ("ptx_loss" in metrics) == (beta > 0)
    worker.cfg.train = saved_cfg
    worker.model.load_state_dict(start)
    fresh_optimizers(worker)
    print("curated NLL without/with PTX:", nll)
    assert nll[1.0] < nll[0.0] - 0.05, nll


def test_truncation_rate_falls_when_overlong_answers_are_penalised(worker):
    """Budget 3 tokens, penalty -1: RL teaches the (barely trained) model to stop in time."""
    from dataclasses import replace

    start = {k: v.clone() for k, v in worker.model.state_dict().items()}
    saved = worker.cfg.rollout, worker.cfg.train
    worker.cfg.rollout = replace(worker.cfg.rollout, truncation_penalty=-1.0)
    fresh_optimizers(worker, lr=3e-3, inner_steps=2)
    reqs = [Request("k2rl/Arithmetic-v1", s, budget=3, group=s, k=4) for s in range(8)]
    rates = []
    for step in range(1, 13):
        groups = worker.rollout(reqs, step)
        trajs = trajectories(groups)
        rates.append(sum(t.truncated for t in trajs) / len(trajs))
        assert all(t.reward == -1.0 for t in trajs if t.truncated)
        worker.train(groups, step)
        worker.sync()
    worker.cfg.rollout, worker.cfg.train = saved
    worker.model.load_state_dict(start)
    worker.sync()
    fresh_optimizers(worker)
    print("truncation rate per step:", rates)
    assert sum(rates[-3:]) / 3 < sum(rates[:3]) / 3 - 0.15, rates


def test_bucketed_weight_push_loads_every_bucket(worker):
    """The multi-worker path: weights go to the engine bucket by bucket (k2rl.device.distributed)."""
    from k2rl.device import engine

    perturb(worker, 0.3, seed=7)
    assert trainer_engine_gap(worker) > 1e-2
    sync = engine.push_weights(worker.llm, worker.model, bucket_bytes=2 ** 20)  # ~14 buckets
    assert sync["sync_bytes"] == 4 * worker.param_count()
    assert trainer_engine_gap(worker) < 1e-4  # the tied output head included


def test_the_rl_loop_drives_one_worker_as_it_drives_a_group(worker, tmp_path):
    """controller.loop only uses WORKER_API, so one in-process HybridWorker can stand in for a
    WorkerGroup: two steps with a real redis-server. The k2rl modules that one iteration runs
    (from step 1's stored rollouts to step 2's) are recorded and printed."""
    import sys
    from dataclasses import replace

    from k2rl import controller
    from k2rl.runtime.redis_server import connect, start_redis
    from k2rl.runtime.store import RunState, RunStore

    cfg = replace(worker.cfg, train=replace(worker.cfg.train, steps=2),
                  eval=replace(worker.cfg.eval, every=2, prompts_per_task=4))
    touched = set()

    def profile(frame, event, arg):
        name = frame.f_code.co_filename
        if event == "call" and "/k2rl/" in name and "/tests/" not in name:
            touched.add(name.rsplit("/", 1)[1])

    def on_stored(step, workers):
        assert workers is worker and step in (1, 2)
        sys.setprofile(profile if step == 1 else None)

    start = {k: v.clone() for k, v in worker.model.state_dict().items()}
    with start_redis(tmp_path) as server:
        store = RunStore(connect(server.url), "inproc")
        summary = controller.loop(cfg, tmp_path, store, worker, RunState(), on_stored)
        assert store.rollout_count() == 2 * 4 * 2 and store.state().last_step == 2
        assert [g.id for g in store.rollouts(2)] == ["2:0", "2:1", "2:2", "2:3"]
        trained = {t.prompt for s in (1, 2) for g in store.rollouts(s) for t in g}
        held = {p.prompt for p in store.pairs("heldout")}
        assert store.state().critic_heldout == len(store.pairs("heldout"))
        assert not held & trained and not held & {p.prompt for p in store.pairs("train")}
    assert set(summary["heldout_after"]) >= {"heldout/all/accuracy", "heldout/all/n"}
    assert summary["heldout_after"]["heldout/arithmetic/n"] == 4
    print("k2rl modules one iteration runs:", len(touched), sorted(touched))
    assert {"controller.py", "sampling.py", "rollout.py", "trainer.py", "store.py"} <= touched
    worker.model.load_state_dict(start)
    worker.sync()
    fresh_optimizers(worker)
