#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rst_lint: parse every reStructuredText file given with docutils and report
what would break or garble it (malformed tables, short title underlines,
broken references, bad indentation...). Exits 1 on any finding.

   tests/style/rst_lint.py Documentation/*.rst

Documentation/ is written for Sphinx, which plain docutils does not know:
Sphinx's roles and directives (:doc:, toctree, kernel-doc, ...) are accepted
as they are, and a citation ([ZHMM04]_) may be defined in another file of
the set, as Sphinx allows.
"""
import io
import re
import sys

import docutils.core
import docutils.utils

SPHINX_ROLES = {"doc", "ref", "term", "option", "envvar", "file", "command",
                "program", "manpage", "c:func", "c:type", "c:macro", "c:member"}
SPHINX_DIRECTIVES = {"toctree", "kernel-doc", "code-block", "only", "index",
                     "glossary", "literalinclude", "c:function", "c:type",
                     "c:macro", "c:member", "c:struct", "seealso"}


def citations(text):
    return {m.group(1).lower() for m in re.finditer(r"^\.\. \[([^\]#*][^\]]*)\]", text, re.M)}


def lint(path, text, known_citations):
    stream = io.StringIO()
    docutils.core.publish_doctree(
        text, source_path=path,
        settings_overrides={"report_level": 2, "halt_level": 5,
                            "warning_stream": stream,
                            "file_insertion_enabled": False,
                            "raw_enabled": False})
    findings = []
    lines = stream.getvalue().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(.*?):(\d+): \((\w+)/\d\) (.*)$", line)
        i += 1
        if not m:
            continue
        # the message's continuation lines (context) up to the next message
        body = [m.group(4)]
        while i < len(lines) and not re.match(r"^.*?:\d+: \(\w+/\d\) ", lines[i]):
            body.append(lines[i])
            i += 1
        msg = m.group(4)
        role = re.match(r'(?:Unknown interpreted text role|No role entry for) "([^"]+)"', msg)
        if role and role.group(1) in SPHINX_ROLES:
            continue
        if msg.startswith('Trying "') and "as canonical role name" in msg:
            continue
        directive = re.match(r'Unknown directive type "([^"]+)"', msg)
        if directive and directive.group(1) in SPHINX_DIRECTIVES:
            continue
        if msg.startswith('No directive entry for "'):
            continue
        target = re.match(r'Unknown target name: "([^"]+)"', msg)
        if target and target.group(1).lower() in known_citations:
            continue
        findings.append(f"{path}:{m.group(2)}: {m.group(3)}: " + "\n    ".join(body).rstrip())
    return findings


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    texts = {p: open(p, encoding="utf-8").read() for p in paths}
    known = set().union(*(citations(t) for t in texts.values()))
    findings = []
    for p, t in texts.items():
        findings += lint(p, t, known)
    for f in findings:
        print(f)
    if findings:
        print(f"rst_lint: {len(findings)} finding(s) in {len(paths)} files")
        return 1
    print(f"rst_lint: {len(paths)} files clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
