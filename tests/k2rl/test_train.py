"""The `k2rl train` entry point end to end: real Ray, real redis-server, real vLLM, tiny model."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from k2rl.runtime.redis_server import connect, start_redis
from k2rl.runtime.store import RunStore
from k2rl.step.group import trajectories

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TINY = ["configs/tiny.yaml"]


def k2rl(*args, fault=(), check=True):
    """`k2rl ARGS` in a subprocess; `fault` ("crash" or "kill-worker", step) injects one
    (tests/k2rl/faults.py)."""
    command = ["-m", "tests.k2rl.faults", fault[0], str(fault[1])] if fault else ["-m", "k2rl"]
    proc = subprocess.run([sys.executable, *command, *args], cwd=ROOT, capture_output=True,
                          text=True, env=os.environ, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"k2rl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def read_store(run_dir: Path):
    server = start_redis(run_dir)
    try:
        store = RunStore(connect(server.url), run_dir.name, run_dir)  # steps in files too
        return trajectories(store.rollouts()), store.state(), store.metrics()
    finally:
        server.stop()


def test_smoke_run_of_the_entry_point(tmp_path):
    proc = k2rl("train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=smoke")
    run = tmp_path / "smoke"
    assert "held-out accuracy" in proc.stdout
    summary = json.loads((run / "summary.json").read_text())
    assert set(summary["heldout_after"]) >= {"heldout/all/accuracy", "heldout/tool_use/accuracy"}
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in lines] == [0, 1, 2, 3, 4]
    assert {"loss", "logp_gap", "sync_seconds", "train/all/reward", "time/rollout", "time/reward",
            "time/train", "time/sync"} <= set(lines[1])
    assert all(0 < m["time/reward"] < m["time/rollout"] for m in lines[1:])
    # process memory every step: the driver and the worker hold a model each (hundreds of MB)
    assert all(100 < m["mem/driver_rss_mb"] and 100 < m["mem/worker_rss_mb"]
               and 0 < m["mem/redis_used_mb"] < 100 for m in lines[1:])
    assert all(m["reward/timeouts"] == 0 for m in lines[1:])  # the workers' count, wired
    assert (run / "checkpoints" / "step-00004" / "config.json").exists()
    # the engine's settings as it runs with them: the threads asked for, not vLLM's one
    engine = json.loads((run / "engine.json").read_text())
    assert engine["torch_threads"] == engine["trainer_threads"] == 2 and engine["prefix_caching"]
    assert engine["kv_cache_tokens"] >= engine["max_model_len"] and engine["block_size"] == 32
    # the build's recipe travels with its checkpoints (k2rl.bootstrap.model.built_recipe)
    recipe = json.loads((run / "checkpoints" / "step-00004" / "recipe.json").read_text())
    assert recipe["hidden_size"] == 64 and "warm_start" in recipe
    rollouts, state, metrics = read_store(run)
    assert len(rollouts) == summary["rollouts"] == 4 * 4 * 2 and state.last_step == 4
    assert len(metrics) == 5


def test_the_critic_path_judges_chat_groups_in_a_run(tmp_path):
    """As configs/critic.yaml: a critic-rewarded family next to a verifiable one, refresh on."""
    printed = k2rl("train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=c", "rollout.k=4",
         "critic.refresh=true", "critic.opponents=2", "critic.tie_margin=0",
         "tasks=[{id: k2rl/Arithmetic-v1}, {id: k2rl/Chat-v1}]")
    lines = [json.loads(x) for x in (tmp_path / "c" / "metrics.jsonl").read_text().splitlines()]
    judged = [m for m in lines[1:] if "train/chat/reward" in m]
    assert judged and all(m["time/critic"] > 0 for m in judged)
    # chat's held-out prompts are also sampled (eval.sampled_k), arithmetic's only greedily
    evals = [m for m in lines if "heldout/all/accuracy" in m]
    assert len(evals) == 3 and all(0 <= m["heldout/chat/sampled_accuracy"] <= 1 and
                                   "heldout/chat/sampled_flattery" in m for m in evals)
    assert not any("sampled" in k for k in evals[0] if "arithmetic" in k or "/all/" in k)
    assert evals[0]["heldout/chat/n"] == 8 and "chat, sampled" in printed.stdout
    # the critic on its held-out pairs is measured before the first step too, when it has any
    assert ("critic/accuracy" in lines[0]) == any("critic/accuracy" in m for m in lines[1:])
    rollouts, _, _ = read_store(tmp_path / "c")
    chat = [r for r in rollouts if r.task == "chat" and not r.truncated]
    assert chat and all(r.judged for r in chat)
    # Win rates over 2 opponents: 0, 0.25, ..., 1 (a 0-reward episode is rewritten).
    assert all(r.reward * 4 == round(r.reward * 4) and 0 <= r.reward <= 1 for r in chat)
    assert all(r.reward == r.rewards["critic"] for r in chat) and len({r.reward for r in chat}) > 1
    assert all("train/reward/critic" in m for m in judged)  # each component is logged


def test_resume_after_a_crash_loses_and_repeats_no_rollout(tmp_path):
    """Redis keeps one step (redis.keep_steps=1), so steps 1 and 2 are read from their files."""
    crashed = k2rl("train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=r",
                   "redis.keep_steps=1", fault=("crash", 3), check=False)
    assert crashed.returncode == 2 and "injected failure at step 3" in crashed.stderr
    run = tmp_path / "r"
    assert sorted(p.name for p in (run / "rollouts").iterdir()) == [
        "step-00001.jsonl.gz", "step-00002.jsonl.gz"]
    rollouts, state, _ = read_store(run)
    assert state.last_step == 2 and {r.traj_id.split(":")[0] for r in rollouts} == {"1", "2", "3"}
    step3 = [r for r in rollouts if r.traj_id.startswith("3:")]
    k2rl("train", "--resume", str(run))
    rollouts, state, metrics = read_store(run)
    ids = [r.traj_id for r in rollouts]
    assert len(ids) == len(set(ids)) == 4 * 4 * 2  # every step once, none twice
    assert [r for r in rollouts if r.traj_id.startswith("3:")] == step3  # replayed, not resampled
    assert state.last_step == 4 and state.status == "finished"
    assert sorted(m["step"] for m in metrics) == [0, 1, 2, 3, 4]


def test_bad_config_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("train:\n  stepz: 3\n")
    proc = k2rl("train", str(bad), check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "train.stepz" in proc.stderr and "bad.yaml" in proc.stderr
    proc = k2rl("train", "tasks=[{id: k2rl/Nope-v0}]", check=False)
    assert proc.returncode == 2 and "unknown environment id 'k2rl/Nope-v0'" in proc.stderr


def test_partial_rollouts_resume_across_steps_and_a_crash(tmp_path):
    """k1.5 partial rollouts: episodes pause at 12 tokens per step, are carried in Redis (also
    across a crash), continue with the newer policy, and are scored once, in whole groups.

    12 tokens: the tiny model's episodes run to 32 tokens, and a group is scored only when both
    its members finish, so a budget of 3 could leave every group unfinished after 4 steps."""
    args = ["train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=p",
            "rollout.partial_budget=12"]
    crashed = k2rl(*args, fault=("crash", 3), check=False)
    assert crashed.returncode == 2 and "injected failure at step 3" in crashed.stderr
    run = tmp_path / "p"
    k2rl("train", "--resume", str(run))
    server = start_redis(run)
    try:
        store = RunStore(connect(server.url), "p")
        groups, carry, metrics = store.rollouts(), store.carry(), store.metrics()
    finally:
        server.stop()
    rollouts = trajectories(groups)
    ids = [r.traj_id for r in rollouts]
    assert len(ids) == len(set(ids)) and not set(ids) & {t.traj_id for t in trajectories(carry)}
    assert not any(r.paused for r in rollouts)  # only finished trajectories are scored
    resumed = [r for r in rollouts if r.segments > 1]
    assert resumed and all(r.n_tokens > 12 for r in resumed)
    assert all(g.paused for g in carry)  # what is carried waits for a paused member
    by_id = {}
    for r in rollouts:
        by_id.setdefault(r.traj_id.rsplit(":", 1)[0], []).append(r)
    assert all(sorted(r.sample for r in g) == [0, 1] for g in by_id.values())  # whole groups
    assert all([t.sample for t in g] == [0, 1] for g in groups)
    assert any(m.get("partial/resumed_trained", 0) > 0 for m in metrics)


TWO_WORKERS = ["ray.num_workers=2", "engine.threads=1"]


def test_two_nodes_of_a_local_ray_cluster_train_together(tmp_path):
    """A two-node Ray cluster on loopback; one data-parallel worker on each node."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        k2rl("train", *TINY, *TWO_WORKERS, "ray.placement_strategy=STRICT_SPREAD",
             f"log.run_dir={tmp_path}", "log.run_name=mn", "--ray-address", cluster.address)
        rollouts, state, metrics = read_store(tmp_path / "mn")
    finally:
        cluster.shutdown()
    assert len(set(state.worker_nodes)) == 2 and state.status == "finished"
    assert len({r.traj_id for r in rollouts}) == 4 * 4 * 2
    assert all(m["sync_bytes"] > 0 for m in metrics if m["step"] > 0)
    # one data-parallel policy: every engine samples with the weights every trainer holds
    # (with each worker training alone the gap was 1e-3 to 1e-2 from step 2 on)
    gaps = [m["logp_gap"] for m in metrics if "logp_gap" in m]
    assert len(gaps) == 4 and max(gaps) < 1e-5


def test_killed_worker_is_a_clear_error_and_the_run_resumes(tmp_path):
    run = tmp_path / "kw"
    crashed = k2rl("train", *TINY, *TWO_WORKERS, f"log.run_dir={tmp_path}", "log.run_name=kw",
                   fault=("kill-worker", 3), check=False)
    assert crashed.returncode == 2 and "a hybrid worker died at step 3" in crashed.stderr
    line = next(x for x in crashed.stderr.splitlines() if "a hybrid worker died" in x)
    assert line.startswith("k2rl: error: ") and "--resume" in line  # one sentence that says how
    before, state, _ = read_store(run)
    assert state.last_step == 2
    k2rl("train", "--resume", str(run))
    rollouts, state, _ = read_store(run)
    ids = [r.traj_id for r in rollouts]
    assert len(ids) == len(set(ids)) == 4 * 4 * 2 and state.status == "finished"
    assert [r for r in rollouts if r.traj_id.startswith("3:")] == [
        r for r in before if r.traj_id.startswith("3:")]  # step 3 replayed, not resampled


def test_a_jsonl_dataset_trains_through_k2rl_train(tmp_path):
    """examples/dataset's files as a task of the tiny run: rows become prompts, math-verify
    scores them, and its held-out file is what is evaluated."""
    k2rl("train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=ds",
         "tasks=[{id: k2rl/Dataset-v0, kwargs: {files: examples/dataset/train.jsonl, "
         "eval_files: examples/dataset/eval.jsonl, prompt_field: question, "
         "verifier: math_equiv, budget: 8, task: sums}}]")
    rollouts, state, _ = read_store(tmp_path / "ds")
    train = {json.loads(x)["question"] for x in (ROOT / "examples/dataset/train.jsonl").open()}
    assert state.status == "finished" and len(rollouts) == 4 * 4 * 2
    assert all(r.task == "sums" and r.prompt in train and r.n_tokens <= 8 for r in rollouts)
    summary = json.loads((tmp_path / "ds" / "summary.json").read_text())
    assert set(summary["heldout_after"]) == {"heldout/sums/accuracy", "heldout/all/accuracy",
                                             "heldout/sums/n", "heldout/all/n"}
    assert summary["heldout_after"]["heldout/sums/n"] == 8  # tiny.yaml: 8 distinct eval rows


def test_the_example_dataset_holds_out_its_eval_problems_in_every_form():
    """No unordered pair of operands of eval.jsonl is in train.jsonl (a commuted sum, or the
    same sum under another template, is the same problem)."""
    import re

    def pairs(name):
        rows = [json.loads(x) for x in (ROOT / "examples/dataset" / name).open()]
        return {frozenset(map(int, re.findall(r"\d+", r["question"]))) for r in rows}

    held, train = pairs("eval.jsonl"), pairs("train.jsonl")
    assert len(held) == 40 and not held & train


def test_a_sigkilled_driver_leaves_no_process_and_resumes_without_loss(tmp_path, monkeypatch):
    """kill -9 of `k2rl train` mid-run: its redis-server, Ray and workers are stopped by its
    reaper within seconds, and `--resume` loses and duplicates nothing."""
    import time

    from k2rl.runtime.reaper import start_time

    pids_file = tmp_path / "pids.json"
    monkeypatch.setenv("K2RL_FAULT_PIDS", str(pids_file))
    killed = k2rl("train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=sk",
                  fault=("sigkill", 3), check=False)
    assert killed.returncode == -9
    procs = {int(pid): t for pid, t in json.loads(pids_file.read_text()).items()}
    assert len(procs) >= 3  # redis-server, Ray's processes, the hybrid worker
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(start_time(p) == t for p, t in procs.items()):
        time.sleep(0.2)
    left = [p for p, t in procs.items() if start_time(p) == t]
    assert not left, [open(f"/proc/{p}/cmdline").read().replace("\0", " ")[:100] for p in left]
    k2rl("train", "--resume", str(tmp_path / "sk"))
    rollouts, state, _ = read_store(tmp_path / "sk")
    ids = [r.traj_id for r in rollouts]
    assert len(ids) == len(set(ids)) == 4 * 4 * 2 and state.status == "finished"


def test_a_lost_redis_is_one_sentence_and_the_run_resumes(tmp_path):
    """The run's redis-server is killed mid-run: the driver stops with one sentence that says
    how to go on, leaves nothing running, and `--resume` loses and duplicates nothing."""
    lost = k2rl("train", *TINY, f"log.run_dir={tmp_path}", "log.run_name=lr",
                fault=("kill-redis", 3), check=False)
    assert lost.returncode == 2, lost.stderr[-2000:]
    line = lost.stderr.strip().splitlines()[-1]
    assert line.startswith("k2rl: error: the run lost its Redis at step 3 (ConnectionError")
    assert line.endswith(f"resume with `k2rl train --resume {tmp_path / 'lr'}`")
    k2rl("train", "--resume", str(tmp_path / "lr"))
    rollouts, state, _ = read_store(tmp_path / "lr")
    ids = [r.traj_id for r in rollouts]
    assert len(ids) == len(set(ids)) == 4 * 4 * 2 and state.status == "finished"
