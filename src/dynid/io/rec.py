"""``IDNT<group>.REC``: the record of the identification data (spec/files.md §2, interfaces.md §2).

softMC's binary REC layout is unpublished, so dynid writes the same content as CSV: a first ``#``
line with a JSON object (element, model, sample period, cutoff, thresholds, units, lengths), a
header ``t,tfbRaw1,pfbRaw1,tfb1,pfb1,vfb1,afb1,tcmd1,te1,tfbRaw2,...`` and one row per used
sample. ``te = tcmd − tfb``. Values in SI units (the JSON says which), 9 significant digits.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np

from ..errors import FileFormatError
from ._fastcsv import format_rows

__all__ = ["SIGNALS", "format_rec", "read_rec"]

SIGNALS = ("tfbRaw", "pfbRaw", "tfb", "pfb", "vfb", "afb", "tcmd", "te")


def format_rec(t: np.ndarray, channels: Mapping[str, np.ndarray], header: Mapping[str, Any]) -> bytes:
    """Render the REC CSV.

    Parameters
    ----------
    t : ndarray, (N,)
    channels : mapping signal name -> ndarray (N, n_joints), for every name in :data:`SIGNALS`
    header : JSON-able metadata written on the first line
    """
    n = next(iter(channels.values())).shape[1]
    names = ["t"] + [f"{s}{j + 1}" for j in range(n) for s in SIGNALS]
    data = np.empty((t.shape[0], 1 + len(SIGNALS) * n))
    data[:, 0] = t
    for j in range(n):
        for k, s in enumerate(SIGNALS):
            data[:, 1 + j * len(SIGNALS) + k] = channels[s][:, j]
    head = "# " + json.dumps(header, separators=(",", ":")) + "\n" + ",".join(names) + "\n"
    return format_rows(data, prefix=head.encode())


def read_rec(path) -> tuple[dict[str, Any], np.ndarray, dict[str, np.ndarray]]:
    """Read a REC file: ``(header, t, {signal: (N, n_joints)})``."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
            names = fh.readline().strip().split(",")
            data = np.loadtxt(fh, delimiter=",", ndmin=2)
    except (OSError, ValueError) as err:
        raise FileFormatError(f"{path}: not a readable REC file ({err})") from err
    if not first.startswith("#"):
        raise FileFormatError(f"{path}: the first line must be '# {{json}}'")
    header = json.loads(first[1:])
    n = (len(names) - 1) // len(SIGNALS)
    channels = {s: np.column_stack([data[:, names.index(f"{s}{j + 1}")] for j in range(n)]) for s in SIGNALS}
    return header, data[:, 0], channels
