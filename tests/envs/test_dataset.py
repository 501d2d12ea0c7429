"""Datasets as environments (k2rl/Dataset-v0): formats, checks, held-out split, config kwargs."""
import json

import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401
from envs.dataset import DatasetError, DatasetEnv, load_splits, prompt_space

ROWS = [{"question": f"What is {a} plus {b}?", "answer": str(a + b)}
        for a in range(2, 12) for b in range(20, 30)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def make(files, **kwargs):
    load_splits.cache_clear()
    prompt_space.cache_clear()
    return DatasetEnv(files, prompt_field="question", **kwargs)


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet", "saved"])
def test_every_format_gives_the_same_problems(tmp_path, fmt):
    import datasets

    table = datasets.Dataset.from_list(ROWS)
    path = tmp_path / f"d.{fmt}"
    {"jsonl": lambda: table.to_json(str(path)), "json": lambda: path.write_text(json.dumps(ROWS)),
     "csv": lambda: table.to_csv(str(path)), "parquet": lambda: table.to_parquet(str(path)),
     "saved": lambda: table.save_to_disk(str(path))}[fmt]()
    env = make(str(path), verifier="exact_int")
    got = {p.prompt: str(p.answer) for rows in env.splits.values() for p in rows}
    assert got == {r["question"]: r["answer"] for r in ROWS}
    assert len(env.splits["eval"]) > 0 and len(env.splits["train"]) > len(env.splits["eval"])


def test_an_episode_is_one_reply_scored_by_the_named_verifier(tmp_path):
    env = make(write_jsonl(tmp_path / "d.jsonl", ROWS), verifier="math_equiv",
               system="Answer with a number.", budget=16)
    check_env(env, skip_render_check=True)
    prompt, info = env.reset(seed=3)
    assert info["system"] == "Answer with a number." and info["budget"] == 16
    answer = next(r["answer"] for r in ROWS if r["question"] == prompt)
    _, reward, done, _, info = env.step(f"\\boxed{{{answer}}}")
    assert done and reward == 1.0 and info["correct"]
    env.reset(seed=3)
    assert env.step("7")[1] == 0.0


def test_eval_files_are_held_out_and_removed_from_training(tmp_path):
    train = write_jsonl(tmp_path / "train.jsonl", ROWS)
    held = write_jsonl(tmp_path / "eval.jsonl", ROWS[:5])
    env = make(train, eval_files=held, verifier="exact_int")
    assert {p.prompt for p in env.splits["eval"]} == {r["question"] for r in ROWS[:5]}
    assert not {p.prompt for p in env.splits["train"]} & {p.prompt for p in env.splits["eval"]}
    assert len(env.splits["train"]) == len(ROWS) - 5


def test_unicode_and_long_prompts_fit_their_spaces(tmp_path):
    rows = [{"question": "Combien font 3 × 4 ? " + "é" * 900, "answer": "12"}] * 2 + ROWS
    env = make(write_jsonl(tmp_path / "d.jsonl", rows), verifier="exact_int")
    prompt = next(p.prompt for rows_ in env.splits.values() for p in rows_ if "×" in p.prompt)
    assert env.observation_space.contains(prompt) and len(prompt) > 512


def test_bad_datasets_are_one_sentence_naming_file_and_row(tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", ROWS[:3] + [{"question": "", "answer": "1"}])
    with pytest.raises(DatasetError, match=r"line 4 of .*bad.jsonl has no text or messages in its prompt field"):
        make(bad, verifier="exact_int")
    no_answer = write_jsonl(tmp_path / "na.jsonl", [{"question": "1+1?", "solution": "2"}])
    with pytest.raises(DatasetError, match=r"line 1 of .*na.jsonl has no answer in field 'answer'"):
        make(no_answer, verifier="exact_int")
    with pytest.raises(DatasetError, match=r"dataset file /nope.jsonl does not exist"):
        make("/nope.jsonl", verifier="exact_int")
    with pytest.raises(DatasetError, match="unknown reward 'exact_mach'"):
        make(write_jsonl(tmp_path / "ok.jsonl", ROWS), verifier="exact_mach")


def test_config_kwargs_reach_the_environment_and_are_checked_before_services(tmp_path,
                                                                             monkeypatch):
    from k2rl.config import ConfigError, load_config
    from k2rl.tasks import make as task_envs
    from k2rl.tasks.registry import load_envs

    monkeypatch.setattr(task_envs, "_kwargs", task_envs._kwargs)  # restored afterwards
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    task = f"{{id: k2rl/Dataset-v0, kwargs: {{files: {data}, prompt_field: question, " \
           "verifier: exact_int, task: sums}}"
    load_splits.cache_clear()
    prompt_space.cache_clear()
    load_envs(load_config(None, [f"tasks=[{task}]"]))
    env = task_envs.make_env("k2rl/Dataset-v0")  # the engine makes it with the kwargs
    assert env.task == "sums" and env.reward_name == "exact_int"
    with pytest.raises(ConfigError, match=r"tasks\[0\] \(k2rl/Dataset-v0\) cannot be made with "
                                          r"its kwargs: DatasetError: line 1 of"):
        load_envs(load_config(None, [f"tasks=[{task.replace('question', 'prompt')}]"]))
    with pytest.raises(ConfigError, match="unexpected keyword argument 'fles'"):
        load_envs(load_config(None, ["tasks=[{id: k2rl/Dataset-v0, kwargs: {fles: x}}]"]))


CHAT = [{"messages": [{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": f"Add {a} and {b}."},
                      {"role": "assistant", "content": "Ready."},
                      {"role": "user", "content": "Go on."}], "answer": str(a + b)}
        for a in range(2, 12) for b in range(20, 30)]


def test_a_messages_prompt_is_its_last_user_turn_after_the_turns_before_it(tmp_path):
    from k2rl.step.rollout import opening

    load_splits.cache_clear()
    prompt_space.cache_clear()
    env = DatasetEnv(write_jsonl(tmp_path / "c.jsonl", CHAT), prompt_field="messages",
                     verifier="exact_int", system="Ignored: the row has its own.")
    obs, info = env.reset(seed=1)
    assert obs == "Go on." and [m["role"] for m in info["context"]] == ["system", "user",
                                                                       "assistant"]
    messages = opening(obs, info)
    assert [m["content"] for m in messages] == [m["content"] for m in
                                                next(r["messages"] for r in CHAT
                                                     if r["messages"][1] == info["context"][1])]
    # 100 rows differ only in an earlier turn: each is its own problem
    assert sum(len(rows) for rows in env.splits.values()) == len(CHAT)


@pytest.mark.parametrize("messages, says", [
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}],
     "do not end with a user message"),
    ([{"role": "robot", "content": "hi"}], "message 0 of its prompt field"),
    ([], "has no text or messages"),
])
def test_malformed_messages_name_the_row(tmp_path, messages, says):
    rows = CHAT[:3] + [{"messages": messages, "answer": "1"}]
    with pytest.raises(DatasetError, match=f"line 4 of .*c.jsonl.*{says}"):
        load_splits.cache_clear()
        DatasetEnv(write_jsonl(tmp_path / "c.jsonl", rows), prompt_field="messages",
                   verifier="exact_int")


def test_prompts_too_long_for_the_engine_are_skipped_and_counted_or_an_error(tmp_path):
    from tests.k2rl.fixtures import chatml_tokenizer

    tok_dir = tmp_path / "tok"
    chatml_tokenizer().save_pretrained(tok_dir)
    long = [{"question": f"Add {a} and {b}. " + "Please be careful. " * 40,
             "answer": str(a + b)} for a in range(30, 40) for b in range(5)]
    path = write_jsonl(tmp_path / "d.jsonl", ROWS + long)
    env = make(path, verifier="exact_int", tokenizer=str(tok_dir), max_prompt_tokens=64)
    kept = [p for rows in env.splits.values() for p in rows]
    assert sum(env.skipped.values()) == len(long) and len(kept) == len(ROWS)
    assert not any("careful" in p.prompt for p in kept)
    with pytest.raises(DatasetError, match=r"line 101 of .*d.jsonl: its prompt is \d+ tokens, "
                                           r"more than the 64"):
        from envs.dataset import fitting
        fitting.cache_clear()
        make(path, verifier="exact_int", tokenizer=str(tok_dir), max_prompt_tokens=64,
             too_long="error")


def test_a_malformed_jsonl_line_names_its_file_and_line(tmp_path):
    from envs.dataset import DatasetError, read_rows

    path = tmp_path / "broken.jsonl"
    path.write_text('{"prompt": "1+1=", "answer": "2"}\n\n{"prompt": "2+2=", "answer": 4\n[1, 2]\n')
    with pytest.raises(DatasetError, match=r"^line 3 of .*broken.jsonl is not valid JSON: "):
        read_rows(str(path))
    path.write_text('{"prompt": "1+1=", "answer": "2"}\n[1, 2]\n')
    with pytest.raises(DatasetError, match=r"^line 2 of .*broken.jsonl is not a JSON object$"):
        read_rows(str(path))
    path.write_text('{"prompt": "1+1=", "answer": "2"}\n\n{"prompt": "2+2=", "answer": "4"}\n')
    assert [(n, row["prompt"]) for _, n, row in read_rows(str(path))] == [(1, "1+1="), (3, "2+2=")]


def test_messages_the_template_rejects_name_their_row(tmp_path):
    """A system prompt the template has no role for is folded into the user turn, as the
    engine lays it out (k2rl.lm.chat.adapt); messages it rejects either way name their row."""
    from envs.dataset import DatasetError, Row, prompt_tokens
    from k2rl.bootstrap.model import build_tokenizer

    tok = build_tokenizer()
    tok.chat_template = ("{% for m in messages %}{% if m['role'] == 'system' %}"
                         "{{ raise_exception('System role not supported') }}{% endif %}"
                         "{% if 'Never' in m['content'] %}{{ raise_exception('No never') }}"
                         "{% endif %}{{ m['content'] }}{% endfor %}")
    row = Row(key="k", prompt="hi", answer="x", source="line 7 of data.jsonl")
    assert prompt_tokens(row, None, tok) == 2
    assert prompt_tokens(row, "Be brief.", tok) == len("Be brief.\n\nhi")  # folded
    with pytest.raises(DatasetError, match=r"^line 7 of data.jsonl: the chat template of .* "
                                           r"cannot lay out its messages .*No never"):
        prompt_tokens(row, "Never.", tok)


def test_answer_format_picks_where_the_answer_is_read(tmp_path):
    """`answer_format` is the extractor's format; the answer read is in info["extracted"]."""
    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    auto = make(data, verifier="exact_int")
    prompt, _ = auto.reset(seed=3)
    answer = next(r["answer"] for r in ROWS if r["question"] == prompt)
    reply = f"Adding them gives {answer}.\n#### {answer}"
    _, reward, _, _, info = auto.step(reply)
    assert reward == 1.0 and info["extracted"] == answer
    tagged = make(data, verifier="exact_int", answer_format="tag")
    tagged.reset(seed=3)
    _, reward, _, _, info = tagged.step(reply)  # no <answer> tag: nothing is read
    assert reward == 0.0 and info["extracted"] == ""
    tagged.reset(seed=3)
    _, reward, _, _, info = tagged.step(f"<answer>{answer}</answer>")
    assert reward == 1.0 and info["extracted"] == answer
    hedge = make(data, verifier="exact_int")
    hedge.reset(seed=3)
    _, reward, _, _, info = hedge.step(f"The answer is 3 or {answer}.")
    assert reward == 0.0 and info["extracted"].startswith("(hedged)")
    with pytest.raises(DatasetError, match="answer_format must be one of"):
        make(data, verifier="exact_int", answer_format="last_word")


def test_a_verifier_that_reads_no_single_answer_records_none(tmp_path):
    rows = [{"question": f"Write about {w}.", "answer": {"instruction_id_list":
             ["punctuation:no_comma"], "kwargs": [{}]}} for w in ("tea", "rain", "snow", "fog")]
    env = make(write_jsonl(tmp_path / "d.jsonl", rows * 5), verifier="ifeval")
    env.reset(seed=0)
    assert "extracted" not in env.step("Tea is warm.")[4]
