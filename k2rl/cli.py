"""The `k2rl` command.

    k2rl train [CONFIG.yaml] [key.sub=value ...]      start an RL run (no CONFIG: the embedded default)
    k2rl train --resume RUN_DIR [key.sub=value ...]   continue a stopped run from its last checkpoint
    k2rl status RUN_DIR                               run state: last step, checkpoint, status
    k2rl report RUN_DIR                               held-out accuracy before/after and last metrics
    k2rl envs list                                    registered environments

Errors a user can fix (bad config, unknown environment, missing service, dead worker) print one
sentence and exit with status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from pathlib import Path

from k2rl.config import Config, ConfigError, load_config


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from k2rl.controller import RunError
    from k2rl.store import MissingServiceError

    try:
        return args.func(args)
    except (ConfigError, RunError, MissingServiceError, FileNotFoundError) as e:
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
    t.set_defaults(func=cmd_train)
    s = sub.add_parser("status", help="show a run's state")
    s.add_argument("run_dir")
    s.set_defaults(func=cmd_status)
    r = sub.add_parser("report", help="show a run's held-out accuracy and last metrics")
    r.add_argument("run_dir")
    r.set_defaults(func=cmd_report)
    e = sub.add_parser("envs", help="environments").add_subparsers(required=True, metavar="ACTION")
    e.add_parser("list", help="list registered environments").set_defaults(func=cmd_envs_list)
    return p


def split_items(items: list[str]) -> tuple[str | None, list[str]]:
    path = items[0] if items and "=" not in items[0] else None
    overrides = items[1:] if path else items
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"argument {item!r} is neither the config file (which comes first) "
                              "nor a key.sub=value override")
    return path, overrides


def check_tasks(cfg: Config) -> None:
    """Every task id must be registered; name the closest ids otherwise."""
    import gymnasium

    import envs  # noqa: F401  (registers the k2rl environments)

    for task in cfg.tasks:
        if task.id not in gymnasium.registry:
            close = difflib.get_close_matches(task.id, list(gymnasium.registry), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(f"unknown environment id {task.id!r} in tasks{hint}")


def cmd_train(args) -> int:
    from k2rl.controller import train

    path, overrides = split_items(args.items)
    if args.resume:
        run_dir = Path(args.resume)
        if path or not (run_dir / "config.yaml").exists():
            raise ConfigError(f"--resume takes a run folder with config.yaml, not {args.resume}"
                              + (f" and {path}" if path else ""))
        path = run_dir / "config.yaml"
    if args.ray_address:
        overrides = [*overrides, f"ray.address={args.ray_address}"]
    cfg = load_config(path, overrides)
    check_tasks(cfg)
    if not args.resume:
        name = cfg.log.run_name or time.strftime("run-%Y%m%d-%H%M%S")
        run_dir = Path(cfg.log.run_dir) / name
    summary = train(cfg, run_dir, resume=bool(args.resume))
    print_summary(summary)
    return 0


def print_summary(summary: dict) -> None:
    before, after = summary["heldout_before"], summary["heldout_after"]
    print(f"\nheld-out accuracy (greedy) in {summary['run_dir']}")
    print(f"  {'task':<24}{'before':>8}{'after':>8}")
    for key in sorted(after):
        task = key.split("/")[1]
        print(f"  {task:<24}{before.get(key, float('nan')):>8.3f}{after[key]:>8.3f}")
    print(f"  rollouts stored: {summary['rollouts']}")


def cmd_status(args) -> int:
    state = Path(args.run_dir) / "state.json"
    if not state.exists():
        raise FileNotFoundError(f"{state} does not exist: no checkpoint has been written yet")
    print(state.read_text())
    return 0


def cmd_report(args) -> int:
    run = Path(args.run_dir)
    summary, metrics = run / "summary.json", run / "metrics.jsonl"
    if summary.exists():
        print_summary(json.loads(summary.read_text()))
    if not metrics.exists():
        raise FileNotFoundError(f"{metrics} does not exist: is {run} a k2rl run folder?")
    last = json.loads(metrics.read_text().splitlines()[-1])
    for key, value in last.items():
        print(f"  {key:<40}{value:.4g}" if isinstance(value, float) else f"  {key:<40}{value}")
    return 0


def cmd_envs_list(args) -> int:
    import gymnasium

    import envs  # noqa: F401

    print(f"{'id':<28}{'task':<14}{'verifier':<12}{'budget':>7}")
    for env_id in envs.K2RL_ENV_IDS:
        cls = gymnasium.make(env_id).unwrapped
        print(f"{env_id:<28}{cls.task:<14}{cls.reward_name:<12}{cls.budget:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
