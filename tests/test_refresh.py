"""Closed-loop critic refresh: pairs from verifiable groups, split by prompt, judge examples."""
import numpy as np

from critic.pairs import Pair, split_of_pair
from k2rl.refresh import harvest, response_text, store_pairs, training_examples


def traj(prompt, reply, correct, tool=None):
    msgs = [{"role": "user", "content": prompt}]
    if tool:
        msgs += [{"role": "assistant", "content": tool[0]}, {"role": "tool", "content": tool[1]}]
    msgs.append({"role": "assistant", "content": reply})
    return {"messages": msgs, "correct": correct, "task": "tool_use"}


class FakeStore:
    def __init__(self):
        self.data = {"train": [], "heldout": []}

    def add_pairs(self, split, rows):
        self.data[split] += rows

    def pairs(self, split):
        return list(self.data[split])


def test_harvest_only_mixed_groups_and_correct_beats_incorrect():
    trajs = [traj("12*13=", "156", True, ("calc(12*13)", "156")), traj("12*13=", "150", False),
             traj("2*2=", "4", True), traj("2*2=", "4", True)]  # second group: no signal
    pairs = harvest(trajs, 2)
    assert len(pairs) == 1
    assert pairs[0].chosen == "calc(12*13) | 156 | 156" and pairs[0].rejected == "150"
    assert response_text(trajs[1]) == "150"


def test_train_and_heldout_never_share_a_prompt():
    store = FakeStore()
    trajs = []
    for a in range(10, 60):
        trajs += [traj(f"{a}*3=", str(3 * a), True), traj(f"{a}*3=", "0", False)]
    counts = store_pairs(store, harvest(trajs, 2))
    assert counts["train"] > 0 and counts["heldout"] > 0
    train = {p["prompt"] for p in store.pairs("train")}
    held = {p["prompt"] for p in store.pairs("heldout")}
    assert not train & held
    assert all(split_of_pair(Pair(**p)) == "heldout" for p in store.pairs("heldout"))


def test_training_examples_cover_both_orders():
    store = FakeStore()
    store_pairs(store, harvest([traj("5*5=", "25", True), traj("5*5=", "20", False)] * 1, 2))
    split = "train" if store.pairs("train") else "heldout"
    store.data["train"] = store.data[split]
    ex = training_examples(store, 4, np.random.default_rng(0))
    assert [e["response"] for e in ex] == ["A", "B"]
    assert "25" in ex[0]["prompt"] and ex[0]["prompt"].index("25") < ex[0]["prompt"].index("20")
