#!/usr/bin/env python3
"""How many product files name each op's enumerator (issue 38's measure of
how far an op's meaning is spread): the mean over the op table's rows, and
the files that name the most. Product files: C and C++ sources and headers
under api/, host/, plugins/, tools/ and examples/.

Usage: tools/count-op-mentions.py [--top N]   (from anywhere in the tree)"""
import argparse
import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = ("api", "host", "plugins", "tools", "examples")
SUFFIXES = {".h", ".hpp", ".c", ".cpp", ".cu", ".cuh"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="files to list (default 10)")
    args = parser.parse_args()
    ops = re.findall(r"X\((PX_OP_[A-Z0-9_]+),", (ROOT / "api/plexus/op_table.h").read_text())
    texts = {p.relative_to(ROOT): p.read_text(errors="replace")
             for folder in FOLDERS for p in (ROOT / folder).rglob("*") if p.suffix in SUFFIXES and p.is_file()}
    per_file = collections.Counter()
    total = 0
    for op in ops:
        pattern = re.compile(r"\b" + op + r"\b")
        files = [path for path, text in texts.items() if pattern.search(text)]
        total += len(files)
        per_file.update(files)
    print(f"{len(ops)} ops, {total / len(ops):.2f} files name each on average")
    for path, count in per_file.most_common(args.top):
        print(f"{count:4d}  {path}")


if __name__ == "__main__":
    main()
