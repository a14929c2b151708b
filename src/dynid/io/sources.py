"""Recording files read block by block: :func:`open_source` gives a :class:`~dynid.recording.RecordingSource` of a
CSV recording, a UR RTDE log or a Parquet file, whatever its length, in memory bounded by the block size.

Each block is read, checked and converted as :func:`~dynid.io.readers.read_recording` reads the whole file —
the same columns, units (``softmc``), drive trains (motor side to joint side), messages naming the file's column
and data row — so a block is what the whole file's reader would give for those rows. What needs the whole file
(the positions' plausibility in the declared units) is checked on the ranges the first pass finds
(:meth:`FileSource.check_ranges`). The numbers of a CSV body are parsed by the compiled parser where it is built
(the same numbers as numpy's), by numpy otherwise; a block's first rows are counted so a bad cell is named by its
row in the file. ROS 2 bags are read in chunks of messages (:class:`_McapSource`), ``.npz`` recordings a block of
rows at a time from the archive's members (:class:`_NpzSource`; one with an array in Fortran order is read whole:
:func:`open_source` returns None for it).
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
from .readers import (_assemble, _check_units, _is_number, _locate_bad_row, csv_header, read_preamble,
                      recording_units)

__all__ = ["open_source", "long_source", "estimated_rows", "FileSource", "CHUNK_BYTES"]

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

    def __init__(self, path: Path, *, n_joints: int | None, joint_kinds: Sequence[str] | None, units: str | None,
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
        self.units = recording_units(self.meta, self.units, self.source, self.path)     # ('# units:', if given)
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
        self.meta, self.header, n_before = csv_header(path)
        self.body = _TextBody(path, n_before, self.header, ",")
        size = path.stat().st_size
        self.row_bytes = max(8, len(",".join(self.header)) + 8)
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


class _NpzSource(FileSource):
    """A ``.npz`` recording's arrays read a block of rows at a time, straight from the archive's members (each a
    ``.npy`` stream: its header, then the rows in C order; compressed or not), so a long recording is never whole
    in memory. Arrays in Fortran order cannot be read so: :func:`open_source` reads those files whole."""

    KEYS = ("t", "q", "tau", "dq", "ddq", "qd", "qdd")

    def __init__(self, path: Path, **kw) -> None:
        super().__init__(path, **kw)
        self.layout = _npz_layout(path)
        meta = {}
        if "meta" in self.layout.members:
            with np.load(path, allow_pickle=False) as z:
                value = z["meta"]
                if value.dtype.kind == "U":
                    meta = {"meta": str(value)}
        self.meta = meta
        self._setup()
        self.n_samples_hint = self.layout.rows

    def _columns(self, rows: int):
        import zipfile

        lay = self.layout
        with zipfile.ZipFile(self.path) as zf:
            streams = {}
            try:
                for key in lay.arrays:
                    fh = zf.open(lay.members[key])
                    _npy_header(fh)
                    streams[key] = fh
                for first in range(0, lay.rows, max(int(rows), 1)):
                    m = min(int(rows), lay.rows - first)
                    cols = {}
                    for key, (dtype, width) in lay.arrays.items():
                        raw = streams[key].read(m * width * dtype.itemsize)
                        a = np.frombuffer(raw, dtype=dtype).astype(float).reshape(m, width)
                        if key == "t":
                            cols["t"] = a[:, 0]
                            continue
                        prefix = {"qd": "dq", "qdd": "ddq"}.get(key, key)
                        for j in range(width):
                            cols[f"{prefix}{j + 1}"] = a[:, j]
                    yield first, cols
            finally:
                for fh in streams.values():
                    fh.close()


class _NpzLayout:
    """Where a ``.npz`` recording's arrays are: archive member by key, ``(dtype, columns)`` by key, the rows."""

    def __init__(self, members: dict, arrays: dict, rows: int) -> None:
        self.members, self.arrays, self.rows = members, arrays, rows


def _npy_header(fh):
    """The ``(shape, fortran_order, dtype)`` of a ``.npy`` stream, read up to its data."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    return np.lib.format.read_array_header_2_0(fh)


def _npz_layout(path: Path) -> _NpzLayout | None:
    """The layout of a ``.npz`` recording read by blocks, or None where it must be read whole (an array in Fortran
    order, not numeric, or of a shape the whole-file reader reports on)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            members = {name[:-4]: name for name in zf.namelist() if name.endswith(".npy")}
            arrays, rows = {}, None
            for key in _NpzSource.KEYS:
                if key not in members:
                    continue
                with zf.open(members[key]) as fh:
                    shape, fortran, dtype = _npy_header(fh)
                if fortran or dtype.kind not in "fiu" or len(shape) not in (1, 2) or (key == "t" and len(shape) != 1):
                    return None
                if rows is not None and shape[0] != rows:
                    return None
                rows = shape[0]
                arrays[key] = (dtype, 1 if len(shape) == 1 else shape[1])
    except Exception:                     # (a damaged archive: the whole-file reader names the problem)
        return None
    if "t" not in arrays or rows is None:
        return None
    return _NpzLayout(members, arrays, rows)


class _McapSource(FileSource):
    """A ROS 2 bag's JointState messages read in chunks of messages (:mod:`dynid.io.ros2`'s rules: joints matched
    by name, header stamps or log times, messages at one time merged, samples without every position dropped).
    Its decisions — the joints, the time source, whether the recording has torques and velocities — are made on a
    first read of the whole bag, as the whole bag's reader makes them; messages are merged within a chunk of
    ``CHUNK_MESSAGES`` and sorted there, and a sample logged before one already read is dropped (a warning counts
    them)."""

    CHUNK_MESSAGES = 50_000

    def __init__(self, path: Path, *, joint_names=None, topic=None, **kw) -> None:
        from . import ros2

        super().__init__(path, **kw)
        try:
            from mcap.reader import make_reader
            from mcap_ros2.decoder import DecoderFactory
        except ImportError as err:
            module = (err.name or "mcap_ros2").split(".")[0]
            raise MissingExtraError("reading ROS 2 .mcap bags", "ros", ros2._PIP_NAMES.get(module, module)) from err
        self.files = sorted(path.glob("*.mcap")) if path.is_dir() else [path]
        if not self.files:
            raise FileFormatError(f"{path}: a folder without .mcap files", hint="give the bag's .mcap file or its folder")
        self.make_reader, self.factory = make_reader, DecoderFactory()
        self.bags = [ros2._scan(f, make_reader) for f in self.files]
        topics: dict[str, str] = {}
        for bag in self.bags:
            topics.update(bag["topics"])
        joint_topics = [tp for tp, schema in topics.items() if schema in ros2.JOINT_STATE_SCHEMAS]
        self.topic = ros2._choose_topic(str(path), topics, joint_topics, topic)
        self.where = f"{path}, topic {self.topic}"
        self.joint_names = joint_names
        self._decide()
        self._setup()

    def _messages(self):
        from . import ros2

        for f, bag in zip(self.files, self.bags):
            yield from ros2.messages(f, bag, self.topic, self.factory, self.make_reader)

    def _chunks(self):
        chunk = []
        for msg in self._messages():
            chunk.append(msg)
            if len(chunk) >= self.CHUNK_MESSAGES:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    def _table(self, chunk, first: int):
        """Stamps, log times and the fields ``(m, n)`` of a chunk of messages in the target's columns."""
        from . import ros2

        m, n = len(chunk), len(self.target)
        stamp, logged = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
        values = {f: np.full((m, n), np.nan) for f in ros2._FIELDS}
        for i, msg in enumerate(chunk):                 # per message (their names may differ)
            entry = self.index_of.get(msg.name)
            if entry is None:
                entry = self.index_of[msg.name] = ros2._index(msg.name, self.column, self.target, self.where,
                                                              first + i + 1, self.joint_names is not None,
                                                              self.ignored)
            idx, keep = entry
            size = len(msg.name) if msg.name else idx.size
            for f in ros2._FIELDS:
                v = getattr(msg, f)
                if len(v) == size:
                    values[f][i, idx] = v if keep is None else np.asarray(v, dtype=float)[keep]
                elif len(v):
                    raise FileFormatError(f"{self.where}: message {first + i + 1} has {size} joints but {len(v)} {f} "
                                          "values", hint="each of position, velocity, effort holds one value per "
                                                         "name, or none")
            stamp[i], logged[i] = msg.sec * 1_000_000_000 + msg.nanosec, msg.log_ns
        return stamp, logged, values

    def _merged(self):
        """Per chunk: the times and the fields, merged by time and sorted within the chunk, and the messages that
        went back before the chunks already read (dropped)."""
        from . import ros2

        first, last = 0, None
        for chunk in self._chunks():
            stamp, logged, values = self._table(chunk, first)
            first += len(chunk)
            ns, values, _, _ = ros2._merge_by_time(stamp if self.stamps else logged, values)
            late = ns <= last if last is not None else np.zeros(ns.size, dtype=bool)
            if late.all():
                yield ns[:0], {f: v[:0] for f, v in values.items()}, int(late.sum())
                continue
            last = int(ns[~late][-1])
            yield ns[~late], {f: v[~late] for f, v in values.items()}, int(late.sum())

    def _decide(self) -> None:
        """The whole bag's decisions (a read of every message; :func:`dynid.io.ros2.read_mcap`'s rules)."""
        first_msg = next(self._messages(), None)
        if first_msg is None:
            raise FileFormatError(f"{self.source}: topic {self.topic} holds no messages",
                                  hint="record the joint states, or choose another topic", options=("topic",))
        if self.joint_names is not None:
            self.target = [str(n) for n in self.joint_names]
        elif len(first_msg.name):
            self.target = [str(n) for n in first_msg.name]
        else:
            self.target = [f"joint {j + 1}" for j in range(len(first_msg.position))]
        n = len(self.target)
        if n == 0 or len(set(self.target)) != n:
            raise FileFormatError(f"{self.where}: the joints of the first message are {self.target}",
                                  hint="every joint needs its own name")
        if self.n_joints_model is not None and n != self.n_joints_model:
            raise FileFormatError(f"{self.where}: the messages hold {n} joints ({', '.join(self.target)}) but the "
                                  f"model has {self.n_joints_model}", hint="choose the model that matches the robot")
        self.column = {name: j for j, name in enumerate(self.target)}
        self.index_of, self.ignored = {}, []
        zero = total = 0
        t0_stamp = t0_log = None
        for chunk in self._chunks():                    # the time source: header stamps where every one is set
            stamps = np.array([msg.sec * 1_000_000_000 + msg.nanosec for msg in chunk], dtype=np.int64)
            logged = np.array([msg.log_ns for msg in chunk], dtype=np.int64)
            zero += int((stamps == 0).sum())
            total += stamps.size
            t0_stamp = min(t0_stamp, int(stamps.min())) if t0_stamp is not None else int(stamps.min())
            t0_log = min(t0_log, int(logged.min())) if t0_log is not None else int(logged.min())
        self.stamps = zero == 0
        if 0 < zero:
            warnings.warn(f"{self.where}: {zero} of {total} messages have no header stamp; the time the recorder "
                          "logged each message is used instead", stacklevel=3)
        self.t0 = t0_stamp if self.stamps else t0_log
        pos = eff = vel = dropped = samples = 0
        seen = np.zeros(n, dtype=bool)
        for ns, values, late in self._merged():
            samples += ns.size
            full = {f: ~np.isnan(v).any(axis=1) for f, v in values.items()}
            seen |= ~np.isnan(values["position"]).all(axis=0)
            pos += int(full["position"].sum())
            eff += int((full["effort"] & full["position"]).sum())
            vel += int((full["velocity"] & full["position"]).sum())
            dropped += late
        if not seen.all():
            missing = [self.target[j] for j in np.flatnonzero(~seen)]
            raise FileFormatError(f"{self.where}: joint{'s' if len(missing) > 1 else ''} {', '.join(missing)} of the "
                                  "configuration's joint_names never appear in the bag",
                                  hint="give joint_names as the bag names the joints")
        if pos == 0:
            raise InputDataError(f"{self.where}: no sample holds the position of every joint",
                                 hint="record all joints in each JointState message (or at the same header stamp)")
        self.has_effort = eff >= 0.5 * pos
        if not self.has_effort and self.require_tau:
            raise FileFormatError(f"{self.where}: the JointState messages carry no effort (joint torque)",
                                  hint="identification needs the measured joint torques: record effort in the "
                                       "joint states")
        kept = eff if self.has_effort else pos
        self.has_velocity = vel >= kept
        self.n_samples_hint = kept
        self.meta = {"topic": self.topic, "joint_names": ",".join(self.target),
                     "time": "header.stamp" if self.stamps else "log_time", "t0_ns": str(self.t0)}
        robot = next((b["robot"] for b in self.bags if b["robot"]), None)
        if robot:
            self.meta["robot"] = robot
        notes = []
        if self.ignored:
            notes.append(f"joints {', '.join(sorted(self.ignored))} of the bag are not in the configuration's "
                         f"joint_names and left out")
        if pos < samples:
            notes.append(f"{samples - pos} samples without the position of every joint dropped")
        if self.has_effort and eff < pos:
            notes.append(f"{pos - eff} samples without the effort of every joint dropped")
        if dropped:
            notes.append(f"{dropped} samples logged before samples already read (a bag read in chunks is not "
                         "sorted as a whole) dropped")
        if notes:
            warnings.warn(f"{self.where}: " + "; ".join(notes), stacklevel=3)

    def _columns(self, rows: int):
        first = 0
        for ns, values, _ in self._merged():
            keep = ~np.isnan(values["position"]).any(axis=1)
            if self.has_effort:
                keep &= ~np.isnan(values["effort"]).any(axis=1)
            cols = {"t": (ns[keep] - self.t0) * 1e-9}
            for f, prefix, present in (("position", "q", True), ("velocity", "dq", self.has_velocity),
                                       ("effort", "tau", self.has_effort)):
                if present:
                    for j in range(len(self.target)):
                        cols[f"{prefix}{j + 1}"] = values[f][keep, j]
            yield first, cols
            first += int(keep.sum())


def estimated_rows(path: str | os.PathLike) -> int | None:
    """About how many rows the recording file ``path`` has, without reading it (a text file's size over its first
    lines' length, a Parquet file's metadata, an ``.npz`` archive's array shapes; None where that cannot be told:
    a ROS 2 bag, an unreadable file). For choosing whether to read it block by block."""
    path = Path(path)
    try:
        suffix = path.suffix.lower()
        if path.is_dir():
            return None
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        if suffix == ".npz":
            layout = _npz_layout(path)
            return None if layout is None else layout.rows
        if suffix == ".mcap":
            return None
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
        if head.startswith(b"\x89MCAP"):
            return None
        lines = [x for x in head.splitlines()[1:-1] if x and not x.startswith(b"#")][-200:]
        if not lines:
            return 0
        return int(path.stat().st_size / (np.mean([len(x) + 1 for x in lines])))
    except Exception:                      # (whatever it is, the reader will say)
        return None


def long_source(path: str | os.PathLike, model, *, units: str | None = None, topic: str | None = None,
                require_tau: bool = False, always: bool = False) -> FileSource | None:
    """The recording file ``path`` for ``model`` (its joints, transmission, ``joint_names``, ``torque_constants``) as
    a block source where it is long — ``STREAM_VALUES`` samples × joints or more, or ``always`` —, else None (read it
    whole, :func:`~dynid.io.readers.read_recording`)."""
    from ..signal.stream import STREAM_VALUES

    rows = estimated_rows(path)
    if not always and rows is not None and rows * model.n_joints < STREAM_VALUES:
        return None
    config = model.config
    source = open_source(path, n_joints=model.n_joints, joint_kinds=model.joint_kinds, units=units,
                         require_tau=require_tau, transmission=config.transmission,
                         torque_constants=config.torque_constants, joint_names=config.joint_names, topic=topic)
    if source is None or (not always and (source.n_samples_hint or 0) * source.n_joints < STREAM_VALUES):
        return None
    return source


def open_source(path: str | os.PathLike, *, n_joints: int | None = None, joint_kinds: Sequence[str] | None = None,
                units: str | None = None, require_tau: bool = False, use_derivatives: bool = True,
                transmission: Transmission | None = None, torque_constants: Sequence[float] | None = None,
                joint_names: Sequence[str] | None = None, topic: str | None = None) -> FileSource | None:
    """The recording file ``path`` as a :class:`~dynid.recording.RecordingSource` read block by block (the
    arguments of :func:`~dynid.io.readers.read_recording`), or None for a file read whole (an ``.npz`` whose arrays
    are in Fortran order).

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
    if units not in (None, "si", "softmc"):
        raise FileFormatError(f"units must be 'si' or 'softmc', got {units!r}")
    kw = dict(n_joints=n_joints, joint_kinds=joint_kinds, units=units, require_tau=require_tau,
              use_derivatives=use_derivatives, transmission=transmission)
    if path.suffix.lower() == ".mcap" or ros2.is_mcap(path):
        return _McapSource(path, joint_names=joint_names, topic=topic, **kw)
    if path.suffix.lower() == ".npz":
        return _NpzSource(path, **kw) if _npz_layout(path) is not None else None
    if path.is_dir():
        return None
    if path.suffix.lower() in (".parquet", ".pq"):
        return _ParquetSource(path, **kw)
    with open(path, "rb") as fh:
        if b"\x00" in fh.read(1 << 16):
            raise FileFormatError(f"{path}: contains NUL bytes, not a CSV text file",
                                  hint="give a CSV, .npz or .parquet recording")
    if rtde.is_rtde_header(_first_row(path)):
        return _RtdeSource(path, torque_constants=torque_constants, **kw)
    return _CsvSource(path, **kw)
