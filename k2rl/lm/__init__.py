"""The language model, with no notion of RL: a model folder checked and sized (hf), how a
conversation becomes token ids (chat), how a batch is scored (logprobs) and in what precision
(precision), what a step costs (flops).

May import: k2rl.config, envs.tool_calls (the tool-call formats a chat template writes).
"""
