"""Where environments come from: k2rl's own, the user's modules, installed packages, the config.

A user adds an environment without touching k2rl in one of three ways:
  (a) a module of theirs that calls `gymnasium.register(...)`, named in `env_modules`;
  (b) an installed package with an entry point in the `k2rl.envs` group whose target is such a
      module, or a function to call that registers its environments;
  (c) an `entry_point: "pkg.mod:Class"` string on the task in the config.
`load_envs(cfg)` runs all three; it is called in the driver and in every worker process, since
each makes its own environments, with their tasks' `kwargs` (`k2rl.tasks.make.make_env`), the
prompt-length guard of `limit_prompts` among them; gymnasium's registry is left as registered.
"""
from __future__ import annotations

import difflib
import importlib
from importlib.metadata import entry_points

import gymnasium

import envs  # noqa: F401  (registers k2rl's own environments)
from k2rl.config import Config, ConfigError
from k2rl.tasks.make import make_env, use_kwargs

ENTRY_POINT_GROUP = "k2rl.envs"
SOURCES: dict[str, str] = {env_id: "k2rl"  # id -> where from
                           for env_id in envs.K2RL_ENV_IDS + envs.K2RL_ARGUMENT_ENV_IDS}


def load_envs(cfg: Config) -> None:
    """Import user modules and plugins, register config entry points, check every task id."""
    for module in cfg.env_modules:
        _track(f"module {module}", lambda m=module: _import(m, "env_modules"))
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        _track(f"plugin {ep.value}", lambda ep=ep: _load_plugin(ep))
    for task in cfg.tasks:
        if task.entry_point and task.id not in gymnasium.registry:
            gymnasium.register(id=task.id, entry_point=task.entry_point)
            SOURCES[task.id] = f"config {task.entry_point}"
    for task in cfg.tasks:
        check_id(task.id, "tasks")
    _bind_kwargs(cfg)


def _bind_kwargs(cfg: Config) -> None:
    """Make the engine build each task's environment with its `kwargs` (`task_envs.make_env`),
    after making it once here: a bad argument, file or field is one sentence before any
    service starts."""
    bound: dict[str, dict] = {}
    for i, task in enumerate(cfg.tasks):
        if not task.kwargs:
            continue
        if bound.setdefault(task.id, task.kwargs) != task.kwargs:
            raise ConfigError(f"tasks[{i}] uses {task.id} with other kwargs than an earlier task; "
                              "give each its own id (with entry_point) to train on both")
        try:
            gymnasium.make(task.id, **task.kwargs).unwrapped
        except Exception as e:  # noqa: BLE001  (whatever the env raises, name the task)
            raise ConfigError(f"tasks[{i}] ({task.id}) cannot be made with its kwargs: "
                              f"{type(e).__name__}: {e}") from None
    use_kwargs(bound)


def limit_prompts(cfg: Config, tokenizer_dir: str) -> list[str]:
    """Give every task whose environment takes `tokenizer` and `max_prompt_tokens` (a dataset)
    the model's tokenizer and the prompt tokens that fit `engine.max_model_len` with the
    task's budget, so a prompt too long for the engine is skipped (or, with the task's
    too_long: error, reported) when the data loads, before any service starts. Returns a line
    per task that skipped prompts.

    The limit goes into the task's kwargs, so it travels with the config (to the workers, and
    in a resumed run's config); `make_env` applies it wherever the engine makes the env."""
    import inspect

    limited = {}  # env id -> (task index, prompt tokens that fit)
    for i, task in enumerate(cfg.tasks):
        env = make_env(task.id)
        takes = inspect.signature(type(env).__init__).parameters
        if not {"tokenizer", "max_prompt_tokens"} <= set(takes) or "tokenizer" in task.kwargs:
            continue
        room = cfg.engine.max_model_len - (task.budget or env.budget)
        if room < 1:
            raise ConfigError(f"tasks[{i}] ({task.id}): its budget of {task.budget or env.budget} "
                              f"tokens leaves no room for a prompt in engine.max_model_len "
                              f"{cfg.engine.max_model_len}")
        task.kwargs = {**task.kwargs, "tokenizer": str(tokenizer_dir), "max_prompt_tokens": room}
        limited.setdefault(task.id, (i, room))
    _bind_kwargs(cfg)
    lines = []
    for env_id, (i, room) in limited.items():
        skipped = getattr(make_env(env_id), "skipped", {})
        if any(skipped.values()):
            lines.append(f"tasks[{i}] ({env_id}): skipped {skipped['train']} train and "
                         f"{skipped['eval']} eval prompts longer than {room} tokens "
                         f"(engine.max_model_len {cfg.engine.max_model_len} minus the budget)")
    return lines


def check_id(env_id: str, where: str) -> None:
    if env_id not in gymnasium.registry:
        close = difflib.get_close_matches(env_id, list(gymnasium.registry), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"unknown environment id {env_id!r} in {where}{hint}")


def _track(source: str, register) -> None:
    """Run a registering callable and remember which ids it added."""
    before = set(gymnasium.registry)
    register()
    for env_id in set(gymnasium.registry) - before:
        SOURCES[env_id] = source


def _import(module: str, where: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"cannot import environment module {module!r} named in {where}: {e}") from None


def _load_plugin(ep) -> None:
    try:
        target = ep.load()
    except Exception as e:  # a broken plugin must say which one it is
        raise ConfigError(f"entry point {ep.name} = {ep.value} in group {ENTRY_POINT_GROUP} "
                          f"failed to load: {e}") from None
    if callable(target):
        target()


def k2rl_ids() -> list[str]:
    """Ids of the environments k2rl knows about (its own, users', plugins'), sorted."""
    return sorted(env_id for env_id in gymnasium.registry if env_id in SOURCES)
