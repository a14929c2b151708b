"""ROS 2 bags (``.mcap``) of ``sensor_msgs/msg/JointState`` as recordings (extra ``ros``).

A bag is read behind :func:`dynid.io.readers.read_recording`; this module returns the columns
(``t``, ``q1..qn``, ``dq1..dqn``, ``tau1..taun``) that the reader assembles into a
:class:`~dynid.recording.Recording`. The bag itself is only read: nothing is written beside it.

Rules, in the order they apply:

* **Topic.** The channel whose schema is ``sensor_msgs/msg/JointState``; when the bag has several,
  ``topic`` chooses one (an error lists them otherwise). A rosbag2 folder (``metadata.yaml`` and
  split ``*.mcap`` files) is read as one bag.
* **Fields.** ``position`` → q, ``velocity`` → dq, ``effort`` → tau, in SI (rad, m, N·m, N). ROS
  allows a field to be empty; an empty field, or a NaN in it, is a missing value.
* **Joints.** Matched by name, in any order (the order may change from message to message), to the
  configuration's ``joint_names``; without them the joints and their order are those of the first
  message. With ``joint_names``, bag joints they do not name (a gripper's fingers, a conveyor) are
  left out, with a warning naming them; a configured joint the bag never holds is an error naming the
  bag's joints. Without ``joint_names``, a later message with a joint the first did not have is an
  error. A message without names is taken in that joint order when it holds one value per joint.
* **Time.** ``header.stamp`` (sec, nanosec) when every message has a non-zero stamp, else the time
  the recorder logged each message; ``t`` starts at 0 (``meta["t0_ns"]`` keeps the origin).
  Messages are sorted by time; messages with the same time are merged into one sample (per joint
  and field, the first value logged wins), so repeated messages are dropped (a warning counts them
  and the messages logged out of order).
* **Samples.** A sample is kept when it holds the position of every joint (a warning counts the
  others). Torques: when at least half of those samples hold the effort of every joint, the others
  are dropped; otherwise the recording has no torques. Velocities are used only when every kept
  sample holds them all; otherwise dynid differentiates the positions. Skipped samples leave gaps in
  ``t`` that the conditioning's time-base repair closes (:mod:`dynid.signal.time_base`).

``meta`` holds ``topic``, ``joint_names`` (the bag's names in column order), ``time`` (``header.stamp``
or ``log_time``), ``t0_ns`` and, when a metadata record of the bag has it, ``robot``.
"""

from __future__ import annotations

import os
import struct
import warnings
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..errors import FileFormatError, InputDataError, MissingExtraError

__all__ = ["read_mcap", "is_mcap", "JOINT_STATE_SCHEMAS", "MCAP_MAGIC"]

JOINT_STATE_SCHEMAS = ("sensor_msgs/msg/JointState", "sensor_msgs/JointState")
"""Schema names of joint-state channels."""

MCAP_MAGIC = b"\x89MCAP"
"""The first bytes of every MCAP file."""

_PIP_NAMES = {"mcap_ros2": "mcap-ros2-support", "mcap": "mcap"}
_FIELDS = ("position", "velocity", "effort")


def is_mcap(path: str | os.PathLike) -> bool:
    """True for an MCAP file (by its magic bytes, whatever the extension) or a folder holding ``*.mcap`` files."""
    path = Path(path)
    if path.is_dir():
        return any(path.glob("*.mcap"))
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MCAP_MAGIC)) == MCAP_MAGIC
    except OSError:
        return False


def read_mcap(path: str | os.PathLike, *, joint_names: Sequence[str] | None = None, topic: str | None = None,
              n_joints: int | None = None, require_tau: bool = False
              ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Columns and metadata of the JointState messages of a ROS 2 bag (see the module docstring).

    Parameters
    ----------
    path : path-like
        An ``.mcap`` file, or a rosbag2 folder of them.
    joint_names : sequence of str, optional
        The model's joints in column order (configuration key ``joint_names``); default: the joints
        of the first message, in its order.
    topic : str, optional
        The JointState topic to read; needed when the bag has several.
    n_joints : int, optional
        Number of joints of the model (checked against the bag's joints).
    require_tau : bool
        Whether the messages must carry efforts.

    Returns
    -------
    cols : dict of str to ndarray
        ``t`` (N,) [s] from 0, ``q1..qn``, and where the bag has them ``dq1..dqn``, ``tau1..taun`` (N,), SI.
    meta : dict of str to str

    Raises
    ------
    MissingExtraError
        The ``mcap`` / ``mcap-ros2-support`` packages (extra ``ros``) are not installed.
    FileFormatError
        Not an MCAP file; no JointState topic, or several and no ``topic``; unknown or missing joint
        names; messages whose fields do not match their names; no efforts when ``require_tau``.
    InputDataError
        No sample holds every joint's position.
    """
    try:
        from mcap.reader import make_reader
        from mcap_ros2.decoder import DecoderFactory
    except ImportError as err:
        module = (err.name or "mcap_ros2").split(".")[0]
        raise MissingExtraError("reading ROS 2 .mcap bags", "ros", _PIP_NAMES.get(module, module)) from err
    path = Path(path)
    src = str(path)
    files = sorted(path.glob("*.mcap")) if path.is_dir() else [path]
    if not files:
        raise FileFormatError(f"{src}: a folder without .mcap files", hint="give the bag's .mcap file or its folder")
    bags = [_scan(f, make_reader) for f in files]
    topics = {}
    for bag in bags:
        topics.update(bag["topics"])
    joint_topics = [tp for tp, schema in topics.items() if schema in JOINT_STATE_SCHEMAS]
    chosen = _choose_topic(src, topics, joint_topics, topic)
    factory = DecoderFactory()
    raw: list[_Sample] = []
    robot = None
    for f, bag in zip(files, bags):
        raw.extend(_decode(f, bag, chosen, factory, make_reader))
        robot = robot or bag["robot"]
    if not raw:
        raise FileFormatError(f"{src}: topic {chosen} holds no messages", hint="record the joint states, or choose "
                              "another topic", options=("topic",))
    cols, meta = _columns(raw, src, chosen, joint_names, n_joints, require_tau)
    if robot:
        meta["robot"] = robot
    return cols, meta


# ------------------------------------------------------------------------------------------ bag access

def _scan(path: Path, make_reader) -> dict[str, Any]:
    """Topics (with schema names) and the ``robot`` metadata of one MCAP file, from its summary when
    it has one, else by reading it through once."""
    src = str(path)
    topics: dict[str, str] = {}
    robot = None
    try:
        with open(path, "rb") as fh:
            reader = make_reader(fh)
            summary = reader.get_summary()
            if summary is not None:
                for ch in summary.channels.values():
                    schema = summary.schemas.get(ch.schema_id)
                    topics[ch.topic] = schema.name if schema is not None else f"({ch.message_encoding})"
            else:
                for schema, ch, _ in reader.iter_messages():
                    topics.setdefault(ch.topic, schema.name if schema is not None else f"({ch.message_encoding})")
            for record in reader.iter_metadata():
                value = dict(record.metadata).get("robot")
                if value:
                    robot = str(value).strip()
    except OSError as err:
        raise FileFormatError(f"{src}: cannot read the file ({err.strerror or err})") from err
    except Exception as err:  # mcap raises McapError, struct.error, EndOfFile... on damaged files
        raise FileFormatError(f"{src}: not a readable MCAP file ({type(err).__name__}: {err})",
                              hint="give a ROS 2 bag recorded with the mcap storage plugin") from err
    return {"topics": topics, "robot": robot}


def _choose_topic(src: str, topics: dict[str, str], joint_topics: list[str], topic: str | None) -> str:
    present = ", ".join(f"{tp} ({schema})" for tp, schema in sorted(topics.items())) or "none"
    if topic is not None:
        if topic not in topics:
            raise FileFormatError(f"{src}: the bag has no topic {topic!r}; its JointState topics: "
                                  f"{', '.join(joint_topics) or 'none'}", hint=f"topics present: {present}",
                                  options=("topic",))
        if topic not in joint_topics:
            raise FileFormatError(f"{src}: topic {topic} carries {topics[topic]}, not sensor_msgs/msg/JointState",
                                  hint=f"choose one of the JointState topics: {', '.join(joint_topics) or 'none'}",
                                  options=("topic",))
        return topic
    if not joint_topics:
        raise FileFormatError(f"{src}: the bag has no sensor_msgs/msg/JointState topic; topics present: {present}",
                              hint="record the robot's joint states (e.g. /joint_states) into the bag")
    if len(joint_topics) > 1:
        raise FileFormatError(f"{src}: the bag has {len(joint_topics)} JointState topics: {', '.join(joint_topics)}",
                              hint="choose the topic to read", options=("topic",))
    return joint_topics[0]


class _Sample(NamedTuple):
    """One JointState message: header stamp, names, the three fields, and when the recorder logged it."""

    sec: int
    nanosec: int
    name: tuple[str, ...]
    position: Sequence[float]
    velocity: Sequence[float]
    effort: Sequence[float]
    log_ns: int


def _decode(path: Path, bag: dict, topic: str, factory, make_reader) -> list[_Sample]:
    """The messages of ``topic`` in one file (:func:`messages`, as a list)."""
    return list(messages(path, bag, topic, factory, make_reader))


def messages(path: Path, bag: dict, topic: str, factory, make_reader):
    """The messages of ``topic`` in one file, one :class:`_Sample` at a time. JointState's CDR is parsed directly
    (numpy views of the arrays) when that gives what mcap-ros2-support's decoder gives for the channel's first
    message; otherwise, and for any message it cannot parse, the decoder of mcap-ros2-support is used."""
    if topic not in bag["topics"]:
        return
    src = str(path)
    decoders: dict[int, Any] = {}
    fast: dict[int, bool] = {}
    k = 0
    try:
        with open(path, "rb") as fh:
            for schema, ch, message in make_reader(fh).iter_messages(topics=[topic], log_time_order=False):
                k += 1
                dec = decoders.get(ch.id)
                if dec is None:
                    dec = factory.decoder_for(ch.message_encoding, schema)
                    if dec is None:
                        raise FileFormatError(
                            f"{src}, topic {topic}: messages encoded as {ch.message_encoding!r} with schema encoding "
                            f"{getattr(schema, 'encoding', None)!r} cannot be decoded as ROS 2 (CDR)",
                            hint="record the bag with ROS 2 (rosbag2, mcap storage)")
                    decoders[ch.id] = dec
                    fast[ch.id] = _same(_parse_cdr(message.data, 0), _from_decoded(dec(message.data), 0))
                sample = _parse_cdr(message.data, int(message.log_time)) if fast[ch.id] else None
                yield sample if sample is not None else _from_decoded(dec(message.data), int(message.log_time))
    except FileFormatError:
        raise
    except Exception as err:  # CDR/MCAP decoding errors of every kind
        raise FileFormatError(f"{src}, topic {topic}: message {k} cannot be decoded ({type(err).__name__}: {err})",
                              hint="the bag is damaged or its JointState schema is not the ROS 2 one") from err


def _from_decoded(msg: Any, log_ns: int) -> _Sample:
    st = msg.header.stamp
    return _Sample(int(st.sec), int(st.nanosec), tuple(str(x) for x in msg.name), msg.position, msg.velocity,
                   msg.effort, log_ns)


_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")


def _parse_cdr(data: bytes, log_ns: int) -> _Sample | None:
    """``sensor_msgs/msg/JointState`` from little-endian CDR (ROS 2's encoding), or None when ``data``
    is not that (another encapsulation, or a layout that does not fit)."""
    if len(data) < 12 or data[0] != 0 or data[1] != 1:
        return None
    try:
        buf = memoryview(data)[4:]              # CDR alignment counts from after the encapsulation header
        sec, nanosec = _STAMP.unpack_from(buf, 0)
        off = 8 + 4 + _U32.unpack_from(buf, 8)[0]          # frame_id
        off = (off + 3) & ~3
        count = _U32.unpack_from(buf, off)[0]
        off += 4
        names = []
        for _ in range(count):
            off = (off + 3) & ~3
            size = _U32.unpack_from(buf, off)[0]
            off += 4
            if size < 1 or off + size > len(buf):
                return None
            names.append(bytes(buf[off:off + size - 1]).decode("utf-8"))
            off += size
        arrays = []
        for _ in range(3):
            off = (off + 3) & ~3
            count = _U32.unpack_from(buf, off)[0]
            off += 4
            if count:
                off = (off + 7) & ~7
                if off + 8 * count > len(buf):
                    return None
                arrays.append(np.frombuffer(buf, "<f8", count, off))
                off += 8 * count
            else:
                arrays.append(())
    except (struct.error, UnicodeDecodeError, ValueError):
        return None
    return _Sample(sec, nanosec, tuple(names), arrays[0], arrays[1], arrays[2], log_ns)


def _same(a: _Sample | None, b: _Sample) -> bool:
    if a is None or (a.sec, a.nanosec, a.name) != (b.sec, b.nanosec, b.name):
        return False
    return all(len(x) == len(y) and np.array_equal(np.asarray(x, float), np.asarray(y, float), equal_nan=True)
               for x, y in ((a.position, b.position), (a.velocity, b.velocity), (a.effort, b.effort)))


# ------------------------------------------------------------------------------------------ columns

def _columns(raw: list[_Sample], src: str, topic: str, joint_names: Sequence[str] | None,
             n_joints: int | None, require_tau: bool) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    where = f"{src}, topic {topic}"
    raw.sort(key=lambda r: r.log_ns)  # log order (files and chunks may interleave); stable for equal times
    first = raw[0]
    if joint_names is not None:
        target = [str(n) for n in joint_names]
    elif len(first.name):
        target = [str(n) for n in first.name]
    else:
        target = [f"joint {j + 1}" for j in range(len(first.position))]  # no names at all: positional
    n = len(target)
    if n == 0:
        raise FileFormatError(f"{where}: the first message holds no joints", hint="record the robot's joint states")
    if len(set(target)) != n:
        raise FileFormatError(f"{where}: joint names repeat in {target}", hint="every joint needs its own name")
    if n_joints is not None and n != n_joints:
        raise FileFormatError(
            f"{where}: the messages hold {n} joints ({', '.join(target)}) but the model has {n_joints}",
            hint="choose the model that matches the robot")
    column = {name: j for j, name in enumerate(target)}
    index_of: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray | None]] = {}
    ignored: list[str] = []
    m = len(raw)
    stamp = np.empty(m, dtype=np.int64)
    logged = np.empty(m, dtype=np.int64)
    values = {f: np.full((m, n), np.nan) for f in _FIELDS}
    for i, msg in enumerate(raw):
        entry = index_of.get(msg.name)
        if entry is None:
            entry = index_of[msg.name] = _index(msg.name, column, target, where, i + 1, joint_names is not None,
                                                ignored)
        idx, keep = entry
        size = len(msg.name) if msg.name else idx.size
        for f in _FIELDS:
            v = getattr(msg, f)
            if len(v) == size:
                values[f][i, idx] = v if keep is None else np.asarray(v, dtype=float)[keep]
            elif len(v):
                raise FileFormatError(f"{where}: message {i + 1} has {size} joints but {len(v)} {f} values",
                                      hint="each of position, velocity, effort holds one value per name, or none")
        stamp[i] = msg.sec * 1_000_000_000 + msg.nanosec
        logged[i] = msg.log_ns
    seen = np.zeros(n, dtype=bool)
    for idx, _ in index_of.values():
        seen[idx] = True
    if not seen.all():
        missing = [target[j] for j in np.flatnonzero(~seen)]
        raise FileFormatError(f"{where}: joint{'s' if len(missing) > 1 else ''} {', '.join(missing)} of the "
                              f"configuration's joint_names never appear{'s' if len(missing) == 1 else ''} in the bag "
                              f"(its joints: {', '.join(_bag_names(index_of, target))})",
                              hint="give joint_names as the bag names the joints")
    if ignored:
        warnings.warn(f"{where}: joint{'s' if len(ignored) > 1 else ''} {', '.join(sorted(ignored))} of the bag "
                      f"{'are' if len(ignored) > 1 else 'is'} not in the configuration's joint_names "
                      f"({', '.join(target)}) and left out", stacklevel=4)
    meta = {"topic": topic, "joint_names": ",".join(target)}
    if (stamp != 0).all():
        ns, meta["time"] = stamp, "header.stamp"
    else:
        if (stamp != 0).any():
            warnings.warn(f"{where}: {int((stamp == 0).sum())} of {m} messages have no header stamp; the time the "
                          "recorder logged each message is used instead", stacklevel=4)
        ns, meta["time"] = logged, "log_time"
    ns, values, backwards, merged = _merge_by_time(ns, values)
    kept, values = _complete(ns, values, where, target, require_tau)
    ns = ns[kept]
    notes = []
    if backwards:
        notes.append(f"{backwards} messages out of time order were sorted")
    if merged:
        notes.append(f"{merged} messages repeat the time stamp and joints of an earlier one (the first is kept)")
    if notes:
        warnings.warn(f"{where}: " + "; ".join(notes), stacklevel=4)
    meta["t0_ns"] = str(int(ns[0]))
    cols: dict[str, np.ndarray] = {"t": (ns - ns[0]) * 1e-9}
    for f, prefix in (("position", "q"), ("velocity", "dq"), ("effort", "tau")):
        if values[f] is not None:
            for j in range(n):
                cols[f"{prefix}{j + 1}"] = values[f][:, j]
    return cols, meta


def _index(names: tuple[str, ...], column: dict[str, int], target: list[str], where: str, k: int,
           configured: bool, ignored: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """Columns of a message's joints (in the message's order) and which of its values they are (``None``:
    all; with configured names, joints they do not name are left out and added to ``ignored``)."""
    if not names:
        return np.arange(len(target)), None
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise FileFormatError(f"{where}: message {k} names joint {dup[0]} twice", hint="every joint needs its own name")
    unknown = [x for x in names if x not in column]
    if unknown and configured:
        ignored += [x for x in unknown if x not in ignored]
        keep = np.array([i for i, x in enumerate(names) if x in column], dtype=np.intp)
        return np.array([column[names[i]] for i in keep], dtype=np.intp), keep
    if unknown:
        raise FileFormatError(
            f"{where}: message {k} has joint{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} that "
            f"the first message's joints ({', '.join(target)}) do not name",
            hint="give joint_names (configuration) as the bag names the model's joints; bag joints they do not "
                 "name are then left out")
    return np.array([column[x] for x in names], dtype=np.intp), None


def _bag_names(index_of: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray | None]], target: list[str]) -> list[str]:
    names: list[str] = []
    for key in index_of:
        names += [x for x in key if x not in names]
    return names or list(target)


def _merge_by_time(ns: np.ndarray, values: dict[str, np.ndarray]):
    """Sort by time and merge messages with the same time: per joint and field the first value logged.

    Returns the times, the merged fields, the number of messages logged before an earlier stamp, and
    the number of messages that repeat a position already given at their stamp (duplicates; messages
    that complete a stamp with other joints are not counted)."""
    backwards = int((np.diff(ns) < 0).sum())
    order = np.argsort(ns, kind="stable")
    ns = ns[order]
    uniq, start = np.unique(ns, return_index=True)
    if uniq.size == ns.size:
        return ns, {f: v[order] for f, v in values.items()}, backwards, 0
    group = np.repeat(np.arange(uniq.size), np.diff(np.append(start, ns.size)))
    out = {}
    repeats = np.zeros(ns.size, dtype=bool)
    for f, v in values.items():
        v = v[order]
        w = np.full((uniq.size, v.shape[1]), np.nan)
        for j in range(v.shape[1]):
            has = np.flatnonzero(~np.isnan(v[:, j]))
            g, first = np.unique(group[has], return_index=True)
            w[g, j] = v[has[first], j]
            if f == "position":
                repeats[has] = True
                repeats[has[first]] = False
        out[f] = w
    return uniq, out, backwards, int(repeats.sum())


def _complete(ns, values, where, target, require_tau):
    """Samples that hold every joint's position (and effort when the bag has efforts); each field
    becomes ``None`` when the recording does not have it."""
    full = {f: ~np.isnan(v).any(axis=1) for f, v in values.items()}
    keep = full["position"]
    n_pos = int(keep.sum())
    if n_pos == 0:
        lacking = [target[j] for j in np.flatnonzero(np.isnan(values["position"]).all(axis=0))]
        raise InputDataError(
            f"{where}: none of the {ns.size} samples holds the position of every joint"
            + (f" ({', '.join(lacking)} never has one)" if lacking else ""),
            hint="record all joints in each JointState message (or at the same header stamp)")
    effort = full["effort"] & keep
    has_tau = effort.sum() >= 0.5 * n_pos
    dropped = []
    if n_pos < ns.size:
        dropped.append(f"{ns.size - n_pos} samples without the position of every joint")
    if has_tau and effort.sum() < n_pos:
        dropped.append(f"{n_pos - int(effort.sum())} samples without the effort of every joint")
        keep = effort
    if dropped:
        warnings.warn(f"{where}: dropped " + " and ".join(dropped) + f"; {int(keep.sum())} samples kept", stacklevel=5)
    if not has_tau and require_tau:
        some = int(effort.sum())
        raise FileFormatError(
            f"{where}: the JointState messages carry no effort (joint torque)"
            + (f" in {n_pos - some} of {n_pos} samples" if some else ""),
            hint="identification needs the measured joint torques: record effort in the joint states")
    out = {"position": values["position"][keep], "effort": values["effort"][keep] if has_tau else None,
           "velocity": values["velocity"][keep] if full["velocity"][keep].all() else None}
    if out["velocity"] is None and full["velocity"][keep].any():
        warnings.warn(f"{where}: velocities are missing in some samples; they are taken from the positions instead",
                      stacklevel=5)
    return keep, out
