"""``python -m placeborag``: the ``placeborag`` console script (see ``placeborag._cli``)."""

from placeborag._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
