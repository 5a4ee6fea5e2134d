"""Small statistics helpers for the brute_nb quickstart (it has a bug for the agent to find)."""


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) / len(values)


def median(values):
    """The middle value; for an even count, the mean of the two middle values."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid] + ordered[mid + 1]) / 2
