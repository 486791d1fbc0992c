#!/usr/bin/env python3
"""Writes the small corpus of specs/xml/synthesis.exp: sensor event logs
(three files, one gzipped), seeded, so the committed files can be remade
byte for byte: python3 specs/xml/make-corpus.py"""

import gzip
import os
import random

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
KINDS = [("reading", 0.7), ("alarm", 0.2), ("maintenance", 0.1)]
SITES = ["north-hall", "south-hall", "east-yard", "pump-house"]
STATES = ["ok", "degraded", "offline"]


def pick(rng, pairs):
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def event(rng, n):
    kind = pick(rng, KINDS)
    site = rng.choices(SITES, weights=[4, 3, 2, 1])[0]
    ts = 1_700_000_000 + n * 7 + rng.randint(0, 6)
    parts = [f'<event kind="{kind}" ts="{ts}"><device site="{site}" model="TX-{rng.randint(1, 3)}">']
    parts.append(f"<temperature>{rng.gauss(21.0, 2.5):.2f}</temperature>")
    parts.append(f"<humidity>{min(99.0, rng.gammavariate(9.0, 5.0)):.1f}</humidity>")
    parts.append(f"<packets>{sum(1 for _ in range(400) if rng.random() < 0.3)}</packets>")
    parts.append(f"<state>{rng.choices(STATES, weights=[8, 2, 1])[0]}</state></device>")
    if kind == "alarm":
        parts.append(f'<alarm level="{rng.choice(["minor", "major"])}"><message>threshold exceeded</message></alarm>')
    elif kind == "maintenance":
        parts.append(f"<note>filter replaced</note><duration>{rng.expovariate(1 / 45.0):.0f}</duration>")
    parts.append("</event>")
    return "".join(parts)


def main():
    rng = random.Random(20240651)
    os.makedirs(HERE, exist_ok=True)
    n = 0
    for name, count in [("events-1.xml", 400), ("events-2.xml", 400), ("events-3.xml.gz", 400)]:
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<log>"]
        for _ in range(count):
            lines.append(event(rng, n))
            n += 1
        lines.append("</log>\n")
        data = "\n".join(lines).encode()
        path = os.path.join(HERE, name)
        if name.endswith(".gz"):
            with open(path, "wb") as f:
                # mtime 0: the same bytes on every run.
                f.write(gzip.compress(data, mtime=0))
        else:
            with open(path, "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
