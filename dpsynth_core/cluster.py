"""Run joblib work (the R-U sweep's points) on a Dask cluster given by its scheduler's address.

The cluster's workers need dpsynth_core and its dependencies installed, and
they receive the data swept: use only a cluster you would trust with it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import joblib

_ADDRESS = re.compile(r"^(tcp|tls|ws|wss)://[A-Za-z0-9._\-\[\]:]+:\d{1,5}$")

#: How long to keep trying to reach a scheduler before saying it cannot be reached (dask retries a refused
#: connection until then).
CONNECT_TIMEOUT = "10s"


@contextlib.contextmanager
def on_scheduler(address: str | None, *, timeout: str | None = None) -> Iterator[None]:
    """Inside, ``ru_map`` runs its points on the cluster at ``address``; None or "": on this machine.

    Raises ValueError with one sentence when the address is malformed, the
    scheduler cannot be reached, or dask.distributed is not installed. The
    client is private to this block (not made the process's default), so
    sessions of the app sweeping at once do not share it.
    """
    address = (address or "").strip()
    if not address:
        yield
        return
    if not _ADDRESS.match(address):
        raise ValueError("A Dask scheduler address looks like tcp://host:8786; check the address.")
    try:
        from dask.distributed import Client
    except ImportError:
        raise ValueError("Running on a Dask cluster needs dask and distributed: pip install 'dpsynth[dask]'.") from None
    try:
        client = Client(address, timeout=timeout or CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError):
        raise ValueError(f"Could not reach a Dask scheduler at {address}; check the address and that the "
                         "scheduler is running.") from None
    try:
        with joblib.parallel_config(backend="dask", client=client):
            yield
    finally:
        client.close()
