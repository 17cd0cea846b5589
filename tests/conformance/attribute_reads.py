#!/usr/bin/python3
"""Every attribute is honoured or refused: checks that each attribute the ONNX schema (opset
17) defines for an op in Lathe's table is looked up by Lathe's rules, or is listed in
engine/graph/op_attributes.def (inert, or refused away from its default). An attribute
that no rule reads and that is not listed would be ignored silently: a wrong answer.

The reads come from LATHE_RECORD_ATTRIBUTES files written while the conformance suite and
the ORT oracle models ran (READS...). A listed attribute that a rule does read is reported
too, so the list cannot go stale.

Usage: attribute_reads.py OPS_DEF OP_ATTRIBUTES_DEF READS...
"""
import re
import sys

import onnx.defs


def main():
    ops_def, attrs_def, *read_files = sys.argv[1:]
    ops = [m.group(1) for m in re.finditer(r"^LATHE_OP\((\w+),", open(ops_def).read(), re.M)]
    listed = {(m.group(1), m.group(2)) for m in
              re.finditer(r"^LATHE_OP_ATTRIBUTE\((\w+), (\w+),", open(attrs_def).read(), re.M)}
    read = set()
    for path in read_files:
        try:
            with open(path) as f:
                read |= {tuple(line.split()) for line in f if len(line.split()) == 2}
        except FileNotFoundError:
            print(f"no reads recorded in {path}: did the test that writes it run?")
            return 1
    problems = []
    checked = 0
    for op in ops:
        schema = onnx.defs.get_schema(op, 17)
        for attr in sorted(schema.attributes):
            checked += 1
            if (op, attr) in listed and (op, attr) in read:
                problems.append(f"{op}.{attr} is listed as not read, but a rule reads it")
            elif (op, attr) not in listed and (op, attr) not in read:
                problems.append(f"{op}.{attr}: no rule read it and op_attributes.def does not "
                                f"list it (ignored silently, or not covered by a test)")
    for p in problems:
        print("FAIL  " + p)
    print(f"{checked - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
