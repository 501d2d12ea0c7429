"""Looking into a run from outside it: its Redis, its trajectories as conversations, its status.

A run keeps its rollouts, metrics and state in its own redis-server (k2rl.runtime.store), which lives
while the run does. `open_store(run_dir)` reaches it either way:

- a live run: the pid file `RUN_DIR/redis/redis.pid` names a running redis-server (same pid and
  start time); its port is read from the server's command line (`/proc/PID/cmdline`, `--port N`)
  and we connect to it. A second server is never started on a live run's folder (start_redis
  would stop the live one first).
- a finished (or killed) run: its server is started from the folder's append-only file for as
  long as we read, then stopped.
- a run with `redis.url` in its config.yaml: that server.

`k2rl rollouts` prints trajectories as conversations (`format_trajectory`), `--json` as dicts
(`trajectory_record`), reading only the steps it shows (`find_rows`); `k2rl status` prints
`status_lines` on a live run and `ended_lines` on one that is not running.
"""
from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from k2rl.runtime.reaper import start_time
from k2rl.runtime.redis_server import connect, start_redis
from k2rl.runtime.store import RunState, RunStore
from k2rl.step.group import Group, Trajectory

HOST = "127.0.0.1"
# Metrics shown by `k2rl status`, when present (held-out figures: the newest evaluation).
STATUS_KEYS = ("train/all/reward", "train/all/accuracy", "train/all/length",
               "train/all/truncated", "loss", "logp_gap", "sync_seconds", "time/step")
# Trajectory fields left out of `--json` (token ids, masks and log-probs: long and unreadable).
TOKEN_FIELDS = ("ids", "mask", "logp_engine")


# --------------------------------------------------------------------------- the run's Redis


def run_folder(run_dir: str | Path) -> Path:
    """The run folder, resolved (its name is the run id in Redis), checked to be one."""
    run = Path(run_dir).resolve()
    if not (run / "config.yaml").exists() and not (run / "redis").is_dir():
        raise FileNotFoundError(f"{run_dir} is not a k2rl run folder (no config.yaml)")
    return run


def live_redis(run: Path) -> str | None:
    """The URL of the redis-server serving `run` right now (a live run), or None."""
    try:
        pid, started = map(int, (run / "redis" / "redis.pid").read_text().split())
    except (OSError, ValueError):
        return None
    if start_time(pid) != started:
        return None  # the server is gone (or its pid was reused): the run is not live
    port = server_port(pid)
    return f"redis://{HOST}:{port}/0" if port else None


def server_port(pid: int) -> int | None:
    """The port of redis-server `pid`, from its command line: `--port N` as started, or
    `HOST:PORT` once redis has set its process title (which overwrites the arguments)."""
    import re

    try:
        argv = [a for a in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
                .split("\0") if a]
    except OSError:
        return None
    if not argv or "redis-server" not in argv[0]:
        return None  # the pid names something else now
    if "--port" in argv[:-1]:
        return int(argv[argv.index("--port") + 1])
    title = re.search(r":(\d+)\b", " ".join(argv))
    return int(title.group(1)) if title else None


def configured_url(run: Path) -> str | None:
    """redis.url of the run's config.yaml (None: the run had its own server). Read from the raw
    file, not through load_config, so that a run written before a config key moved still opens."""
    if not (run / "config.yaml").exists():
        return None
    raw = yaml.safe_load((run / "config.yaml").read_text()) or {}
    return (raw.get("redis") or {}).get("url")


@dataclass
class Opened:
    store: object  # k2rl.runtime.store.RunStore
    live: bool  # a server that was already serving the run (not one started to read it)
    url: str


@contextmanager
def open_store(run_dir: str | Path):
    """The run's RunStore: on its live server, its configured one, or a server started from its
    folder for the duration (and stopped after)."""
    run = run_folder(run_dir)
    url = configured_url(run)
    live = url is not None
    url = url or live_redis(run)
    live = live or url is not None
    server = None if url else start_redis(run)
    try:
        url = url or server.url
        client = connect(url)
        try:
            yield Opened(RunStore(client, run.name, run), live, url)
        finally:
            client.close()
    finally:
        if server:
            server.stop()


# --------------------------------------------------------------------------- trajectories


@dataclass
class Row:
    """One stored trajectory and where it came from."""
    step: int
    group: str
    traj: Trajectory


def rows(groups: list[Group], at: int | None = None) -> list[Row]:
    """Each trajectory with its group's step, or `at` (held-out groups: the evaluation's)."""
    return [Row(g.step if at is None else at, g.id, t) for g in groups for t in g]


def select(groups: list[Group], task: str | None = None, order: str | None = None,
           limit: int | None = 5, at: int | None = None) -> list[Row]:
    """Trajectories of `groups` of one task (its name, e.g. tool_use, or env id), the `limit`
    newest, or with order "worst"/"best" the `limit` of lowest/highest reward."""
    out = [r for r in rows(groups, at) if task is None or task in (r.traj.task, r.traj.env_id)]
    if order in ("worst", "best"):
        out.sort(key=lambda r: (r.traj.reward, r.traj.correct), reverse=order == "best")
        return out[:limit] if limit else out
    return out[-limit:] if limit else out


def find_rows(store, step: int | None = None, task: str | None = None, order: str | None = None,
              limit: int | None = 5, heldout: bool = False) -> list[Row]:
    """What `k2rl rollouts` shows, reading as few steps as it can: one step with `step`; with
    `heldout` the answers of the evaluation at `step` (default: the newest); otherwise the newest
    steps, back until `limit` trajectories of the task are found (every step for --worst/--best
    or no limit)."""
    if heldout:
        at = step if step is not None else next(reversed(store.steps("heldout")), None)
        return select(store.heldout(at) if at is not None else [], task, order, limit, at)
    if step is not None or order in ("worst", "best") or not limit:
        return select(store.rollouts(step), task, order, limit)
    groups: list[Group] = []
    for s in reversed(store.steps()):
        groups = store.rollouts(s) + groups
        if len(select(groups, task, None, None)) >= limit:
            break
    return select(groups, task, None, limit)


def trajectory_record(row: Row) -> dict:
    """A trajectory as a JSON-able dict (without token ids, masks and log-probs)."""
    d = row.traj.to_dict()
    for name in TOKEN_FIELDS:
        d.pop(name, None)
    return {"step": row.step, "group": row.group, **d, "truncated": row.traj.truncated}


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def format_trajectory(t: Trajectory, step: int | None = None, group: str | None = None,
                      width: int = 11) -> str:
    """A trajectory as a readable conversation: a header, its outcome and reward components,
    then every message (system, user prompt, replies, tool results) with its role."""
    where = " · ".join(x for x in (
        f"step {step}" if step is not None else "", f"group {group}" if group else "",
        f"sample {t.sample}", f"{t.task} ({t.env_id})", t.prompt_id) if x)
    components = ", ".join(f"{k} {v:.3f}" for k, v in t.rewards.items()) or "none"
    lines = [f"── {where} ──",
             f"reward {t.reward:.3f} ({components})  correct {_yes(t.correct)}  "
             f"truncated {_yes(t.truncated)}  status {t.status.value}  tokens {t.n_tokens}  "
             f"turns {t.turns}" + ("  judged by the critic" if t.judged else "")]
    if t.extracted is not None:
        lines.append(f"answer read: {t.extracted!r}" if t.extracted else
                     "answer read: none (the verifier found no final answer)")
    for m in t.messages:
        text = str(m.get("content", "")).rstrip("\n").split("\n") or [""]
        label = f"{m.get('role', '?')}:"
        lines.append(f"{label:<{width}}{text[0]}")
        lines += [" " * width + x for x in text[1:]]
    return "\n".join(lines)


def format_markdown(t: Trajectory) -> str:
    """A trajectory for TensorBoard's text panel (Markdown): the outcome, then the conversation
    as a code block."""
    conversation = "\n".join(f"{m.get('role', '?')}: {m.get('content', '')}" for m in t.messages)
    components = ", ".join(f"{k} {v:.3f}" for k, v in t.rewards.items()) or "none"
    return (f"**{t.task}** `{t.prompt_id}` reward {t.reward:.3f} ({components}), correct "
            f"{_yes(t.correct)}, truncated {_yes(t.truncated)}\n\n"
            + "\n".join("    " + x for x in conversation.replace("\r", "").split("\n")))


# --------------------------------------------------------------------------- status


def metrics_with_times(store) -> list[tuple[float, dict]]:
    """(unix seconds, metrics with "step") of every logged step; the time is the Redis stream
    entry id's milliseconds, when the step was logged."""
    out, start = [], "-"
    key = store.key("metrics")
    while True:
        page = store.client.xrange(key, min=start, max="+", count=1000)
        for entry_id, fields in page:
            ms = int(entry_id.split("-")[0])
            out.append((ms / 1000, {**json.loads(fields["data"]), "step": int(fields["step"])}))
        if len(page) < 1000:
            return out
        start = "(" + page[-1][0]


def rate(timed: list[tuple[float, dict]], window: int = 10) -> float | None:
    """Steps per second over the last `window` logged steps (None: too few to tell)."""
    steps = [(t, m["step"]) for t, m in timed if m["step"] > 0][-window:]
    if len(steps) >= 2 and steps[-1][0] > steps[0][0]:
        return (steps[-1][1] - steps[0][1]) / (steps[-1][0] - steps[0][0])
    if steps:  # one step so far: its own duration
        last = timed[-1][1].get("time/step")
        return 1.0 / last if last else None
    return None


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def status_lines(run: Path, opened: Opened, total_steps: int | None, now: float | None = None
                 ) -> tuple[list[str], bool]:
    """A live run's progress from its Redis: step, steps/s, ETA, its workers, last metrics;
    and whether the run has finished."""
    store = opened.store
    now = time.time() if now is None else now
    state = store.state()
    timed = metrics_with_times(store)
    status = state.status
    lines = [f"run {run.name} ({run}): {status}, Redis {opened.url}"
             + (" (live)" if opened.live else "")]
    step = timed[-1][1]["step"] if timed else None
    if step is None:
        lines.append("step -: starting (model, workers, held-out evaluation before step 1)")
    else:
        per_s = rate(timed)
        progress = f"step {step}/{total_steps}" if total_steps else f"step {step}"
        if total_steps:
            progress += f" ({100 * step / total_steps:.0f}%)"
        if per_s:
            progress += f", {per_s:.3g} steps/s"
            if total_steps and status != "finished":
                progress += f", ETA {duration(max(total_steps - step, 0) / per_s)}"
        progress += f", last logged {duration(now - timed[-1][0])} ago"
        lines.append(progress)
    if state.checkpoint:
        lines.append(f"checkpoint: step {state.last_step} at {state.checkpoint}")
    nodes = state.worker_nodes
    if nodes:
        distinct = sorted(set(nodes))
        lines.append(f"workers: {len(nodes)} on {len(distinct)} node(s) "
                     + ", ".join(n[:12] for n in distinct))
    if timed:
        last = timed[-1][1]
        shown = [(k, last[k]) for k in STATUS_KEYS if k in last]
        held = next((m for _, m in reversed(timed) if any(k.startswith("heldout/") for k in m)),
                    None)
        if shown:
            lines.append(f"last metrics (step {last['step']}):")
            lines += [f"  {k:<28}{v:.4g}" for k, v in shown]
        if held:
            lines.append(f"held-out accuracy (step {held['step']}):")
            for key in sorted(k for k in held if k.startswith("heldout/") and
                              k.endswith("/accuracy")):
                task = key.split("/")[1]
                n = held.get(f"heldout/{task}/n")
                lines.append(f"  {task:<28}{held[key]:.3f}" + (f"  (n={n:.0f})" if n else ""))
    return lines, status == "finished"


def ended_lines(run: Path, total_steps: int | None) -> list[str]:
    """A run that is not running, from its files: finished or stopped, at which step, its last
    checkpoint, and (finished) held-out accuracy before and after with n."""
    state = RunState.from_dict(json.loads((run / "state.json").read_text()))
    summary = json.loads((run / "summary.json").read_text()) if (
        run / "summary.json").exists() else None
    last = state.last_step
    finished = (state.status == "finished" or summary is not None) and (
        total_steps is None or last == total_steps)
    of = f" of {total_steps}" if total_steps else ""
    if not finished:
        return [f"run {run.name} ({run}): stopped, not running; last checkpoint at step "
                f"{last}{of}: resume with `k2rl train --resume {run}`"]
    lines = [f"run {run.name} ({run}): finished, {last}{of} steps"
             + (f", {summary['rollouts']} trajectories stored" if summary else "")]
    if state.checkpoint:
        lines.append(f"checkpoint: step {last} at {state.checkpoint}")
    before, after = (summary or {}).get("heldout_before", {}), (summary or {}).get(
        "heldout_after", {})
    tasks = sorted(k.split("/")[1] for k in after if k.endswith("/accuracy"))
    if tasks:
        lines.append(f"held-out accuracy (greedy, n distinct problems): {'before':>8}{'after':>8}"
                     f"{'n':>6}")
        for task in tasks:
            key, n = f"heldout/{task}/accuracy", after.get(f"heldout/{task}/n", float("nan"))
            lines.append(f"  {task:<46}{before.get(key, float('nan')):>8.3f}{after[key]:>8.3f}"
                         f"{n:>6.0f}")
    return lines
