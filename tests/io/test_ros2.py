"""ROS 2 bags (.mcap, sensor_msgs/msg/JointState) as recordings: the acceptance case (a SCARA bag with
its joints shuffled identifies as well as its CSV), joint matching, time stamps, missing fields, the
clear errors, and that nothing is written beside the bag."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import dynid
from dynid.cli.main import main
from dynid.errors import DynidError, FileFormatError, InputDataError, MissingExtraError
from dynid.io.readers import read_recording, write_recording_csv
from dynid.models import Plant, make_model
from dynid.recording import Recording
from dynid.sim import SimOptions, SineMotion, simulate

pytest.importorskip("mcap_ros2")
from mcap_ros2.writer import Writer  # noqa: E402

JOINT_STATE = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""
STRING = "string data\n"
NAMES = ["shoulder", "elbow", "quill", "wrist"]
SCARA = {"L1": 0.325, "L2": 0.275, "joint_names": NAMES}
T0_NS = 1_700_000_000_123_456_789            # header stamps are epoch times


def _msg(names, pos=(), vel=(), eff=(), ns=0, frame_id=""):
    return {"header": {"stamp": {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}, "frame_id": frame_id},
            "name": list(names), "position": list(map(float, pos)), "velocity": list(map(float, vel)),
            "effort": list(map(float, eff))}


def write_bag(path, rec: Recording, names, *, topic="/joint_states", rng=None, velocity=True, effort=True,
              stamps=True, other_topics=(), metadata=None, order=None, edit=None):
    """A bag of one JointState message per sample of ``rec``; ``rng``: each message lists the joints in
    its own random order; ``order``: message indices in the order they are logged; ``edit(i, msg)``
    may change or drop (return None) a message."""
    with open(path, "wb") as fh:
        w = Writer(fh)
        js = w.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE)
        for other in other_topics:
            s = w.register_msgdef("std_msgs/msg/String", STRING)
            w.write_message(other, s, {"data": "hello"}, log_time=T0_NS)
        n = rec.n_joints
        rows = range(rec.n_samples) if order is None else order
        logged = 0
        for i in rows:
            perm = rng.permutation(n) if rng is not None else np.arange(n)
            ns = T0_NS + int(round(rec.t[i] * 1e9))
            msg = _msg([names[k] for k in perm], rec.q[i, perm],
                       rec.qd[i, perm] if velocity and rec.qd is not None else (),
                       rec.tau[i, perm] if effort and rec.tau is not None else (), ns if stamps else 0)
            if edit is not None:
                msg = edit(i, msg)
                if msg is None:
                    continue
            k = min(logged, rec.n_samples - 1)      # the recorder's clock: in the order logged, with latency jitter
            w.write_message(topic, js, msg, log_time=T0_NS + int(round(rec.t[k] * 1e9)) + 40_000 + 7_000 * (logged % 3))
            logged += 1
        for name, data in (metadata or {}).items():
            w.add_metadata(name, data)
        w.finish()
    return path


def _sine_rec(n=400, dt=2e-3, n_joints=4, seed=0, dq=True):
    """``q_j = sin(w_j t + j)``, ``tau_j = 10 j + cos(w_j t)``, ``dq`` exact: a recording whose every value is known."""
    t = np.arange(n) * dt
    w = 2 * np.pi * (0.5 + 0.3 * np.arange(n_joints))
    q = np.sin(w * t[:, None] + np.arange(n_joints))
    tau = 10.0 * np.arange(1, n_joints + 1) + np.cos(w * t[:, None])
    return Recording(t, q, tau, w * np.cos(w * t[:, None] + np.arange(n_joints)) if dq else None)


def _listing(folder):
    return sorted(os.listdir(folder))


# ------------------------------------------------------------------------------------------ acceptance

SCARA_THETA_FRICTION = np.array([[0.8, 2.5], [0.5, 1.5], [60.0, 12.0], [0.05, 0.3]]).ravel()


def _scara_runs():
    """A simulated scara4 (closed loop, 1 kHz, torque noise 0.2 % of peak): an identification run and
    another motion to validate on."""
    plant = Plant(make_model("scara4", SCARA))
    theta = np.concatenate([plant.model.example_parameters(), SCARA_THETA_FRICTION])
    opts = SimOptions(noise=0.002)
    ident = simulate(plant, theta, SineMotion([-2.5, -2.5, 0.0, -5.0], [2.5, 2.5, 0.15, 5.0], [0.6, 0.762, 0.858, 0.678],
                                              record_s=10.0, settle_s=1.0), opts, seed=1)
    other = simulate(plant, theta, SineMotion([-1.5, -2.0, 0.02, -3.0], [2.0, 1.5, 0.12, 4.0], [0.82, 0.58, 0.74, 0.9],
                                              record_s=6.0, settle_s=1.0), opts, seed=2)
    return ident, other


@pytest.mark.slow
def test_a_bag_with_shuffled_joints_identifies_a_scara_as_well_as_its_csv(tmp_path, capsys):
    """Acceptance (issue 16, point 3): the same run as CSV and as a ROS 2 bag whose messages each list
    the joints in their own random order; both identifications predict another motion within 3 %
    and agree with each other; nothing is written beside the bag."""
    ident, other = _scara_runs()
    bags = tmp_path / "bags"
    bags.mkdir()
    write_recording_csv(tmp_path / "id.csv", ident)
    write_recording_csv(tmp_path / "other.csv", other)
    write_bag(bags / "id.mcap", ident, NAMES, rng=np.random.default_rng(7), metadata={"robot": {"robot": "scara-07"}})
    write_bag(bags / "other.mcap", other, NAMES, rng=np.random.default_rng(8))
    (tmp_path / "scara.json").write_text(json.dumps(SCARA))
    before = _listing(bags)

    rec = read_recording(bags / "id.mcap", joint_names=NAMES, require_tau=True)
    np.testing.assert_array_equal(rec.q, ident.q)                   # un-shuffled, bit for bit
    np.testing.assert_array_equal(rec.tau, ident.tau)
    np.testing.assert_allclose(rec.t, ident.t, atol=1e-9)          # header stamps, from 0
    assert rec.meta["robot"] == "scara-07" and rec.meta["time"] == "header.stamp"

    csv = dynid.Identifier("scara4", config=SCARA).fit(tmp_path / "id.csv")
    assert main(["identify", str(bags / "id.mcap"), "--model", "scara4", "--config", str(tmp_path / "scara.json"),
                 "--out", str(tmp_path / "out"), "--no-report", "--quiet"]) == 0
    bag = dynid.load(tmp_path / "out")
    errors = {}
    for name, model in (("csv", csv.model_), ("bag", bag)):
        for motion in ("other.csv", "bags/other.mcap"):
            p = model.predict(dynid.Identifier("scara4", config=SCARA).read(tmp_path / motion))
            errors[name, motion] = p.relative_error()
    assert max(errors.values()) <= 0.03, errors
    # the same data give the same model (the CSV rounds to 10 digits)
    q, dq, ddq = ident.q[::97], ident.q[::97] * 0 + 0.5, ident.q[::97] * 0 - 1.0
    np.testing.assert_allclose(bag.torque(q, dq, ddq), csv.model_.torque(q, dq, ddq), rtol=1e-5, atol=1e-6)
    assert abs(errors["bag", "bags/other.mcap"] - errors["csv", "other.csv"]) < 1e-4

    # dynid predict reads the bag with the joint names recorded in result.json
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "out" / "result.json"), str(bags / "other.mcap"),
                 "--out", str(tmp_path / "tau.csv"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["validation"]["relative_error"] <= 0.03
    # dynid monitor replays the bag as it replays the CSV of the same motion
    replays = []
    for motion in (bags / "other.mcap", tmp_path / "other.csv"):
        capsys.readouterr()
        assert main(["monitor", str(tmp_path / "out" / "result.json"), str(motion), "--json"]) in (0, 1)
        replays.append(json.loads(capsys.readouterr().out))
    assert replays[0]["detections"] == replays[1]["detections"]
    assert _listing(bags) == before                                 # the user's bags are only read


# ------------------------------------------------------------------------------------------ joints

def test_without_joint_names_the_first_message_gives_the_order(tmp_path):
    rec = _sine_rec()
    order = ["b", "a", "d", "c"]
    f = write_bag(tmp_path / "r.mcap", rec, order)
    got = read_recording(f)
    assert got.meta["joint_names"] == "b,a,d,c"
    np.testing.assert_array_equal(got.q, rec.q)
    np.testing.assert_array_equal(got.qd, rec.qd)
    # with names: columns in the configuration's order, whatever the bag's
    got = read_recording(f, joint_names=["a", "b", "c", "d"])
    np.testing.assert_array_equal(got.q, rec.q[:, [1, 0, 3, 2]])
    np.testing.assert_array_equal(got.tau, rec.tau[:, [1, 0, 3, 2]])


def test_unknown_and_missing_joint_names_are_clear_errors(tmp_path):
    rec = _sine_rec()
    f = write_bag(tmp_path / "r.mcap", rec, ["a", "b", "gripper", "d"])
    with pytest.raises(FileFormatError, match=r"r\.mcap, topic /joint_states: joint c of the configuration's "
                                              r"joint_names never appears in the bag \(its joints: a, b, gripper, d\)"):
        read_recording(f, joint_names=["a", "b", "c", "d"])
    # a configured joint the bag never holds
    g = write_bag(tmp_path / "three.mcap", _sine_rec(n_joints=3), ["a", "b", "d"])
    with pytest.raises(FileFormatError, match=r"joint c of the configuration's joint_names never appears"):
        read_recording(g, joint_names=["a", "b", "c", "d"])
    # no names configured: a later message with a joint the first did not have
    h = write_bag(tmp_path / "late.mcap", rec, ["a", "b", "c", "d"],
                  edit=lambda i, m: {**m, "name": ["a", "b", "c", "x"]} if i == 200 else m)
    with pytest.raises(FileFormatError, match=r"message 201 has joint x that the first message's joints"):
        read_recording(h)
    # joint count unlike the model's
    with pytest.raises(FileFormatError, match=r"hold 4 joints \(a, b, c, d\) but the model has 3"):
        read_recording(tmp_path / "late.mcap", n_joints=3)


def test_bag_joints_the_configuration_does_not_name_are_left_out(tmp_path):
    """A gripper's finger joints in /joint_states beside the arm's: with joint_names the arm's columns are
    read exactly as from an arm-only bag, the fingers are named in a warning; without, it is an error."""
    rec = _sine_rec()
    rng = np.random.default_rng(3)
    fingers = Recording(rec.t, rng.normal(size=(rec.n_samples, 2)), rng.normal(size=(rec.n_samples, 2)),
                        rng.normal(size=(rec.n_samples, 2)))
    both = Recording(rec.t, np.hstack([rec.q, fingers.q]), np.hstack([rec.tau, fingers.tau]),
                     np.hstack([rec.qd, fingers.qd]))
    f = write_bag(tmp_path / "arm_and_gripper.mcap", both, ["a", "b", "c", "d", "finger_l", "finger_r"],
                  rng=np.random.default_rng(4))                  # joints shuffled in every message
    g = write_bag(tmp_path / "arm.mcap", rec, ["a", "b", "c", "d"])
    with pytest.warns(UserWarning, match=r"joints finger_l, finger_r of the bag are not in the configuration's "
                                         r"joint_names \(a, b, c, d\) and left out"):
        got = read_recording(f, joint_names=["a", "b", "c", "d"])
    want = read_recording(g, joint_names=["a", "b", "c", "d"])
    for name in ("t", "q", "qd", "tau"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    np.testing.assert_array_equal(got.q, rec.q)
    with pytest.raises(FileFormatError, match=r"hold 6 joints .* but the model has 4"):
        read_recording(f, n_joints=4)


def test_a_joint_missing_from_some_messages_drops_those_samples(tmp_path):
    rec = _sine_rec()
    drop = {10, 11, 250}

    def edit(i, m):
        if i in drop:  # the last joint left out of these messages
            return {**m, "name": m["name"][:3], "position": m["position"][:3], "velocity": m["velocity"][:3],
                    "effort": m["effort"][:3]}
        return m

    f = write_bag(tmp_path / "r.mcap", rec, list("abcd"), edit=edit)
    with pytest.warns(UserWarning, match=r"dropped 3 samples without the position of every joint; 397 samples kept"):
        got = read_recording(f)
    keep = np.setdiff1d(np.arange(rec.n_samples), sorted(drop))
    np.testing.assert_array_equal(got.q, rec.q[keep])
    np.testing.assert_allclose(got.t, rec.t[keep], atol=1e-9)


def test_messages_published_per_joint_at_one_stamp_are_merged(tmp_path):
    """Two drivers on one topic, each publishing its joints with the same header stamp."""
    rec = _sine_rec(n=200)
    with open(tmp_path / "split.mcap", "wb") as fh:
        w = Writer(fh)
        js = w.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE)
        for i in range(rec.n_samples):
            ns = T0_NS + int(round(rec.t[i] * 1e9))
            for part, log in (([2, 3], 1000), ([1, 0], 2000)):
                w.write_message("/joint_states", js, _msg([f"j{k}" for k in part], rec.q[i, part], (), rec.tau[i, part],
                                                          ns), log_time=ns + log)
        w.finish()
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                # completing a stamp is no repeat
        got = read_recording(tmp_path / "split.mcap", joint_names=["j0", "j1", "j2", "j3"])
    np.testing.assert_array_equal(got.q, rec.q)
    np.testing.assert_array_equal(got.tau, rec.tau)
    assert got.qd is None


# ------------------------------------------------------------------------------------------ time

def test_out_of_order_and_repeated_messages_are_sorted_and_merged(tmp_path):
    rec = _sine_rec()
    order = np.arange(rec.n_samples)
    for k in range(20, 395, 25):                                    # 15 swapped neighbours: logged out of order
        order[[k, k + 1]] = order[[k + 1, k]]
    order = np.insert(order, [50, 300], [order[49], order[299]])    # two messages logged twice
    f = write_bag(tmp_path / "r.mcap", rec, list("abcd"), order=order)
    with pytest.warns(UserWarning, match=r"15 messages out of time order were sorted; 2 messages repeat the time "
                                         r"stamp and joints of an earlier one"):
        got = read_recording(f)
    np.testing.assert_array_equal(got.q, rec.q)
    np.testing.assert_allclose(got.t, rec.t, atol=1e-9)
    assert np.all(np.diff(got.t) > 0)


def test_zero_header_stamps_fall_back_to_the_log_time(tmp_path):
    rec = _sine_rec()
    f = write_bag(tmp_path / "r.mcap", rec, list("abcd"), stamps=False)
    got = read_recording(f)
    assert got.meta["time"] == "log_time"
    logged = rec.t + (40_000 + 7_000 * (np.arange(rec.n_samples) % 3)) * 1e-9    # what write_bag logs
    np.testing.assert_allclose(got.t, logged - logged[0], atol=1e-9)


# ------------------------------------------------------------------------------------------ fields

def test_empty_velocity_leaves_dq_to_the_positions_and_empty_effort_cannot_identify(tmp_path):
    rec = _sine_rec(n=600)
    f = write_bag(tmp_path / "novel.mcap", rec, list("abcd"), velocity=False)
    got = read_recording(f, require_tau=True)
    assert got.qd is None and got.tau is not None
    g = write_bag(tmp_path / "noeff.mcap", rec, list("abcd"), effort=False)
    assert read_recording(g).tau is None                            # a motion to predict
    with pytest.raises(FileFormatError, match=r"noeff\.mcap, topic /joint_states: the JointState messages carry no "
                                              r"effort"):
        read_recording(g, require_tau=True)
    with pytest.raises(FileFormatError, match="carry no effort"):
        dynid.Identifier("scara4", config={"L1": 0.3, "L2": 0.2}).fit(g)
    # NaN effort in a few messages (drivers publish NaN for unknown values): those samples are dropped
    h = write_bag(tmp_path / "nan.mcap", rec, list("abcd"),
                  edit=lambda i, m: {**m, "effort": [float("nan")] * 4} if i % 100 == 5 else m)
    with pytest.warns(UserWarning, match=r"dropped 6 samples without the effort of every joint"):
        got = read_recording(h, require_tau=True)
    assert got.n_samples == 594 and np.isfinite(got.tau).all()


def test_a_message_whose_fields_do_not_match_its_names_is_an_error(tmp_path):
    rec = _sine_rec()
    f = write_bag(tmp_path / "r.mcap", rec, list("abcd"),
                  edit=lambda i, m: {**m, "velocity": m["velocity"][:2]} if i == 7 else m)
    with pytest.raises(FileFormatError, match=r"message 8 has 4 joints but 2 velocity values"):
        read_recording(f)


# ------------------------------------------------------------------------------------------ topics

def test_a_bag_without_joint_states_names_what_it_has(tmp_path):
    with open(tmp_path / "chatter.mcap", "wb") as fh:
        w = Writer(fh)
        s = w.register_msgdef("std_msgs/msg/String", STRING)
        for i in range(3):
            w.write_message("/chatter", s, {"data": "hi"}, log_time=T0_NS + i)
        w.finish()
    with pytest.raises(FileFormatError, match=r"chatter\.mcap: the bag has no sensor_msgs/msg/JointState topic; "
                                              r"topics present: /chatter \(std_msgs/msg/String\)"):
        read_recording(tmp_path / "chatter.mcap")
    assert main(["identify", str(tmp_path / "chatter.mcap"), "--model", "rotary1", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    assert not (tmp_path / "o").exists()


def test_several_joint_state_topics_need_a_topic(tmp_path, capsys):
    rec = _sine_rec()
    with open(tmp_path / "two.mcap", "wb") as fh:
        w = Writer(fh)
        js = w.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE)
        for i in range(rec.n_samples):
            ns = T0_NS + int(round(rec.t[i] * 1e9))
            w.write_message("/arm/joint_states", js, _msg("abcd", rec.q[i], (), rec.tau[i], ns), log_time=ns)
            w.write_message("/gripper/joint_states", js, _msg(["finger"], [0.01], (), [1.0], ns), log_time=ns)
        w.finish()
    with pytest.raises(FileFormatError, match=r"2 JointState topics: /arm/joint_states, /gripper/joint_states") as err:
        read_recording(tmp_path / "two.mcap")
    assert err.value.options == ("topic",)
    got = read_recording(tmp_path / "two.mcap", topic="/arm/joint_states")
    np.testing.assert_array_equal(got.q, rec.q)
    assert got.meta["topic"] == "/arm/joint_states"
    with pytest.raises(FileFormatError, match=r"no topic '/joint_states'; its JointState topics: /arm/joint_states"):
        read_recording(tmp_path / "two.mcap", topic="/joint_states")
    # the command line: the error and its hint name --topic; with it, the bag identifies
    assert main(["identify", str(tmp_path / "two.mcap"), "--model", "rotary1", "--out", str(tmp_path / "o")]) == 2
    assert "(--topic)" in capsys.readouterr().err
    est = dynid.Identifier("rotary3", topic="/gripper/joint_states")
    assert est.get_params()["topic"] == "/gripper/joint_states"
    assert est.read(tmp_path / "two.mcap", require_tau=False).n_joints == 1


def test_a_rosbag2_folder_of_split_files_reads_as_one_bag(tmp_path):
    rec = _sine_rec()
    folder = tmp_path / "run_2026"
    folder.mkdir()
    (folder / "metadata.yaml").write_text("rosbag2_bagfile_information:\n  storage_identifier: mcap\n")
    write_bag(folder / "run_2026_1.mcap", rec.slice(200, 400), list("abcd"))
    write_bag(folder / "run_2026_0.mcap", rec.slice(0, 200), list("abcd"))
    got = read_recording(folder)
    np.testing.assert_array_equal(got.q, rec.q)
    np.testing.assert_allclose(got.t, rec.t, atol=1e-9)


# ------------------------------------------------------------------------------------------ decoding

def test_the_direct_cdr_parser_agrees_with_mcap_ros2_support():
    """dynid parses JointState's CDR itself (fast); mcap-ros2-support's decoder is the reference."""
    from mcap.records import Schema
    from mcap_ros2._dynamic import serialize_dynamic
    from mcap_ros2.decoder import DecoderFactory

    from dynid.io.ros2 import _from_decoded, _parse_cdr, _same

    encode = serialize_dynamic("sensor_msgs/msg/JointState", JOINT_STATE)["sensor_msgs/msg/JointState"]
    schema = Schema(id=1, name="sensor_msgs/msg/JointState", encoding="ros2msg", data=JOINT_STATE.encode())
    decode = DecoderFactory().decoder_for("cdr", schema)
    cases = [_msg([], ns=5), _msg(["a"], [1.5], ns=T0_NS, frame_id="x"),
             _msg(["ä", "bc", "def"], [1, 2, 3], (), [4, 5, 6], ns=-3 % 2**31, frame_id="base_link"),
             _msg(["a", "b"], [np.nan, 2.0], [1e300, -0.0], (), ns=1, frame_id="ab"),
             _msg(["x" * k for k in range(1, 8)], range(7), range(7), range(7), ns=T0_NS, frame_id="odd")]
    for m in cases:
        data = encode(m)
        mine = _parse_cdr(data, 0)
        ref = _from_decoded(decode(data), 0)
        assert _same(mine, ref), (m, mine, ref)
        assert mine.name == tuple(m["name"])
    assert _parse_cdr(b"\x00\x00\x00\x00" + bytes(20), 0) is None          # big-endian: left to the reference decoder
    assert _parse_cdr(encode(cases[2])[:-9], 0) is None                   # truncated


# ------------------------------------------------------------------------------------------ extra

def test_without_the_ros_extra_a_bag_says_which_extra_to_install(tmp_path, without_modules, capsys):
    f = write_bag(tmp_path / "r.mcap", _sine_rec(), list("abcd"))
    without_modules("mcap", "mcap_ros2")
    with pytest.raises(MissingExtraError, match=r"needs the optional package 'mcap'") as err:
        read_recording(f)
    assert err.value.extra == "ros" and "dynid[ros]" in str(err.value)
    assert main(["identify", str(f), "--model", "rotary1", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "pip install 'dynid[ros]'" in capsys.readouterr().err
    assert _listing(tmp_path) == ["r.mcap"]


def test_a_file_named_mcap_that_is_not_one_is_a_clear_error(tmp_path):
    (tmp_path / "fake.mcap").write_text("t,q1,tau1\n0,0,0\n")
    with pytest.raises(FileFormatError, match=r"fake\.mcap: not a readable MCAP file"):
        read_recording(tmp_path / "fake.mcap")
    f = write_bag(tmp_path / "bag.dat", _sine_rec(), list("abcd"))   # recognised by content, not by name
    assert read_recording(f).n_joints == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_recording(f).n_samples == 400                     # a clean bag reads without warnings
    assert issubclass(InputDataError, DynidError)


# ------------------------------------------------------------------------------------------ block by block

def test_a_bag_read_in_chunks_gives_the_whole_bags_rows(tmp_path, monkeypatch):
    """Issue 26: a long bag is read in chunks of messages (bounded memory) with the whole bag's rules: joints by
    name in any order, the time from the header stamps, and messages of one time merged."""
    from dynid.io import sources

    rec = _sine_rec(n=3000)
    bag = write_bag(tmp_path / "r.mcap", rec, ["a", "b", "c", "d"], rng=np.random.default_rng(3))
    whole = read_recording(bag, joint_names=["a", "b", "c", "d"], require_tau=True)
    monkeypatch.setattr(sources._McapSource, "CHUNK_MESSAGES", 700)
    src = sources.open_source(bag, joint_names=["a", "b", "c", "d"], require_tau=True, n_joints=4)
    assert src.n_samples_hint == whole.n_samples
    blocks = list(src.blocks(1000))
    assert len(blocks) > 3
    for name in ("t", "q", "tau", "qd"):
        np.testing.assert_array_equal(np.concatenate([getattr(b, name) for b in blocks]), getattr(whole, name))
    assert dict(src.meta)["time"] == "header.stamp"


def test_a_bag_of_split_messages_merges_them_within_chunks(tmp_path, monkeypatch):
    """The arm and the gripper published as two messages at each stamp: merged into one sample each."""
    from dynid.io import sources

    rec = _sine_rec(n=1200)
    path = tmp_path / "split.mcap"
    with open(path, "wb") as fh:
        w = Writer(fh)
        js = w.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE)
        for i in range(rec.n_samples):
            ns = T0_NS + int(round(rec.t[i] * 1e9))
            for part in ([0, 1], [2, 3]):
                names = [["a", "b", "c", "d"][k] for k in part]
                w.write_message("/joint_states", js, _msg(names, rec.q[i, part], rec.qd[i, part], rec.tau[i, part], ns),
                                log_time=ns + 1000)
        w.finish()
    whole = read_recording(path, joint_names=["a", "b", "c", "d"], require_tau=True)
    monkeypatch.setattr(sources._McapSource, "CHUNK_MESSAGES", 500)          # (even: a stamp's two messages together)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                              # nothing dropped, nothing to warn about
        src = sources.open_source(path, joint_names=["a", "b", "c", "d"], require_tau=True, n_joints=4)
        got = np.concatenate([b.q for b in src.blocks(400)])
    np.testing.assert_array_equal(got, whole.q)
    assert whole.n_samples == rec.n_samples
