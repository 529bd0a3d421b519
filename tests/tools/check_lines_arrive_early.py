#!/usr/bin/python3
"""Runs a program with its output on a pipe (as a log file or `| tee` gives
it) and checks that the line matching FIRST reaches the reader at least
SECONDS before the line matching LATER: a line the program holds in its
buffer arrives only with the later one.

usage: check_lines_arrive_early.py FIRST LATER SECONDS -- PROGRAM [ARGUMENTS...]
"""
import re
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit(__doc__)
    first, later, seconds = re.compile(sys.argv[1]), re.compile(sys.argv[2]), float(sys.argv[3])
    arrived = {}
    with subprocess.Popen(sys.argv[5:], stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            sys.stdout.write(line)
            for name, pattern in (("first", first), ("later", later)):
                if name not in arrived and pattern.search(line):
                    arrived[name] = time.monotonic()
    if p.returncode != 0:
        sys.exit(f"check_lines_arrive_early.py: the program failed (exit status {p.returncode})")
    for name in ("first", "later"):
        if name not in arrived:
            sys.exit(f"check_lines_arrive_early.py: no line matched {sys.argv[1 if name == 'first' else 2]!r}")
    gap = arrived["later"] - arrived["first"]
    if gap < seconds:
        sys.exit(f"check_lines_arrive_early.py: {sys.argv[1]!r} arrived only {gap:.3f} s before {sys.argv[2]!r}"
                 f" (at least {seconds} s wanted: was the line held in a buffer?)")
    print(f"check_lines_arrive_early.py: {gap:.3f} s between the two lines")


main()
