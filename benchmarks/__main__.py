"""Run every benchmark and write ``results/benchmarks.md``.

    python -m benchmarks            # full sizes (NSL-KDD pools of 200 and 1000 trees; long)
    python -m benchmarks --quick    # small datasets, a smoke run
"""

import argparse
import datetime
import importlib
import pathlib
import time

from harness.common import machine

SECTIONS = ["solver", "frontier", "predict", "pool", "latency", "oob", "browser"]
#: Sections whose code is the shared harness rather than a benchmark module.
HARNESS = {"browser"}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--only", nargs="*", choices=SECTIONS, help="run only these sections")
    parser.add_argument("--out", default="results/benchmarks.md", help="Markdown report path")
    args = parser.parse_args(argv)
    parts = [f"# Benchmarks\n\nMachine: {machine()}\n\nRun: "
             f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
             f"`python -m benchmarks{' --quick' if args.quick else ''}`. "
             "Every ratio compares two measurements taken in this same run.\n"]
    for name in args.only or SECTIONS:
        start = time.perf_counter()
        package = "harness" if name in HARNESS else "benchmarks"
        section = importlib.import_module(f"{package}.{name}").run(quick=args.quick)
        parts.append(section + f"\n_{name}: {time.perf_counter() - start:.0f} s of wall time._\n")
        print(section)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
