"""The int8 storage of shipped weights (k2rl.bootstrap.int8): what is packed, and how close
the widened weights come back."""
import pytest
import torch
from safetensors.torch import load_file, save_file

from k2rl.bootstrap.int8 import SCALE, main, pack, unpack


def test_matrices_come_back_within_half_a_step_of_their_row_and_vectors_exactly():
    torch.manual_seed(0)
    state = {"w": torch.randn(8, 16) * torch.logspace(-3, 1, 8)[:, None],
             "norm": torch.randn(16), "zero": torch.zeros(3, 4)}
    packed = pack(state)
    assert packed["w"].dtype == torch.int8 and packed["w" + SCALE].shape == (8,)
    assert torch.equal(packed["norm"], state["norm"]) and "norm" + SCALE not in packed
    back = unpack(packed)
    assert set(back) == set(state)
    step = state["w"].abs().amax(dim=1) / 127
    assert ((back["w"] - state["w"]).abs() <= step[:, None] / 2 + 1e-7).all()
    assert (back["w"] - state["w"]).abs().max() > 0  # it is lossy: rows' scales, not fp32
    assert torch.equal(back["zero"], state["zero"])
    assert packed["w"].abs().max() == 127  # each row's largest weight is its scale's 127


def test_an_int8_matrix_without_its_scales_is_refused():
    packed = pack({"w": torch.randn(2, 3)})
    del packed["w" + SCALE]
    with pytest.raises(ValueError, match="w.scale"):
        unpack(packed)


def test_the_command_packs_a_file_to_a_quarter(tmp_path, capsys):
    state = {"w": torch.randn(64, 64), "b": torch.randn(64)}
    save_file(state, tmp_path / "fp32.safetensors")
    assert main([str(tmp_path / "fp32.safetensors"), str(tmp_path / "int8.safetensors")]) == 0
    packed = tmp_path / "int8.safetensors"
    assert packed.stat().st_size < (tmp_path / "fp32.safetensors").stat().st_size / 3
    assert torch.allclose(unpack(load_file(packed))["w"], state["w"], atol=0.05)
    assert main([]) == 2 and "usage" in capsys.readouterr().err
