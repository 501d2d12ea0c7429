"""A worker Ray's memory monitor kills is one sentence naming the settings that lower memory,
and the estimate printed before start counts what a worker holds."""
import pytest
import ray

from k2rl import controller
from k2rl.config import load_config
from k2rl.lm.hf import peak_memory_gb
from k2rl.runtime.worker_group import WorkerDied, WorkerOutOfMemory, died


def test_a_worker_killed_for_memory_is_told_apart_from_other_deaths():
    oom = died(ray.exceptions.OutOfMemoryError("Task was killed due to the node running low on "
                                               "memory. Memory on the node was 18.5GB"))
    assert isinstance(oom, WorkerOutOfMemory)
    other = died(ray.exceptions.RayActorError())
    assert isinstance(other, WorkerDied) and not isinstance(other, WorkerOutOfMemory)


def test_the_run_error_names_the_settings_and_how_to_resume(tmp_path):
    with pytest.raises(controller.RunError) as e:
        with controller.reported(tmp_path, 3):
            raise WorkerOutOfMemory("OutOfMemoryError", "killed")
    message = str(e.value)
    assert "ran out of memory at step 3" in message and "\n" not in message
    for setting in ("train.micro_batch_tokens", "train.gradient_checkpointing",
                    "engine.kv_cache_gib", f"k2rl train --resume {tmp_path}"):
        assert setting in message


def test_the_estimate_grows_with_the_micro_batch_and_not_with_the_batch(tmp_path):
    import json

    import torch
    from safetensors.torch import save_file

    (tmp_path / "config.json").write_text(json.dumps(
        {"num_hidden_layers": 30, "hidden_size": 576, "intermediate_size": 1536}))
    save_file({"w": torch.zeros(1000, 1000)}, tmp_path / "model.safetensors")
    small = peak_memory_gb(load_config(None, ["train.micro_batch_tokens=1024"]), tmp_path)
    big = peak_memory_gb(load_config(None, ["train.micro_batch_tokens=4096"]), tmp_path)
    wide = peak_memory_gb(load_config(None, ["train.micro_batch_tokens=1024",
                                             "rollout.prompts_per_step=256"]), tmp_path)
    assert small["trainer"] == pytest.approx(16e6 / 1e9)  # 1 M parameters x 16 bytes
    assert big["activations"] == pytest.approx(4 * small["activations"])
    assert wide == small
