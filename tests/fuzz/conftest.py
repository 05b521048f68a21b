"""The fuzz suite's hypothesis profile: a fixed, derandomised example count for CI.

Every fuzz test is decorated with ``FUZZ`` (from ``_fuzz``), so the count is set here once:
``PLACEBORAG_FUZZ_EXAMPLES`` (default 100) examples per test, the same examples on every run
(``derandomize=True``, so a strict xfail fails the same way everywhere). Raise it to search
harder, e.g. ``PLACEBORAG_FUZZ_EXAMPLES=2000 pytest tests/fuzz``.
"""
