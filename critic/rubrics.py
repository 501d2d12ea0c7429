"""Rubrics the policy-as-critic judges by, loaded from YAML files users can extend.

K2 (sec. 3.2.2) names three kinds: core rubrics (clarity and relevance; fluency and
engagement; objective, grounded interaction), prescriptive rubrics against reward hacking (no
opening praise of the question, no explicit self-justification) and human-annotated rubrics
for specific instruction contexts. K2 does not publish its rubric texts; ours are short
paraphrases, because the default policy is a character-level model with 512 positions that
reads them inside every comparison.

A rubric file is a YAML list of mappings:

    - name: chat_concise          # unique across all files loaded together
      kind: task                  # core | prescriptive | task
      text: Answers the actual request concisely.
      tasks: [chat]               # optional; empty or absent = every task
      patterns: ["(?i)^great question"]  # prescriptive only, optional: regexes of violations

A prescriptive rubric with `patterns` is also a hard guard against reward hacking
(critic.guards): in any comparison, a response that matches one of them loses to one that
does not, whatever the critic says.

The built-in files are `critic/rubrics/*.yaml`. A bad file is one sentence naming the file,
the entry (1-based) and the field.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

KINDS = ("core", "prescriptive", "task")
FIELDS = ("name", "kind", "text", "tasks", "patterns")
BUILTIN_DIR = Path(__file__).parent / "rubrics"
# Every comparison repeats the criteria; a long text would crowd the answers out of a small
# model's context, so a rubric is one short sentence.
MAX_TEXT_CHARS = 120


class RubricError(ValueError):
    """A bad rubric file or entry; the message names the file, the entry and the field."""


@dataclass
class Rubric:
    name: str
    kind: str  # one of KINDS
    text: str  # one short criterion sentence, shown to the critic
    tasks: list[str] = field(default_factory=list)  # empty = applies to every task
    patterns: list[str] = field(default_factory=list)  # prescriptive: regexes of a violation

    def violated_by(self, response: str) -> bool:
        return any(re.search(p, response) for p in self.patterns)

    def applies_to(self, task: str | None) -> bool:
        return not self.tasks or task in self.tasks


def _rubric_files(paths: list[str | Path]) -> list[Path]:
    """The files named, with a folder standing for its *.yaml files in name order."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(p.glob("*.yaml"))
        elif p.exists():
            files.append(p)
        else:
            raise RubricError(f"rubric file {p} does not exist")
    return files


def _parse_entry(entry: object, where: str) -> Rubric:
    if not isinstance(entry, dict):
        raise RubricError(f"{where} is not a mapping with name, kind and text")
    for key in entry:
        if key not in FIELDS:
            close = difflib.get_close_matches(str(key), FIELDS, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise RubricError(f"{where} has unknown field {key}{hint}")
    for key in ("name", "kind", "text"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise RubricError(f"{where} needs field {key} as a non-empty string")
    if entry["kind"] not in KINDS:
        raise RubricError(f"{where} has kind {entry['kind']!r} in field kind; "
                          f"expected one of {', '.join(KINDS)}")
    if len(entry["text"]) > MAX_TEXT_CHARS:
        raise RubricError(f"{where} has a field text of {len(entry['text'])} characters; "
                          f"keep it under {MAX_TEXT_CHARS}")
    tasks = entry.get("tasks") or []
    if not isinstance(tasks, list) or not all(isinstance(t, str) and t for t in tasks):
        raise RubricError(f"{where} needs field tasks as a list of task names")
    if entry["kind"] == "task" and not tasks:
        # A task rubric that applies everywhere is a core rubric by another name.
        raise RubricError(f"{where} is of kind task but its field tasks names no task")
    patterns = entry.get("patterns") or []
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise RubricError(f"{where} needs field patterns as a list of regular expressions")
    if patterns and entry["kind"] != "prescriptive":
        raise RubricError(f"{where} has field patterns but is of kind {entry['kind']}; only "
                          f"prescriptive rubrics are guards")
    for p in patterns:
        try:
            re.compile(p)
        except re.error as e:
            raise RubricError(f"{where} has an invalid regular expression {p!r} in field "
                              f"patterns: {e}") from None
    return Rubric(name=entry["name"].strip(), kind=entry["kind"], text=entry["text"].strip(),
                  tasks=list(tasks), patterns=list(patterns))


def read_rubric_file(path: Path) -> list[Rubric]:
    """The rubrics of one YAML file, checked entry by entry."""
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise RubricError(f"rubric file {path} is not valid YAML: {e}") from None
    if raw is None:
        raise RubricError(f"rubric file {path} has no rubrics")
    if not isinstance(raw, list):
        raise RubricError(f"rubric file {path} must be a YAML list of mappings")
    return [_parse_entry(e, f"entry {n} of {path}") for n, e in enumerate(raw, start=1)]


def load_rubrics(paths: list[str | Path] | None = None) -> list[Rubric]:
    """Rubrics from files or folders of *.yaml (default: the built-in ones), in file order.

    A name used twice, in one file or across files, is an error: rubrics are referred to by
    name (a pair's `rubric`, evaluation breakdowns), so a second definition would be ambiguous.
    """
    rubrics: list[Rubric] = []
    seen: dict[str, Path] = {}
    for path in _rubric_files([BUILTIN_DIR] if paths is None else list(paths)):
        for n, r in enumerate(read_rubric_file(path), start=1):
            if r.name in seen:
                raise RubricError(f"entry {n} of {path} reuses field name {r.name!r}, "
                                  f"already defined in {seen[r.name]}")
            seen[r.name] = path
            rubrics.append(r)
    return rubrics


def rubrics_for(task: str | None, rubrics: list[Rubric]) -> list[Rubric]:
    """The rubrics that apply to `task` (None: only those that apply to every task)."""
    return [r for r in rubrics if r.applies_to(task)]


def rubric_named(name: str, rubrics: list[Rubric]) -> Rubric:
    """The rubric called `name`; a typo gets the closest names."""
    for r in rubrics:
        if r.name == name:
            return r
    names = [r.name for r in rubrics]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(names)}"
    raise RubricError(f"unknown rubric {name!r}; {hint}")
