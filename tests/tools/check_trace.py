#!/usr/bin/python3
"""Runs a program that writes a Plexus trace (PLEXUS_TRACE, plexus-train
--trace) and checks the trace: Chrome trace JSON ({"traceEvents": [...]}),
every complete event well formed, each host thread's spans nested, each
device's runs in order and never overlapping, each after the call that
queued it, and every op call run exactly once where its plugin reports runs.
With --ops, each op named must have been called; with --steps N, N regions
named "step ..." must be there, each step's op calls the same as every
other's (so none is missing) and each one run on its device. The summary
must be beside the trace.

usage: check_trace.py --trace FILE [--ops OP,OP...] [--steps N] -- PROGRAM [ARGUMENTS...]
"""
import collections
import json
import os
import subprocess
import sys

SLACK_US = 0.002  # times are written to the nanosecond, each rounded on its own


def fail(message):
    sys.exit("check_trace.py: " + message)


def summary_path(path):
    return path[:-5] + ".summary.txt" if path.endswith(".json") and len(path) > 5 else path + ".summary.txt"


def nested(spans, where):
    spans = sorted(spans, key=lambda e: (e["ts"], -e["dur"]))
    ends = []
    for e in spans:
        while ends and ends[-1] <= e["ts"]:
            ends.pop()
        if ends and e["ts"] + e["dur"] > ends[-1] + SLACK_US:
            fail(f"{where}: {e['name']} at {e['ts']} us overlaps the end of the span around it")
        ends.append(e["ts"] + e["dur"])


def check(path, ops, steps):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        fail(f"{path} has no traceEvents list")
    spans = [e for e in events if e.get("ph") == "X"]
    for e in spans:
        for key, kind in (("name", str), ("cat", str), ("pid", int), ("tid", int), ("ts", (int, float)),
                          ("dur", (int, float)), ("args", dict)):
            if not isinstance(e.get(key), kind):
                fail(f"an event lacks a good '{key}': {e}")
        if e["dur"] < 0:
            fail(f"a negative duration: {e}")
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    reporting = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name" and
                 e["pid"] > 0 and e["args"]["name"] == "ran"}

    host = [e for e in spans if e["pid"] == 0]
    for tid in {e["tid"] for e in host}:
        nested([e for e in host if e["tid"] == tid], f"host thread {tid}")
    calls = {e["args"]["id"]: e for e in host if e["cat"] == "op" and e["args"].get("id")}
    ran = collections.Counter()
    for pid in sorted({e["pid"] for e in spans if e["pid"] > 0}):
        runs = [e for e in spans if e["pid"] == pid]
        for before, after in zip(runs, runs[1:]):
            if before["ts"] + before["dur"] > after["ts"] + SLACK_US:
                fail(f"{names.get(pid)}: {before['name']} and {after['name']} overlap or are out of order")
        for r in runs:
            if "id" in r["args"]:
                ran[r["args"]["id"]] += 1
                call = calls.get(r["args"]["id"])
                if call and not call["ts"] <= r["args"]["queued_us"] <= r["ts"]:
                    fail(f"{names.get(pid)}: {r['name']} ran at {r['ts']} us, before it was queued")
    for id_, call in calls.items():
        device_pid = next((p for p, n in names.items() if n.startswith(call["args"]["device"] + " ")), None)
        if device_pid in reporting and ran[id_] != 1:
            fail(f"{call['name']} (id {id_}) on {call['args']['device']} ran {ran[id_]} times")

    called = collections.Counter(e["name"] for e in host if e["cat"] == "op")
    for op in ops:
        if not called[op]:
            fail(f"no call of {op}; the calls: {dict(called)}")
    if steps:
        regions = [e for e in host if e["cat"] == "region" and e["name"].startswith("step ")]
        if len(regions) != steps:
            fail(f"{len(regions)} step regions, not {steps}")
        kinds = []
        for r in regions:
            inside = [e["name"] for e in host if e["cat"] == "op" and e["tid"] == r["tid"] and
                      r["ts"] <= e["ts"] and e["ts"] + e["dur"] <= r["ts"] + r["dur"] + SLACK_US]
            if not inside:
                fail(f"{r['name']} holds no op call")
            kinds.append(collections.Counter(inside))
        for r, k in zip(regions[1:], kinds[1:]):
            if k != kinds[0]:
                fail(f"{r['name']} called {sorted((k - kinds[0]).elements())} more and "
                     f"{sorted((kinds[0] - k).elements())} fewer than {regions[0]['name']}")
    with open(summary_path(path), encoding="utf-8") as f:
        summary = f.read()
    if not summary.startswith("Plexus trace: "):
        fail("the summary does not start with 'Plexus trace: '")
    print(summary)
    print(f"check_trace.py: {path}: {len(spans)} spans, {len(calls)} op calls with an id, "
          f"{sum(ran.values())} runs reported, all in order")


def main(argv):
    if "--" not in argv:
        fail(__doc__)
    cut = argv.index("--")
    options, program = argv[:cut], argv[cut + 1:]
    path, ops, steps = None, [], 0
    for i in range(0, len(options) - 1, 2):
        if options[i] == "--trace":
            path = options[i + 1]
        elif options[i] == "--ops":
            ops = options[i + 1].split(",")
        elif options[i] == "--steps":
            steps = int(options[i + 1])
    if not path or not program:
        fail(__doc__)
    for old in (path, summary_path(path)):
        if os.path.exists(old):
            os.remove(old)
    run = subprocess.run(program, check=False)
    if run.returncode != 0:
        fail(f"{program[0]} exited with status {run.returncode}")
    check(path, ops, steps)


if __name__ == "__main__":
    main(sys.argv[1:])
