#!/usr/bin/env python3
"""Writes a synthetic Jepsen list-append history (EDN, one op per line) of
about SIZE_MB megabytes, for timing `elle-si convert` and `check`.

Usage: gen-list-append.py SIZE_MB OUT.edn [SEED]

Serial execution of random transactions by 16 processes (invocation then
completion), 2-8 micro-ops each, half appends, half reads; keys retire after
32 appends so lists stay short, as Jepsen's generator does; 1% :fail and 1%
:info completions."""
import random, sys

size = int(sys.argv[1]) * 1_000_000
out = open(sys.argv[2], "w")
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
lists, active, next_key, next_val = {}, list(range(64)), 64, 1
for k in active:
    lists[k] = []
written, index, procs = 0, 0, list(range(16))
while written < size:
    p = rnd.choice(procs)
    mops, inv = [], []
    for _ in range(rnd.randint(2, 8)):
        k = rnd.choice(active)
        if rnd.random() < 0.5:
            mops.append(("append", k, next_val))
            next_val += 1
        else:
            mops.append(("r", k, None))
    r = rnd.random()
    typ = "fail" if r < 0.01 else "info" if r < 0.02 else "ok"
    done = []
    for f, k, v in mops:
        if f == "append":
            if typ != "fail":
                lists[k].append(v)
            done.append("[:append %d %d]" % (k, v))
        else:
            done.append("[:r %d [%s]]" % (k, " ".join(map(str, lists[k]))) if typ == "ok" else "[:r %d nil]" % k)
    inv = " ".join("[:append %d %d]" % (k, v) if f == "append" else "[:r %d nil]" % k for f, k, v in mops)
    a = "{:index %d, :time %d, :type :invoke, :process %d, :f :txn, :value [%s]}\n" % (index, index * 1000, p, inv)
    b = "{:index %d, :time %d, :type :%s, :process %d, :f :txn, :value [%s]}\n" % (index + 1, index * 1000 + 500, typ, p, " ".join(done))
    index += 2
    out.write(a)
    out.write(b)
    written += len(a) + len(b)
    if typ == "info":
        procs[procs.index(p)] = max(procs) + 1
    for k in list(active):
        if len(lists[k]) >= 32:
            active.remove(k)
            active.append(next_key)
            lists[next_key] = []
            next_key += 1
