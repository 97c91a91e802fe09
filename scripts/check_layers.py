#!/usr/bin/env python3
"""Checks that the headers of include/hookfuse/ include one another down the layer order only.

The order is the code block of the `## Layers` section of README.md (the same text a reader
sees, so the two cannot drift). Each line of that block is one level, the top first; each
word on a line is a unit of that level: `name/` is the folder include/hookfuse/name/ (its
`detail/` subfolders included), `name.hpp` a header directly in include/hookfuse/. `#` starts
a comment. Units on one line are separate: neither includes the other unless the line allows
it in parentheses, `(data/ -> io/)` (data/ may include io/, not the reverse).

A header may include headers of its own unit and of any lower level. The check fails (exit
status 1, one line per problem on stdout) on:
  - an include that points up the order or sideways between separate units;
  - a header, or an included header, whose unit the block does not list;
  - an include of a hookfuse header that does not exist;
  - an include cycle between files (printed once per cycle, with the line of every include).

Usage: check_layers.py [--root DIR] [--readme FILE]
  --root    the tree whose include/hookfuse/**.hpp are checked (default: this repository)
  --readme  the README.md holding `## Layers` (default: ROOT/README.md)
Standard library only.
"""

import argparse
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])(hookfuse/[^">]+)[">]')


class LayerError(Exception):
    pass


class Layers:
    """The levels of README.md's `## Layers` block."""

    def __init__(self, readme_path):
        self.readme_path = readme_path
        self.level_of = {}  # unit -> level index, 0 the top
        self.allowed = set()  # (from unit, to unit) sideways includes allowed
        self.levels = []  # list of lists of units
        self._parse(readme_path)

    def _block(self, path):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise LayerError(f"{path}: cannot read: {e.strerror}")
        start = None
        for i, line in enumerate(lines):
            if line.strip() == "## Layers":
                start = i + 1
                break
        if start is None:
            raise LayerError(f"{path}: no '## Layers' section")
        block = None
        for i in range(start, len(lines)):
            if lines[i].startswith("## "):
                break
            if lines[i].startswith("```"):
                block = []
                for j in range(i + 1, len(lines)):
                    if lines[j].startswith("```"):
                        return block
                    block.append((j + 1, lines[j]))
                raise LayerError(f"{path}:{i + 1}: the '## Layers' code block is not closed")
        raise LayerError(f"{path}: the '## Layers' section has no code block")

    def _parse(self, path):
        for lineno, raw in self._block(path):
            line = re.sub(r"(^|\s)#.*$", "", raw).strip()
            if not line:
                continue
            allow_text = ""
            m = re.fullmatch(r"([^()]*?)\s*\(([^()]*)\)", line)
            if m:
                line, allow_text = m.group(1), m.group(2)
            elif "(" in line or ")" in line:
                raise LayerError(f"{path}:{lineno}: unbalanced parentheses: {raw.strip()}")
            units = line.split()
            if not units:
                raise LayerError(f"{path}:{lineno}: a level without units: {raw.strip()}")
            for u in units:
                if not re.fullmatch(r"[A-Za-z0-9_]+/|[A-Za-z0-9_]+\.hpp", u):
                    raise LayerError(f"{path}:{lineno}: '{u}' is neither 'folder/' nor 'header.hpp'")
                if u in self.level_of:
                    raise LayerError(f"{path}:{lineno}: '{u}' is listed twice")
                self.level_of[u] = len(self.levels)
            for pair in filter(None, (p.strip() for p in allow_text.split(","))):
                ends = [e.strip() for e in pair.split("->")]
                if len(ends) != 2 or not all(ends):
                    raise LayerError(f"{path}:{lineno}: '{pair}' is not 'unit/ -> unit/'")
                for e in ends:
                    if e not in units:
                        raise LayerError(f"{path}:{lineno}: '{pair}': '{e}' is not on this line")
                self.allowed.add((ends[0], ends[1]))
            self.levels.append(units)
        if not self.levels:
            raise LayerError(f"{path}: the '## Layers' code block lists no level")

    def rule(self, src, dst):
        """None when a header of `src` may include one of `dst`, else the rule it breaks."""
        if src == dst:
            return None
        ls, ld = self.level_of[src], self.level_of[dst]
        if ld > ls:
            return None
        if ld < ls:
            return f"points up the layer order ({dst} is above {src})"
        if (src, dst) in self.allowed:
            return None
        others = [f"{a} -> {b}" for (a, b) in sorted(self.allowed) if a in self.levels[ls]]
        allowed = "; that level allows " + ", ".join(others) if others else ""
        return f"sideways between separate layers of one level ({src} and {dst}){allowed}"


def unit_of(rel):
    """The unit of a path relative to include/hookfuse/: 'hooks/' or 'config.hpp'."""
    parts = rel.split("/")
    return parts[0] + "/" if len(parts) > 1 else parts[0]


def scan(include_dir):
    """{path relative to include/hookfuse/: [(line, included path relative to include/hookfuse/)]}"""
    base = os.path.join(include_dir, "hookfuse")
    if not os.path.isdir(base):
        raise LayerError(f"{base}: no such directory")
    headers = {}
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".hpp"):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            incs = []
            with open(full, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE_RE.match(line)
                    if m:
                        incs.append((lineno, m.group(2)[len("hookfuse/"):]))
            headers[rel] = incs
    return headers


def find_cycles(headers):
    """One cycle per strongly connected component with a cycle: [[(file, line), ...], ...]
    where each file includes the next at `line` and the last includes the first."""
    graph = {h: [] for h in headers}
    for h, incs in headers.items():
        for line, dst in incs:
            if dst in headers:
                graph[h].append((dst, line))
    # Tarjan's algorithm, iterative.
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            edges = graph[node]
            while i < len(edges):
                nxt = edges[i][0]
                i += 1
                if nxt not in index:
                    work.append((node, i))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                comps.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    cycles = []
    for comp in comps:
        members = set(comp)
        start = min(comp)
        self_loop = [line for dst, line in graph[start] if dst == start]
        if len(comp) == 1:
            if self_loop:
                cycles.append([(start, self_loop[0])])
            continue
        # Shortest way from start back to start inside the component (breadth first).
        prev = {}
        frontier = [start]
        found = False
        while frontier and not found:
            nxt_frontier = []
            for node in frontier:
                for dst, line in sorted(graph[node]):
                    if dst not in members:
                        continue
                    if dst == start:
                        prev[start] = (node, line)
                        found = True
                        break
                    if dst not in prev:
                        prev[dst] = (node, line)
                        nxt_frontier.append(dst)
                if found:
                    break
            frontier = nxt_frontier
        path = []
        node = start
        while True:
            p, line = prev[node]
            path.append((p, line))
            node = p
            if node == start:
                break
        path.reverse()
        cycles.append(path)
    return sorted(cycles)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="tree whose include/hookfuse/**.hpp are checked")
    parser.add_argument("--readme", help="README.md holding '## Layers' (default: ROOT/README.md)")
    args = parser.parse_args(argv)
    root = args.root
    readme = args.readme or os.path.join(root, "README.md")
    try:
        layers = Layers(readme)
        headers = scan(os.path.join(root, "include"))
    except LayerError as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2

    def shown(rel):
        return "include/hookfuse/" + rel

    problems = []
    unlisted = set()
    count = 0
    for h in sorted(headers):
        src = unit_of(h)
        if src not in layers.level_of:
            unlisted.add(src)
            continue
        for line, dst_rel in headers[h]:
            count += 1
            dst = unit_of(dst_rel)
            where = f"{shown(h)}:{line}: {src} includes hookfuse/{dst_rel}"
            if dst_rel not in headers:
                problems.append(f"{where}: no such header")
                continue
            if dst not in layers.level_of:
                unlisted.add(dst)
                continue
            broken = layers.rule(src, dst)
            if broken:
                problems.append(f"{where} ({dst}): {broken}")
    for u in sorted(unlisted):
        kind = "folder" if u.endswith("/") else "header"
        problems.append(f"{shown(u)}: this {kind} is not listed in {os.path.basename(readme)}'s '## Layers' block")
    for cycle in find_cycles(headers):
        steps = " -> ".join(f"{shown(f)}:{line}" for f, line in cycle)
        problems.append(f"include cycle: {steps} -> {shown(cycle[0][0])}")

    if problems:
        for p in problems:
            print(p)
        print(f"check_layers: {len(problems)} problem(s) in {len(headers)} headers "
              f"(layer order: {readme}, '## Layers')", file=sys.stderr)
        return 1
    print(f"check_layers: {count} includes in {len(headers)} headers follow the layer order of "
          f"{readme} ('## Layers'), no include cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
