"""``IDNT<group>.REC``: the record of the identification data (spec/files.md §2, interfaces.md §2).

softMC's binary REC layout is unpublished, so dynid writes the same content as CSV: a first ``#``
line with a JSON object (element, model, sample period, cutoff, thresholds, units, lengths), a
header ``t,tfbRaw1,pfbRaw1,tfb1,pfb1,vfb1,afb1,tcmd1,te1,tfbRaw2,...`` and one row per used
sample. ``te = tcmd − tfb``. Values in SI units (the JSON says which), 9 significant digits.
"""

from __future__ import annotations

import json
import mmap
from typing import Any, Mapping

import numpy as np

from ..errors import FileFormatError
from ._fastcsv import format_columns_into, format_rows

__all__ = ["SIGNALS", "MODEL_SIGNALS", "format_rec", "write_rec", "format_rec_rows", "start_rec_rows", "finish_rec_rows", "read_rec",
           "REC_HEADROOM", "rec_rows_size", "rec_head"]

SIGNALS = ("tfbRaw", "pfbRaw", "tfb", "pfb", "vfb", "afb", "tcmd", "te")
MODEL_SIGNALS = ("tcmd", "te")
"""The signals that need the identified model; the others are the recording's (conditioned)."""


REC_HEADROOM = 1 << 16
"""Bytes kept free before the rows formatted by :func:`format_rec_rows`, for the header written later."""


def _cells(k: int, n: int) -> list[int]:
    """The cells of signal ``SIGNALS[k]`` of joints 1..n in a REC row (``t`` first, then per joint every signal)."""
    return [1 + j * len(SIGNALS) + k for j in range(n)]


def _rec_matrix(t: np.ndarray, channels: Mapping[str, np.ndarray]) -> np.ndarray:
    n = next(iter(channels.values())).shape[1]
    data = np.empty((t.shape[0], 1 + len(SIGNALS) * n))
    data[:, 0] = t
    for k, s in enumerate(SIGNALS):
        data[:, _cells(k, n)] = channels[s]
    return data


def _format_signals(rows, channels: Mapping[str, np.ndarray], n: int, offset: int = REC_HEADROOM) -> None:
    """The cells of the signals in ``channels`` (some of :data:`SIGNALS`) into the REC rows starting at ``offset``."""
    for k, s in enumerate(SIGNALS):
        if s in channels:
            format_columns_into(rows, offset, channels[s], _cells(k, n), 1 + len(SIGNALS) * n)


def rec_rows_size(n_rows: int, n_joints: int) -> int:
    """Bytes of a REC's rows (every cell 16 bytes: the formatter's fixed width)."""
    return 16 * n_rows * (1 + len(SIGNALS) * n_joints)


def rec_head(channels: Mapping[str, np.ndarray] | int, header: Mapping[str, Any]) -> bytes:
    """The REC's two header lines (``channels``: the signals, or the number of joints)."""
    n = channels if isinstance(channels, int) else next(iter(channels.values())).shape[1]
    names = ["t"] + [f"{s}{j + 1}" for j in range(n) for s in SIGNALS]
    return ("# " + json.dumps(header, separators=(",", ":")) + "\n" + ",".join(names) + "\n").encode()


def write_rec(fh, t: np.ndarray, channels: Mapping[str, np.ndarray], header: Mapping[str, Any], *,
              rows: int = 8192) -> None:
    """Write the REC (the bytes of :func:`format_rec`) to the binary file ``fh`` ``rows`` rows at a time: no more than
    a few MB held however long the REC."""
    fh.write(rec_head(channels, header))
    for a in range(0, t.shape[0], rows):
        part = slice(a, a + rows)
        fh.write(format_rows(_rec_matrix(t[part], {k: v[part] for k, v in channels.items()}), threads=1))


def format_rec_rows(t: np.ndarray, channels: Mapping[str, np.ndarray], *, threads: int = 2) -> bytearray:
    """The rows of a REC (everything after its two header lines), formatted ahead of the header: after
    ``REC_HEADROOM`` free bytes, for :func:`format_rec` ``rows=`` (which writes the header there, once)."""
    return format_rows(_rec_matrix(t, channels), prefix=bytes(REC_HEADROOM), threads=threads)


def start_rec_rows(t: np.ndarray, recorded: Mapping[str, np.ndarray], *, into=None,
                   offset: int = REC_HEADROOM) -> mmap.mmap | None:
    """:func:`format_rec_rows` in two steps, the first before the model is identified: the cells of ``t`` and of
    the recorded signals (every one of :data:`SIGNALS` but :data:`MODEL_SIGNALS`) written, the model's left for
    :func:`finish_rec_rows`. ``into``: a writable buffer of ``offset + rec_rows_size(...)`` bytes to format the rows
    into from ``offset`` (a mapped file, say), else a new anonymous mapping after ``REC_HEADROOM`` free bytes.
    None where the compiled formatter is not built (:func:`format_rec_rows` then)."""
    n = next(iter(recorded.values())).shape[1]
    width = 1 + len(SIGNALS) * n
    # an anonymous mapping, not a bytearray: its pages are zero when first written, not filled while holding the
    # interpreter lock (tens of MB: a bytearray stalls the thread that fits the model meanwhile)
    rows = mmap.mmap(-1, offset + rec_rows_size(t.shape[0], n)) if into is None else into
    if not format_columns_into(rows, offset, np.asarray(t, dtype=float)[:, None], [0], width):
        return None
    _format_signals(rows, {s: v for s, v in recorded.items() if s not in MODEL_SIGNALS}, n, offset)
    return rows


def finish_rec_rows(rows, model: Mapping[str, np.ndarray], *, offset: int = REC_HEADROOM):
    """The rows begun by :func:`start_rec_rows` (at ``offset``), with the model's signals (:data:`MODEL_SIGNALS`)
    written in: the same bytes as :func:`format_rec_rows` of all of them."""
    _format_signals(rows, {s: v for s, v in model.items() if s in MODEL_SIGNALS}, next(iter(model.values())).shape[1],
                    offset)
    return rows


def format_rec(t: np.ndarray, channels: Mapping[str, np.ndarray], header: Mapping[str, Any], *,
               rows: bytearray | mmap.mmap | None = None) -> bytearray | memoryview:
    """Render the REC CSV (a bytes-like object: a ``bytearray``, or a ``memoryview`` of ``rows``).

    Parameters
    ----------
    t : ndarray, (N,)
    channels : mapping signal name -> ndarray (N, n_joints), for every name in :data:`SIGNALS`
    header : JSON-able metadata written on the first line
    rows : bytearray or mmap, optional
        The same ``t`` and ``channels`` already formatted by :func:`format_rec_rows` (say on another thread
        while the identification finished); the header is written into its free bytes, so it is used once.
    """
    head = rec_head(channels, header)
    if rows is None:
        return format_rows(_rec_matrix(t, channels), prefix=head)
    start = REC_HEADROOM - len(head)
    if start < 0:                       # (a header longer than the headroom: joined with a copy)
        return bytearray(head) + memoryview(rows)[REC_HEADROOM:]
    rows[start:REC_HEADROOM] = head
    return memoryview(rows)[start:]


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
