"""Recording files read block by block: :func:`open_source` gives a :class:`~dynid.recording.RecordingSource` of a
CSV recording, a UR RTDE log or a Parquet file, whatever its length, in memory bounded by the block size.

Each block is read, checked and converted as :func:`~dynid.io.readers.read_recording` reads the whole file —
the same columns, units (``softmc``), drive trains (motor side to joint side), messages naming the file's column
and data row — so a block is what the whole file's reader would give for those rows. What needs the whole file
(the positions' plausibility in the declared units) is checked on the ranges the first pass finds
(:meth:`FileSource.check_ranges`). The numbers of a CSV body are parsed by the compiled parser where it is built
(the same numbers as numpy's), by numpy otherwise; a block's first rows are counted so a bad cell is named by its
row in the file. ``.npz`` recordings and ROS 2 bags are read whole (:func:`open_source` returns None for them).
"""

from __future__ import annotations

import codecs
import io
import os
import warnings
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..errors import FileFormatError, InputDataError, MissingExtraError
from ..models.transmission import Transmission
from ..recording import Recording, RecordingSource
from ..threads import num_threads
from ..units import position_scale
from .readers import _assemble, _check_units, _is_number, _locate_bad_row, read_preamble

__all__ = ["open_source", "FileSource", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 23
"""Bytes of a text file read at a time (at least: a block's rows)."""


class _TextBody:
    """The numbers of a text table's body (after ``skip`` lines), block by block: ``(first_row, rows)`` with
    ``rows`` ``(m, n_cols)`` and ``first_row`` the data rows before them (blank and ``#`` lines are not rows)."""

    def __init__(self, path: Path, skip: int, names: Sequence[str], delimiter: str | None,
                 usecols: Sequence[int] | None = None) -> None:
        self.path, self.skip, self.names, self.delimiter = path, skip, list(names), delimiter
        self.usecols = None if usecols is None else list(usecols)
        self.src = str(path)

    def blocks(self, rows: int, row_bytes: int = 64) -> Iterator[tuple[int, np.ndarray]]:
        size = max(CHUNK_BYTES, rows * row_bytes)
        first = 0
        try:
            fh = open(self.path, "rb")
        except OSError as err:
            raise FileFormatError(f"{self.src}: cannot read the file ({err.strerror})") from err
        with fh:
            for _ in range(self.skip):
                fh.readline()
            carry = b""
            while True:
                chunk = fh.read(size)
                data = carry + chunk
                if not chunk:
                    if data.strip():
                        block = self._parse(data, first)
                        if block.shape[0]:
                            yield first, block
                    return
                cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
                if cut < 0:
                    carry = data
                    continue
                body, carry = data[:cut + 1], data[cut + 1:]
                block = self._parse(body, first)
                if block.shape[0]:
                    yield first, block
                    first += block.shape[0]

    def _parse(self, body: bytes, first: int) -> np.ndarray:
        """The rows of ``body`` (whole lines): two halves on two threads where two are allowed and the compiled
        parser reads them, else at once."""
        mid = body.find(b"\n", len(body) // 2) if len(body) > (1 << 20) and num_threads() > 1 else -1
        if 0 <= mid < len(body) - 1 and self.delimiter == "," and b"\r" not in body:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(1) as pool:
                second = pool.submit(_parse_bytes, body[mid + 1:], len(self.names))
                head = _parse_bytes(body[:mid + 1], len(self.names))
                tail = second.result()
            if head is not None and tail is not None:
                data = np.concatenate([head, tail])
                return data if self.usecols is None else data[:, self.usecols]
        return self._parse_all(body, first)

    def _parse_all(self, body: bytes, first: int) -> np.ndarray:
        ncol = len(self.names)
        width = ncol if self.usecols is None else len(self.usecols)
        if self.delimiter == "," and b"\r" not in body:
            fast = _parse_bytes(body, ncol)
            if fast is not None:
                return fast if self.usecols is None else fast[:, self.usecols]
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise FileFormatError(f"{self.src}: not a UTF-8 text file (data row {first + 1} or later)",
                                  hint="save the recording as UTF-8 CSV") from err
        if first == 0 and text.startswith(codecs.BOM_UTF8.decode()):
            text = text[1:]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")            # an empty block is handled by the caller
                data = np.loadtxt(io.StringIO(text), delimiter=self.delimiter, dtype=float, ndmin=2, comments="#",
                                  usecols=self.usecols)
        except (ValueError, IndexError):
            data = None
        if data is not None and data.size and data.shape[1] == width:
            return data
        if data is not None and data.size == 0:
            return np.zeros((0, width))
        body_lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if self.delimiter == ",":
            _locate_bad_row(body_lines, self.names, self.src, first)
        else:
            for r, line in enumerate(body_lines, start=first + 1):
                fields = line.split(self.delimiter)
                if len(fields) != ncol:
                    raise FileFormatError(f"{self.src}: data row {r} has {len(fields)} fields but the header has "
                                          f"{ncol}", hint="every row needs one value per header column")
                for h, f in zip(self.names, fields):
                    if not _is_number(f):
                        raise FileFormatError(f"{self.src}, column {h or '?'}: row {r} holds {f.strip()[:20]!r}, "
                                              "not a number", hint="fix or remove that row")
        raise FileFormatError(f"{self.src}: rows after data row {first} do not have {ncol} numbers")


def _parse_bytes(body: bytes, ncol: int) -> np.ndarray | None:
    """Rows of ``ncol`` numbers of a plain numeric CSV body by the compiled parser (None: not built, or anything in
    the body is not a plain decimal number)."""
    from ._fastparse import _parser

    fn = _parser()
    if fn is None or not body:
        return None
    rows = body.count(b"\n") + 1
    out = np.empty((rows, ncol))
    buf = np.frombuffer(body, dtype=np.uint8)
    got = fn(buf.ctypes.data, len(body), ncol, out.ctypes.data, rows)
    return out[:got] if got >= 0 else None


class FileSource(RecordingSource):
    """A recording file read block by block (see the module docstring)."""

    def __init__(self, path: Path, *, n_joints: int | None, joint_kinds: Sequence[str] | None, units: str,
                 require_tau: bool, use_derivatives: bool, transmission: Transmission | None) -> None:
        self.path, self.source = path, str(path)
        self.n_joints_model, self.kinds, self.units = n_joints, joint_kinds, units
        self.require_tau, self.use_derivatives, self.transmission = require_tau, use_derivatives, transmission
        self.meta: dict[str, str] = {}

    def _columns(self, rows: int) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        raise NotImplementedError

    def _probe(self) -> Recording:
        """The first rows as a recording (what the source's joints and columns are)."""
        for first, cols in self._columns(64):
            return _assemble(cols, self.meta, self.source, self.n_joints_model, self.require_tau,
                             self.use_derivatives, min_samples=0)
        raise InputDataError(f"{self.source}: the header is there but there are no data rows",
                             hint="the recording holds no samples; record again")

    def _setup(self) -> None:
        first = self._probe()
        self.n_joints, self.has_tau = first.n_joints, first.tau is not None
        if self.transmission is not None:
            self.transmission.check_joints(first.n_joints, where=f"recording {self.source}")
        kinds = list(self.kinds) if self.kinds is not None else ["rotary"] * first.n_joints
        if len(kinds) != first.n_joints:
            raise FileFormatError(f"{self.source}: {first.n_joints} joints in the file but {len(kinds)} joint kinds "
                                  "given")
        self.scale = position_scale(kinds, self.units) if (self.units == "softmc" or self.kinds is not None) else None

    def blocks(self, rows: int) -> Iterator[Recording]:
        last_t = None
        count = 0
        for first, cols in self._columns(rows):
            rec = _assemble(cols, self.meta, self.source, self.n_joints_model, self.require_tau, self.use_derivatives,
                            min_samples=0, first_row=first, previous_t=last_t)
            if rec.n_samples == 0:
                continue
            last_t = float(rec.t[-1])
            count += rec.n_samples
            yield self._convert(rec)
        if count < 50:
            raise InputDataError(f"{self.source}: only {count} samples; at least 50 are needed",
                                 hint="record longer (several cycles of every joint)")

    def _convert(self, rec: Recording) -> Recording:
        if self.units == "softmc" and self.scale is not None:
            rec = Recording(rec.t, rec.q * self.scale, rec.tau, None if rec.qd is None else rec.qd * self.scale,
                            None if rec.qdd is None else rec.qdd * self.scale, rec.meta, rec.source)
        if self.transmission is not None:
            rec = self.transmission.to_joint(rec)
        return rec

    def check_ranges(self, q_min: np.ndarray, q_max: np.ndarray) -> None:
        """The whole file's positions plausible in its declared units (``q_min``, ``q_max``: joint side, SI, as
        read): :func:`~dynid.io.readers.read_recording`'s check of the travel (degrees read as radians, ...)."""
        if self.scale is None:
            return
        kinds = list(self.kinds) if self.kinds is not None else ["rotary"] * self.n_joints
        pair = np.stack([q_min, q_max]) / self.scale            # in the file's units (spans: offsets cancel)
        _check_units(Recording(np.array([0.0, 1.0]), pair, source=self.source), kinds, self.units, self.source)


class _CsvSource(FileSource):
    def __init__(self, path: Path, **kw) -> None:
        super().__init__(path, **kw)
        meta, header_line, n_before = read_preamble(path)
        if header_line is None:
            raise FileFormatError(f"{path}: the file is empty (no header row)",
                                  hint="the first non-comment row must name the columns: t,q1,...,tau1,...")
        header = [h.strip().strip('"').strip("'").strip() for h in header_line.split(",")]
        if any(_is_number(h) for h in header if h):
            raise FileFormatError(f"{path}: the first row is numbers, not a header",
                                  hint="add a header row naming the columns: t,q1,...,tau1,...")
        seen: set[str] = set()
        for h in header:
            if h and h in seen:
                raise FileFormatError(f"{path}, column {h!r} appears twice in the header")
            seen.add(h)
        self.meta, self.header = meta, header
        self.body = _TextBody(path, n_before, header, ",")
        size = path.stat().st_size
        self.row_bytes = max(8, len(header_line) + 8)
        self._setup()
        self.n_samples_hint = int(size / self._bytes_per_row())

    def _bytes_per_row(self) -> float:
        with open(self.path, "rb") as fh:
            head = fh.read(1 << 16)
        lines = head.splitlines()[-200:-1] or head.splitlines()
        return max(np.mean([len(x) + 1 for x in lines]) if lines else 64.0, 1.0)

    def _columns(self, rows: int):
        for first, data in self.body.blocks(rows, self.row_bytes):
            yield first, {h: data[:, k] for k, h in enumerate(self.header) if h}


class _RtdeSource(FileSource):
    def __init__(self, path: Path, *, torque_constants=None, **kw) -> None:
        from .rtde import rtde_layout

        super().__init__(path, **kw)
        self.layout = rtde_layout(path, read_preamble(path), torque_constants=torque_constants,
                                  n_joints=self.n_joints_model, require_tau=self.require_tau)
        self.meta = dict(self.layout.meta)
        names = [""] * self.layout.n_cols
        for c, w in zip(self.layout.cols_at, self.layout.want):
            names[c] = w
        self.body = _TextBody(path, self.layout.skip, names, self.layout.delimiter, self.layout.cols_at)
        self.dropped = 0
        self._setup()
        self.n_samples_hint = int(path.stat().st_size / 200)

    def _columns(self, rows: int):
        lay = self.layout
        last_t = -np.inf
        dropped = 0
        for first, data in self.body.blocks(rows):
            # rows out of time order or repeating a time stamp (as the whole log's reader): sorted within the
            # block, and dropped where they go back before the rows already read
            order = np.argsort(data[:, 0], kind="stable")
            t = data[order, 0]
            keep = order[np.r_[True, np.diff(t) > 0] & (t > last_t)]
            dropped += data.shape[0] - keep.size
            if keep.size:
                last_t = float(data[keep[-1], 0])
                yield first, lay.columns(data[keep])
        if dropped:
            warnings.warn(f"{self.source}: {dropped} rows out of time order or repeating a time stamp were dropped",
                          stacklevel=2)


class _ParquetSource(FileSource):
    def __init__(self, path: Path, **kw) -> None:
        super().__init__(path, **kw)
        try:
            import pyarrow.parquet as pq
        except ImportError as err:
            raise MissingExtraError("reading .parquet recordings", "parquet", "pyarrow") from err
        try:
            self.file = pq.ParquetFile(path)
        except Exception as err:
            raise FileFormatError(f"{path}: not a readable Parquet file ({err})") from err
        md = self.file.schema_arrow.metadata or {}
        self.meta = {k.decode(): v.decode() for k, v in md.items()
                     if not k.startswith(b"pandas") and not k.startswith(b"ARROW")}
        self._setup()
        self.n_samples_hint = int(self.file.metadata.num_rows)

    def _columns(self, rows: int):
        first = 0
        for batch in self.file.iter_batches(batch_size=max(int(rows), 1)):
            cols = {}
            for name, column in zip(batch.schema.names, batch.columns):
                try:
                    cols[name.strip()] = np.asarray(column.to_numpy(zero_copy_only=False), dtype=float)
                except (TypeError, ValueError):
                    raise FileFormatError(f"{self.source}, column {name}: not numeric") from None
            yield first, cols
            first += batch.num_rows


def open_source(path: str | os.PathLike, *, n_joints: int | None = None, joint_kinds: Sequence[str] | None = None,
                units: str = "si", require_tau: bool = False, use_derivatives: bool = True,
                transmission: Transmission | None = None, torque_constants: Sequence[float] | None = None
                ) -> FileSource | None:
    """The recording file ``path`` as a :class:`~dynid.recording.RecordingSource` read block by block (the
    arguments of :func:`~dynid.io.readers.read_recording`), or None for a format read whole (``.npz``, ROS 2 bags).

    Raises
    ------
    FileFormatError, InputDataError, MissingExtraError
        As :func:`~dynid.io.readers.read_recording` (the header, the first rows; a later bad row when read).
    """
    from . import ros2, rtde
    from .readers import _first_row

    path = Path(path)
    if not path.exists():
        raise FileFormatError(f"{path}: no such file", hint="check the path of the recording")
    if units not in ("si", "softmc"):
        raise FileFormatError(f"units must be 'si' or 'softmc', got {units!r}")
    if path.is_dir() or path.suffix.lower() in (".npz", ".mcap") or ros2.is_mcap(path):
        return None
    kw = dict(n_joints=n_joints, joint_kinds=joint_kinds, units=units, require_tau=require_tau,
              use_derivatives=use_derivatives, transmission=transmission)
    if path.suffix.lower() in (".parquet", ".pq"):
        return _ParquetSource(path, **kw)
    with open(path, "rb") as fh:
        if b"\x00" in fh.read(1 << 16):
            raise FileFormatError(f"{path}: contains NUL bytes, not a CSV text file",
                                  hint="give a CSV, .npz or .parquet recording")
    if rtde.is_rtde_header(_first_row(path)):
        return _RtdeSource(path, torque_constants=torque_constants, **kw)
    return _CsvSource(path, **kw)
