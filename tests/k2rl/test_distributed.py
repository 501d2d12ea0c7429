"""Data parallelism with real torch.distributed (gloo) processes, and weight buckets."""
import torch
import torch.multiprocessing as mp

from k2rl.bootstrap.model import build_config, build_tokenizer
from k2rl.bootstrap.recipe import Recipe
from k2rl.config import TrainConfig
from k2rl.device import distributed

K = 4
CFG = TrainConfig(optimizer="adamw", lr=1e-3, inner_steps=2, minibatches=2, grad_clip=1.0)


def make_model():
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(0)
    mcfg = Recipe(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64)
    return Qwen2ForCausalLM(build_config(mcfg, build_tokenizer())).eval()


def batch():
    """4 groups of K samples with mixed rewards and uneven lengths."""
    from k2rl.step.group import Group, Request, Status, Trajectory

    tok = build_tokenizer()
    groups = []
    for g, prompt in enumerate(["12+7=", "30-4=", "6*7=", "99-9="]):
        p = tok.encode(prompt, add_special_tokens=False)
        group = Group(Request("k2rl/Arithmetic-v1", g, group=g, k=K), 1)
        for i, reply in enumerate(["19", "26", "428", "90"]):
            r = tok.encode(reply * (1 + (g + i) % 3), add_special_tokens=False) + [tok.eos_token_id]
            group.trajectories.append(Trajectory(
                f"1:{g}:{i}", "k2rl/Arithmetic-v1", "arithmetic", prompt, i, ids=p + r,
                mask=[0] * len(p) + [1] * len(r), rewards={"task": float((g + i) % 3 == 0)},
                n_tokens=len(r), status=Status.DONE))
        groups.append(group)
    return groups


def one_update(model, groups):
    from k2rl.step.trainer import make_optimizer, update

    tok = build_tokenizer()
    return update(model, make_optimizer(model, CFG), groups, CFG, tok.pad_token_id)


def lora_model():
    """make_model with a rank-4 LoRA adapter on every projection, B drawn (not 0) so that the
    adapter's gradients are not zero on A either."""
    from k2rl.config import LoraConfig
    from k2rl.device import lora

    model = make_model()
    lora.wrap(model, LoraConfig(rank=4, alpha=8.0), "/base")
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in lora.adapter_params(model).items():
            if ".lora_B." in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
    return model


def _lora_rank(rank, world, address, out):
    """One update of a LoRA model on this rank's shard, then rank 0's adapter broadcast."""
    from k2rl.device import lora

    torch.set_num_threads(1)
    distributed.init(address, rank, world)
    model = lora_model()
    groups = batch()
    metrics = one_update(model, groups[:3] if rank == 0 else groups[3:])
    adapter = {n: p.detach().clone() for n, p in lora.adapter_params(model).items()}
    if rank == 1:  # a replica that drifted: the broadcast gives it rank 0's adapter back
        with torch.no_grad():
            next(iter(lora.adapter_params(model).values())).add_(1.0)
    lora.broadcast_adapter(model)
    torch.save({"adapter": adapter, "metrics": metrics, "state": model.state_dict()},
               f"{out}/rank{rank}.pt")
    distributed.shutdown()


def test_two_lora_workers_sum_the_adapter_gradients_and_take_the_one_worker_step(tmp_path):
    from k2rl.device import lora

    single = lora_model()
    frozen = {n: p.detach().clone() for n, p in single.named_parameters() if not p.requires_grad}
    want = one_update(single, batch())
    address = "tcp://127.0.0.1:%d" % int(distributed.free_address().rsplit(":", 1)[1])
    mp.spawn(_lora_rank, args=(2, address, str(tmp_path)), nprocs=2, join=True)
    r0, r1 = (torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1))
    assert abs(r0["metrics"]["loss"] - want["loss"]) < 1e-5
    adapter = lora.adapter_params(single)
    assert set(r0["adapter"]) == set(adapter)
    for name, p in adapter.items():
        torch.testing.assert_close(r0["adapter"][name], p.detach(), atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(r1["adapter"][name], r0["adapter"][name])  # same step
    for name, w in r1["state"].items():  # after the broadcast: rank 0's adapter, the same base
        torch.testing.assert_close(w, r0["state"][name], atol=0, rtol=0)
    for name, w in frozen.items():
        torch.testing.assert_close(r0["state"][name], w, atol=0, rtol=0)


def _rank(rank, world, address, out):
    torch.set_num_threads(1)
    # A worker's in-process vLLM engine takes torch.distributed's default group, with a world
    # of one: the workers' own group must not depend on it (it once did, and silently trained
    # each worker alone).
    own = distributed.free_address()
    torch.distributed.init_process_group("gloo", init_method=own, rank=0, world_size=1)
    distributed.init(address, rank, world)
    assert (distributed.rank(), distributed.world_size()) == (rank, world)
    model = make_model()
    groups = batch()
    # uneven shards: rank 0 gets 3 groups, rank 1 one, to check the loss scaling
    metrics = one_update(model, groups[:3] if rank == 0 else groups[3:])
    # then a bucketed broadcast from rank 0 of deliberately different weights
    named = [(n, p.detach()) for n, p in model.named_parameters()]
    if rank == 1:
        with torch.no_grad():
            for _, p in named:
                p.add_(1.0)
    received = list(distributed.broadcast_buckets(named, bucket_bytes=4096))
    torch.save({"state": model.state_dict(), "metrics": metrics, "buckets": len(received)},
               f"{out}/rank{rank}.pt")
    distributed.shutdown()
    torch.distributed.destroy_process_group()


def test_two_workers_take_the_one_worker_step(tmp_path):
    single = make_model()
    want = one_update(single, batch())
    address = "tcp://127.0.0.1:%d" % int(distributed.free_address().rsplit(":", 1)[1])
    mp.spawn(_rank, args=(2, address, str(tmp_path)), nprocs=2, join=True)
    r0, r1 = (torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1))
    assert abs(r0["metrics"]["loss"] - want["loss"]) < 1e-5
    assert r0["metrics"]["loss"] == r1["metrics"]["loss"]  # the global loss on both
    for name, w in single.state_dict().items():
        torch.testing.assert_close(r0["state"][name], w, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(r1["state"][name], r0["state"][name])  # rank 0's weights
    assert r0["buckets"] == r1["buckets"] > 1


def test_buckets_keep_order_and_size():
    named = [(f"w{i}", torch.zeros(n)) for i, n in enumerate([10, 10, 300, 5])]
    groups = distributed.buckets(named, bucket_bytes=100)
    assert [[n for n, _ in g] for g in groups] == [["w0", "w1"], ["w2"], ["w3"]]
    assert [n for g in distributed.broadcast_buckets(named, 100) for n, _ in g] == ["w0", "w1", "w2", "w3"]


class _Method:
    def __init__(self, calls, name):
        self.calls, self.name = calls, name

    def remote(self, *args):
        self.calls.append((self.name, args))
        return {"rollout": [], "critic_rank": [], "save": args[0]}.get(self.name, {"loss": 1.0})


class _Actor:
    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return _Method(self.calls, name)


def test_worker_group_splits_requests_and_keeps_groups_whole(monkeypatch):
    """Work goes to the workers as whole groups (gather stands in for ray.get)."""
    from k2rl.runtime import worker_group
    from k2rl.runtime.worker_group import WorkerGroup, mean_metrics
    from k2rl.step.group import Group, Request

    monkeypatch.setattr(worker_group, "gather", list)
    actors = [_Actor(), _Actor()]
    workers = WorkerGroup(actors)
    reqs = [Request("k2rl/Arithmetic-v1", s, group=s, k=4) for s in range(5)]
    carried = [Group(Request("k2rl/Arithmetic-v1", g, group=g, k=4), 1) for g in (0, 1, 3)]
    assert workers.rollout(reqs, 2, carried, True) == []
    (_, (r0, step, c0, partial)), (_, (r1, _, c1, _)) = actors[0].calls[-1], actors[1].calls[-1]
    assert [r.group for r in r0] == [0, 2, 4] and [r.group for r in r1] == [1, 3]
    assert [g.request.group for g in c0] == [0] and [g.request.group for g in c1] == [1, 3]
    assert step == 2 and partial
    groups = batch()[:3]
    assert workers.train(groups, 1, [{"e": i} for i in range(3)]) == {"loss": 1.0}
    (_, (s0, _, e0)), (_, (s1, _, e1)) = actors[0].calls[-1], actors[1].calls[-1]
    assert s0 == [groups[0], groups[2]] and s1 == [groups[1]]
    assert [e0, e1] == [[{"e": 0}, {"e": 2}], [{"e": 1}]]
    workers.train(groups, 1, None)
    assert [a.calls[-1][1][2] for a in actors] == [None, None]  # no pairs yet: no critic step
    assert workers.save("p", {}) == "p" and actors[1].calls[-1][0] == "train"
    assert mean_metrics([{"loss": 1.0, "x": 2.0}, {"loss": 3.0}]) == {"loss": 2.0, "x": 2.0}


def test_the_worker_group_and_the_worker_share_one_api():
    """Same public methods, same signatures: the controller drives one worker or many alike."""
    import inspect

    from k2rl.runtime.hybrid import WORKER_API, HybridWorker
    from k2rl.runtime.worker_group import WorkerGroup

    def public(cls):
        return {n for n, f in vars(cls).items()
                if (callable(f) or isinstance(f, classmethod)) and not n.startswith("_")}

    assert set(WORKER_API) <= public(HybridWorker) and set(WORKER_API) <= public(WorkerGroup)
    assert public(HybridWorker) - set(WORKER_API) == {"address", "join"}  # set-up, by start
    assert public(WorkerGroup) - set(WORKER_API) == {"start", "stop"}
    for name in WORKER_API:
        one, many = (inspect.signature(getattr(c, name)) for c in (HybridWorker, WorkerGroup))
        assert one == many, (name, one, many)


def test_a_gpu_group_without_a_gpu_is_a_clear_error_before_any_rendezvous():
    import pytest

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(RuntimeError, match="ray.device cuda need a CUDA build of torch"):
        distributed.init("tcp://127.0.0.1:1", 0, 2, device="cuda")  # no store is ever opened
    assert distributed.world_size() == 1
