"""The final answer a verifier read is kept in the trajectory, counted in the step's metrics
and shown by `k2rl rollouts` (issue 47): a reward of 0 with no answer read says the format is
wrong, not the model."""
from k2rl.controller import task_metrics
from k2rl.step.group import Group, Request, Status, Trajectory
from k2rl.viewer import format_trajectory


def trajectory(i: int, extracted: str | None) -> Trajectory:
    t = Trajectory(f"t{i}", "k2rl/WordSums-v0", "word_sums", "54+55", i, status=Status.DONE,
                   messages=[{"role": "user", "content": "What is 54 plus 55?"},
                             {"role": "assistant", "content": "54 + 55 = 109"}],
                   extracted=extracted)
    t.rewards["task"] = 1.0 if extracted == "109" else 0.0
    return t


def test_the_answer_read_is_counted_and_shown():
    group = Group(Request("k2rl/WordSums-v0", 0, k=4), 1,
                  [trajectory(0, "109"), trajectory(1, ""), trajectory(2, "(hedged) 108 or 109"),
                   trajectory(3, "109")])
    metrics = task_metrics([group], "train")
    assert metrics["train/word_sums/answer_read"] == 0.5
    assert "answer read: '109'" in format_trajectory(group.trajectories[0])
    assert "answer read: none" in format_trajectory(group.trajectories[1])
    assert Trajectory.from_dict(group.trajectories[2].to_dict()).extracted.startswith("(hedged)")


def test_a_verifier_without_one_answer_logs_no_rate():
    group = Group(Request("k2rl/ShortWriting-v1", 0, k=1), 1, [trajectory(0, None)])
    assert "train/word_sums/answer_read" not in task_metrics([group], "train")
    assert "answer read" not in format_trajectory(group.trajectories[0])
