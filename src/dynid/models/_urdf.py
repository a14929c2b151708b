"""Kinematic chains of the ``serial`` model: from a URDF file or a DH table, as plain JSON-able data.

A *chain description* is the mapping stored under the configuration key ``chain`` (and therefore in
``result.json``, so an identified model is rebuilt without the URDF file or its parser)::

    {"robot": "tx40",
     "links": [{"name": "link_1",            # body name, used in parameter names (link_1.m, ...)
                "joint": "joint_1",          # joint moving it
                "type": "revolute",          # revolute | continuous | prismatic
                "pre":  [[r11, r12, r13, x], [r21, r22, r23, y], [r31, r32, r33, z]],
                                             # parent body frame -> joint frame at q = 0 (3 x 4) [m]
                "axis": [0, 0, 1],           # joint axis in the joint frame
                "post": [[...], [...], [...]],  # optional: moved joint frame -> body frame (standard DH)
                "limits": [lo, hi] | null,   # [rad or m]
                "inertia": [Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m] | null,
                                             # prior, body frame, inertia about the body origin (SI)
                "mimic": {"joint": "j2", "multiplier": 1.0, "offset": 0.0} | null}]}

URDF files are read by dynid's own reader (the standard library's XML parser: ``<joint>`` origin, axis,
limits, mimic; ``<link><inertial>``), or on request with ``yourdfpy`` or Pinocchio (``backend=``) —
the tests compare the chains against Pinocchio's model; meshes are never loaded. Fixed joints are merged: their child link's inertia is lumped
into the moving body they hang from (links fixed to the base are dropped). Continuous joints are
revolute joints without limits. A mimic joint ``q_m = multiplier·q_master + offset`` becomes an
extra body driven by its master joint.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError, FileFormatError, MissingExtraError
from ._rnea import Element

__all__ = ["read_urdf", "dh_chain", "check_chain", "chain_elements", "MOVING_TYPES"]

MOVING_TYPES = ("revolute", "continuous", "prismatic")


# ---------------------------------------------------------------------------- small geometry

def _rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _hom(R: np.ndarray | None = None, p: Sequence[float] | None = None) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def _to_3x4(T: np.ndarray) -> list[list[float]]:
    return [[float(x) for x in row] for row in np.asarray(T)[:3, :4]]


def _from_3x4(rows: Any, where: str) -> np.ndarray:
    try:
        a = np.array(rows, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{where} must be a 3 x 4 matrix [R | p], got {rows!r}") from None
    if a.shape != (3, 4) or not np.all(np.isfinite(a)):
        raise ConfigError(f"{where} must be a finite 3 x 4 matrix [R | p], got shape {a.shape}")
    R = a[:, :3]
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise ConfigError(f"{where}: the left 3 x 3 block is not a rotation matrix")
    return _hom(R, a[:, 3])


def body_parameters(mass: float, com: Sequence[float], inertia_com: np.ndarray, R: np.ndarray | None = None) -> np.ndarray:
    """Ten standard parameters ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]`` (inertia about the origin).

    Parameters
    ----------
    mass : float
        [kg]
    com : array-like, shape (3,)
        Centre of mass in the body frame [m].
    inertia_com : array-like, shape (3, 3)
        Inertia about the COM [kg m^2], in axes rotated by ``R`` from the body frame.
    R : array-like, shape (3, 3), optional
        Orientation of those axes in the body frame (URDF ``<inertial><origin rpy>``), default identity.
    """
    c = np.asarray(com, dtype=float)
    Ic = np.asarray(inertia_com, dtype=float)
    if R is not None:
        Ic = R @ Ic @ R.T
    Io = Ic + mass * (c @ c * np.eye(3) - np.outer(c, c))  # parallel-axis (Huygens–Steiner)
    return np.array([Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2], *(mass * c), mass])


def transform_parameters(pi: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Parameters of a body given in frame ``b`` expressed in frame ``a``, with ``T = T_ab`` (4 x 4).

    The map is linear in ``pi`` (it also holds for massless or non-physical vectors)."""
    R, p = T[:3, :3], T[:3, 3]
    m, h = pi[9], pi[6:9]
    Ib = _inertia_matrix(pi[:6])
    hR = R @ h
    # I_a = R I_b R^T + m (|p|^2 E - p p^T) - ([p]x [R h]x + [R h]x [p]x) : inertia about a's origin
    Px, Hx = _skew(p), _skew(hR)
    Ia = R @ Ib @ R.T + m * (p @ p * np.eye(3) - np.outer(p, p)) - (Px @ Hx + Hx @ Px)
    return np.array([Ia[0, 0], Ia[0, 1], Ia[0, 2], Ia[1, 1], Ia[1, 2], Ia[2, 2], *(hR + m * p), m])


def _skew(u: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])


def _inertia_matrix(six: Sequence[float]) -> np.ndarray:
    xx, xy, xz, yy, yz, zz = six
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


# ---------------------------------------------------------------------------- URDF

def read_urdf(path: str | os.PathLike, backend: str | None = None) -> dict[str, Any]:
    """Read a URDF file into a chain description (see module docstring).

    Parameters
    ----------
    path : path-like
        URDF file. Meshes it references are not needed.
    backend : {"xml", "yourdfpy", "pinocchio"}, optional
        Parser. Default ``xml``: dynid's own (no dependency, no import time; Pinocchio's import alone
        takes 0.1 s and yourdfpy's loads trimesh).

    Raises
    ------
    FileFormatError
        Unreadable file, not a serial chain (a branch with moving joints, several roots), a floating
        or planar joint, a mimic joint whose master is missing.
    MissingExtraError
        Neither parser is installed (``pip install 'dynid[urdf]'``).
    """
    path = Path(path)
    if not path.is_file():
        raise FileFormatError(f"{path}: URDF file not found", hint="pass an existing URDF file", options=("urdf",))
    if backend is None or backend == "xml":
        joints, inertials, name = _parse_xml(path)
    elif backend == "yourdfpy":
        joints, inertials, name = _parse_yourdfpy(path)
    elif backend == "pinocchio":
        return _read_pinocchio(path)
    else:
        raise ConfigError(f"URDF backend must be 'xml', 'yourdfpy' or 'pinocchio', got {backend!r}")
    return _merge_tree(path, name, joints, inertials)


def _floats(text: str | None, n: int, default: float, where: str) -> np.ndarray:
    if text is None:
        return np.full(n, default)
    try:
        v = np.array([float(x) for x in text.split()], dtype=float)
    except ValueError:
        raise FileFormatError(f"{where}: expected {n} numbers, got {text!r}") from None
    if v.size != n or not np.all(np.isfinite(v)):
        raise FileFormatError(f"{where}: expected {n} finite numbers, got {text!r}")
    return v


def _origin(elem, where: str) -> np.ndarray:
    """``<origin xyz rpy>`` as a 4 x 4 transform (URDF: R = Rz(yaw) Ry(pitch) Rx(roll))."""
    if elem is None:
        return np.eye(4)
    xyz = _floats(elem.get("xyz"), 3, 0.0, f"{where} <origin xyz>")
    r, p, y = _floats(elem.get("rpy"), 3, 0.0, f"{where} <origin rpy>")
    cp, sp = math.cos(p), math.sin(p)
    Ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    return _hom(_rot_z(y) @ Ry @ _rot_x(r), xyz)


def _parse_xml(path: Path):
    """Joints, link inertials and the robot's name from the URDF's XML (standard library only)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        raise FileFormatError(f"{path}: not a readable URDF ({type(err).__name__}: {err})",
                              hint="check the XML; the file must have a <robot> element with <link> and <joint> "
                                   "elements") from err
    if root.tag != "robot":
        raise FileFormatError(f"{path}: the root element is <{root.tag}>, not <robot>")
    joints = []
    for j in root.findall("joint"):
        name = j.get("name", "?")
        where = f"{path}: joint {name!r}"
        parent, child = j.find("parent"), j.find("child")
        if parent is None or child is None or parent.get("link") is None or child.get("link") is None:
            raise FileFormatError(f"{where} needs <parent link=...> and <child link=...>")
        axis_el = j.find("axis")
        axis = _floats(None if axis_el is None else axis_el.get("xyz"), 3, 0.0, f"{where} <axis>") \
            if axis_el is not None else np.array([1.0, 0.0, 0.0])
        lim = None
        lim_el = j.find("limit")
        if lim_el is not None and lim_el.get("lower") is not None and lim_el.get("upper") is not None:
            lim = (float(lim_el.get("lower")), float(lim_el.get("upper")))
        mimic = None
        mim = j.find("mimic")
        if mim is not None:
            mimic = {"joint": mim.get("joint"), "multiplier": float(mim.get("multiplier", 1.0)),
                     "offset": float(mim.get("offset", 0.0))}
        joints.append({"name": name, "type": j.get("type"), "parent": parent.get("link"), "child": child.get("link"),
                       "origin": _origin(j.find("origin"), where), "axis": axis, "limits": lim, "mimic": mimic})
    inertials: dict[str, np.ndarray | None] = {}
    for link in root.findall("link"):
        name = link.get("name")
        ine = link.find("inertial")
        mass_el = None if ine is None else ine.find("mass")
        if ine is None or mass_el is None:
            inertials[name] = None
            continue
        where = f"{path}: link {name!r}"
        T = _origin(ine.find("origin"), where)
        I_el = ine.find("inertia")
        if I_el is None:
            Ic = np.zeros((3, 3))
        else:
            v = {k: float(I_el.get(k, 0.0)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            Ic = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                           [v["ixz"], v["iyz"], v["izz"]]])
        inertials[name] = body_parameters(float(mass_el.get("value", 0.0)), T[:3, 3], Ic, T[:3, :3])
    return joints, inertials, root.get("name", path.stem)


def _parse_yourdfpy(path: Path):
    try:
        import yourdfpy
    except ImportError:
        raise MissingExtraError("reading a URDF (model 'serial')", "urdf", "yourdfpy") from None
    try:
        robot = yourdfpy.URDF.load(str(path), build_scene_graph=False, build_collision_scene_graph=False,
                                   load_meshes=False, load_collision_meshes=False)
    except Exception as err:  # lxml and yourdfpy raise many kinds
        raise FileFormatError(f"{path}: not a readable URDF ({type(err).__name__}: {err})",
                              hint="check the XML; the file must have a <robot> element with <link> and <joint> elements") from err
    joints = []
    for j in robot.robot.joints:
        mimic = None
        if j.mimic is not None:
            mimic = {"joint": j.mimic.joint,
                     "multiplier": 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier),
                     "offset": 0.0 if j.mimic.offset is None else float(j.mimic.offset)}
        lim = None
        if j.limit is not None and j.limit.lower is not None and j.limit.upper is not None:
            lim = (float(j.limit.lower), float(j.limit.upper))
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=float)
        axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=float)
        joints.append({"name": j.name, "type": j.type, "parent": j.parent, "child": j.child, "origin": origin,
                       "axis": axis, "limits": lim, "mimic": mimic})
    inertials = {}
    for link in robot.robot.links:
        ine = link.inertial
        if ine is None or ine.mass is None:
            inertials[link.name] = None
            continue
        T = np.eye(4) if ine.origin is None else np.asarray(ine.origin, dtype=float)
        Ic = np.zeros((3, 3)) if ine.inertia is None else np.asarray(ine.inertia, dtype=float)
        inertials[link.name] = body_parameters(float(ine.mass), T[:3, 3], Ic, T[:3, :3])
    return joints, inertials, robot.robot.name


def _merge_tree(path: Path, robot_name: str, joints: list[dict], inertials: dict[str, np.ndarray | None]) -> dict[str, Any]:
    """Walk the link tree from its root, merge fixed joints, check that the moving joints form a chain."""
    by_parent: dict[str, list[dict]] = {}
    children = set()
    for j in joints:
        if j["type"] in ("floating", "planar"):
            raise FileFormatError(f"{path}: joint {j['name']!r} is {j['type']}; model 'serial' takes revolute, "
                                  "continuous, prismatic and fixed joints only",
                                  hint="remove the joint (a fixed base needs no joint) or make it fixed")
        if j["type"] not in MOVING_TYPES + ("fixed",):
            raise FileFormatError(f"{path}: joint {j['name']!r} has unknown type {j['type']!r}")
        by_parent.setdefault(j["parent"], []).append(j)
        if j["child"] in children:
            raise FileFormatError(f"{path}: link {j['child']!r} is the child of two joints")
        children.add(j["child"])
    roots = [name for name in inertials if name not in children]
    if len(roots) != 1:
        raise FileFormatError(f"{path}: the links must form one tree with a single root, found roots {roots}",
                              hint="a URDF for model 'serial' describes one fixed-base robot")
    links: list[dict[str, Any]] = []
    params: list[np.ndarray] = []
    # stack of (link, owning body index or -1 for the base, T_body_link)
    stack = [(roots[0], -1, np.eye(4))]
    while stack:
        link, body, T = stack.pop()
        pi = inertials.get(link)
        if pi is not None and body >= 0:
            params[body] = params[body] + transform_parameters(pi, T)
        for j in by_parent.get(link, []):
            Tj = T @ j["origin"]
            if j["type"] == "fixed":
                stack.append((j["child"], body, Tj))
                continue
            if body != len(links) - 1:
                prev = links[body]["name"] if body >= 0 else roots[0]
                raise FileFormatError(
                    f"{path}: joint {j['name']!r} branches off link {prev!r}, which already has a moving child; "
                    "model 'serial' needs a serial chain",
                    hint="make the joints of side branches (e.g. gripper fingers) fixed")
            axis = np.asarray(j["axis"], dtype=float)
            norm = float(np.linalg.norm(axis))
            if not norm > 0:
                raise FileFormatError(f"{path}: joint {j['name']!r} has a zero <axis>")
            lim = j["limits"] if j["type"] != "continuous" else None
            if lim is not None and not lim[0] < lim[1]:
                lim = None  # URDF allows lower == upper == 0 for "no limit given"
            links.append({"name": j["child"], "joint": j["name"], "type": j["type"], "pre": _to_3x4(Tj),
                          "axis": [float(x) for x in axis / norm], "limits": None if lim is None else list(lim),
                          "inertia": None, "mimic": j["mimic"]})
            params.append(np.zeros(10))
            stack.append((j["child"], len(links) - 1, np.eye(4)))
    if not links:
        raise FileFormatError(f"{path}: the URDF has no revolute, continuous or prismatic joint")
    for link, pi in zip(links, params):
        link["inertia"] = [float(x) for x in pi]
    chain = {"robot": robot_name, "links": links}
    check_chain(chain, where=str(path), error=FileFormatError)
    return chain


def _read_pinocchio(path: Path) -> dict[str, Any]:
    """The same chain description from Pinocchio's parser (fallback when yourdfpy is missing)."""
    try:
        import pinocchio as pin
    except ImportError:
        raise MissingExtraError("reading a URDF (model 'serial')", "urdf", "yourdfpy") from None
    try:
        model = pin.buildModelFromUrdf(str(path), mimic=True)
    except Exception as err:
        raise FileFormatError(f"{path}: not a readable URDF ({type(err).__name__}: {err})") from err
    links = []
    data = model.createData()
    for jid in range(1, model.njoints):
        jm = model.joints[jid]
        short = jm.shortname()
        if model.parents[jid] != jid - 1:
            raise FileFormatError(f"{path}: joint {model.names[jid]!r} branches; model 'serial' needs a serial chain")
        if "Mimic" in short:
            raise FileFormatError(f"{path}: joint {model.names[jid]!r} is a mimic joint, which the Pinocchio reader "
                                  "does not convert", hint="install yourdfpy: pip install 'dynid[urdf]'")
        if jm.nv != 1:
            raise FileFormatError(f"{path}: joint {model.names[jid]!r} ({short}) has {jm.nv} degrees of freedom; "
                                  "model 'serial' takes revolute, continuous, prismatic and fixed joints only")
        # the joint axis is its motion subspace: the joint-frame velocity for unit joint speed
        v = np.zeros(model.nv)
        v[jm.idx_v] = 1.0
        pin.forwardKinematics(model, data, pin.neutral(model), v)
        w, lin = np.asarray(data.v[jid].angular), np.asarray(data.v[jid].linear)
        kind = "revolute" if np.linalg.norm(w) > 0.5 else "prismatic"
        axis = [float(x) for x in (w if kind == "revolute" else lin)]
        if jm.nq == 2:
            kind = "continuous"
        # the body of joint jid: the BODY frame attached to it (its URDF child link)
        body = next((f.name for f in model.frames if f.parentJoint == jid and f.type == pin.FrameType.BODY
                     and f.placement.isIdentity()), model.names[jid])
        iq = model.joints[jid].idx_q
        lim = None
        if kind != "continuous":
            lo, hi = float(model.lowerPositionLimit[iq]), float(model.upperPositionLimit[iq])
            if math.isfinite(lo) and math.isfinite(hi) and lo < hi:
                lim = [lo, hi]
        pi = np.asarray(model.inertias[jid].toDynamicParameters(), dtype=float)
        # Pinocchio order: m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz (about the joint origin)
        ours = pi[[4, 5, 7, 6, 8, 9, 1, 2, 3, 0]]
        links.append({"name": body, "joint": model.names[jid], "type": kind,
                      "pre": _to_3x4(model.jointPlacements[jid].homogeneous), "axis": axis, "limits": lim,
                      "inertia": [float(x) for x in ours], "mimic": None})
    if not links:
        raise FileFormatError(f"{path}: the URDF has no revolute, continuous or prismatic joint")
    chain = {"robot": model.name, "links": links}
    check_chain(chain, where=str(path), error=FileFormatError)
    return chain


# ---------------------------------------------------------------------------- DH

def dh_chain(rows: Sequence[Mapping[str, Any]], convention: str = "standard",
             inertial: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Chain description of a DH table.

    Parameters
    ----------
    rows : sequence of mapping
        Per joint ``{a [m], alpha [rad], d [m], theta_offset [rad], type: revolute|prismatic}`` (missing
        numbers are 0, type defaults to revolute). For a revolute joint ``theta = q + theta_offset``,
        for a prismatic one ``d = q + d``.
    convention : {"standard", "modified"}
        Standard DH (Denavit–Hartenberg as in Spong / Corke's ``Link``): ``T = Rz(theta) Tz(d) Tx(a) Rx(alpha)``
        and body ``i``'s frame at its distal end. Modified DH (Craig / Khalil–Kleinfinger):
        ``T = Rx(alpha) Tx(a) Rz(theta) Tz(d)``, body frame on its own joint axis.
    inertial : sequence of mapping, optional
        Priors per link ``{mass [kg], com [m] (3,), inertia [kg m^2]}`` in the link's DH frame, ``inertia``
        about the COM as ``[ixx, ixy, ixz, iyy, iyz, izz]`` (URDF order) or a 3 x 3 matrix.
    """
    if convention not in ("standard", "modified"):
        raise ConfigError(f"convention must be 'standard' or 'modified', got {convention!r}")
    if not isinstance(rows, (list, tuple)) or not rows:
        raise ConfigError(f"dh must be a non-empty list of {{a, alpha, d, theta_offset, type}} rows, got {rows!r}")
    if inertial is not None and len(inertial) != len(rows):
        raise ConfigError(f"links has {len(inertial)} entries but dh has {len(rows)} rows")
    links = []
    for k, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ConfigError(f"dh row {k + 1} must be a mapping {{a, alpha, d, theta_offset, type}}, got {row!r}")
        extra = sorted(set(row) - {"a", "alpha", "d", "theta_offset", "type", "limits"})
        if extra:
            raise ConfigError(f"dh row {k + 1}: unknown key {extra[0]!r}", hint="keys: a, alpha, d, theta_offset, type, limits")
        num = {}
        for key in ("a", "alpha", "d", "theta_offset"):
            v = row.get(key, 0.0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ConfigError(f"dh row {k + 1}: {key} must be a finite number, got {v!r}")
            num[key] = float(v)
        kind = row.get("type", "revolute")
        if kind not in ("revolute", "prismatic"):
            raise ConfigError(f"dh row {k + 1}: type must be 'revolute' or 'prismatic', got {kind!r}")
        fixed = _hom(_rot_z(num["theta_offset"])) @ _hom(None, [0.0, 0.0, num["d"]])
        if convention == "standard":
            pre = np.eye(4)
            post = fixed @ _hom(None, [num["a"], 0.0, 0.0]) @ _hom(_rot_x(num["alpha"]))
        else:
            pre = _hom(_rot_x(num["alpha"])) @ _hom(None, [num["a"], 0.0, 0.0]) @ fixed
            post = np.eye(4)
        inertia = None
        if inertial is not None:
            inertia = [float(x) for x in _inertial_prior(inertial[k], k)]
        link = {"name": f"link{k + 1}", "joint": f"joint{k + 1}", "type": kind, "pre": _to_3x4(pre),
                "axis": [0.0, 0.0, 1.0], "limits": row.get("limits"), "inertia": inertia, "mimic": None}
        if convention == "standard":
            link["post"] = _to_3x4(post)
        links.append(link)
    chain = {"robot": f"dh-{convention}", "links": links}
    check_chain(chain, where="dh")
    return chain


def _inertial_prior(entry: Mapping[str, Any], k: int) -> np.ndarray:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"links[{k}] must be a mapping {{mass, com, inertia}}, got {entry!r}")
    extra = sorted(set(entry) - {"mass", "com", "inertia"})
    if extra:
        raise ConfigError(f"links[{k}]: unknown key {extra[0]!r}", hint="keys: mass [kg], com [m], inertia [kg m^2] about the COM")
    try:
        m = float(entry.get("mass", 0.0))
        c = np.array(entry.get("com", [0.0, 0.0, 0.0]), dtype=float).reshape(3)
        I = np.array(entry.get("inertia", [0.0] * 6), dtype=float)
        I = _inertia_matrix(I) if I.shape == (6,) else I.reshape(3, 3)
    except (TypeError, ValueError):
        raise ConfigError(f"links[{k}]: mass must be a number, com 3 numbers, inertia 6 numbers "
                          "[ixx, ixy, ixz, iyy, iyz, izz] or a 3 x 3 matrix") from None
    return body_parameters(m, c, I)


# ---------------------------------------------------------------------------- checks and elements

def check_chain(chain: Any, where: str = "chain", error: type = ConfigError) -> None:
    """Validate a chain description; raise ``error`` naming the offending link and key."""
    if not isinstance(chain, Mapping) or not isinstance(chain.get("links"), (list, tuple)) or not chain["links"]:
        raise error(f"{where}: a chain needs a non-empty 'links' list")
    names, joints = set(), {}
    for k, link in enumerate(chain["links"]):
        if not isinstance(link, Mapping):
            raise error(f"{where}: links[{k}] must be a mapping")
        for key in ("name", "joint", "type", "pre", "axis"):
            if key not in link:
                raise error(f"{where}: links[{k}] has no {key!r}")
        if link["type"] not in MOVING_TYPES:
            raise error(f"{where}: link {link['name']!r}: type must be one of {', '.join(MOVING_TYPES)}, got {link['type']!r}")
        if link["name"] in names:
            raise error(f"{where}: link name {link['name']!r} appears twice")
        names.add(link["name"])
        joints[link["joint"]] = link
        _from_3x4(link["pre"], f"{where}: link {link['name']!r} 'pre'")
        if link.get("post") is not None:
            _from_3x4(link["post"], f"{where}: link {link['name']!r} 'post'")
        ax = np.asarray(link["axis"], dtype=float)
        if ax.shape != (3,) or not np.linalg.norm(ax) > 0:
            raise error(f"{where}: link {link['name']!r}: axis must be 3 numbers, not all zero, got {link['axis']!r}")
        inertia = link.get("inertia")
        if inertia is not None and (len(inertia) != 10 or not np.all(np.isfinite(np.asarray(inertia, dtype=float)))):
            raise error(f"{where}: link {link['name']!r}: inertia must be 10 finite numbers [Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]")
        lim = link.get("limits")
        if lim is not None and (len(lim) != 2 or not float(lim[0]) < float(lim[1])):
            raise error(f"{where}: link {link['name']!r}: limits must be [lo, hi] with lo < hi, got {lim!r}")
    for link in chain["links"]:
        mimic = link.get("mimic")
        if mimic is None:
            continue
        master = joints.get(mimic.get("joint"))
        if master is None:
            raise error(f"{where}: joint {link['joint']!r} mimics {mimic.get('joint')!r}, which is not a moving joint of the chain")
        if master.get("mimic") is not None:
            raise error(f"{where}: joint {link['joint']!r} mimics {master['joint']!r}, which is itself a mimic joint")


def chain_elements(chain: Mapping[str, Any]) -> tuple[list[Element], np.ndarray, np.ndarray, list[int]]:
    """Elements for :func:`~dynid.models._rnea.compile_chain` and the joint coupling.

    Returns
    -------
    elements : list of Element, (n_bodies,)
    C : ndarray, shape (n_bodies, n_joints)
        ``q_body = q @ C.T + offset``; identity without mimic joints.
    offset : ndarray, shape (n_bodies,)
    actuated : list of int
        Body indices of the independent (actuated) joints, in order.
    """
    links = chain["links"]
    actuated = [k for k, link in enumerate(links) if link.get("mimic") is None]
    joint_index = {links[k]["joint"]: col for col, k in enumerate(actuated)}
    C = np.zeros((len(links), len(actuated)))
    offset = np.zeros(len(links))
    elements = []
    for k, link in enumerate(links):
        mimic = link.get("mimic")
        if mimic is None:
            C[k, joint_index[link["joint"]]] = 1.0
        else:
            C[k, joint_index[mimic["joint"]]] = float(mimic.get("multiplier", 1.0))
            offset[k] = float(mimic.get("offset", 0.0))
        post = link.get("post")
        elements.append(Element("linear" if link["type"] == "prismatic" else "rotary",
                                _from_3x4(link["pre"], "pre"), np.asarray(link["axis"], dtype=float),
                                np.eye(4) if post is None else _from_3x4(post, "post")))
    return elements, C, offset, actuated
