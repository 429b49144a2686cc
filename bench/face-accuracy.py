#!/usr/bin/python3
"""Face accuracy from `biounlock-face --describe` output (scripts/bench --face-accuracy).

Reads lines `PATH face N v1..v128` / `PATH none` / `PATH bad ...` on stdin for the images
scripts/face-images --all writes. People: astronaut and each of the 100 LFW faces, taken to be
distinct people (lfw_subset gives no names: the figures assume no one appears twice). For each
threshold: false accepts over every pair of distinct people (originals against originals), false
rejects over each person's altered copies against the original. Prints a JSON object."""
import json, math, re, sys

thresholds = [float(t) for t in sys.argv[1:]] or [0.4, 0.45, 0.5, 0.55, 0.6]
desc, undetected, bad = {}, [], []
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 2:
        continue
    name = parts[0].rsplit("/", 1)[-1][:-4]
    if parts[1] == "face":
        desc[name] = [float(x) for x in parts[3:131]]
    elif parts[1] == "none":
        undetected.append(name)
    else:
        bad.append(name)

def dist(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))

people = sorted(n for n in desc if re.fullmatch(r"astronaut|lfw-\d{3}", n))
all_people = sorted(set(re.fullmatch(r"(astronaut|lfw-\d{3}).*", n).group(1) for n in list(desc) + undetected
                        if re.fullmatch(r"(astronaut|lfw-\d{3}).*", n)))
impostor = [dist(desc[a], desc[b]) for i, a in enumerate(people) for b in people[i + 1:]]
genuine = []
for p in people:
    for kind in ("bright", "dark", "blur", "rot", "crop"):
        q = "%s-%s" % (p, kind)
        if q in desc:
            genuine.append((kind, dist(desc[p], desc[q])))
altered_undetected = [n for n in undetected if "-" in n.replace("lfw-", "")]
result = {
    "people": len(all_people), "people_detected": len(people),
    "impostor_pairs": len(impostor), "genuine_pairs": len(genuine),
    "altered_undetected": len(altered_undetected),
    "impostor_min": round(min(impostor), 3) if impostor else None,
    "genuine_max": round(max(d for _, d in genuine), 3) if genuine else None,
    "thresholds": {},
}
for t in thresholds:
    fa = sum(1 for d in impostor if d <= t)
    fr = sum(1 for _, d in genuine if d > t)
    by_kind = {}
    for kind, d in genuine:
        k = by_kind.setdefault(kind, [0, 0])
        k[0] += 1
        k[1] += d > t
    result["thresholds"]["%.2f" % t] = {
        "false_accepts": fa, "far": round(fa / len(impostor), 4) if impostor else None,
        "false_rejects": fr, "frr": round(fr / len(genuine), 4) if genuine else None,
        "false_rejects_by_alteration": {k: "%d/%d" % (v[1], v[0]) for k, v in sorted(by_kind.items())},
    }
print(json.dumps(result, indent=1))
