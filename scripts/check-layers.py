#!/usr/bin/env python3
"""The library's layers depend in one direction:

    common  <-  platform  <-  transport  <-  runtime  <-  pgas, dsm  <-  c_api, jia, shmem  <-  tools

A file may include headers of its own folder and of the layers below it,
never of a layer above or beside it. Inside src/dsm the folders are layers
too: memory <- placement, protocol, fault <- engine <- src/dsm itself. Public headers (include/mpidsm/) belong
to the layer that implements them. Exits 1, naming each include that breaks
the order; --graph prints the folder dependency graph with include counts.

    scripts/check-layers.py [--graph] [ROOT]
    scripts/check-layers.py --self-test   (the check fails on a tree that breaks the order)
"""
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

RANK = {"common": 0, "platform": 0.5, "transport": 1, "runtime": 2, "pgas": 3, "dsm": 3,
        "c_api": 4, "jia": 4, "shmem": 4, "tools": 5}

# Layers inside a layer's folder: its subfolders, and "" for its own files.
SUBLAYERS = {"dsm": {"memory": 0, "placement": 1, "protocol": 1, "fault": 1, "engine": 2, "": 3}}

# Public headers: the folder whose layer they belong to.
PUBLIC = {
    "language.hpp": "common", "status.h": "common", "error.hpp": "common",
    "config.hpp": "runtime", "progress_modes.hpp": "transport", "coherence.hpp": "common", "info.hpp": "common",
    "version.h": "common", "version.hpp": "common", "transport.hpp": "transport", "runtime.hpp": "runtime",
    "messaging.hpp": "runtime", "pgas.hpp": "pgas", "team.hpp": "pgas", "dsm.hpp": "dsm",
    "placement.hpp": "dsm", "mpidsm.h": "c_api", "mpidsm.hpp": "tools",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def folder_of_include(name, including_folder):
    """The folder an include names, or None for system and external headers."""
    if name.startswith("mpidsm/"):
        header = name[len("mpidsm/"):]
        if header.endswith(".in"):
            header = header[:-3]
        return PUBLIC.get(header, "unknown public header " + name)
    if name == "jia.h":
        return "jia"
    if name in ("shmem.h", "shmem_generic.h"):
        return "shmem"
    parts = name.split("/")
    if len(parts) > 1 and parts[0] in RANK:
        return parts[0]
    if len(parts) == 1 and including_folder is not None:
        return including_folder  # a header beside the file
    return None


def self_test():
    """A tree with one include up and one beside must fail with both named; fixed, pass."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folder in ("transport", "pgas", "dsm"):
            (root / "src" / folder).mkdir(parents=True)
        (root / "include").mkdir()
        up = root / "src" / "transport" / "rma.cpp"
        beside = root / "src" / "dsm" / "engine.hpp"
        (root / "src" / "dsm" / "memory").mkdir()
        inner = root / "src" / "dsm" / "memory" / "region.hpp"
        up.write_text('#include "rma.hpp"\n#include "dsm/fault_handler.hpp"\n')
        beside.write_text('#include "pgas/heap_allocator.hpp"\n#include <vector>\n')
        inner.write_text('#include "dsm/engine/engine.hpp"\n')
        if check(root, False) != 3:
            print("self-test: the check missed an include that breaks the order", file=sys.stderr)
            return 1
        up.write_text('#include "rma.hpp"\n')
        beside.write_text('#include "transport/rma.hpp"\n#include "dsm/memory/region.hpp"\n')
        inner.write_text('#include "lazy_array.hpp"\n')
        if check(root, False) != 0:
            print("self-test: the check failed a tree in order", file=sys.stderr)
            return 1
    print("self-test passed")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    graph = "--graph" in argv
    rest = [a for a in argv if a != "--graph"]
    root = Path(rest[0]) if rest else Path(__file__).resolve().parent.parent
    return 1 if check(root, graph) else 0


def sublayer_edge(root, path, folder, name):
    """(source, target) subfolders of an include across them inside a layer, or None."""
    parts = name.split("/")
    if folder not in SUBLAYERS or len(parts) < 3 or parts[0] != folder:
        return None
    inside = path.relative_to(root / "src" / folder).parts
    source = folder + ("/" + inside[0] if len(inside) > 1 else "")
    target = folder + "/" + parts[1]
    return None if source == target else (source, target)


def sublayer_breaks(root, path, folder, name):
    """An include within one layer that breaks the order of its subfolders."""
    layers = SUBLAYERS.get(folder)
    parts = name.split("/")
    if layers is None or len(parts) < 3 or parts[0] != folder:
        return []
    inside = path.relative_to(root / "src" / folder).parts
    source = inside[0] if len(inside) > 1 else ""
    target = parts[1]
    if source == target:
        return []
    if source not in layers or target not in layers:
        return [f"{path.relative_to(root)}: {folder} subfolder '{source or target}' has no layer"]
    if layers[target] < layers[source]:
        return []
    where = "above" if layers[target] > layers[source] else "beside"
    return [f"{path.relative_to(root)} includes {name}: {folder}/{target} is {where} "
            f"{folder}/{source}"]


def check(root, graph):
    """Prints what breaks the order; returns how many includes do."""
    # (file, its layer, whether a bare include names a header of that layer:
    # true in src/, where a layer's subfolders are still the layer)
    files = [(p, p.relative_to(root / "src").parts[0], True) for p in (root / "src").rglob("*")
             if p.suffix in (".hpp", ".cpp", ".h", ".c")]
    files += [(p, PUBLIC.get(p.name.replace(".in", ""), "tools"), False)
              for p in (root / "include").rglob("*") if p.is_file()]
    edges, sub_edges, broken = Counter(), Counter(), []
    for path, folder, in_src in files:
        if folder not in RANK:
            broken.append(f"{path.relative_to(root)}: folder '{folder}' has no layer")
            continue
        for name in INCLUDE.findall(path.read_text()):
            target = folder_of_include(name, folder if in_src else None)
            if target is None:
                continue
            if target == folder:
                broken += sublayer_breaks(root, path, folder, name)
                inner = sublayer_edge(root, path, folder, name)
                if inner:
                    sub_edges[inner] += 1
                continue
            if target not in RANK:
                broken.append(f"{path.relative_to(root)}: {target}")
                continue
            edges[(folder, target)] += 1
            if RANK[target] >= RANK[folder]:
                where = "above" if RANK[target] > RANK[folder] else "beside"
                broken.append(f"{path.relative_to(root)} includes {name}: {target} is {where} "
                              f"{folder}")
    if graph:
        for (source, target), count in sorted(edges.items(), key=lambda e: (RANK[e[0][0]], e[0])):
            print(f"{source} -> {target}  ({count} includes)")
        for (source, target), count in sorted(sub_edges.items()):
            print(f"{source} -> {target}  ({count} includes)")
    for line in broken:
        print(line, file=sys.stderr)
    if broken:
        print(f"{len(broken)} includes break the layer order", file=sys.stderr)
    return len(broken)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
