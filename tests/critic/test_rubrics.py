"""Tests for the critic's rubric files: the built-in set, the format and its errors."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from critic.rubrics import (BUILTIN_DIR, Rubric, RubricError, load_rubrics, rubric_named,
                            rubrics_for)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_builtin_rubrics_have_every_kind_from_the_paper() -> None:
    rubrics = load_rubrics()
    names = {r.name for r in rubrics}
    assert {"clarity", "fluency", "grounded"} <= {r.name for r in rubrics if r.kind == "core"}
    prescriptive = {r.name for r in rubrics if r.kind == "prescriptive"}
    assert prescriptive == {"no_praise", "no_self_justification"}
    assert {"chat_concise", "correct_answer"} <= names
    assert all(r.tasks for r in rubrics if r.kind == "task")


def test_builtin_rubric_texts_are_readable_by_the_char_model() -> None:
    # The default policy's vocabulary is printable ASCII; anything else would be <|unk|>.
    for r in load_rubrics():
        assert set(r.text) <= set(string.printable) and len(r.text) <= 40, r.name


def test_rubrics_for_picks_general_and_matching_task_rubrics() -> None:
    rubrics = load_rubrics()
    chat = [r.name for r in rubrics_for("chat", rubrics)]
    assert chat == ["clarity", "fluency", "grounded", "no_praise", "no_self_justification",
                    "chat_concise"]
    assert "chat_concise" not in [r.name for r in rubrics_for("arithmetic", rubrics)]
    assert all(not r.tasks for r in rubrics_for(None, rubrics))


def test_user_file_extends_the_builtin_set(tmp_path: Path) -> None:
    extra = write(tmp_path, "mine.yaml",
                  "- name: polite\n  kind: task\n  text: Is polite.\n  tasks: [chat]\n")
    rubrics = load_rubrics([BUILTIN_DIR, extra])
    assert rubric_named("polite", rubrics) == Rubric("polite", "task", "Is polite.", ["chat"])
    assert "polite" in [r.name for r in rubrics_for("chat", rubrics)]


def test_folder_loads_its_yaml_files_in_name_order(tmp_path: Path) -> None:
    write(tmp_path, "b.yaml", "- {name: second, kind: core, text: B.}\n")
    write(tmp_path, "a.yaml", "- {name: first, kind: core, text: A.}\n")
    assert [r.name for r in load_rubrics([tmp_path])] == ["first", "second"]


@pytest.mark.parametrize(("body", "pattern"), [
    ("- name: x\n  kind: core\n  txt: Hi.\n",
     r"entry 1 of .*bad\.yaml has unknown field txt; did you mean text\?"),
    ("- {name: x, kind: core, text: A.}\n- {name: y, kind: basic, text: B.}\n",
     r"entry 2 of .*bad\.yaml has kind 'basic' in field kind"),
    ("- {name: x, kind: core}\n", r"entry 1 of .*bad\.yaml needs field text"),
    ("- {name: '', kind: core, text: A.}\n", r"entry 1 .* needs field name"),
    ("- {name: x, kind: task, text: A.}\n", r"entry 1 .* field tasks names no task"),
    ("- {name: x, kind: core, text: A., tasks: chat}\n", r"entry 1 .* field tasks as a list"),
    ("- just a string\n", r"entry 1 of .*bad\.yaml is not a mapping"),
    (f"- {{name: x, kind: core, text: {'a' * 200}}}\n",
     r"entry 1 .* field text of 200 characters"),
    ("name: x\nkind: core\n", r"bad\.yaml must be a YAML list of mappings"),
    ("- [unclosed\n", r"bad\.yaml is not valid YAML"),
    ("", r"bad\.yaml has no rubrics"),
])
def test_bad_file_names_file_entry_and_field(tmp_path: Path, body: str, pattern: str) -> None:
    with pytest.raises(RubricError, match=pattern):
        load_rubrics([write(tmp_path, "bad.yaml", body)])


def test_duplicate_names_across_files_are_an_error(tmp_path: Path) -> None:
    dup = write(tmp_path, "dup.yaml", "- {name: clarity, kind: core, text: Again.}\n")
    pattern = r"entry 1 of .*dup\.yaml reuses field name 'clarity'.*core\.yaml"
    with pytest.raises(RubricError, match=pattern):
        load_rubrics([BUILTIN_DIR, dup])


def test_duplicate_names_in_one_file_are_an_error(tmp_path: Path) -> None:
    dup = write(tmp_path, "dup.yaml",
                "- {name: a, kind: core, text: A.}\n- {name: a, kind: core, text: B.}\n")
    with pytest.raises(RubricError, match="entry 2 of .*dup.yaml reuses"):
        load_rubrics([dup])


def test_missing_file_and_unknown_name_are_errors(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="does not exist"):
        load_rubrics([tmp_path / "nope.yaml"])
    with pytest.raises(RubricError, match="did you mean clarity"):
        rubric_named("clarty", load_rubrics())
    assert issubclass(RubricError, ValueError)


def test_guard_patterns_are_checked(tmp_path):
    from critic.rubrics import RubricError, read_rubric_file

    bad = tmp_path / "r.yaml"
    bad.write_text("- {name: x, kind: core, text: T., patterns: ['^hi']}\n")
    with pytest.raises(RubricError, match="entry 1 of .*only prescriptive"):
        read_rubric_file(bad)
    bad.write_text("- {name: x, kind: prescriptive, text: T., patterns: ['(unclosed']}\n")
    with pytest.raises(RubricError, match="invalid regular expression"):
        read_rubric_file(bad)
    bad.write_text("- {name: x, kind: prescriptive, text: T., patterns: ['(?i)^hi']}\n")
    (rubric,) = read_rubric_file(bad)
    assert rubric.violated_by("Hi there") and not rubric.violated_by("oh hi")
