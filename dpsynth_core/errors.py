"""Exceptions the core raises on purpose.

A :class:`DataError` carries one sentence meant for a person: what is wrong
with their data and what to do about it. Pages show it as it is.
"""


class DataError(ValueError):
    """The data cannot be used as given; the message says why and what to do."""


class MethodRefused(ValueError):
    """A synthesizer declines a dataset before doing any work; the message says why."""


class BudgetExceeded(MethodRefused):
    """A DP run would take a dataset past the cap its steward set; refused before the data are read."""


class LedgerError(RuntimeError):
    """The ledger store (:mod:`dpsynth_core.privacy.store`) cannot be used; the message says where and what to do.

    A computation whose entry cannot be written returns nothing: it fails closed.
    """
