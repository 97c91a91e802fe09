#!/usr/bin/python3
"""plot_scalars.py: render the scalar summaries of a TensorBoard run directory to a PNG.

    scripts/plot_scalars.py RUN_DIR [RUN_DIR_OR_FILE...] -o out.png [--tags loss accuracy]
    scripts/plot_scalars.py RUN_DIR --dump            # tag,step,wall_time,value as CSV

For people who do not run TensorBoard. It reads the event files itself, with no protobuf or
TensorFlow package: TFRecord framing (length, masked CRC32C of the length, payload, masked
CRC32C of the payload; both CRCs checked) and the few fields of TensorFlow's Event, Summary and
TensorProto messages it needs, decoded from the protobuf wire format by hand.

A directory stands for the event files directly in it (names containing "tfevents"), read in
name order; subdirectories are not searched (TensorBoard shows each as a run of its own). A
scalar is a Summary.Value holding either simple_value (TF 1's tf.summary.scalar, PyTorch) or a
rank-0 numeric tensor (TF 2's tf.summary.scalar, hookfuse's default) whose plugin is "scalars"
or not named. As TensorBoard does, a SessionLog START at step S (a restarted run) drops the
points read before it at steps >= S, in any earlier file of the same directory (the restarted
process wrote a new file). A truncated last record (a writer still running or killed)
ends that file with a warning on stderr; a record whose CRC does not match is an error naming
the file and the record (exit status 1).

Each tag gets its own panel, value against global step, in the order tags first appear (or the
order of --tags, which also accepts shell-style patterns such as 'loss*'). Needs Debian's
python3-matplotlib (drawn with the Agg backend, no display needed) unless --dump is given.
"""

import argparse
import fnmatch
import os
import struct
import sys

# --- CRC32C (Castagnoli), as TFRecord masks it ------------------------------------------------


def _crc32c_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class EventFileError(Exception):
    pass


def tfrecords(path):
    """Yields the payload of every complete record of a TFRecord file."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    index = 0
    while pos < len(data):
        if len(data) - pos < 12:
            print(f"plot_scalars: {path}: record {index} is truncated (a writer still running or "
                  "killed); read up to the last complete record", file=sys.stderr)
            return
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if masked_crc32c(header) != length_crc:
            raise EventFileError(f"{path}: record {index}: the CRC of its length does not match "
                                 "(not a TFRecord file, or corrupt)")
        end = pos + 12 + length + 4
        if end > len(data):
            print(f"plot_scalars: {path}: record {index} is truncated (a writer still running or "
                  "killed); read up to the last complete record", file=sys.stderr)
            return
        payload = data[pos + 12:pos + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[end - 4:end])
        if masked_crc32c(payload) != payload_crc:
            raise EventFileError(f"{path}: record {index}: the CRC of its payload does not match "
                                 "(corrupt)")
        yield payload
        pos = end
        index += 1


# --- protobuf wire format -----------------------------------------------------------------------


def _varint(buf, pos):
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise EventFileError("a varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise EventFileError("a varint is longer than 10 bytes")


def fields(buf):
    """Yields (field number, wire type, value) of a message: an int for varints, bytes otherwise."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise EventFileError(f"field {number} has wire type {wire}, which events do not use")
        if pos > len(buf):
            raise EventFileError(f"field {number} runs past the end of its message")
        yield number, wire, value


def _int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


# DataType enum values (tensorflow/core/framework/types.proto) -> struct format of one element.
_DTYPES = {1: "<f", 2: "<d", 3: "<i", 9: "<q", 19: "<e"}  # float, double, int32, int64, half


def _plugin_name(metadata):
    for number, _, value in fields(metadata):
        if number == 1:  # plugin_data
            for n, _, v in fields(value):
                if n == 1:
                    return v.decode("utf-8", "replace")
    return ""


def _tensor_scalar(tensor):
    """The value of a rank-0 numeric TensorProto, or None."""
    dtype = 0
    content = None
    packed = {}  # repeated value fields: number -> list of raw values
    for number, wire, value in fields(tensor):
        if number == 1:
            dtype = value
        elif number == 2:  # tensor_shape: any dim makes it not a scalar
            if any(n == 2 for n, _, _ in fields(value)):
                return None
        elif number == 4:
            content = value
        elif number in (5, 6, 7, 10, 13):
            packed.setdefault(number, []).append((wire, value))
    fmt = _DTYPES.get(dtype)
    if fmt is None:
        return None
    size = struct.calcsize(fmt)
    if content is not None:
        return struct.unpack(fmt, content[:size])[0] if len(content) == size else None
    # float_val(5), double_val(6), int_val(7, also half_val for DT_HALF: 13), int64_val(10).
    number = {1: 5, 2: 6, 3: 7, 9: 10, 19: 13}[dtype]
    values = []
    for wire, value in packed.get(number, []):
        if wire == 2 and number in (5, 6):
            values += [x for (x,) in struct.iter_unpack(fmt, value)]
        elif wire == 2:
            pos = 0
            while pos < len(value):
                v, pos = _varint(value, pos)
                values.append(v)
        elif wire in (1, 5):
            values += [struct.unpack(fmt, value)[0]]
        else:
            values.append(value)
    if len(values) != 1:
        return None
    if dtype == 19:  # half_val holds the 16 bits in an int32
        return struct.unpack("<e", struct.pack("<H", values[0] & 0xFFFF))[0]
    if dtype in (3, 9):
        return _int64(values[0])
    return values[0]


def _summary_scalars(summary):
    """Yields (tag, value) of every scalar of a Summary message."""
    for number, _, value in fields(summary):
        if number != 1:
            continue
        tag, simple, tensor, plugin = None, None, None, ""
        for n, _, v in fields(value):
            if n == 1:
                tag = v.decode("utf-8", "replace")
            elif n == 2:
                (simple,) = struct.unpack("<f", v)
            elif n == 8:
                tensor = v
            elif n == 9:
                plugin = _plugin_name(v)
        if tag is None:
            continue
        if simple is not None:
            yield tag, float(simple)
        elif tensor is not None and plugin in ("", "scalars"):
            x = _tensor_scalar(tensor)
            if x is not None:
                yield tag, float(x)


SESSION_START = 1  # SessionLog.SessionStatus.START


def read_scalars(path, points=()):
    """`points` (the scalars of the run's earlier files) followed by every scalar of an event file
    as (tag, step, wall_time, value), with TensorBoard's purge of the points a restart (SessionLog
    START at step S) orphans: those read before at step >= S, in this file or an earlier one (a
    restarted process writes a new file; TensorBoard purges across a run's files)."""
    points = list(points)
    for index, record in enumerate(tfrecords(path)):
        try:
            wall_time, step, summary, status = 0.0, 0, None, None
            for number, _, value in fields(record):
                if number == 1:
                    (wall_time,) = struct.unpack("<d", value)
                elif number == 2:
                    step = _int64(value)
                elif number == 5:
                    summary = value
                elif number == 7:  # session_log: status(1)
                    status = next((v for n, _, v in fields(value) if n == 1), 0)
            if status == SESSION_START:
                points = [p for p in points if p[1] < step]
            if summary is not None:
                points += [(tag, step, wall_time, x) for tag, x in _summary_scalars(summary)]
        except EventFileError as e:
            raise EventFileError(f"{path}: record {index}: {e}") from None
    return points


def event_files(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p) if "tfevents" in n)
            files += [os.path.join(p, n) for n in names if os.path.isfile(os.path.join(p, n))]
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise EventFileError(f"{p}: no such file or directory")
    return files


def select_tags(points, patterns):
    seen = []
    for tag, _, _, _ in points:
        if tag not in seen:
            seen.append(tag)
    if not patterns:
        return seen
    chosen = []
    for pattern in patterns:
        chosen += [t for t in seen if fnmatch.fnmatchcase(t, pattern) and t not in chosen]
    return chosen


def plot(points, tags, out, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(tags))
    rows = (len(tags) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for i, tag in enumerate(tags):
        ax = axes[i // cols][i % cols]
        xs = [s for t, s, _, _ in points if t == tag]
        ys = [v for t, _, _, v in points if t == tag]
        ax.plot(xs, ys, marker="o" if len(xs) <= 30 else None, markersize=3, linewidth=1.2)
        ax.set_title(tag, fontsize=10)
        ax.set_xlabel("global step", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, alpha=0.3)
    for j in range(len(tags), rows * cols):
        axes[j // cols][j % cols].axis("off")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    try:
        # format="png": write exactly `out` (matplotlib would append ".png" to a name without it)
        fig.savefig(out, dpi=80, format="png")
    finally:
        plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Render the scalar summaries of TensorBoard event files to a PNG.")
    parser.add_argument("paths", nargs="+", metavar="RUN_DIR",
                        help="a run directory (its event files) or an event file")
    parser.add_argument("-o", "--output", help="the PNG to write")
    parser.add_argument("--tags", nargs="+", metavar="TAG",
                        help="the tags to plot, in this order (shell-style patterns allowed); "
                             "default: every scalar tag")
    parser.add_argument("--title", default=None, help="a title above the panels")
    parser.add_argument("--dump", action="store_true",
                        help="print tag,step,wall_time,value for every scalar instead of plotting")
    args = parser.parse_args(argv)
    if not args.dump and not args.output:
        parser.error("-o/--output is required unless --dump is given")
    try:
        points = []
        files = event_files(args.paths)
        if not files:
            raise EventFileError(f"no event files (names containing 'tfevents') in "
                                 f"{', '.join(args.paths)}")
        for path in args.paths:  # a directory is one run: a restart purges its earlier files
            run = []
            for f in event_files([path]):
                run = read_scalars(f, run)
            points += run
    except (EventFileError, OSError) as e:
        print(f"plot_scalars: {e}", file=sys.stderr)
        return 1
    tags = select_tags(points, args.tags)
    if args.dump:
        print("tag,step,wall_time,value")
        for tag, step, wall_time, value in points:
            if tag in tags:
                print(f"{tag},{step},{wall_time:.6f},{value!r}")
        return 0
    if not tags:
        print("plot_scalars: no scalar summaries" +
              (f" matching {' '.join(args.tags)}" if args.tags else "") +
              f" in {', '.join(files)}", file=sys.stderr)
        return 1
    try:
        plot(points, tags, args.output, args.title)
    except ImportError:
        print("plot_scalars: matplotlib is missing (Debian: apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 1
    except OSError as e:
        print(f"plot_scalars: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"plot_scalars: {len(tags)} tags, {sum(1 for p in points if p[0] in tags)} points "
          f"-> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
