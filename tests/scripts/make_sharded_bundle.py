#!/usr/bin/env python3
"""Writes a two-shard TensorFlow V2 checkpoint (tensor bundle) from the file format alone.

    make_sharded_bundle.py PREFIX [--header-num-shards N] [--shard-id KEY=ID]

writes PREFIX.index, PREFIX.data-00000-of-00002 and PREFIX.data-00001-of-00002 holding the
tensors of TENSORS below (their values are the test's expected values). Python 3 standard
library only: no TensorFlow, no protobuf module, no hookfuse code. The bytes are built from the
format's description, independently of hookfuse's BundleWriter, so that hookfuse's reader is
checked against a second writer:

  * /work/shared/fixtures/FORMATS.md (the shared fixtures' format notes), sections 1 (CRC32C and
    masking), 4.1 (file names: TensorFlow's MetaFilename / DataFilename), 4.2 (the .index file:
    LevelDB's table format, tensorflow/core/lib/io/{table_builder,block_builder,format}.cc) and
    4.3 (BundleHeaderProto and BundleEntryProto, tensorflow/core/protobuf/tensor_bundle.proto);
  * tests/bundle_test_util.hpp and tests/test_io_tensor_bundle.cpp, which spell out the same
    bytes for a one-shard bundle;
  * TensorFlow's MergeBundles (tensorflow/core/util/tensor_bundle/tensor_bundle.cc): a merged
    sharded bundle has one .index whose header says num_shards N and whose entries carry the
    shard_id of the data file "P.data-0000K-of-0000N" holding their bytes, offsets counted from
    the start of that file.

Layout written: data files are the tensors' little-endian bytes back to back (TensorFlow's
data_alignment 1). The .index is one uncompressed data block (restart interval 16, keys
prefix-compressed) holding the header under the empty key and one BundleEntryProto per tensor
in bytewise key order, an empty metaindex block, an index block (restart interval 1) with one
entry (FindShortSuccessor of the last key -> the data block's handle), each block followed by
its trailer (type 0, masked CRC32C of block bytes + type byte), and the 48-byte footer with the
magic 0xdb4775248b80fb57.

Options for the tests of bad input: --header-num-shards N writes N as the header's num_shards
(the data files keep their -of-00002 names); --shard-id KEY=ID stores tensor KEY with shard_id
ID in its entry (its bytes stay where they are).
"""

import argparse
import struct
import sys

# name -> (shard, dtype enum, dtype struct code, shape, values). DataType enum values from
# tensorflow/core/framework/types.proto: DT_FLOAT 1, DT_DOUBLE 2, DT_INT32 3, DT_INT64 9.
TENSORS = {
    "dense/bias": (0, 1, "f", [3], [0.25, -1.5, 3.0]),
    "global_step": (0, 9, "q", [], [1234]),
    "dense/kernel": (1, 1, "f", [2, 3], [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]),
    "scale": (1, 2, "d", [], [0.125]),
    "steps_per_shard": (1, 3, "i", [2], [7, -8]),
}
NUM_SHARDS = 2
TABLE_MAGIC = 0xDB4775248B80FB57


# ---- CRC32C (Castagnoli, reflected polynomial 0x82f63b78) and TensorFlow's mask ------------
def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def mask(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


# ---- protobuf wire format -------------------------------------------------------------------
def varint(v):
    if v < 0:
        v += 1 << 64  # int32/int64 fields: ten-byte two's complement
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(number, v):
    return varint(number << 3) + varint(v)


def field_bytes(number, payload):
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def field_fixed32(number, v):
    return varint((number << 3) | 5) + struct.pack("<I", v)


def header_proto(num_shards):
    # BundleHeaderProto{num_shards = 1, endianness = 2 (LITTLE, proto3 default: omitted),
    # version = 3 VersionDef{producer = 1}}
    return field_varint(1, num_shards) + field_bytes(3, field_varint(1, 1))


def entry_proto(dtype, shape, shard_id, offset, size, crc):
    # BundleEntryProto: proto3 omits zero values, except shape, which TensorFlow always writes.
    dims = b"".join(field_bytes(2, field_varint(1, d) if d else b"") for d in shape)
    out = field_varint(1, dtype) + field_bytes(2, dims)
    if shard_id:
        out += field_varint(3, shard_id)
    if offset:
        out += field_varint(4, offset)
    if size:
        out += field_varint(5, size)
    if crc:
        out += field_fixed32(6, crc)
    return out


# ---- LevelDB table format -------------------------------------------------------------------
def block(entries, restart_interval):
    out = bytearray()
    restarts = []
    last = b""
    for i, (key, value) in enumerate(entries):
        if i % restart_interval == 0:
            restarts.append(len(out))
            shared = 0
        else:
            shared = 0
            while shared < min(len(last), len(key)) and last[shared] == key[shared]:
                shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(len(value))
        out += key[shared:] + value
        last = key
    if not restarts:
        restarts.append(0)
    for r in restarts:
        out += struct.pack("<I", r)
    out += struct.pack("<I", len(restarts))
    return bytes(out)


def block_with_trailer(contents):
    kind = b"\x00"  # no compression
    return contents + kind + struct.pack("<I", mask(crc32c(contents + kind)))


def block_handle(offset, size):
    return varint(offset) + varint(size)


def short_successor(key):
    for i, b in enumerate(key):
        if b != 0xFF:
            return key[:i] + bytes([b + 1])
    return key


def table(entries):
    data = block(entries, 16)
    meta = block([], 16)
    out = bytearray(block_with_trailer(data))
    meta_offset = len(out)
    out += block_with_trailer(meta)
    index = block([(short_successor(entries[-1][0]), block_handle(0, len(data)))], 1)
    index_offset = len(out)
    out += block_with_trailer(index)
    handles = block_handle(meta_offset, len(meta)) + block_handle(index_offset, len(index))
    out += handles + b"\x00" * (40 - len(handles)) + struct.pack("<Q", TABLE_MAGIC)
    return bytes(out)


def data_filename(prefix, shard, num_shards):
    return "%s.data-%05d-of-%05d" % (prefix, shard, num_shards)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix")
    parser.add_argument("--header-num-shards", type=int, default=NUM_SHARDS)
    parser.add_argument("--shard-id", action="append", default=[], metavar="KEY=ID")
    args = parser.parse_args(argv)
    forced = {}
    for spec in args.shard_id:
        key, _, sid = spec.partition("=")
        forced[key] = int(sid)

    shards = [bytearray() for _ in range(NUM_SHARDS)]
    entries = [(b"", header_proto(args.header_num_shards))]
    for name in sorted(TENSORS, key=lambda n: n.encode()):
        shard, dtype, code, shape, values = TENSORS[name]
        raw = struct.pack("<%d%s" % (len(values), code), *values)
        offset = len(shards[shard])
        shards[shard] += raw
        entry = entry_proto(dtype, shape, forced.get(name, shard), offset, len(raw),
                            mask(crc32c(raw)))
        entries.append((name.encode(), entry))

    for k, contents in enumerate(shards):
        with open(data_filename(args.prefix, k, NUM_SHARDS), "wb") as f:
            f.write(contents)
    with open(args.prefix + ".index", "wb") as f:
        f.write(table(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
