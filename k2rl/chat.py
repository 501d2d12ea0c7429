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
    assistant's, or the judge's: k2rl.self_critique.judge_prompt_ids)."""
    return ([role_token(tokenizer, "user")] + text_ids(tokenizer, user_text)
            + [tokenizer.eos_token_id, role_token(tokenizer, reply_role)])


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
