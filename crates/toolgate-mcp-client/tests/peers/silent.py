"""A server that never answers: reads stdin and says nothing (startup-timeout tests)."""

import sys

for _ in sys.stdin:
    pass
