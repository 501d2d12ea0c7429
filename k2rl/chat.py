"""Chat formatting as token ids, shared by the warm-start, the rollout and the trainer.

A conversation is `<|user|>text<|eos|><|assistant|>reply<|eos|><|tool|>result<|eos|><|assistant|>...`.
The rollout works on token ids rather than re-rendered text, so the trainer scores exactly the
tokens vLLM sampled. The tokenizer's chat template (k2rl.model) renders the same layout.
"""
from __future__ import annotations

def role_token(tokenizer, role: str) -> int:
    return tokenizer.convert_tokens_to_ids(f"<|{role}|>")


def text_ids(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def prompt_ids(tokenizer, user_text: str, reply_role: str = "assistant") -> list[int]:
    """Token ids of a first user turn followed by the turn marker of the reply (the
    assistant's, or the judge's: `judge_prompt_ids`)."""
    return ([role_token(tokenizer, "user")] + text_ids(tokenizer, user_text)
            + [tokenizer.eos_token_id, role_token(tokenizer, reply_role)])


def judge_role(tokenizer) -> str:
    """The turn the judge's verdict is read from: <|critic|>, or <|assistant|> for a model
    whose tokenizer has no critic role (an outside model evaluated with `k2rl critic eval`).

    The verdict gets a turn of its own because, read as the assistant's first reply token,
    training it leaked into the policy: after 20 updates at critic.lr 1e-3 the policy opened
    93% of its arithmetic replies with "A" or "B" (12% of instruction replies at 2e-4).
    """
    critic = tokenizer.convert_tokens_to_ids("<|critic|>")
    return "critic" if critic is not None and critic != tokenizer.unk_token_id else "assistant"


def judge_prompt_ids(tokenizer, judge_text: str) -> list[int]:
    """Token ids of a judge message (critic.judge.judge_text) up to the verdict's turn marker."""
    return prompt_ids(tokenizer, judge_text, judge_role(tokenizer))


def judge_example_ids(tokenizer, judge_text: str, verdict: str) -> tuple[list[int], list[int]]:
    """(ids, mask) of one critic training example: the judge prompt, the verdict and <|eos|>;
    the loss falls on the verdict and <|eos|> only."""
    prompt = judge_prompt_ids(tokenizer, judge_text)
    reply = text_ids(tokenizer, verdict) + [tokenizer.eos_token_id]
    return prompt + reply, [0] * len(prompt) + [1] * len(reply)


def observation_ids(tokenizer, obs: str, closed: bool) -> list[int]:
    """Ids that follow an assistant reply: a tool message and the next assistant marker.

    `closed` says whether the reply already ended with <|eos|> (a reply cut at the token budget
    has none, and one is added so the layout stays well-formed).
    """
    head = [] if closed else [tokenizer.eos_token_id]
    return (head + [role_token(tokenizer, "tool")] + text_ids(tokenizer, obs)
            + [tokenizer.eos_token_id, role_token(tokenizer, "assistant")])


def reply_text(tokenizer, ids: list[int]) -> str:
    return tokenizer.decode(ids, skip_special_tokens=True)
