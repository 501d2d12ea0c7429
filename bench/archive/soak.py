"""A long run of configs/tiny.yaml: seconds per step, Redis memory and every process's RSS, from
the start to the end; and a tracemalloc profile of the hybrid worker's growth.

    python bench/archive/soak.py [--steps 3000] [--minutes 25] [--label after] [--root DIR]
                         [--out bench/archive/results/soak.json] [key.sub=value ...]
    python bench/archive/soak.py --profile [--steps 400] [--label profile]

Run mode: `k2rl train configs/tiny.yaml train.steps=STEPS` in a child process (with the
overrides given), watched from outside every `--every` seconds: the step (metrics.jsonl), Redis's
`used_memory` (INFO memory, on the run's own server) and the resident memory of every process
of the run (the driver, redis-server, the hybrid worker, Ray's raylet, GCS and helpers, by
name). After `--minutes` the run is interrupted (SIGINT, as Ctrl-C) if it has not finished: the
result says how many steps ran. Before that, Redis's memory is broken down by key (MEMORY USAGE,
step numbers folded). Since the watching is from outside, `--root` can point at another
checkout (say, the commit before the run store kept steps in files) for a before/after pair.
Where the run logs `mem/*` (k2rl since the run store change) those are summarised too.

Profile mode: one in-process hybrid worker (no Ray, no Redis) does what a tiny run's step does
on the worker: roll out the step's prompts, train with the critic's pairs (harvested from the
groups, kept in a list here instead of Redis), push weights, a greedy held-out evaluation and the
judge's held-out pairs every `eval.every` steps, a checkpoint every `log.checkpoint_every`, and
the RSS query the controller makes every step. tracemalloc starts after `--warmup` steps (it
slows vLLM's Python many times over), so what it holds at the end is what was allocated since
and is still alive: the growth, by allocation site; RSS and the glibc heap (mallinfo2) are
taken at both points. Python allocations that grow show by name; growth that tracemalloc does
not see is native (torch, vLLM, glibc's arenas).

Layouts mode (`--layouts RUN_DIR`, a soak's run folder): the run's stored steps (its
rollouts/ files) written again into a fresh redis-server, once as k2rl kept them before the run
store change (every group an entry of one `rollouts` stream, kept forever) and once as now (a
list per step, the newest `redis.keep_steps` kept), with its metrics.jsonl as the metrics stream:
Redis's used_memory per step, so the before/after figure comes from the same trajectories.

Results go into `--out` under `--label` (other labels are kept). Run it niced on a shared
machine: `nice -n 15 python bench/archive/soak.py ...`.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


# --------------------------------------------------------------------------- watching a run


def process_name(proc) -> str:
    """A short name for a process of the run: driver, redis-server, HybridWorker, raylet..."""
    try:
        cmd = " ".join(proc.cmdline())
    except Exception:
        return "gone"
    for pattern, name in ((r"ray::(\w+)", None), (r"redis-server", "redis-server"),
                          (r"raylet", "raylet"), (r"gcs_server", "gcs_server"),
                          (r"k2rl\.reaper", "reaper"), (r"dashboard|agent", "ray-agent")):
        m = re.search(pattern, cmd)
        if m:
            return name or m.group(1)
    script = next((Path(a).name for a in proc.cmdline() if a.endswith(".py")), None)
    return script or proc.name()


def rss_by_process(root_pid: int) -> dict[str, float]:
    """MiB resident of the run's processes by name (the driver is "driver"; names that repeat
    are summed, with their count)."""
    import psutil

    try:
        root = psutil.Process(root_pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return {}
    out: dict[str, float] = {}
    for p in procs:
        try:
            name = "driver" if p.pid == root_pid else process_name(p)
            rss = p.memory_info().rss / 2**20
        except psutil.NoSuchProcess:
            continue
        out[name] = out.get(name, 0.0) + rss
    return out


def logged_steps(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # being written
    return rows


def redis_client(run: Path):
    """A client of the run's live redis-server (None: not serving yet)."""
    from k2rl.viewer import live_redis
    import redis

    url = live_redis(run.resolve())
    return redis.Redis.from_url(url, decode_responses=True) if url else None


def key_breakdown(client) -> dict[str, dict]:
    """Redis memory by key, step numbers folded: {"k2rl:RUN:rollouts:N": {keys, bytes}}."""
    out: dict[str, dict] = {}
    for key in client.scan_iter(count=1000):
        name = re.sub(r":\d+$", ":N", key)
        row = out.setdefault(name, {"keys": 0, "bytes": 0, "type": client.type(key)})
        row["keys"] += 1
        row["bytes"] += client.memory_usage(key, samples=0) or 0
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["bytes"]))


def watch(args, overrides: list[str]) -> dict:
    base = Path(tempfile.mkdtemp(prefix="k2rl-soak-"))
    run = base / "soak"
    command = [sys.executable, "-m", "k2rl", "train", "configs/tiny.yaml",
               f"train.steps={args.steps}", f"log.run_dir={base}", "log.run_name=soak",
               *overrides]
    env = {**os.environ, "PYTHONPATH": str(args.root)}
    log = open(base / "soak-stdout.txt", "w")
    proc = subprocess.Popen(command, cwd=args.root, env=env, stdout=log, stderr=subprocess.STDOUT)
    start, samples, breakdown, client = time.time(), [], None, None
    deadline = start + 60 * args.minutes
    try:
        while proc.poll() is None:
            time.sleep(args.every)
            client = client or redis_client(run)
            sample = {"t": round(time.time() - start, 1), "step": max(
                [r["step"] for r in logged_steps(run)], default=None),
                "rss_mb": rss_by_process(proc.pid)}
            try:
                sample["redis_used_mb"] = client.info("memory")["used_memory"] / 2**20
            except Exception:
                client = None
            samples.append(sample)
            with open(base / "samples.jsonl", "a") as f:  # kept if this process dies
                f.write(json.dumps(sample) + "\n")
            if time.time() > deadline:
                try:
                    breakdown = key_breakdown(client) if client else None
                except Exception as e:
                    breakdown = {"error": str(e)}
                stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    return summarize(args, command, base, run, proc.returncode, samples, breakdown,
                     time.time() - start)


def stop(proc: subprocess.Popen) -> None:
    """SIGINT (as Ctrl-C), then SIGTERM, then SIGKILL (the run's reaper stops its services)."""
    for sig, wait in ((signal.SIGINT, 180), (signal.SIGTERM, 60), (signal.SIGKILL, 60)):
        proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def slope_per_step(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (step, value) points."""
    if len(points) < 3:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else None


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def summarize(args, command, base, run, returncode, samples, breakdown, wall) -> dict:
    rows = [r for r in logged_steps(run) if r["step"] > 0]
    # samples of a running step loop (not start-up, not the shutdown)
    trained = [r for r in samples if r.get("step") and "HybridWorker" in r["rss_mb"]
               and "redis_used_mb" in r]
    first, last = (trained[0], trained[-1]) if trained else ({}, {})
    names = sorted({n for s in trained for n in s["rss_mb"]})
    half = trained[len(trained) // 2:]  # the second half: past the warm-up
    growth = {n: slope_per_step([(s["step"], s["rss_mb"][n]) for s in half
                                 if n in s["rss_mb"]]) for n in names}
    redis_slope = slope_per_step([(s["step"], s["redis_used_mb"]) for s in half
                                  if "redis_used_mb" in s])
    times = [r["time/step"] for r in rows if "time/step" in r]
    logged_mem = {}
    for key in ("mem/driver_rss_mb", "mem/worker_rss_mb", "mem/redis_used_mb"):
        pts = [(r["step"], r[key]) for r in rows if key in r]
        if pts:
            tail = pts[len(pts) // 2:]
            logged_mem[key] = {"first": pts[0][1], "last": pts[-1][1],
                               "kb_per_step_second_half": kb(slope_per_step(tail))}
    return {
        "command": " ".join(command[1:]), "root": str(args.root), "returncode": returncode,
        "finished": returncode == 0, "steps_done": rows[-1]["step"] if rows else 0,
        "steps_asked": args.steps, "wall_s": round(wall, 1), "nice": os.nice(0),
        "seconds_per_step": {
            "median": _r(statistics.median(times)) if times else None,
            "first_100_mean": _r(statistics.fmean(times[:100])) if times else None,
            "last_100_mean": _r(statistics.fmean(times[-100:])) if times else None,
            "wall_per_step": _r(wall / rows[-1]["step"]) if rows else None},
        "start": first, "end": last,
        "growth_kb_per_step_second_half": {**{n: kb(v) for n, v in growth.items()},
                                           "redis_used": kb(redis_slope)},
        "logged_mem": logged_mem,
        "redis_keys_at_end": breakdown,
        "disk_bytes": {"rollouts/": du(run / "rollouts"), "heldout/": du(run / "heldout"),
                       "redis/": du(run / "redis"), "metrics.jsonl": du(run / "metrics.jsonl")},
        "run_dir": str(run), "samples": samples,
    }


def kb(mib_per_step: float | None) -> float | None:
    return None if mib_per_step is None else round(mib_per_step * 1024, 2)


def _r(x: float) -> float:
    return round(x, 4)


# --------------------------------------------------------------------------- profiling the worker


def heap_mb() -> float | None:
    """glibc's in-use heap (mallinfo2 uordblks + hblkhd), MiB: native allocations too."""
    try:
        libc = ctypes.CDLL("libc.so.6")

        class MallInfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in (
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                "uordblks", "fordblks", "keepcost")]

        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
        return (info.uordblks + info.hblkhd) / 2**20
    except (OSError, AttributeError):
        return None


def profile(args) -> dict:
    import tracemalloc

    import numpy as np
    import psutil

    from critic.pairs import Pair
    from k2rl.bootstrap.model import default_model
    from k2rl.config import load_config
    from k2rl.runtime.hybrid import HybridWorker
    from k2rl.step import heldout
    from k2rl.step.sampling import sample_requests
    from k2rl.step.critic_loop import harvest, training_pairs

    cfg = load_config(ROOT / "configs" / "tiny.yaml")
    worker = HybridWorker(str(default_model(cfg.model, progress=False)), cfg)
    held = heldout.eval_requests(cfg)
    judge_held = heldout.critic_pairs(
        worker.rollout(heldout.critic_requests(cfg, held), 0), cfg.critic.eval_pairs)

    class Pairs(list):  # the run's pairs:train list, in memory (grows as in Redis)
        def pairs(self, split):
            return self

    train_pairs = Pairs()
    ckpt = Path(tempfile.mkdtemp(prefix="k2rl-soak-ckpt-"))
    me = psutil.Process()

    def point(step: int) -> dict:
        return {"step": step, "rss_mb": round(me.memory_info().rss / 2**20, 2),
                "heap_mb": _r(heap_mb() or 0), "traced_mb": _r(
                    tracemalloc.get_traced_memory()[0] / 2**20)}

    def step_once(step: int) -> None:
        groups = worker.rollout(sample_requests(cfg, step, None, None), step)
        train_pairs.extend(Pair.from_json(json.loads(json.dumps(p.to_json())))
                           for p in harvest(groups))  # as RunStore.pairs reads them back
        drawn = training_pairs(train_pairs, cfg.critic.pairs_per_step,
                               np.random.default_rng([cfg.train.seed, step]))
        worker.train(groups, step, drawn)
        worker.sync()
        if step % cfg.eval.every == 0:
            worker.rollout(held, 0)
            if judge_held:
                worker.critic_eval(judge_held)
        if step % cfg.log.checkpoint_every == 0:
            worker.save(str(ckpt / f"step-{step:05d}"), {"step": step})
        worker.rss_mb()

    warmup, points = args.warmup, []
    start = time.time()
    for step in range(1, args.steps + 1):
        step_once(step)
        if step == warmup:
            tracemalloc.start(args.frames)
        if step % 10 == 0 or step in (1, warmup):
            points.append(point(step))
            print(json.dumps(points[-1]), file=sys.stderr, flush=True)
    last = tracemalloc.take_snapshot()
    wall = time.time() - start
    alive = last.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    top = [{"kb": round(s.size / 1024, 1), "blocks": s.count,
            "where": [f"{f.filename.replace(str(ROOT) + '/', '')}:{f.lineno}"
                      for f in s.traceback]}
           for s in alive.statistics("traceback")[:args.top]]
    n = args.steps - warmup
    a = next(p for p in points if p["step"] == warmup)
    b = points[-1]
    return {"steps": args.steps, "warmup": warmup, "wall_s": round(wall, 1), "points": points,
            "train_pairs_at_end": len(train_pairs), "judge_heldout_pairs": len(judge_held),
            "per_step_after_warmup_kb": {k: round((b[k] - a[k]) * 1024 / n, 2)
                                         for k in ("rss_mb", "heap_mb", "traced_mb")},
            "alive_since_warmup_top": top}


# --------------------------------------------------------------------------- Redis layouts


def layouts(run: Path, keep_steps: int = 20) -> dict:
    from k2rl.runtime.redis_server import connect, start_redis
    from k2rl.runtime.store import RunStore, read_lines
    from k2rl.step.group import Group

    files = sorted((run / "rollouts").glob("step-*.jsonl.gz"))
    steps = [(int(f.name[5:10]), read_lines(f)) for f in files]
    metrics = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    out = {"steps": len(steps), "keep_steps": keep_steps}
    with tempfile.TemporaryDirectory() as tmp, start_redis(Path(tmp)) as server:
        client = connect(server.url)

        def used() -> int:  # the keys' own bytes (MEMORY USAGE), not the server's buffers
            return sum(client.memory_usage(k, samples=0) or 0 for k in client.scan_iter())

        half = len(steps) // 2
        old, new = [], []
        for i, (step, lines) in enumerate(steps):  # as before: one stream, every group forever
            for line in lines:
                client.xadd("old:rollouts", {"step": step, "group_id": "x", "data": line})
            client.hset("old:rollout_steps", str(step), len(lines))
            if i + 1 in (half, len(steps)):
                old.append(used())
        client.flushall()
        store = RunStore(client, "new", Path(tmp) / "new", keep_steps)
        for i, (step, lines) in enumerate(steps):
            store.add_rollouts(step, [Group.from_dict(json.loads(x)) for x in lines])
            if i + 1 in (half, len(steps)):
                new.append(used())
        client.flushall()
        for m in metrics:
            client.xadd("metrics", {"step": m["step"], "data": json.dumps(
                {k: v for k, v in m.items() if k != "step"})})
        metric_bytes = used()
    n, second = max(len(steps), 1), max(len(steps) - half, 1)
    out |= {"before_bytes_at_end": old[-1], "after_bytes_at_end": new[-1],
            "before_bytes_per_step_second_half": round((old[-1] - old[0]) / second, 1),
            "after_bytes_per_step_second_half": round((new[-1] - new[0]) / second, 1),
            "metrics_stream_bytes_per_step": round(metric_bytes / max(len(metrics), 1)),
            "file_bytes_per_step": round(sum(f.stat().st_size for f in files) / n)}
    return out


# --------------------------------------------------------------------------- main


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=None, help="run: 3000; profile: 400")
    p.add_argument("--minutes", type=float, default=25.0, help="stop the run after this long")
    p.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    p.add_argument("--root", type=Path, default=ROOT, help="the k2rl checkout to run")
    p.add_argument("--label", default=None, help="key in --out (default: after / profile)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "archive" / "results" / "soak.json")
    p.add_argument("--profile", action="store_true", help="tracemalloc of an in-process worker")
    p.add_argument("--layouts", type=Path, help="Redis bytes per step of a soak's stored steps, "
                                                "the layout before and after")
    p.add_argument("--from-run", type=Path, help="summarise a soak's run folder again (say, one "
                                                 "whose watcher died): metrics.jsonl's mem/*")
    p.add_argument("--warmup", type=int, default=50, help="profile: steps before tracing")
    p.add_argument("--frames", type=int, default=6, help="profile: traceback depth")
    p.add_argument("--top", type=int, default=20, help="profile: allocation sites kept")
    args, overrides = p.parse_known_args()
    if args.layouts:
        result, label = layouts(args.layouts), args.label or "redis_layouts"
    elif args.from_run:
        run = args.from_run
        path = run.parent / "samples.jsonl"
        samples = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        wall = (run / "metrics.jsonl").stat().st_mtime - (run / "config.yaml").stat().st_mtime
        args.steps = args.steps or 3000
        result = summarize(args, ["", "(summarised from the run folder)"], run.parent, run,
                           None, samples, None, wall)
        label = args.label or "after"
    elif args.profile:
        args.steps = args.steps or 400
        result, label = profile(args), args.label or "profile"
    else:
        args.steps = args.steps or 3000
        result, label = watch(args, overrides), args.label or "after"
    result["machine"] = {"cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg()}
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    out[label] = result
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    shown = {k: v for k, v in result.items() if k not in ("samples", "points")}
    print(json.dumps(shown, indent=1))


if __name__ == "__main__":
    main()
