"""Copying drills of the default model's warm-start (k2rl.bootstrap.copying)."""
import re

import numpy as np
import torch

from envs.base import check_line, side_by_side
from k2rl.bootstrap.copying import copies, copy_drill, drill_messages, near_copy
from k2rl.bootstrap.model import build_tokenizer

TOK = build_tokenizer()


def test_a_drill_s_reply_is_the_user_s_made_up_words_and_only_it_is_trained():
    rng = np.random.default_rng(3)
    forms = set()
    for _ in range(40):
        user, reply = drill_messages(rng)
        ask, text = re.fullmatch(r"(Repeat:|List the words:|Say it back\.|Compare:) (.*)",
                                 user["content"]).groups()
        forms.add(ask)
        if ask == "Compare:":  # as a critic checks: side by side up to the first difference
            first, second = text.split(" / ")
            assert reply["content"] == check_line(side_by_side(first, second), first == second)
            continue
        listed = reply["content"].split()
        if ask == "List the words:":  # numbered as a critic lists a reply's words, then counted
            listed, count = listed[:-2], reply["content"].rsplit("; ", 1)[1]
            assert listed[0::2] == [str(i) for i in range(1, len(listed) // 2 + 1)]
            assert count == f"{len(listed) // 2} words"
            listed = [w.rstrip(";") for w in listed[1::2]]
        assert listed == text.split() and 2 <= len(listed) <= 6
    assert forms == {"Repeat:", "List the words:", "Say it back.", "Compare:"}
    ids, mask = copy_drill(TOK, np.random.default_rng(4))
    trained = TOK.decode([i for i, m in zip(ids, mask) if m], skip_special_tokens=True)
    user, reply = drill_messages(np.random.default_rng(4))
    assert trained == reply["content"] and sum(mask) == len(reply["content"]) + 1  # + turn end


def test_copies_counts_only_exact_greedy_copies():
    class Oracle(torch.nn.Module):  # predicts each next id of the sequence it is given
        def forward(self, ids):
            logits = torch.full((1, ids.shape[1], len(TOK)), -1.0)
            logits[0, torch.arange(ids.shape[1] - 1), ids[0, 1:]] = 1.0
            return type("Out", (), {"logits": logits})()

    class Blind(Oracle):
        def forward(self, ids):
            out = super().forward(ids)
            out.logits[0, -3] = 0.0  # the reply's last letter is a tie: argmax picks id 0
            return out

    assert copies(Oracle(), TOK, n=20) == 1.0
    assert copies(Blind(), TOK, n=20) == 0.0


def test_a_near_copy_is_the_text_half_the_time_else_one_edit_away():
    rng = np.random.default_rng(0)
    same = 0
    for _ in range(200):
        text = str(rng.choice(["kqe", "Zuvb", "307", "5"]))
        other = near_copy(text, rng)
        same += other == text
        if other != text:
            assert abs(len(other) - len(text)) <= 1 and other.isdigit() == text.isdigit()
    assert 70 <= same <= 130
