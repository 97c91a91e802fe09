#!/usr/bin/env python3
"""bench/compile/trace_attr.py: where a translation unit's template instantiation time goes,
from a clang -ftime-trace file (bench/README.md, "Compile time").

  clang++ <flags> -O0 -ftime-trace -ftime-trace-granularity=50 -c bench/compile/session_step.cpp \
      -o /tmp/a.o          # writes /tmp/a.json
  bench/compile/trace_attr.py /tmp/a.json hookfuse 30

Prints, for every instantiated function or class whose name starts with PREFIX (template
arguments dropped), the time spent instantiating it and everything it pulled in (Eigen, std)
except what is attributed to another PREFIX instantiation nested inside it, and how many
instantiations there were; then the clang totals (front end, headers, back end).
"""
import collections
import json
import sys


def strip_args(name):
    out, depth = [], 0
    for c in name:
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def main():
    path, prefix = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    events = json.load(open(path))["traceEvents"]
    totals = {e["name"]: e["dur"] / 1e6 for e in events
              if e.get("ph") == "X" and e["name"].startswith("Total ")}
    ev = sorted((e for e in events if e.get("ph") == "X" and not e["name"].startswith("Total ")),
                key=lambda e: (e["ts"], -e["dur"]))
    parent, stack = {}, []
    for i, e in enumerate(ev):
        while stack and ev[stack[-1]]["ts"] + ev[stack[-1]]["dur"] <= e["ts"]:
            stack.pop()
        parent[i] = stack[-1] if stack else None
        stack.append(i)

    def match(i):
        e = ev[i]
        return (e["name"] in ("InstantiateFunction", "InstantiateClass")
                and e.get("args", {}).get("detail", "").startswith(prefix))

    own = {i: ev[i]["dur"] for i in range(len(ev)) if match(i)}
    for i in own:
        p = parent[i]
        while p is not None and not match(p):
            p = parent[p]
        if p is not None:
            own[p] -= ev[i]["dur"]
    seconds, count = collections.defaultdict(float), collections.Counter()
    for i, d in own.items():
        key = ev[i]["name"][len("Instantiate")] + " " + strip_args(ev[i]["args"]["detail"])[:140]
        seconds[key] += d / 1e6
        count[key] += 1
    for key, s in sorted(seconds.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{s:7.2f} s {count[key]:5d}x {key}")
    print(f"{sum(seconds.values()):7.2f} s in all under {prefix!r}")
    for name in ("ExecuteCompiler", "Frontend", "Source", "InstantiateFunction",
                 "InstantiateClass", "Backend"):
        print(f"{totals.get('Total ' + name, 0):7.2f} s Total {name}")


if __name__ == "__main__":
    main()
