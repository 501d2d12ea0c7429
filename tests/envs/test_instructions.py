"""Tests particular to the instructions envs ("k2rl/Instructions-v0", "-v1").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

import gymnasium
import numpy as np

from envs.instructions import InstructionsEnv, letter_pairs, word_list
from rewards.instructions import satisfied, words


def test_instructions_specs_have_one_to_three_constraints() -> None:
    env = InstructionsEnv()
    counts = set()
    for seed in range(200):
        env.reset(seed=seed)
        kinds = [c["kind"] for c in env.problem.answer]
        counts.add(len(kinds))
        assert len(set(kinds)) == len(kinds)
    assert counts == {1, 2, 3}


def test_instructions_claim_counts_only_with_full_compliance() -> None:
    env, rng, rewards_seen = InstructionsEnv(), np.random.default_rng(0), set()
    for seed in range(50):
        env.reset(seed=seed)
        claim = env.expert_action(rng) + " - I followed all the constraints."
        complies = all(satisfied(claim, env.problem.answer))
        _, reward, *_ = env.step(claim)
        assert reward == (1.0 if complies else 0.0)  # never partial credit for a claim
        rewards_seen.add(reward)
    assert rewards_seen == {0.0, 1.0}


def _has_word(spec: list[dict]) -> bool:
    return any(c["kind"] in ("include", "exclude") for c in spec)


def test_word_constraint_keeps_only_problems_with_a_quoted_word() -> None:
    plain, worded = InstructionsEnv(), InstructionsEnv(word_constraint=True)
    shares = []
    for env in (plain, worded):
        seen = []
        for seed in range(400):
            env.reset(seed=seed, options={"split": "train"})
            seen.append(_has_word(env.problem.answer))
        shares.append(sum(seen) / len(seen))
    assert 0.4 < shares[0] < 0.6  # v0's own draw: about half
    assert shares[1] == 1.0
    kinds = set()  # and both word kinds, with the other groups beside them
    for seed in range(100):
        worded.reset(seed=seed, options={"split": "train"})
        kinds |= {c["kind"] for c in worded.problem.answer}
    assert {"include", "exclude", "json", "lowercase", "max_words"} <= kinds


def test_word_constraint_leaves_the_default_draw_as_it_was() -> None:
    """Evaluation and RL use the plain draw: the option must not change a seed's problem."""
    plain, worded = InstructionsEnv(), InstructionsEnv(word_constraint=True)
    for seed in range(200):
        plain.reset(seed=seed, options={"split": "eval"})
        worded.reset(seed=seed, options={"split": "eval"})
        if _has_word(plain.problem.answer):
            assert worded.problem == plain.problem  # the first draw is kept when it has a word


def test_v1_takes_the_topic_as_a_constraint_of_every_spec() -> None:
    """Under v0, nonsense words that met the constraints scored 1.0 on 4,000 of 4,000
    problems, as the expert did; v1's topic constraint takes them below 1.0, and the
    expert still scores 1.0."""
    import gymnasium

    import envs  # noqa: F401
    from envs.instructions import TOPICS, compose
    from rewards.instructions import follow_score

    v0, v1 = (gymnasium.make(f"k2rl/Instructions-v{n}").unwrapped for n in (0, 1))
    rng, nonsense = np.random.default_rng(0), ("zq", "xv", "wk", "jb")
    scores = {0: [], 1: []}
    for seed in range(400):
        for n, env in ((0, v0), (1, v1)):
            obs, _ = env.reset(seed=seed)
            spec = env.problem.answer
            assert (spec[0]["kind"] == "topic") == (n == 1)
            assert n == 0 or spec[0]["words"] == list(TOPICS[obs.split(". ")[0] + "."])
            fake = compose([c for c in spec if c["kind"] != "topic"], nonsense)
            if fake is not None and not any(c["kind"] == "include" for c in spec):
                scores[n].append(follow_score(fake, spec))
            assert follow_score(env.expert_action(rng), spec) == 1.0
    assert len(scores[0]) > 100 and set(scores[0]) == {1.0}  # v0: nonsense meets everything
    assert max(scores[1]) < 1.0  # v1: never


def test_a_misspelling_is_a_near_miss_and_never_a_topic_word() -> None:
    from envs.instructions import ALL_WORDS, misspell

    rng = np.random.default_rng(0)
    for word in sorted(ALL_WORDS):
        for _ in range(20):
            typo = misspell(word, rng)
            assert typo.isalpha() and typo not in ALL_WORDS, (word, typo)
            # a near miss: its letters swapped, or its first letter or a two-letter piece kept
            # ("fgi", "aple", "lum", "aime")
            assert sorted(typo) == sorted(word) or typo[0] == word[0] or any(
                word[i:i + 2] in typo for i in range(len(word) - 1)), (word, typo)


def test_the_critic_s_wrong_replies_misspell_and_its_check_copies_the_misspelling() -> None:
    """With misspell_rate 0.5 half the scripted wrong replies misspell a word, as the policy's
    samples do; the check lists the word as written, marked off topic, and says no. At 0 (the
    default) none does."""
    from envs.instructions import ALL_WORDS
    from rewards.instructions import edges_stripped, words

    env = gymnasium.make("k2rl/Instructions-v1", misspell_rate=0.5).unwrapped
    rng = np.random.default_rng(3)
    typos = 0
    for seed in range(200):
        env.reset(seed=seed)
        bad = env.rejected_response(rng)
        odd = [edges_stripped(w) for w in words(bad) if edges_stripped(w).lower() not in ALL_WORDS]
        if odd:
            typos += 1
            check = env.judge_check(bad)
            assert f" {odd[0]}?" in check and check.endswith(": no"), (bad, check)
    assert 70 <= typos <= 130, typos
    env = gymnasium.make("k2rl/Instructions-v1").unwrapped
    for seed in range(200):
        env.reset(seed=seed)
        bad = env.rejected_response(rng)
        assert all(edges_stripped(w).lower() in ALL_WORDS for w in words(bad)), bad


def test_with_bounds_an_instruction_finding_holds_the_count_beside_its_bound() -> None:
    from envs.instructions import _observed

    sentences = {"kind": "sentences", "n": 2}
    assert _observed("navy", {"kind": "min_words", "n": 2}, bounds=True) == "1 words, min 2"
    assert _observed("fig plum kiwi", {"kind": "max_words", "n": 2}, True) == "3 words, max 2"
    assert _observed(" fig plum ", {"kind": "max_chars", "n": 12}, True) == "8 chars, max 12"
    # counted from the reply as the verifier counts, not copied from the instruction
    assert _observed("fig. plum. kiwi", sentences, True) == "3 sentences, want 2"
    assert _observed("fig. p= lime.", sentences, True) == "2 sentences, want 2"
    # the default (recipe 11's scripts): the count alone, the sentences as asked
    assert _observed("navy", {"kind": "min_words", "n": 2}) == "1 words"
    assert _observed("fig. plum. kiwi", sentences) == "2 sentences"


def scripted_checks(env, n: int = 3000):
    """(expert reply, wrong reply, their two scripted checks) on `n` prompts of `env`."""
    from k2rl.step.critic_demos import expert_transcript

    rng = np.random.default_rng(0)
    for seed in range(n):
        env.reset(seed=seed)
        good = expert_transcript(env, rng)
        env.reset(seed=seed)
        bad = env.rejected_response(rng)
        yield good, bad, (env.judge_check(good), env.judge_check(bad))


def test_the_instruction_scripts_options_agree_with_the_verifier_and_fit_the_critic_turn() -> None:
    """With both options on (the recipe's instr_bounds, instr_misspell_rate): the expert's
    check says yes, the wrong reply's no, each bound's finding holds its bound, and the
    longest check fits CHECK_TOKENS (the default model writes a character a token)."""
    from k2rl.step.critic_ids import CHECK_TOKENS

    env = gymnasium.make("k2rl/Instructions-v1", misspell_rate=0.5, bounds_in_checks=True).unwrapped
    longest, bounded = 0, 0
    for good, bad, checks in scripted_checks(env):
        assert satisfied(bad, env.problem.answer).count(False) >= 1, bad
        assert checks[0].endswith(": yes") and checks[1].endswith(": no"), checks
        for c in env.problem.answer:
            if c["kind"] in ("min_words", "max_words"):
                bounded += 1
                assert f" words, {c['kind'][:3]} {c['n']} " in checks[1], checks[1]
        longest = max(longest, *map(len, checks))
    assert bounded > 500 and longest < CHECK_TOKENS, (bounded, longest)


def test_comparing_the_quoted_word_letter_by_letter_ends_on_the_flag_the_finding_reads() -> None:
    """instr_compare (`compare_quoted`): each listed word is compared with the quoted word a
    letter pair at a time, and the last flag is "^" exactly when the reply has the quoted word
    (case and edge punctuation aside), so the include or avoid finding can read it; with all
    three options on the checks agree with the verifier over 3,000 prompts and fit
    LONG_CHECK_TOKENS, the budget of a build with instr_compare."""
    from k2rl.step.critic_ids import LONG_CHECK_TOKENS

    assert letter_pairs("fig", "fig") == "ffiigg=" and letter_pairs("figs", "fig") == "ffiiggs_!"
    assert letter_pairs("pear", "plum") == "ppel!"  # stops at the first pair that differs
    assert word_list('["PLUM", "Fig."]', ("fig", "plum"), quoted="fig") == \
        "1 PLUM+ pf!. 2 Fig+ ffiigg=^"
    assert word_list("plum kiwi", ("fig", "plum"), quoted="fig").endswith(" kf!.")
    env = gymnasium.make("k2rl/Instructions-v1", misspell_rate=0.5, bounds_in_checks=True,
                         compare_quoted=True).unwrapped
    longest, flagged = 0, 0
    for good, bad, checks in scripted_checks(env):
        assert checks[0].endswith(": yes") and checks[1].endswith(": no"), checks
        quoted = [c for c in env.problem.answer if c["kind"] in ("include", "exclude")]
        for reply, check in zip((good, bad), checks):
            listed, findings = check.split("; ", 1)
            if not quoted:
                assert "^" not in listed and "!" not in listed
                continue
            assert findings.startswith(("has '", "no '")), check  # beside the last flag
            there = satisfied(reply, quoted)[0] == (quoted[0]["kind"] == "include")
            if len(words(reply)) <= 8:  # the list holds every word
                flagged += 1
                assert listed.rstrip()[-1] == ("^" if there else "."), (reply, check)
        longest = max(longest, *map(len, checks))
    assert flagged > 1000 and longest < LONG_CHECK_TOKENS, (flagged, longest)
