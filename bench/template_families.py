"""`k2rl train` on each chat-template family k2rl is tested with: issue 28's table, re-run.

    python bench/template_families.py [--families qwen2.5,mistral-v0.3] [--steps 2]
                                      [--out bench/results/template_families.json]
    python bench/template_families.py --table      # the results as bench/README.md's table

Each family of tests/k2rl/fixtures.py `FAMILIES` (its published chat template, its special
tokens, the stop ids of its generation_config, tiny random weights; Mistral-v0.3 on its real
32,768-piece SentencePiece vocabulary) gets one short run of configs/tiny.yaml with the table's
three columns as three tasks:

- `jsonl_system`: k2rl/Dataset-v0 on examples/dataset's sums, question/answer rows, with a
  system prompt (the task's `system`);
- `chat_messages`: the same sums as chat `messages` that open with a system message;
- `tool_use`: k2rl/Calculator-v1, the tools listed to templates that list them; with
  `train.ptx_beta` 0.1 on 64 curated expert episodes of the three tasks (k2rl.bootstrap.ptx.write_curated:
  the calculator's a call, its result, the answer), laid out by the template and trained on
  every step.

Per family it records the exit code (and the last line of stderr where it is not 0), the lines
k2rl said at start about the layout, the engine-vs-trainer log-prob gap of every step, the
seconds, and per column the trajectories stored and whether each stores what the template
rendered: its ids begin with the tokenised rendering of its prompt (k2rl.lm.chat.prompt_ids) and
every tool delta in them is the template's (k2rl.lm.chat.observation_ids). A random model never
writes a call, so with `--teach-calls N` (default 150) each family's model first takes N steps
of supervised training on calculator expert episodes laid out by its own template, tools
listed as a rollout lists them (`teach_calls`): it then writes calls in its family's form
(`<tool_call>`, `[TOOL_CALLS]`, Llama-3.1's JSON), well-formed or not, so the run's tool turns
go through the family's parser, the tool result's layout and the delta checks.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SYSTEM = "Answer with a number."


def write_datasets(folder: Path) -> dict[str, Path]:
    """examples/dataset's sums as question/answer rows and as chat messages with a system
    message, train and eval files of each; a small curated PTX file."""
    from k2rl.bootstrap.ptx import write_curated

    out = {"ptx": write_curated(folder / "ptx.jsonl", ["k2rl/Calculator-v1"], n=64)}
    for name in ("train", "eval"):
        rows = [json.loads(x) for x in (ROOT / f"examples/dataset/{name}.jsonl").open()]
        chat = [{"messages": [{"role": "system", "content": SYSTEM},
                              {"role": "user", "content": r["question"]}],
                 "answer": r["answer"]} for r in rows]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (folder / f"{name}_chat.jsonl").write_text("".join(json.dumps(r) + "\n" for r in chat))
        out[name], out[f"{name}_chat"] = folder / f"{name}.jsonl", folder / f"{name}_chat.jsonl"
    return out


def tasks_arg(data: dict[str, Path]) -> str:
    common = "verifier: math_equiv, budget: 8"
    # a call in a family's JSON form is some 40 tokens of a fixture's small vocabulary: the
    # calculator's own budget (24, for calc(37*48)) would cut every one before its end
    return ("tasks=[{id: k2rl/Calculator-v1, budget: 192}, "
            f"{{id: k2rl/Dataset-v0, kwargs: {{files: {data['train']}, eval_files: "
            f"{data['eval']}, prompt_field: question, system: '{SYSTEM}', {common}, "
            "task: jsonl_system}}, "
            "{id: bench/ChatDataset-v0, entry_point: 'envs.dataset:DatasetEnv', "
            f"kwargs: {{files: {data['train_chat']}, eval_files: "
            f"{data['eval_chat']}, prompt_field: messages, {common}, task: chat_messages}}}}]")


# Llama-3.1's template lists the tools in the first user turn at length: 701 tokens of the
# fixture's small vocabulary for a calculator prompt, more than configs/tiny.yaml's 512; Qwen's
# and Mistral's list them too, leaving too few of 512 positions for a call in their form.
MAX_MODEL_LEN = {"llama3.1": 1024, "qwen2.5": 1024, "mistral-v0.3": 1024}


def train(model: Path, data: dict[str, Path], run_dir: Path, steps: int, timeout: int) -> dict:
    """One short `k2rl train` of the family's model; its exit code, start lines and seconds."""
    start = time.perf_counter()
    length = MAX_MODEL_LEN.get(run_dir.name, 512)
    command = [sys.executable, "-m", "k2rl", "train", "configs/tiny.yaml", f"model.path={model}",
               f"engine.max_model_len={length}",
               f"train.steps={steps}", "train.ptx_beta=0.1", f"train.ptx_data={data['ptx']}",
               "eval.prompts_per_task=2", "eval.every=100", tasks_arg(data),
               f"log.run_dir={run_dir}", "log.run_name=run"]
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rc": "timeout", "seconds": timeout, "said": [],
                "error": [f"no result in {timeout} s"]}
    said = [line for line in proc.stdout.splitlines() if line.startswith("model.path")]
    return {"rc": proc.returncode, "seconds": round(time.perf_counter() - start, 1),
            "said": said, "error": proc.stderr.strip().splitlines()[-1:] if proc.returncode else []}


def teach_calls(model_dir: Path, steps: int, seed: int = 0) -> dict:
    """`steps` AdamW steps (batch 8) of next-token loss on calculator expert episodes (a call,
    its result, the answer) laid out by the model's own template with the calculator's tools,
    so that a tiny random model writes tool calls in its family's form; saved in place.
    Returns the first and last loss."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import conversation_ids, load_tokenizer, pad_id
    from k2rl.lm.logprobs import collate, token_nll
    from k2rl.bootstrap.ptx import curated_messages

    tok = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    samples = [conversation_ids(tok, m, tools=CalculatorEnv.tools)
               for m in curated_messages(["k2rl/Calculator-v1"], n=256, seed=seed)]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    rng, losses = np.random.default_rng(seed), []
    model.train()
    for _ in range(steps):
        batch = collate([samples[i] for i in rng.choice(len(samples), 8, replace=False)],
                        pad_id(tok))
        loss = token_nll(model, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.save_pretrained(model_dir)
    return {"steps": steps, "first_loss": round(losses[0], 3) if losses else None,
            "last_loss": round(float(np.mean(losses[-10:])), 3) if losses else None}


def columns(run: Path, model: Path) -> dict:
    """Per task: trajectories stored, those with a tool turn, those that store what the
    template rendered."""
    from transformers import GenerationConfig

    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import load_tokenizer, stop_ids
    from tests.k2rl.fixtures import stored_as_rendered
    from tests.k2rl.test_train import read_store

    tok = load_tokenizer(model)
    stops = stop_ids(tok, GenerationConfig.from_pretrained(model))
    trajs, _, metrics = read_store(run)
    out = {}
    for task in ("jsonl_system", "chat_messages", "tool_use"):
        mine = [t for t in trajs if t.task == task]
        tools = CalculatorEnv.tools if task == "tool_use" else ()
        out[task] = {"trajectories": len(mine),
                     "with_tool_turns": sum(any(m["role"] == "tool" for m in t.messages)
                                            for t in mine),
                     "ids_as_rendered": sum(stored_as_rendered(tok, t, tools, stops) for t in mine)}
    first = next((t for t in trajs if t.task == "chat_messages"), None)
    out["chat_prompt_shown"] = tok.decode(first.ids[:first.reply_start]) if first else None
    return out


def metrics_of(run: Path) -> dict:
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in rows if "logp_gap" in r]
    return {"steps": [r["step"] for r in trained],
            "logp_gap": [r["logp_gap"] for r in trained],
            "ptx_loss": [r.get("ptx_loss") for r in trained]}


def bench_family(name: str, build, data: dict[str, Path], folder: Path, steps: int,
                 timeout: int, reread: bool = False, teach: int = 0) -> dict:
    """One family's run and what it stored; a run cut at the timeout (a loaded machine) is read
    as far as it got, and `reread` reads a kept run of `--work` again without training."""
    model, run = folder / name / "model", folder / name / "run"
    if reread:
        result = {"family": name, **json.loads((folder / name / "result.json").read_text())}
    else:
        taught = teach_calls(build(model), teach) if teach else None
        result = {"family": name, **train(model, data, folder / name, steps, timeout),
                  "taught_calls": taught}
        (folder / name / "result.json").write_text(json.dumps(result))
    if (run / "metrics.jsonl").exists() and metrics_of(run)["steps"]:
        result |= metrics_of(run) | {"columns": columns(run, model)}
    return result


def cell(result: dict, task: str) -> str:
    """A column of the table: ok with the trajectories that stored what the template rendered,
    or the run's error (with what it stored before it, if anything)."""
    c = result.get("columns", {}).get(task)
    stored = "" if c is None else f"{c['ids_as_rendered']}/{c['trajectories']} as rendered" + (
        f", {c['with_tool_turns']} with tool turns" if task == "tool_use" else "")
    if result["rc"] != 0:
        steps = f" after step {result['steps'][-1]}" if result.get("steps") else ""
        return f"rc {result['rc']}{steps}: {' '.join(result['error'])}" + (
            f"; {stored}" if stored else "")
    return f"ok: {stored}"


def table(path: Path) -> str:
    """The results file as bench/README.md's table."""
    data = json.loads(path.read_text())
    lines = ["| layout | JSONL + system | chat `messages` | Calculator-v1 (tool turns) | "
             "log-prob gap (max) | PTX loss | seconds |", "|---|---|---|---|---|---|---|"]
    for r in data["families"]:
        gap = f"{max(r['logp_gap']):.1e}" if r.get("logp_gap") else "-"
        ptx = f"{r['ptx_loss'][-1]:.2f}" if r.get("ptx_loss") else "-"
        lines.append(f"| {r['family']} | {cell(r, 'jsonl_system')} | {cell(r, 'chat_messages')} "
                     f"| {cell(r, 'tool_use')} | {gap} | {ptx} | {r['seconds']:.0f} |")
    return "\n".join(lines)


def write(out: Path, steps: int, results: list[dict]) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    out.write_text(json.dumps(
        {"commit": commit, "machine": platform.processor() or platform.machine(),
         "date": time.strftime("%Y-%m-%d"), "steps": steps, "families": results},
        indent=1) + "\n")


def main() -> None:
    from tests.k2rl.fixtures import FAMILIES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench/results/template_families.json"))
    parser.add_argument("--timeout", type=int, default=900, help="seconds a family's run may take")
    parser.add_argument("--work", help="folder for the models and runs (default: a temporary one)")
    parser.add_argument("--reread", action="store_true", help="read the runs kept in --work "
                        "again (a run cut at the timeout is read as far as it got)")
    parser.add_argument("--table", action="store_true", help="print --out as a markdown table")
    parser.add_argument("--teach-calls", type=int, default=150, help="steps of call-writing "
                        "training of each family's model before its run (0: a random model)")
    args = parser.parse_args()
    if args.table:
        print(table(Path(args.out)))
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="k2rl-families-") as tmp:
        folder = Path(args.work or tmp)
        data = write_datasets(folder)
        for name in args.families.split(","):
            results.append(bench_family(name, FAMILIES[name][1], data, folder, args.steps,
                                        args.timeout, args.reread, args.teach_calls))
            print(json.dumps(results[-1]), flush=True)
            write(Path(args.out), args.steps, results)  # after each family: a long run


if __name__ == "__main__":
    main()
