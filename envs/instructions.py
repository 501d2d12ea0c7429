"""Single-turn instruction following with checkable constraints ("k2rl/Instructions-v0",
"k2rl/Instructions-v1").

The prompt is a tiny task plus 1 to 3 constraints, e.g.
``"List fruits. lowercase, max 3 words, include 'fig'."``; the answer is the
constraint spec scored by ``instruction_following`` (fraction satisfied, no
credit for claiming compliance). Constraints come from different groups
(format, case, length, word), so no two contradict by kind; a drawn
combination is kept only if the expert's construction can meet it.

``word_constraint=True`` keeps only problems with an include or avoid constraint (v0's draw,
redrawn until it has one). k2rl's warm-start uses it for its demonstrations: with v0's own draw
a quarter of the prompts ask to include a quoted word, and the 3.4 M-parameter default model
never learned to copy it (greedy held-out: the word missed in 66 of 83 prompts, the first
letter's probability at its base rate); with half of them asking, it learns (18 of 83 missed,
first letter 0.97). Training and evaluation keep v0's draw.

v1 (``TopicInstructionsEnv``) has v0's prompts, keys and split, and one more constraint in
every spec, ``topic``: every word of the reply is one of the topic's ("List fruits." takes
fruits only). Under v0, nonsense words that met the constraints scored 1.0 on 4,000 of 4,000
problems, as the expert did, and the held-out figure counted off-topic replies as right.

The critic's scripts (`judge_check`, `rejected_response`; warm-start data only) have two options,
off by default (the embedded default's recipe 11) and set by the recipe's `instr_bounds` and
`instr_misspell_rate`: ``bounds_in_checks`` writes each count beside its bound,
and ``misspell_rate`` of the wrong replies misspell a word (`misspell`), as the policy's samples
do. With a 1500-step judging phase they lift the critic's instruction pairs from 54% to 69%; with
the default's 200 steps they do not help (bench/README.md, "Misspelled wrong replies, bounds
beside counts"). A third, ``compare_quoted`` (the recipe's `instr_compare`), has the check
compare each listed word with the quoted one a letter pair at a time and carry a running
"found" flag (`word_list`), so that "is the quoted word there" is a chain of local decisions
rather than one look back over the list (bench/README.md, "Finding the quoted word").
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.base import Problem, TextEnv, check_line
from envs.judging import TeachesJudging
from rewards.instructions import (edges_stripped, follow_score, satisfied, sentence_count,
                                  visible_form, words)

# Short topic words keep answers within a 32-token budget.
TOPICS: dict[str, tuple[str, ...]] = {
    "List fruits.": ("apple", "pear", "plum", "fig", "lime", "kiwi", "mango", "grape", "lemon"),
    "List colors.": ("red", "blue", "green", "pink", "gold", "gray", "tan", "teal", "navy"),
    "List animals.": ("cat", "dog", "cow", "owl", "fox", "bee", "pig", "hen", "elk"),
    "List drinks.": ("tea", "milk", "juice", "soda", "water", "cola", "wine", "cocoa"),
}
ALL_WORDS = frozenset(word for group in TOPICS.values() for word in group)
GROUPS = ("format", "case", "length", "word")  # prompt order: canonical
MAX_CONSTRAINTS = 3
MAX_RESPONSE_CHARS = 28  # the expert's answers fit the budget with room for EOS
MAX_TRIES = 1_000


@dataclass(frozen=True)
class InstructionsProblem(Problem):
    """A constraint spec with the topic's words, from which the expert builds answers."""

    vocabulary: tuple[str, ...]


def _pick(options: list, rng: np.random.Generator) -> Any:
    """A uniform choice that keeps Python types (rng.choice would make numpy ones)."""
    return options[int(rng.integers(len(options)))]


def draw_constraint(group: str, vocabulary: tuple[str, ...], rng: np.random.Generator) -> dict:
    """One random constraint of ``group`` (see rewards.instructions.CHECKS)."""
    if group == "format":
        n = _pick([2, 3], rng)
        return _pick([{"kind": "json"}, {"kind": "bullets"}, {"kind": "sentences", "n": n}], rng)
    if group == "case":
        return _pick([{"kind": "lowercase"}, {"kind": "uppercase"}], rng)
    if group == "length":
        kind = _pick(["max_words", "min_words", "max_chars"], rng)
        sizes = {"max_words": [2, 3, 4], "min_words": [2, 3], "max_chars": [12, 16, 20]}
        return {"kind": kind, "n": _pick(sizes[kind], rng)}
    return {"kind": _pick(["include", "exclude"], rng), "word": _pick(list(vocabulary), rng)}


def describe(constraint: dict) -> str:
    """The constraint as the prompt says it, e.g. "max 3 words" or "include 'fig'".

    >>> describe({"kind": "sentences", "n": 2}), describe({"kind": "exclude", "word": "fig"})
    ('2 sentences', "avoid 'fig'")
    """
    kind = constraint["kind"]
    fixed = {"json": "as JSON", "bullets": "bullets", "lowercase": "lowercase",
             "uppercase": "uppercase"}
    if kind in fixed:
        return fixed[kind]
    if kind == "include":
        return f"include '{constraint['word']}'"
    if kind == "exclude":
        return f"avoid '{constraint['word']}'"
    if kind == "topic":
        return f"{constraint['name']} only"
    units = {"sentences": "{n} sentences", "max_words": "max {n} words",
             "min_words": "min {n} words", "max_chars": "max {n} chars"}
    return units[kind].format(n=constraint["n"])


def read_prompt(prompt: str, topic_constraint: bool = False
                ) -> tuple[list[dict], tuple[str, ...]] | None:
    """The constraints and topic words an instruction prompt states, as the env drew them
    (the inverse of its prompt: the head, then each constraint as `describe` says it); None
    for any other text. With ``topic_constraint`` (v1) the topic leads the constraints.

    >>> read_prompt("List fruits. max 2 words, avoid 'fig'.")[0]
    [{'kind': 'max_words', 'n': 2}, {'kind': 'exclude', 'word': 'fig'}]
    """
    head = next((h for h in TOPICS if prompt.startswith(h + " ")), None)
    if head is None or not prompt.endswith("."):
        return None
    vocabulary = TOPICS[head]
    said = {describe(c): c for c in stated_constraints(vocabulary)}
    parts = prompt[len(head) + 1:-1].split(", ")
    if not all(part in said for part in parts):
        return None
    spec = [dict(said[part]) for part in parts]
    if topic_constraint:
        name = head.removeprefix("List ").removesuffix(".")
        spec = [{"kind": "topic", "name": name, "words": list(vocabulary)}] + spec
    return spec, vocabulary


def stated_constraints(vocabulary: tuple[str, ...]) -> list[dict]:
    """Every constraint `draw_constraint` can draw for a topic's words."""
    return ([{"kind": "json"}, {"kind": "bullets"}, {"kind": "lowercase"}, {"kind": "uppercase"}]
            + [{"kind": "sentences", "n": n} for n in (2, 3)]
            + [{"kind": "max_words", "n": n} for n in (2, 3, 4)]
            + [{"kind": "min_words", "n": n} for n in (2, 3)]
            + [{"kind": "max_chars", "n": n} for n in (12, 16, 20)]
            + [{"kind": k, "word": w} for k in ("include", "exclude") for w in vocabulary])


def render(words: list[str], spec: list[dict]) -> str:
    """``words`` laid out in the spec's format and case.

    >>> render(["fig", "plum"], [{"kind": "bullets"}, {"kind": "uppercase"}])
    '- FIG\\n- PLUM'
    """
    kinds = {constraint["kind"] for constraint in spec}
    if "json" in kinds:
        text = json.dumps(words)
    elif "bullets" in kinds:
        text = "\n".join(f"- {word}" for word in words)
    elif "sentences" in kinds:
        text = " ".join(f"{word}." for word in words)  # one word per sentence
    else:
        text = " ".join(words)
    return text.upper() if "uppercase" in kinds else text


def word_count_range(spec: list[dict]) -> tuple[int, int]:
    """The fewest and most words a compliant answer may have (before the char limit)."""
    low, high = 1, 4
    for constraint in spec:
        kind, n = constraint["kind"], constraint.get("n")
        if kind == "sentences":
            low, high = max(low, n), min(high, n)
        elif kind == "max_words":
            high = min(high, n)
        elif kind == "min_words":
            low = max(low, n)
    return low, high


def compose(spec: list[dict], vocabulary: tuple[str, ...],
            rng: np.random.Generator | None = None) -> str | None:
    """A compliant answer made of topic words, or None if this construction finds none.

    With ``rng``, the word count and words are random; without it, the
    fewest and shortest words are used, which is the best chance of
    meeting a character limit.
    """
    low, high = word_count_range(spec)
    if low > high:
        return None
    required = [c["word"] for c in spec if c["kind"] == "include"]
    banned = {c["word"] for c in spec if c["kind"] == "exclude"} | set(required)
    others = [word for word in vocabulary if word not in banned]
    if rng is None:
        count, others = low, sorted(others, key=len)
    else:
        count, others = int(rng.integers(low, high + 1)), list(rng.permutation(others))
    words = (required + [str(word) for word in others])[:count]
    text = render(words, spec)
    if len(words) < count or len(text) > MAX_RESPONSE_CHARS or follow_score(text, spec) < 1.0:
        return None
    return text


def misspell(word: str, rng: np.random.Generator) -> str:
    """A near miss of ``word`` as a sampling policy writes one, never a topic word: a letter
    dropped, doubled, swapped with the next or changed, the word cut short, or run into
    another topic word ("aple", "lum", "applum"). The held-out pairs' wrong replies are full
    of these; a critic taught only on whole topic words copied them as the word they resemble
    ("APLE" as "APPLE+") and passed them (bench/README.md, "Misspelled wrong replies, bounds
    beside counts")."""
    for _ in range(MAX_TRIES):
        i = int(rng.integers(len(word)))
        how = int(rng.integers(6))
        if how == 0 and len(word) > 2:
            out = word[:i] + word[i + 1:]
        elif how == 1:
            out = word[:i] + word[i] + word[i:]
        elif how == 2 and len(word) > 2:
            i = min(i, len(word) - 2)
            out = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif how == 3:
            out = word[:i] + string.ascii_lowercase[int(rng.integers(26))] + word[i + 1:]
        elif how == 4 and len(word) > 2:
            out = word[:int(rng.integers(2, len(word)))]
        else:
            other = _pick(sorted(ALL_WORDS), rng)
            out = word[:max(1, i)] + other[int(rng.integers(1, len(other))):]
        if out.isalpha() and out not in ALL_WORDS:
            return out
    raise RuntimeError(f"no misspelling of {word!r} in {MAX_TRIES} draws")


class InstructionsEnv(TextEnv, TeachesJudging):
    """A topic and 1 to 3 constraints from distinct groups; the action is the answer."""

    task = "instructions"
    budget = 32
    max_turns = 1
    reward_name = "instruction_following"
    corrects_checks = True  # the constraints as the question states them (check_from)

    topic_constraint = False  # v1: every spec starts with the topic (module doc)

    def __init__(self, render_mode: str | None = None, word_constraint: bool = False,
                 misspell_rate: float = 0.0, bounds_in_checks: bool = False,
                 compare_quoted: bool = False) -> None:
        super().__init__(render_mode)
        self.word_constraint = word_constraint
        self.misspell_rate = misspell_rate  # the critic's scripts (module doc), 0: as before
        self.bounds_in_checks = bounds_in_checks
        self.compare_quoted = compare_quoted

    def _draw(self) -> Problem:
        for _ in range(MAX_TRIES):
            problem = self._draw_any()
            if not self.word_constraint or any(c["kind"] in ("include", "exclude")
                                               for c in problem.answer):
                return problem
        raise RuntimeError(f"no instruction spec with a word constraint in {MAX_TRIES} draws")

    def _draw_any(self) -> Problem:
        rng = self.np_random
        for _ in range(MAX_TRIES):
            head = _pick(list(TOPICS), rng)
            vocabulary = TOPICS[head]
            count = int(rng.integers(1, MAX_CONSTRAINTS + 1))
            groups = sorted(rng.choice(len(GROUPS), size=count, replace=False))
            spec = [draw_constraint(GROUPS[int(g)], vocabulary, rng) for g in groups]
            if compose(spec, vocabulary) is not None:
                break
        else:
            raise RuntimeError(f"no satisfiable instruction spec in {MAX_TRIES} draws")
        prompt = f"{head} {', '.join(describe(c) for c in spec)}."
        if self.topic_constraint:  # the head states it: the prompt is v0's
            name = head.removeprefix("List ").removesuffix(".")
            spec = [{"kind": "topic", "name": name, "words": list(vocabulary)}] + spec
        # The prompt states the topic and every constraint: it is the canonical key.
        return InstructionsProblem(key=f"instr:{prompt}", prompt=prompt, answer=spec,
                                   vocabulary=vocabulary)

    def expert_action(self, rng: np.random.Generator) -> str:
        """A random compliant answer, or the shortest one when the random one fails."""
        problem = self._require_active()
        assert isinstance(problem, InstructionsProblem)
        spec = problem.answer
        answer = compose(spec, problem.vocabulary, rng) or compose(spec, problem.vocabulary)
        assert answer is not None  # _draw keeps only specs the shortest answer meets
        return answer

    # --- the critic's scripted expert: the constraints read off, then each one checked

    def judge_working(self) -> str:
        """The critic's own answer: the shortest compliant one ("fig plum"); its checks read
        the constraints off the instruction."""
        problem = self._require_active()
        assert isinstance(problem, InstructionsProblem)
        answer = compose(problem.answer, problem.vocabulary)
        assert answer is not None  # _draw keeps only specs the shortest answer meets
        return answer

    def judge_check(self, response: str) -> str:
        """The reply's words, numbered and each marked on topic or not, then one finding per
        constraint and the whole: "1 fig+ 2 CAT?; fruits no, 2 words yes: no" (with
        `bounds_in_checks`: "..., 2 words, max 3 yes: no"; with `compare_quoted` and a quoted
        word, the quoted word's finding first: "1 kiwi+ kf!. 2 plum+ pf!.; has 'fig' no,
        fruits yes: no")."""
        problem = self._require_active()
        assert isinstance(problem, InstructionsProblem)
        return self.check_of(response, problem.answer, problem.vocabulary)

    def check_of(self, response: str, spec: list[dict], vocabulary: tuple[str, ...]) -> str:
        """`judge_check`'s line of ``response`` under ``spec`` and the topic's words."""
        met = satisfied(response, spec)
        quoted = next((c["word"] for c in spec if c["kind"] in ("include", "exclude")), None)
        listed = word_list(response, vocabulary, quoted=quoted if self.compare_quoted else None)
        if self.compare_quoted:  # its finding first, beside the flag it reads
            order = sorted(range(len(spec)),
                           key=lambda i: spec[i]["kind"] not in ("include", "exclude"))
            spec, met = [spec[i] for i in order], [met[i] for i in order]
        return check_line(listed + "; " + ", ".join(
            f"{_observed(response, c, self.bounds_in_checks)} {'yes' if ok else 'no'}"
            for c, ok in zip(spec, met)),
            all(met))

    def check_from(self, question: str, response: str, own: str) -> str | None:
        """The check line of ``response`` as the critic should have written it from the
        question it saw: the constraints the question states (`read_prompt`), in this env's
        layout (`bounds_in_checks`, `compare_quoted`); None for a question that is not one of
        this env's prompts."""
        read = read_prompt(question, self.topic_constraint)
        return None if read is None else self.check_of(response, *read)

    def rejected_response(self, rng: np.random.Generator) -> str:
        """Topic words that break at least one constraint: a wrong count, case or format, the
        quoted word missing or present; `misspell_rate` of them with a word misspelled."""
        problem = self._require_active()
        assert isinstance(problem, InstructionsProblem)
        spec, vocabulary = problem.answer, list(problem.vocabulary)
        if self.topic_constraint and rng.random() < 0.25:  # another topic's words, all else met
            others = [w for head, ws in TOPICS.items() for w in ws if w not in vocabulary]
            text = compose([c for c in spec if c["kind"] != "topic"], tuple(rng.permutation(others)))
            if text and follow_score(text, spec) < 1.0:
                return text
        for _ in range(MAX_TRIES):
            count = int(rng.integers(1, 7))  # up to 6: past every max_words
            picked = [str(w) for w in rng.permutation(vocabulary)[:count]]
            if self.misspell_rate and rng.random() < self.misspell_rate:
                at = int(rng.integers(count))
                picked[at] = misspell(picked[at], rng)
            if rng.random() < 0.5:  # near the expert's answer: keep its format, break one part
                fmt = spec
            else:
                fmt = [_pick([{"kind": "json"}, {"kind": "bullets"}, {"kind": "sentences", "n": 1},
                              {"kind": "plain"}], rng)]
            text = render(picked, [c for c in fmt if c["kind"] != "plain"])
            case = _pick(["lower", "upper", "title", "keep"], rng)
            text = {"lower": text.lower(), "upper": text.upper(), "title": text.title(),
                    "keep": text}[case]
            if text and len(text) <= 2 * MAX_RESPONSE_CHARS and follow_score(text, spec) < 1.0:
                return text
        return ""  # never reached in 20,000 draws of the env (tests/envs/test_contract.py)


def word_list(response: str, vocabulary: tuple[str, ...], most: int = 8,
              quoted: str | None = None) -> str:
    """The reply's words as the critic lists them: numbered, without the punctuation around
    them, each marked "+" if it is one of the topic's and "?" if not.

    A 3.4 M-parameter critic said "yes" to nearly every constraint of a wrong reply when it had
    to count or scan the reply at once (bench/README.md); written out word by word, the count
    is the last number and each topic decision looks at one word.

    With ``quoted`` (the word an include or avoid constraint names), each listed word is then
    compared with it (`letter_pairs`) and followed by a running flag, "^" once a listed word
    has equalled it and "." until then (once found, the flag alone): the finding, written
    first, reads the last flag. Looking the quoted word up among the listed ones at once was
    not learnt (bench/README.md, "Finding the quoted word").

    >>> word_list('- FIG\\n- cat.', ("fig", "plum"))
    '1 FIG+ 2 cat?'
    >>> word_list('plum FIG kiwi', ("fig", "plum"), quoted="fig")
    '1 plum+ pf!. 2 FIG+ ffiigg=^ 3 kiwi? ^'
    """
    topic_words = {visible_form(w) for w in vocabulary}
    out, found = [], False
    for i, word in enumerate(words(response)[:most], 1):
        seen = edges_stripped(visible_form(word))
        entry = f"{i} {edges_stripped(word)}{'+' if seen in topic_words else '?'}"
        if quoted is not None and found:  # found already: the flag alone
            entry += " ^"
        elif quoted is not None:
            pairs = letter_pairs(seen, visible_form(quoted))
            found = pairs.endswith("=")
            entry += f" {pairs}{'^' if found else '.'}"
        out.append(entry)
    return " ".join(out) or "0"


def letter_pairs(word: str, quoted: str) -> str:
    """``word`` against ``quoted`` a letter pair at a time ("_" past the end of one), up to the
    first pair that differs and then "!", or "=" if none does: each mark looks at the two
    letters just written, as chat's check compares a reply with the critic's answer.

    >>> letter_pairs("tea", "tea"), letter_pairs("water", "tea"), letter_pairs("teal", "tea")
    ('tteeaa=', 'wt!', 'tteeaal_!')
    """
    out = []
    for i in range(max(len(word), len(quoted))):
        a = word[i] if i < len(word) else "_"
        b = quoted[i] if i < len(quoted) else "_"
        out.append(a + b)
        if a != b:
            return "".join(out) + "!"
    return "".join(out) + "="


def _observed(response: str, constraint: dict, bounds: bool = False) -> str:
    """What the critic notes of ``response`` for one constraint: "3 words", "has 'fig'". With
    ``bounds`` each count stands next to the bound it is held to ("1 words, min 2", "3
    sentences, want 2", the sentences counted from the reply), so that its yes/no compares two
    numbers side by side, not one with a number back in the question (bench/README.md,
    "Misspelled wrong replies, bounds beside counts")."""
    kind = constraint["kind"]
    bound = f", {describe(constraint).rsplit(' ', 1)[0]}" if bounds else ""  # ", max 3"
    if kind in ("max_words", "min_words"):
        return f"{len(words(response))} words{bound}"
    if kind == "max_chars":
        return f"{len(response.strip())} chars{bound}"
    if kind == "sentences":
        if bounds:
            return f"{sentence_count(response)} sentences, want {constraint['n']}"
        return f"{constraint['n']} sentences"
    if kind == "include":
        return f"has '{constraint['word']}'"
    if kind == "exclude":
        return f"no '{constraint['word']}'"
    if kind == "topic":
        return f"{constraint['name']}"
    return describe(constraint)


class TopicInstructionsEnv(InstructionsEnv):
    """v0's prompts with the topic as a constraint of every spec ("k2rl/Instructions-v1")."""

    topic_constraint = True
