"""The README's examples are true: every command of a ``console`` block (``$ micro-runtime
...`` or ``$ python ...``) runs, and what it prints matches the lines shown after it,
doctest-style: ``...`` inside a line stands for any text (timings), a line that is only
``...`` for any number of lines. Each block runs in a fresh directory (with ``tests/``
reachable, as at the root of a clone), its commands in order; this checkout is the one
imported. Blocks whose commands take minutes are skipped unless
MICRO_RUNTIME_README_SLOW=1, each with its reason."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from typing import List, Tuple

import pytest

from tests.helpers import README

ROOT = os.path.dirname(README)

#: commands (by a part of them) that take minutes, and why
SLOW = {
    "--patches": "the patch search takes 1 to 5 minutes (about 50 s of CPU on person_detect), and its "
                 "time-bounded plan search (--budget) may stop above the head shown on a busy machine",
}


def console_blocks(text: str) -> List[List[Tuple[str, str]]]:
    """Each ```console block as [(command, expected output)]."""
    blocks = []
    for body in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        commands: List[Tuple[str, List[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
        blocks.append([(cmd, "\n".join(out)) for cmd, out in commands])
    return blocks


def expected_pattern(expected: str) -> "re.Pattern[str]":
    """The expected lines as a regular expression (``...`` as described above)."""
    parts = []
    for line in expected.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(r"[^\n]*?".join(re.escape(p) for p in line.rstrip().split("...")) + r"\n")
    return re.compile("".join(parts))


def normalise(output: str) -> str:
    return "".join(line.rstrip() + "\n" for line in output.splitlines())


def argv(command: str) -> List[str]:
    words = shlex.split(command)
    if words[0] == "micro-runtime":
        return [sys.executable, "-m", "micro_runtime"] + words[1:]
    if words[0] == "python":
        return [sys.executable] + words[1:]
    raise AssertionError(f"README console blocks run micro-runtime or python, not {words[0]!r}")


def _cases():
    blocks = console_blocks(open(README, encoding="utf-8").read())
    cases = []
    for k, block in enumerate(blocks):
        slow = [reason for part, reason in SLOW.items() if any(part in cmd for cmd, _ in block)]
        marks = [pytest.mark.slow,
                 pytest.mark.skipif(not os.environ.get("MICRO_RUNTIME_README_SLOW"), reason=slow[0])] \
            if slow else []
        cases.append(pytest.param(block, id=f"block{k}-" + block[0][0].split()[-1][:30], marks=marks))
    return cases


def test_the_readme_has_console_examples():
    blocks = console_blocks(open(README, encoding="utf-8").read())
    commands = [cmd for block in blocks for cmd, _ in block]
    assert len(blocks) >= 5
    for verb in ("size", "audit", "run", "eval", "optimize"):
        assert any(cmd.startswith(f"micro-runtime {verb} ") for cmd in commands), verb


def test_the_matcher_can_fail():
    shown = "minimum arena 82420 bytes\n...\ntook ... s"
    assert expected_pattern(shown).fullmatch("minimum arena 82420 bytes\nx\ny\ntook 1.2 s\n")
    assert not expected_pattern(shown).fullmatch("minimum arena 82424 bytes\ntook 1.2 s\n")
    assert not expected_pattern("took ... s").fullmatch("took 1\nextra line\n2 s\n")


@pytest.mark.parametrize("block", _cases())
def test_readme_console_block(block, tmp_path):
    os.symlink(os.path.join(ROOT, "tests"), tmp_path / "tests")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for command, expected in block:
        proc = subprocess.run(argv(command), cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1800)
        assert proc.returncode == 0, f"$ {command}\n{proc.stderr}"
        got = normalise(proc.stdout)
        assert expected_pattern(normalise(expected)).fullmatch(got), \
            f"$ {command}\nREADME shows:\n{expected}\nit printed:\n{got}"


def test_the_target_comparison_table_is_what_size_says():
    """The README's table of minimum arenas per target (a row per model, a column per
    target) holds the figures `size` computes."""
    from micro_runtime.tools.sizing import measure_arena
    from tests.helpers import model_path
    text = open(README).read()
    header = re.search(r"^\| model \|((?: `[^`]+` \|)+)\n\|[-|: ]+\n((?:\|.*\n)+)", text, re.M)
    assert header, "the README has no model / target table"
    targets = re.findall(r"`([^`]+)`", header.group(1))
    rows = [[c.strip() for c in line.strip("|\n").split("|")] for line in header.group(2).splitlines()]
    assert len(targets) >= 3 and len(rows) >= 3
    for name, *figures in rows:
        for target, shown in zip(targets, figures):
            assert measure_arena(model_path(name), target).min_arena_bytes == int(shown.replace(",", "")), \
                (name, target)
