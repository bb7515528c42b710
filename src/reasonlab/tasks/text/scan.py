"""SCAN (Lake & Baroni 2018): commands to action sequences, with the splits that hold out a primitive's
combinations, long outputs or a template. Shipped in ``reasonlab/data/scan`` (see its NOTICE.md and LICENSE)."""

from __future__ import annotations

from dataclasses import dataclass

from reasonlab.config import ConfigError
from reasonlab.tasks.text import shipped_lines

# split name -> (train file, test file), upstream's names
SPLITS = {
    "simple": ("tasks_train_simple.txt", "tasks_test_simple.txt"),
    "length": ("tasks_train_length.txt", "tasks_test_length.txt"),
    "addprim_jump": ("tasks_train_addprim_jump.txt", "tasks_test_addprim_jump.txt"),
    "addprim_turn_left": ("tasks_train_addprim_turn_left.txt", "tasks_test_addprim_turn_left.txt"),
    "template_around_right": ("tasks_train_template_around_right.txt", "tasks_test_template_around_right.txt"),
}
ACTIONS = ("I_WALK", "I_RUN", "I_JUMP", "I_LOOK", "I_TURN_LEFT", "I_TURN_RIGHT")


@dataclass(frozen=True)
class Example:
    command: tuple[str, ...]
    actions: tuple[str, ...]


def parse_line(line: str, where: str) -> Example:
    """``IN: <command> OUT: <actions>``; anything else is an error naming ``where`` (file:line)."""
    if not line.startswith("IN: ") or " OUT: " not in line:
        raise ConfigError(f"{where}: not a SCAN line ('IN: <command> OUT: <actions>'): {line[:60]!r}")
    command, actions = line[4:].split(" OUT: ", 1)
    out = tuple(actions.split())
    unknown = sorted(set(out) - set(ACTIONS))
    if not command.split() or not out or unknown:
        raise ConfigError(f"{where}: empty command or actions, or unknown action {unknown[:1]}: {line[:60]!r}")
    return Example(tuple(command.split()), out)


def parse(lines: list[str], name: str) -> list[Example]:
    return [parse_line(line, f"scan/{name}:{i}") for i, line in enumerate(lines, 1) if line.strip()]


def load(name: str = "tasks.txt") -> list[Example]:
    """One shipped SCAN file (default: all 20,910 commands)."""
    return parse(shipped_lines("scan", name), name)


def load_split(split: str) -> tuple[list[Example], list[Example]]:
    """(train, test) of a named split: simple, length, addprim_jump, addprim_turn_left, template_around_right."""
    if split not in SPLITS:
        raise ConfigError(f"task.split: {split!r} is not a SCAN split; choose one of {', '.join(SPLITS)}")
    train, test = SPLITS[split]
    return load(train), load(test)
