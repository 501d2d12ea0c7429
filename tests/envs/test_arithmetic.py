"""Tests particular to the arithmetic env ("k2rl/Arithmetic-v1").

The checks every env must pass are in test_contract.py; held-out checks in test_heldout.py.
"""

from __future__ import annotations

from tests.envs.helpers import make


def test_reset_info() -> None:
    obs, info = make("k2rl/Arithmetic-v1").reset(seed=0)
    a, op, b = obs[:-1].partition("+") if "+" in obs else obs[:-1].partition("-")
    assert obs == f"{a}{op}{b}=" and 0 <= int(a) <= 49 and 0 <= int(b) <= 49
    assert info == {"task": "arithmetic", "budget": 8, "prompt_id": info["prompt_id"],
                    "split": "train", "turn": 0}


def test_key_is_the_sum_in_either_order() -> None:
    env, orders = make("k2rl/Arithmetic-v1"), set()
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        op = "+" if "+" in obs else "-"
        a, b = (int(x) for x in obs[:-1].split(op))
        if op == "+":
            orders.add(a < b)
            a, b = min(a, b), max(a, b)
        assert info["prompt_id"] == f"arith:{a}{op}{b}"  # a difference keeps its order
    assert orders == {True, False}  # both orders are shown


def test_v2_keeps_v1s_problems_and_split() -> None:
    v1, v2 = make("k2rl/Arithmetic-v1"), make("k2rl/Arithmetic-v2")
    for seed in range(50):
        for split in ("train", "eval"):
            obs1, info1 = v1.reset(seed=seed, options={"split": split})
            obs2, info2 = v2.reset(seed=seed, options={"split": split})
            assert (obs2, info2["prompt_id"]) == (obs1, info1["prompt_id"])
            assert (info1["budget"], info2["budget"]) == (8, 32)  # room for the working


def test_working_is_right_for_every_problem() -> None:
    from envs.arithmetic import OPERAND_MAX, working

    for a in range(OPERAND_MAX + 1):
        for b in range(OPERAND_MAX + 1):
            for op, value in (("+", a + b), ("-", a - b)):
                steps = working(a, op, b).split("|")
                assert int(steps[-1]) == value
                for step in steps[:-1]:  # every column is a true one-digit equation
                    if "=" in step:
                        left, right = step.split("=")
                        assert eval(left) == int(right), (a, op, b, step)  # digits and +/- only


def test_v2_scores_only_the_final_answer() -> None:
    env = make("k2rl/Arithmetic-v2")
    obs, _ = env.reset(seed=0)
    answer = env.unwrapped._require_active().answer
    cases = {f"0+0=0|{answer}": 1.0,  # wrong working, right answer: the outcome is what counts
             str(answer): 1.0,  # a bare answer
             f"{answer}|{answer + 1}": 0.0,  # the last answer counts, not an earlier one
             f"{answer}|": 0.0, f"{answer}|{answer} {answer}": 0.0}
    for action, reward in cases.items():
        env.reset(seed=0)
        assert env.step(action)[1] == reward, action
