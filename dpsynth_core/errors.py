"""Exceptions the core raises on purpose.

A :class:`DataError` carries one sentence meant for a person: what is wrong
with their data and what to do about it. Pages show it as it is.
"""


class DataError(ValueError):
    """The data cannot be used as given; the message says why and what to do."""


class MethodRefused(ValueError):
    """A synthesizer declines a dataset before doing any work; the message says why."""
