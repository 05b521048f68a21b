"""The ``placeborag`` console script.

``placeborag report --out report.html [--scenario FILE] [--projection {pca,umap}]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="placeborag", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser(
        "report", help="write every explorer view to one self-contained HTML page"
    )
    report.add_argument("--out", required=True, help="the HTML file to write")
    report.add_argument(
        "--scenario", help="a scenario JSON file (default: the built-in demo scenario)"
    )
    report.add_argument(
        "--projection",
        choices=("pca", "umap"),
        default="pca",
        help="how the projection figure places the documents (umap: the umap extra)",
    )
    args = parser.parse_args(argv)
    try:
        from placeborag.explore import Scenario, write_report

        scenario = Scenario.load(args.scenario) if args.scenario else None
        write_report(args.out, scenario, projection=args.projection)
    except (ImportError, OSError, ValueError, TypeError) as exc:
        # Every PlaceboragError is a ValueError or a TypeError; OSError covers a missing file.
        print(f"placeborag report: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
