#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation/netlink/specs/ordma.yaml says what the code does: the
# family, version and group of include/uapi/linux/ordma.h, every enum of
# its "Generic netlink" banner (names and values), and kernel/nl.c's
# request policies (attributes, types, string lengths, the ranges of
# NLA_POLICY_FULL_RANGE, NLA_POLICY_MAX and NLA_POLICY_MIN against the
# spec's checks), admin
# flags and handlers, and the attributes its replies and events put. TAP
# output.

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 1
exec python3 - <<'PY'
import re
import sys

import yaml

spec = yaml.safe_load(open("Documentation/netlink/specs/ordma.yaml"))
uapi = open("include/uapi/linux/ordma.h").read()
nl = open("kernel/nl.c").read()
ordma_h = open("kernel/ordma.h").read()
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


def compare(what, want, have, skip=()):
    """@skip: the header's names the spec lists under no entry (UNSPEC, the
    count and the max), by name: an entry named *_MAX_* is still one."""
    p = []
    for k, v in want.items():
        if have.get(k) != v:
            p.append("%s: spec %s = %s, header %s" % (what, k, v, have.get(k)))
    for k in have:
        if k not in want and k not in skip:
            p.append("%s: %s is in the header only" % (what, k))
    return p


def sentinels(prefix, *names):
    return {c_name(prefix, "unspec")} | {c_name("", n) for n in names}


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
              uapi_enum("ordma_nl_cmd"),
              sentinels(ops["name-prefix"], ops["cmd-cnt-name"],
                        ops["cmd-max-name"])))
sets = {s["name"]: s for s in spec["attribute-sets"]}
for sname, enum in (("dev", "ordma_nl_attr"), ("model", "ordma_nl_model_attr")):
    s = sets[sname]
    check("attribute set %s: names and values" % sname,
          compare(sname, spec_values(s["attributes"], s["name-prefix"], 1),
                  uapi_enum(enum),
                  sentinels(s["name-prefix"], s["attr-cnt-name"],
                            s["attr-max-name"])))
for d in spec["definitions"]:
    check("enum %s: names and values" % d["name"],
          compare(d["name"], spec_values(d["entries"], d["name-prefix"], 0),
                  uapi_enum(d["enum-name"])))

# Request policies of nl.c against the spec's request attributes.
types = {"string": "NLA_NUL_STRING", "u32": "NLA_U32", "u64": "NLA_U64"}
sizes = {"SZ_4K": 4096, "SZ_1M": 1 << 20, "SZ_1G": 1 << 30}


def value(expr):
    """A constant of nl.c's policies: a number, a shift of one, a BIT(), an
    SZ_, a #define, an enum."""
    expr = expr.strip()
    if expr == "IB_DEVICE_NAME_MAX - 1":
        return 63
    if re.fullmatch(r"\d+", expr):
        return int(expr)
    m = re.fullmatch(r"\(\s*(\d+)U?L{0,2}\s*<<\s*(\d+)\s*\)", expr)
    if m:
        return int(m.group(1)) << int(m.group(2))
    m = re.fullmatch(r"BIT(?:_ULL)?\(\s*(\d+)\s*\)", expr)
    if m:
        return 1 << int(m.group(1))
    if expr in sizes:
        return sizes[expr]
    m = re.search(r"^#define %s[ \t]+(.+?)[ \t]*(?:/\*.*)?$" % re.escape(expr),
                  ordma_h, re.M)
    if m:
        return value(m.group(1))
    for e in ("ordma_nl_mode", "ordma_nl_port_state"):
        vals = uapi_enum(e)
        if expr in vals:
            return vals[expr]
    raise KeyError(expr)


ranges = {m.group(1): (value(m.group(2)), value(m.group(3)))
          for m in re.finditer(r"static struct netlink_range_validation (\w+)[^=]*= \{"
                               r"\s*\.min = (\w+),\s*\.max = (\w+),\s*\};", nl)}


def policy(name):
    """ATTR -> (type, max-len, min, max) of a policy of nl.c."""
    body = re.search(r"%s\[[^\]]*\] = \{(.*?)\n\};" % name, nl, re.S).group(1)
    out = {}
    for m in re.finditer(r"\[(ORDMA_NL_A_\w+)\] =\s*(.*?)(?=,\n\t\[|,?\n?$)", body, re.S):
        attr, e = m.group(1), " ".join(m.group(2).split())
        p = re.fullmatch(r"\{ \.type = (\w+)(?:, \.len = ([^}]+?))? \}", e)
        if p:
            out[attr] = (p.group(1), p.group(2) and value(p.group(2)), None, None)
            continue
        p = re.fullmatch(r"NLA_POLICY_FULL_RANGE\((\w+), &(\w+)\)", e)
        if p:
            out[attr] = (p.group(1), None) + ranges[p.group(2)]
            continue
        p = re.fullmatch(r"NLA_POLICY_MAX\((\w+), (\w+)\)", e)
        if p:
            out[attr] = (p.group(1), None, None, value(p.group(2)))
            continue
        p = re.fullmatch(r"NLA_POLICY_MIN\((\w+), (\w+)\)", e)
        if p:
            out[attr] = (p.group(1), None, value(p.group(2)), None)
            continue
        out[attr] = ("unparsed: " + e, None, None, None)
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
            ck = attrs[a].get("checks", {})
            want[c_name("ordma-nl-a-", a)] = (types[t], ck.get("max-len"),
                                              ck.get("min"), ck.get("max"))
        if want != pol:
            p.append("%s %s: spec %s, nl.c %s" % (cmd, kind, want, pol))
check("requests: policies, handlers and admin-perm of nl.c", p)


def puts(fn):
    """ATTRs function @fn of nl.c puts, with those of the ordma_nl_put_*()
    it calls (the nest of the model by its own attribute only)."""
    body = re.search(r"^static int %s\(.*?^\}" % fn, nl, re.S | re.M).group(0)
    out = set(re.findall(r"\b(?:nla_put\w*|nla_nest_start|ordma_nl_put_u64)"
                         r"\(\s*skb,\s*(ORDMA_NL_A_\w+)", body))
    for callee in re.findall(r"\b(ordma_nl_put_\w+)\(\s*skb,\s*[a-z]", body):
        out |= puts(callee)
    # An address: the attributes it is put in are the call's arguments.
    for args in re.findall(r"\bordma_nl_put_addr\(\s*skb,([^;]*?)\)\s*(?:\|\||;)", body, re.S):
        out |= set(re.findall(r"ORDMA_NL_A_\w+", args))
    return out


# What each reply and event carries: DEV_GET every part of
# ordma_nl_fill(), POOL_GET its name and pool alone, CHAN_UP no errno.
chan = puts("ordma_nl_fill_chan")
sent = {
    "dev-get": puts("ordma_nl_fill"),
    "pool-get": {"ORDMA_NL_A_DEV_NAME"} | puts("ordma_nl_put_pool"),
    "dev-add": puts("ordma_nl_fill_dev"),
    "dev-del": puts("ordma_nl_fill_dev"),
    "pool-changed": puts("ordma_nl_fill_pool"),
    "chan-up": chan - {"ORDMA_NL_A_ERRNO"},
    "chan-down": chan,
    "chan-get": puts("ordma_nl_fill_chan_stat"),
    "listener-get": puts("ordma_nl_fill_listener"),
    "window-get": puts("ordma_nl_fill_window"),
}
p = []
for op in ops["list"]:
    if op["name"] not in sent:
        continue
    for kind in ("do", "dump", "event"):
        if kind not in op:
            continue
        msg = op[kind] if kind == "event" else op[kind]["reply"]
        want = {c_name("ordma-nl-a-", a) for a in msg["attributes"]}
        have = sent[op["name"]]
        for a in sorted(want - have):
            p.append("%s %s: %s in the spec, not put by nl.c" % (op["name"], kind, a))
        for a in sorted(have - want):
            p.append("%s %s: %s put by nl.c, not in the spec" % (op["name"], kind, a))
check("replies and events: the attributes nl.c puts", p)

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
