"""The test suite (a package, so that ``tests.*`` helpers resolve here and not to a dependency that ships its own
top-level ``tests`` package, as markdownify 0.13 does)."""
