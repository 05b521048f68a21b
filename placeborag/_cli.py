"""The ``placeborag`` console script.

``placeborag report --out report.html [--scenario FILE] [--projection {pca,umap}]``
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="placeborag",
        description="placeborag's command line: 'placeborag report --out report.html' writes "
        "every explorer view of a scenario (the demo, or --scenario FILE) to one HTML page.",
    )
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
    except (ImportError, OSError, ValueError, TypeError) as exc:
        # Every PlaceboragError is a ValueError or a TypeError; OSError covers a missing file.
        print(f"placeborag report: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(
            f"placeborag report: {_out_of_memory('the scenario', args.scenario)}", file=sys.stderr
        )
        return 1
    try:
        write_report(args.out, scenario, projection=args.projection)
    except OSError as exc:
        print(f"placeborag report: {_unwritable(args.out, exc)}", file=sys.stderr)
        return 1
    except (ImportError, ValueError, TypeError) as exc:
        print(f"placeborag report: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"placeborag report: {_out_of_memory('the report', args.scenario)}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


def _out_of_memory(what: str, scenario: str | None) -> str:
    """Why nothing was written when memory ran out (under a memory limit, a ulimit)."""
    source = "the demo scenario" if scenario is None else f"--scenario {scenario}"
    return (
        f"ran out of memory building {what} from {source}; nothing was written. A smaller "
        "scenario (fewer documents or dimensions) fits"
    )


def _unwritable(out: str, error: OSError) -> str:
    """Why the report could not be written to ``out``, naming ``out`` as the user gave it."""
    from placeborag._validation import shown

    if isinstance(error, IsADirectoryError):
        reason = "it is a directory"
    elif isinstance(error, (FileNotFoundError, NotADirectoryError)):
        folder = os.path.dirname(out) or "."
        reason = f"the folder {shown(folder)} does not exist"
    elif isinstance(error, PermissionError):
        reason = "permission denied"
    else:
        reason = (error.strerror or str(error)).lower()
    return f"cannot write report to {shown(out)}: {reason}"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
