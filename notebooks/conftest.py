"""Only the notebooks are tests here: the sample project's own tests (and its scratch copy) belong to the demo."""

collect_ignore_glob = ["sample_project/*", "scratch/*", "scratch-*/*", "record.py", "*.brute/*"]
