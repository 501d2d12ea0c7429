"""The reward of a trajectory, composed in one place from its named components."""
import doctest

import pytest

from k2rl.step import reward
from k2rl.step.group import Group, Request, Status, Trajectory
from k2rl.step.reward import add_length_rewards, component_means, total


def test_doctests_pass():
    assert doctest.testmod(reward).failed == 0


@pytest.mark.parametrize(("rewards", "want"), [
    ({}, 0.0),
    ({"task": 1.0}, 1.0),
    ({"task": 0.0, "critic": 0.75}, 0.75),  # critic-rewarded: the win rate, not the reference
    ({"truncation": -0.5}, -0.5),  # cut at the budget: never scored
    ({"task": 1.0, "length": 0.2}, 1.2),
    ({"truncation": -1.0, "length": -0.1}, -1.1),
])
def test_total_takes_the_one_that_applies_plus_the_length_reward(rewards, want):
    assert total(rewards) == pytest.approx(want)


def group(lengths, correct):
    return Group(Request("k2rl/Arithmetic-v1", 0, k=len(lengths)), 1, [
        Trajectory(f"1:0:{i}", "k2rl/Arithmetic-v1", "arithmetic", "p", i, n_tokens=n,
                   correct=c, rewards={"task": float(c)}, status=Status.DONE)
        for i, (n, c) in enumerate(zip(lengths, correct))])


def test_length_rewards_are_a_weighted_component_within_each_group():
    g1, g2 = group([10, 20, 30, 10], [True, True, False, False]), group([5, 5], [True, False])
    add_length_rewards([g1, g2], weight=0.5)
    # λ = 0.5, 0, min(0, -0.5), min(0, 0.5) in the first group; equal lengths give 0
    assert [t.rewards["length"] for t in g1] == [0.25, 0.0, -0.25, 0.0]
    assert [t.rewards["length"] for t in g2] == [0.0, 0.0]
    assert [t.reward for t in g1] == [1.25, 1.0, -0.25, 0.0]
    add_length_rewards([g1], weight=0.5)  # written, not added: applying it twice changes nothing
    assert [t.reward for t in g1] == [1.25, 1.0, -0.25, 0.0]


def test_component_means_cover_the_trajectories_that_have_each():
    g = group([3, 4], [True, False])
    g.trajectories[1].rewards = {"truncation": -1.0}
    assert component_means([g]) == {"reward/task": 1.0, "reward/truncation": -1.0}
