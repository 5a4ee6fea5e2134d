"""The project's test runner: one line a test, no timings, exit status 1 on any failure."""

import sys
import unittest

import test_stats

failed = 0
suite = unittest.defaultTestLoader.loadTestsFromModule(test_stats)
for test in suite:
    for case in test:
        result = unittest.TestResult()
        case.run(result)
        problems = result.failures + result.errors
        name = case.id().split(".")[-1]
        if problems:
            failed += 1
            last = problems[0][1].strip().splitlines()[-1]
            print(f"FAIL {name}: {last}")
        else:
            print(f"ok   {name}")
print(f"{failed} failed" if failed else "all tests passed")
sys.exit(1 if failed else 0)
