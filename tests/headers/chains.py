#!/usr/bin/env python3
"""Groups the library's headers into as few, as cheap, translation units as still prove each header compiles on its
own (tests/headers/CMakeLists.txt).

A translation unit that includes H1, H2, ..., Hn in that order checks every one of them alone when each Hk includes
all of H1..Hk-1 itself, directly or through its own includes (a chain): the headers before Hk are then exactly
what Hk would include anyway, at its top, before any code of its own, so a name Hk uses without including it is
still missing. Headers that are not ordered so go to different chains. Includes under #if are not counted (a build
may leave them out). The chains are a minimum-cost chain cover of that order: every header not the last of its
chain rides along for free, so the cover is a maximum-weight matching of each header to a later header of its
chain, weights on the earlier header (a transversal matroid: taking headers by decreasing weight with augmenting
paths is optimal); the weight of a header is the number of headers it includes, transitively, a stand-in for its
compile time.

  chains.py INCLUDE_DIR HEADER...    prints one chain per line, headers separated by commas, each chain in order
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](frenzy/[^>"]+)[>"]')
COND_OPEN = re.compile(r'^\s*#\s*if')
COND_CLOSE = re.compile(r'^\s*#\s*endif')


def direct_includes(path):
    """The frenzy headers `path` includes outside any #if block."""
    out, depth = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if COND_OPEN.match(line):
                depth += 1
            elif COND_CLOSE.match(line):
                depth -= 1
            elif depth == 0:
                m = INCLUDE.match(line)
                if m:
                    out.append(m.group(1))
    return out


def chains(root, headers):
    known = set(headers)
    inc = {h: [x for x in direct_includes(os.path.join(root, h)) if x in known] for h in headers}
    closure = {}
    for h in headers:
        seen, stack = set(), list(inc[h])
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack.extend(inc[x])
        seen.discard(h)
        closure[h] = seen
    # u may precede v when v includes u and not the other way round (a cycle of includes orders neither)
    later = {u: sorted((v for v in headers if u in closure[v] and v not in closure[u]), key=lambda v: (len(closure[v]), v))
             for u in headers}
    prev_of = {}  # v -> the header just before it in its chain

    def augment(u, seen):
        for v in later[u]:
            if v not in seen:
                seen.add(v)
                if v not in prev_of or augment(prev_of[v], seen):
                    prev_of[v] = u
                    return True
        return False

    sys.setrecursionlimit(max(1000, 4 * len(headers) + 100))
    for u in sorted(headers, key=lambda h: (-len(closure[h]), h)):
        augment(u, set())
    next_of = {u: v for v, u in prev_of.items()}
    out = []
    for first in sorted(h for h in headers if h not in prev_of):
        c = [first]
        while c[-1] in next_of:
            c.append(next_of[c[-1]])
        out.append(c)
    return out


if __name__ == "__main__":
    for c in chains(sys.argv[1], sys.argv[2:]):
        print(",".join(c))
