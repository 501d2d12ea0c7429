from pathlib import Path

import pytest
import yaml

from k2rl.config import Config, ConfigError, load_config
from k2rl.tasks.registry import load_envs


def test_defaults_are_valid_and_default_yaml_matches():
    cfg = load_config("configs/default.yaml")
    assert cfg == Config()  # every section, every key


def test_the_default_run_exercises_the_critic():
    """The default mix has a task rewarded by the critic, and the critic trains on verifiable
    pairs: an episode of each default task says whether the critic scores it."""
    import gymnasium

    import envs  # noqa: F401

    cfg = Config()
    judged = {}
    for task in cfg.tasks:
        env = gymnasium.make(task.id)
        env.reset(seed=0)
        info = env.step("x")[-1]
        judged[task.id] = bool(info.get("judged"))
    assert judged["k2rl/Chat-v1"] and sum(judged.values()) == 1
    from k2rl.bootstrap.recipe import recipe_for

    assert cfg.critic.refresh is None and "k2rl/Chat-v1" in recipe_for(cfg.model).demo_tasks


def test_overrides_are_typed():
    cfg = load_config(None, ["train.lr=3e-5", "rollout.k=4", "log.progress=false", "model.path=null"])
    assert cfg.train.lr == 3e-5 and cfg.rollout.k == 4 and cfg.log.progress is False
    assert cfg.model.path is None


def test_unknown_key_names_key_and_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("train:\n  learning_rate: 0.1\n")
    with pytest.raises(ConfigError, match=r"train\.learning_rate.*run\.yaml"):
        load_config(path)


def test_unknown_section_suggests_close_name(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("rolout:\n  k: 4\n")
    with pytest.raises(ConfigError, match="did you mean rollout"):
        load_config(path)


@pytest.mark.parametrize("override, key", [
    ("rollout.k=1", "rollout.k"),
    ("train.optimizer=sgd", "train.optimizer"),
    ("train.lr=fast", "train.lr"),
    ("log.progress=3", "log.progress"),
    ("tasks=5", "tasks"),
])
def test_bad_values_name_the_key(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(None, [override])


def test_bad_value_in_file_names_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rollout:\n  k: 0\n")
    with pytest.raises(ConfigError, match=r"rollout\.k.*bad\.yaml"):
        load_config(path)


def test_invalid_yaml_and_missing_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("train: [\n")
    with pytest.raises(ConfigError, match="broken.yaml is not valid YAML"):
        load_config(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_unknown_environment_names_closest():
    cfg = load_config(None, ["tasks=[{id: k2rl/Arithmetc-v0}]"])
    with pytest.raises(ConfigError, match="did you mean k2rl/Arithmetic-v2"):
        load_envs(cfg)


@pytest.mark.parametrize("path", sorted(str(p) for p in (Path(__file__).parents[2] / "configs").glob("*.yaml")))
def test_every_shipped_config_loads(path):
    cfg = load_config(path)
    assert cfg.tasks and cfg.train.steps > 0


@pytest.mark.parametrize("old, new", [
    ("rollout.kv_cache_gib", "engine.kv_cache_gib"),
    ("rollout.threads", "engine.threads"),
    ("rollout.dtype", "engine.dtype"),
    ("rollout.sleep_mode", "engine.sleep_mode"),
    ("model.default.cache_dir", "model.cache_dir"),
    ("model.default.prebuilt", "model.prebuilt"),
])
def test_a_moved_key_names_its_new_place(tmp_path, old, new):
    """Engine settings left `rollout`, the default model's cache and shipped-weights switch left
    the recipe: an override or a file with the old key (an older run folder's config.yaml) says
    where it went."""
    *sections, leaf = old.split(".")
    value = {"threads": 1, "kv_cache_gib": 1, "dtype": "float32", "sleep_mode": False,
             "cache_dir": "/x", "prebuilt": False}[leaf]
    with pytest.raises(ConfigError, match=rf"^config key {old} moved to {new} in .*overrides$"):
        load_config(None, [f"{old}={value}"])
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(nested(old, value)))
    with pytest.raises(ConfigError, match=rf"^config key {old} moved to {new} in .*config\.yaml$"):
        load_config(path)
    assert load_config(None, [f"{new}={value}"]) is not None


def nested(key: str, value) -> dict:
    """{"a": {"b": value}} for "a.b"."""
    for part in reversed(key.split(".")):
        value = {part: value}
    return value


@pytest.mark.parametrize("old", ["model.default.judge_steps=1500", "model.default.hidden_size=64",
                                 "model.default.demo_tasks=[k2rl/Arithmetic-v1]"])
def test_a_recipe_field_is_no_config_key_and_says_where_it_went(tmp_path, old):
    """The default model's recipe left the config for k2rl/bootstrap/recipe.py, and
    model.default names one: an old recipe key in an override (on the defaults or on a file
    whose model.default is a name) or in a file (an older run folder's config.yaml, the whole
    recipe under model.default) is one sentence naming the new way."""
    key, value = old.split("=")
    new = (r"a recipe in k2rl/bootstrap/recipe.py, which model.default names "
           r"\(e.g. model.default=tiny; a variant is a new recipe there\)")
    for config in (None, "configs/tiny.yaml", "configs/default.yaml"):
        with pytest.raises(ConfigError, match=rf"^config key {key} moved to {new} in .*overrides$"):
            load_config(config, [old])
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(nested(key, yaml.safe_load(value))))
    with pytest.raises(ConfigError, match=rf"^config key {key} moved to {new} in .*config\.yaml$"):
        load_config(path)
    assert load_config("configs/default.yaml", ["model.default=tiny"]).model.default == "tiny"


def test_the_critic_learns_at_one_rate():
    """critic.lr is the one knob of the critic's training (its own AdamW step); critic.weight,
    which weighted its NLL in the policy loss when critic.lr was null, is refused with the
    knob to set, alone or beside critic.lr."""
    assert load_config(None, ["critic.lr=2e-5"]).critic.lr == 2e-5
    for overrides in (["critic.weight=0.05"], ["critic.lr=null", "critic.weight=0.5"],
                      ["critic.lr=1e-4", "critic.weight=0.5"]):
        with pytest.raises(ConfigError, match=r"^config key critic.weight moved to critic.lr "
                                              r"\(the critic's own AdamW step"):
            load_config(None, overrides)
    with pytest.raises(ConfigError, match="critic.lr must be float, not None"):
        load_config(None, ["critic.lr=null"])


def test_a_run_folder_s_config_dump_loads_back(tmp_path):
    """What the controller writes to RUN_DIR/config.yaml is what resume reads."""
    import yaml

    from k2rl.config import to_dict

    cfg = load_config("configs/tiny.yaml", ["engine.threads=1", "model.default=recipe11"])
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    assert load_config(path) == cfg
