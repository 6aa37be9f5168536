"""Runs every command the documentation shows and compares its output with
what the documentation prints under it, so that the docs cannot drift from
what the tool does.

In README.md and docs/*.md, inside fenced code blocks, a line starting with
"$ build/trainflops" is a command (continued over lines ending in "\\"); the
lines after it, up to the next "$ " line or the end of the block, are its
standard output. A line "..." there stands for any number of lines. Other
"$ " commands (cat, pip, ...) are shown for the reader and not run. Every
relative link of those files must name a file of the repository.

Usage: doc_commands.py SOURCE_DIR TRAINFLOPS_BINARY
"""
import difflib
import re
import subprocess
import sys
from pathlib import Path

PROMPT = "$ build/trainflops"


def commands(markdown):
    """(line number, command, expected output lines) of each command in the file's code blocks."""
    lines = markdown.read_text().splitlines()
    in_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block = not in_block
            i += 1
            continue
        if not (in_block and line.startswith(PROMPT)):
            i += 1
            continue
        start = i
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        output = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```") and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        yield start + 1, command, output


def matches(expected, actual):
    """Whether the actual lines match the expected ones, "..." matching any run of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0].rstrip() == actual[0].rstrip() and matches(expected[1:], actual[1:])


def dead_links(markdown):
    """The relative link targets of a file that name no file."""
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown.read_text()):
        if not target.startswith(("http://", "https://", "#", "mailto:")):
            if not (markdown.parent / target.split("#")[0]).exists():
                yield target


def main():
    root, binary = Path(sys.argv[1]), sys.argv[2]
    failures, ran = [], 0
    for markdown in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        failures += [f"{markdown.relative_to(root)}: the link ({target}) names no file" for target in dead_links(markdown)]
        for number, command, expected in commands(markdown):
            ran += 1
            shell = binary + command[len("build/trainflops"):]
            result = subprocess.run(["bash", "-c", shell], cwd=root, capture_output=True, text=True)
            actual = result.stdout.splitlines()
            while expected and not expected[-1].strip():
                expected.pop()
            where = f"{markdown.relative_to(root)}:{number}"
            if result.returncode != 0:
                failures.append(f"{where}: `{command}` exited {result.returncode}: {result.stderr.strip()}")
            elif not matches(expected, actual):
                diff = "\n".join(difflib.unified_diff(expected, actual, "shown", "printed", lineterm="", n=1))
                failures.append(f"{where}: `{command}` prints something else:\n{diff}")
    for failure in failures:
        print(failure, end="\n\n")
    print(f"{ran} documented commands, {len(failures)} differ")
    if ran == 0 or failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
