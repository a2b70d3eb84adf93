#!/usr/bin/env python3
"""Compiles every C and C++ code block of the README and docs/.

A block with `int main(` is a complete program: it is compiled, linked
against mpidsm and run (under mpirun, with --run). Any other block is a fragment and must say so, on the line
before its fence, with the names it uses from its surroundings:

    <!-- fragment: mpidsm::Dsm& dsm, std::size_t n -->

It is then compiled as the body of a function taking those parameters. A
C or C++ block that is neither fails the check, so no snippet escapes it.
Blocks in other languages (sh, text) are not compiled.
"""
import argparse
import pathlib
import re
import subprocess
import sys

CXX_PRELUDE = """#include <mpi.h>
#include <unistd.h>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <span>
#include <vector>
#include <mpidsm/mpidsm.hpp>
"""
C_PRELUDE = """#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <mpidsm/mpidsm.h>
"""
LANGUAGES = {"cpp": "c++", "c++": "c++", "c": "c"}
FRAGMENT = re.compile(r"^<!--\s*fragment:?(.*?)-->\s*$")


def blocks(path):
    """(line, language, code, fragment parameters or None) per C/C++ block."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        language = fence.group(1)
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if language not in LANGUAGES:
            continue
        marker = FRAGMENT.match(lines[start - 1]) if start > 0 else None
        yield start + 1, LANGUAGES[language], "\n".join(body) + "\n", (
            marker.group(1).strip() if marker else None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--cc", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--flags", default="", help="compile flags (|-separated)")
    parser.add_argument("--libs", default="", help="link arguments (|-separated)")
    parser.add_argument("--run", default="", help="command prefix that runs a program (|-separated)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    flags = [f for f in args.flags.split("|") if f]
    libs = [f for f in args.libs.split("|") if f]
    runner = [f for f in args.run.split("|") if f]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    count = 0
    for name in args.files:
        path = pathlib.Path(name)
        for line, language, code, parameters in blocks(path):
            count += 1
            where = f"{path.name}:{line}"
            program = "int main(" in code
            if not program and parameters is None:
                print(f"{where}: a {language} block that is neither a program (no main) nor "
                      "marked <!-- fragment: parameters --> on the line before its fence")
                failures += 1
                continue
            stem = f"{path.stem}_{line}"
            if language == "c++":
                source = out / f"{stem}.cpp"
                compiler = [args.cxx, "-std=c++20"]
                prelude = "" if program else CXX_PRELUDE
            else:
                source = out / f"{stem}.c"
                compiler = [args.cc, "-std=c11"]
                prelude = "" if program else C_PRELUDE
            if program:
                text = f'#line {line + 1} "{where.split(":")[0]}"\n{code}'
                command = compiler + flags + [str(source), "-o", str(out / stem)] + libs
            else:
                text = (f"{prelude}\nvoid snippet({parameters}) {{\n"
                        f'#line {line + 1} "{where.split(":")[0]}"\n{code}}}\n')
                command = compiler + flags + ["-fsyntax-only", "-Wall", "-Wextra",
                                              "-Wno-unused-parameter", "-Wno-unused-variable",
                                              "-Wno-unused-but-set-variable", str(source)]
            source.write_text(text)
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode == 0 and program and runner:
                result = subprocess.run(runner + [str(out / stem)], capture_output=True, text=True,
                                        timeout=120)
            status = "ok" if result.returncode == 0 else "FAILED"
            print(f"{where}: {language} {'program' if program else 'fragment'}: {status}")
            if result.returncode != 0:
                failures += 1
                print(result.stdout + result.stderr)
    print(f"{count} code blocks, {failures} failed")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
