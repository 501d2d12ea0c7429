"""The weights on the machine: the vLLM engine held in-process (engine), the trainer's weights
pushed into it (weight_sync; LoRA adapters: lora), data parallelism across workers
(distributed), optimizer state moved off the GPU (offload) and engine and trainer taking
turns on one GPU (colocate).

May import: k2rl.config, k2rl.lm. vLLM, Ray and peft are imported where they are used, so
that a module of this floor loads without them.
"""
