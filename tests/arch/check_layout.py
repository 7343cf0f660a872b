#!/usr/bin/env python3
"""check_layout.py -- the module picture of docs/architecture.md, checked.

Each top-level folder of the tree is one module.  A module's files may
include the headers of the modules below it in MAY_USE and of no other;
a library (every module but cli/) never prints (printf, puts, perror,
fprintf/fputs to stdout or stderr, putchar): errors are returned.  Exit 0
when the tree keeps the rules, 1 with one line per breach otherwise.

Usage: check_layout.py SOURCE_DIR
"""
import os
import re
import sys

# Who may include whom (besides itself).  The order is the layering, bottom up.
MAY_USE = {
    "base": [],
    "model": ["base"],
    "engine": ["base"],
    "chromosome": ["model", "base"],
    "results": ["model", "base"],
    "kernels": ["model", "base"],
    "runtime": ["kernels", "model", "base"],
    "calib": ["runtime", "kernels", "results", "model", "base"],
    "solve": ["model", "base"],
    "campaign": ["solve", "engine", "chromosome", "results", "model", "base"],
    "validate": ["campaign", "runtime", "results", "model", "base"],
    "cli": None,  # the program: may use every module, and prints
}
PRINTS = re.compile(r"(?<![\w.>])(printf|puts|perror|putchar)\s*\(|"
                    r"\bfprintf\s*\(\s*(stdout|stderr)|\bfputs\s*\([^;]*,\s*(stdout|stderr)\s*\)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def main(root):
    owner = {}  # header file name -> module
    files = {}
    for mod in MAY_USE:
        d = os.path.join(root, mod)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h", ".def")):
                files.setdefault(mod, []).append(os.path.join(d, f))
                if f.endswith((".h", ".def")):
                    owner.setdefault(f, mod)
    bad = []
    for mod, paths in files.items():
        allowed = MAY_USE[mod]
        for p in paths:
            text = open(p, encoding="utf-8", errors="replace").read()
            rel = os.path.relpath(p, root)
            for inc in INCLUDE.findall(text):
                m = owner.get(os.path.basename(inc))
                if m is None:
                    if inc.endswith(".pb-c.h"):
                        continue  # generated ONNX bindings (model/)
                    bad.append(f"{rel}: includes \"{inc}\", which no module owns")
                elif allowed is not None and m != mod and m not in allowed:
                    bad.append(f"{rel}: {mod}/ may not include {m}/'s \"{inc}\" "
                               f"(allowed: {', '.join(allowed) or 'nothing'})")
            if allowed is not None:
                code = strip_comments(text)
                for n, line in enumerate(code.split("\n"), 1):
                    if PRINTS.search(line):
                        bad.append(f"{rel}:{n}: a library prints ({line.strip()[:60]}); "
                                   "return the error instead")
    for b in bad:
        print(b)
    print(f"check_layout: {sum(len(v) for v in files.values())} files in {len(files)} modules, "
          f"{len(bad)} breaches")
    return 1 if bad else 0


def self_test():
    """The checker fails on a tree that breaks each rule once."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for mod, name, text in [("model", "net.h", "int net;\n"),
                                ("engine", "nsga.c", '#include "net.h"\nint f(void){return 0;}\n'),
                                ("results", "r.c", 'void g(void){ printf("x"); }\n'),
                                ("cli", "main.c", '#include "net.h"\nvoid h(void){ puts("ok"); }\n')]:
            os.makedirs(os.path.join(d, mod), exist_ok=True)
            open(os.path.join(d, mod, name), "w").write(text)
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(d)
        text = out.getvalue()
        ok = rc == 1 and "engine/nsga.c: engine/ may not include model/" in text and \
            "results/r.c:1: a library prints" in text and "cli/" not in text.replace("check_layout", "")
        print(text + ("self-test: ok" if ok else "self-test: FAILED"))
        return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
