#!/usr/bin/python3
"""Runs plexus-bench with --json and checks what it prints: the output
against bench/schema.json (a JSON Schema subset, checked here with the
standard library alone), every ratio against its two figures, and the rows
of an expectations file (bench/<group>.json) in order: each must appear, in
that order, with its unit and baseline (other rows may come between, e.g.
PyTorch's where it is installed). The figures themselves are not judged:
timings belong to the bench.

usage: check_bench_json.py EXPECTATIONS BENCH [BENCH ARGUMENTS...]
"""
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def validate(value, schema, where, errors):
    kind = schema.get("type")
    if kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif kind:
        ok = isinstance(value, TYPES[kind])
    else:
        ok = True
    if not ok:
        errors.append(f"{where}: {json.dumps(value)[:80]} is not a finite {kind}" if kind == "number"
                      else f"{where}: {json.dumps(value)[:80]} is not of type {kind}")
        return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{where}: {value!r} is shorter than {schema['minLength']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{where}: {value} is below {schema['minimum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        errors.append(f"{where}: {value} is not above {schema['exclusiveMinimum']}")
    if kind == "object":
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: no {key!r}")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                validate(item, props[key], f"{where}.{key}", errors)
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected key {key!r}")
        for key, needs in schema.get("dependentRequired", {}).items():
            if key in value:
                for other in needs:
                    if other not in value:
                        errors.append(f"{where}: {key!r} without {other!r}")
    if kind == "array":
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{where}: {len(value)} items, fewer than {schema['minItems']}")
        for i, item in enumerate(value):
            validate(item, schema.get("items", {}), f"{where}[{i}]", errors)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        expected = json.load(f)
    with open(os.path.join(HERE, "bench", "schema.json")) as f:
        schema = json.load(f)
    command = sys.argv[2:] + ["--json"]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} exited with {run.returncode}\n{run.stdout}{run.stderr}")
    try:
        out = json.loads(run.stdout)
    except ValueError as e:
        sys.exit(f"plexus-bench --json printed no JSON ({e}):\n{run.stdout[:2000]}")
    errors = []
    validate(out, schema, "$", errors)
    if errors:
        sys.exit("plexus-bench --json does not follow bench/schema.json:\n  " + "\n  ".join(errors))
    for i, row in enumerate(out["results"]):
        if "ratio" in row and not math.isclose(row["ratio"], row["plexus"] / row["baseline_value"], rel_tol=1e-3):
            errors.append(f"results[{i}] ({row['name']}): ratio {row['ratio']} is not "
                          f"{row['plexus']} / {row['baseline_value']}")
    if "device" in expected and out["device"] != expected["device"]:
        errors.append(f"device {out['device']!r}, expected {expected['device']!r}")
    rows = out["results"]
    at = 0
    for want in expected["rows"]:
        while at < len(rows) and rows[at]["name"] != want["name"]:
            at += 1
        if at == len(rows):
            errors.append(f"no row {want['name']!r} (in this order, after the rows before it)")
            break
        got = rows[at]
        for key in ("unit", "baseline"):
            if key in want and got.get(key) != want[key]:
                errors.append(f"row {want['name']!r}: {key} {got.get(key)!r}, expected {want[key]!r}")
        if want.get("baseline") and "ratio" not in got:
            errors.append(f"row {want['name']!r}: no ratio")
        at += 1
    if errors:
        print(run.stdout)
        sys.exit("plexus-bench --json:\n  " + "\n  ".join(errors))
    print(f"plexus-bench --json on {out['device']}: {len(rows)} results follow the schema; "
          f"the {len(expected['rows'])} expected rows are there, in order")


if __name__ == "__main__":
    main()
