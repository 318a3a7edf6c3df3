"""``python -m dpsynth_core …``: the ``dpsynth`` command line (see :mod:`dpsynth_core.cli`)."""

from .cli import main

raise SystemExit(main())
