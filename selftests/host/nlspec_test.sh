#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation/netlink/specs/ordma.yaml says what the code does: the
# family, version and group of include/uapi/linux/ordma.h, every enum of
# its "Generic netlink" banner (names and values), and kernel/nl.c's
# request policies (attributes, types, string lengths), admin flags and
# handlers. TAP output.

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
exec python3 - <<'PY'
import re
import sys

import yaml

spec = yaml.safe_load(open("Documentation/netlink/specs/ordma.yaml"))
uapi = open("include/uapi/linux/ordma.h").read()
nl = open("kernel/nl.c").read()
results = []


def check(name, problems):
    results.append((name, problems))


def c_name(prefix, name):
    return (prefix + name).upper().replace("-", "_")


def uapi_enum(name):
    """NAME -> value of the members of enum @name, in order."""
    body = re.search(r"enum %s \{(.*?)\};" % name, uapi, re.S).group(1)
    out, val = {}, 0
    for m in re.finditer(r"^\s*(\w+)(?:\s*=\s*([^,]+))?,", body, re.M):
        if m.group(2):
            expr = m.group(2).strip()
            val = out[expr.split()[0]] - 1 if expr.endswith("- 1") else int(expr, 0)
        out[m.group(1)] = val
        val += 1
    return out


def spec_values(entries, prefix, start):
    out, val = {}, start
    for e in entries:
        name = e if isinstance(e, str) else e["name"]
        if not isinstance(e, str) and "value" in e:
            val = e["value"]
        out[c_name(prefix, name)] = val
        val += 1
    return out


def compare(what, want, have):
    p = []
    for k, v in want.items():
        if have.get(k) != v:
            p.append("%s: spec %s = %s, header %s" % (what, k, v, have.get(k)))
    for k in have:
        if k not in want and "UNSPEC" not in k and "MAX" not in k:
            p.append("%s: %s is in the header only" % (what, k))
    return p


# Family, version, group.
p = []
if spec["name"] != re.search(r'#define ORDMA_GENL_NAME\s+"(\w+)"', uapi).group(1):
    p.append("family name")
if spec["version"] != int(re.search(r"#define ORDMA_GENL_VERSION\s+(\d+)", uapi).group(1)):
    p.append("version")
groups = [g["name"] for g in spec["mcast-groups"]["list"]]
if groups != [re.search(r'#define ORDMA_GENL_MCGRP_EVENTS\s+"(\w+)"', uapi).group(1)]:
    p.append("multicast groups %s" % groups)
check("family name, version and multicast group", p)

# Enums.
ops = spec["operations"]
check("commands: names and values",
      compare("cmd", spec_values(ops["list"], ops["name-prefix"], 1),
              uapi_enum("ordma_nl_cmd")))
sets = {s["name"]: s for s in spec["attribute-sets"]}
for sname, enum in (("dev", "ordma_nl_attr"), ("model", "ordma_nl_model_attr")):
    s = sets[sname]
    check("attribute set %s: names and values" % sname,
          compare(sname, spec_values(s["attributes"], s["name-prefix"], 1),
                  uapi_enum(enum)))
d = spec["definitions"][0]
check("port states: names and values",
      compare("port", spec_values(d["entries"], d["name-prefix"], 0),
              uapi_enum(d["enum-name"])))

# Request policies of nl.c against the spec's request attributes.
lens = {"IB_DEVICE_NAME_MAX - 1": 63,
        "ORDMA_NL_MODE_LEN": int(re.search(r"#define ORDMA_NL_MODE_LEN\s+(\d+)", nl).group(1))}
types = {"string": "NLA_NUL_STRING", "u32": "NLA_U32", "u64": "NLA_U64"}


def policy(name):
    body = re.search(r"%s\[[^\]]*\] = \{(.*?)\n\};" % name, nl, re.S).group(1)
    out = {}
    for m in re.finditer(r"\[(ORDMA_NL_A_\w+)\] = \{ \.type = (\w+)(?:,\s*\.len = ([^}]+?))?\s*\}", body):
        out[m.group(1)] = (m.group(2), m.group(3) and lens[m.group(3).strip()])
    return out


attrs = {a["name"]: a for a in sets["dev"]["attributes"]}
op_policy = {}
for m in re.finditer(r"\{\s*\.cmd = (\w+),(.*?)\n\t\}", nl, re.S):
    op_policy[m.group(1)] = m.group(2)
p = []
for op in ops["list"]:
    cmd = c_name(ops["name-prefix"], op["name"])
    body = op_policy.get(cmd)
    if "event" in op:
        if body:
            p.append("%s: an event, but nl.c has an op" % cmd)
        continue
    if not body:
        p.append("%s: no op in nl.c" % cmd)
        continue
    for kind, fn in (("do", ".doit"), ("dump", ".dumpit")):
        if (kind in op) != (fn in body):
            p.append("%s: %s in the spec %s, %s in nl.c %s" % (cmd, kind, kind in op, fn, fn in body))
    if ("admin-perm" in op.get("flags", [])) != ("GENL_ADMIN_PERM" in body):
        p.append("%s: admin-perm differs" % cmd)
    pol = policy(re.search(r"\.policy = (\w+)", body).group(1))
    for kind in ("do", "dump"):
        if kind not in op:
            continue
        want = {}
        for a in op[kind]["request"]["attributes"]:
            t = attrs[a]["type"]
            want[c_name("ordma-nl-a-", a)] = (types[t], attrs[a].get("checks", {}).get("max-len"))
        if want != pol:
            p.append("%s %s: spec %s, nl.c %s" % (cmd, kind, want, pol))
check("requests: policies, handlers and admin-perm of nl.c", p)

print("TAP version 13")
print("1..%d" % len(results))
bad = 0
for i, (name, problems) in enumerate(results, 1):
    for q in problems:
        print("# " + q)
    print("%sok %d %s" % ("not " if problems else "", i, name))
    bad += bool(problems)
sys.exit(1 if bad else 0)
PY
