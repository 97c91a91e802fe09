// safetensors (hookfuse/io/safetensors.hpp): the writer against the reference implementation's
// golden files (fixtures/safetensors, the byte arrays of safetensors' own unit tests), the
// reader against their documented contents, round trips of every dtype, and hostile files,
// each rejected with an error naming the file, the tensor and the field (and, under
// HOOKFUSE_SANITIZE, without any out-of-bounds access).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <hookfuse/io/safetensors.hpp>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
namespace st = hookfuse::io::safetensors;
using hookfuse::io::DataLossError;
using hookfuse::io::NotFoundError;
using hookfuse_test::error_of;

namespace {

std::vector<std::byte> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

/// A file of: u64 LE `n`, then `header`, then `data` bytes.
void write_raw(const fs::path& p, std::uint64_t n, const std::string& header,
               const std::vector<unsigned char>& data = {}) {
  std::ofstream out(p, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

void write_raw(const fs::path& p, const std::string& header,
               const std::vector<unsigned char>& data = {}) {
  write_raw(p, header.size(), header, data);
}

fs::path fixture(const char* name) {
#ifdef HOOKFUSE_FIXTURES_DIR
  const fs::path p = fs::path(HOOKFUSE_FIXTURES_DIR) / "safetensors" / name;
  if (fs::exists(p)) return p;
  HOOKFUSE_SKIP("fixture " << p.string() << " not found");
#else
  HOOKFUSE_SKIP("HOOKFUSE_FIXTURES_DIR not defined, needs " << name);
#endif
}

const std::vector<float> kZeroToFive = {0, 1, 2, 3, 4, 5};

}  // namespace

TEST_CASE("the writer reproduces the reference's golden files byte for byte") {
  hookfuse_test::TempDir tmp("safetensors");
  struct Case {
    const char* file;
    std::vector<st::TensorRef> tensors;
    st::Metadata metadata;
  };
  const std::vector<Case> cases = {
      {"attn.0_f32_1x2x3.safetensors",
       {st::tensor_ref("attn.0", {1, 2, 3}, std::span(kZeroToFive))},
       {}},
      {"attn0_f32_1x1x2x3_padded.safetensors",
       {st::tensor_ref("attn0", {1, 1, 2, 3}, std::span(kZeroToFive))},
       {}},
      {"empty.safetensors", {}, {}},
      {"empty_with_metadata.safetensors", {}, {{"framework", "pt"}}},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    const std::vector<std::byte> golden = slurp(fixture(c.file));
    CHECK(st::serialize(c.tensors, c.metadata) == golden);
    st::save_file(tmp.path / c.file, c.tensors, c.metadata);
    CHECK(slurp(tmp.path / c.file) == golden);
  }
}

TEST_CASE("the reader returns the golden files' documented contents") {
  {
    const auto f = st::SafetensorsFile::open(fixture("attn.0_f32_1x2x3.safetensors"));
    CHECK(f.keys() == std::vector<std::string>{"attn.0"});
    CHECK(f.metadata().empty());
    CHECK(f.data_start() == 72);
    const st::TensorInfo& t = f.info("attn.0");
    CHECK(t.dtype == st::Dtype::F32);
    CHECK(t.shape == std::vector<std::uint64_t>{1, 2, 3});
    CHECK(t.data_begin == 0);
    CHECK(t.data_end == 24);
    CHECK(f.get_tensor<float>("attn.0") == kZeroToFive);
  }
  {
    const auto f = st::SafetensorsFile::open(fixture("attn0_f32_1x1x2x3_padded.safetensors"));
    CHECK(f.data_start() == 80);  // 7 spaces of padding
    CHECK(f.info("attn0").shape == std::vector<std::uint64_t>{1, 1, 2, 3});
    std::vector<float> out(6);
    f.read("attn0", std::span(out));
    CHECK(out == kZeroToFive);
  }
  {
    const auto f = st::SafetensorsFile::open(fixture("empty.safetensors"));
    CHECK(f.tensors().empty());
    CHECK(f.metadata().empty());
  }
  {
    const auto f = st::SafetensorsFile::open(fixture("empty_with_metadata.safetensors"));
    CHECK(f.tensors().empty());
    CHECK(f.metadata() == st::Metadata{{"framework", "pt"}});
  }
}

TEST_CASE("tensors are ordered by dtype, largest first, then by name, and padded to 8") {
  const std::int64_t c = -7;
  const double m = 2.5;
  const float a = 1.0f;
  const std::vector<float> b = {2.0f, 3.0f};
  const std::vector<std::uint8_t> z;
  const std::vector<st::TensorRef> tensors = {
      st::tensor_ref("b", {2}, std::span(b)), st::tensor_ref("z", {0}, std::span(z)),
      st::tensor_ref("a", {1}, std::span(&a, 1)), st::tensor_ref("c", {}, std::span(&c, 1)),
      st::tensor_ref("m", {1}, std::span(&m, 1))};
  const std::vector<std::byte> bytes = st::serialize(tensors);
  // Hand-written: I64 > F64 > F32 (a before b) > U8; 271 bytes of JSON + 1 space = 272.
  const std::string json =
      "{\"c\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
      "\"m\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[16,20]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[20,28]},"
      "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[28,28]}} ";
  REQUIRE(bytes.size() == 8 + 272 + 28);
  CHECK(std::to_integer<int>(bytes[0]) == 16);  // 272 = 0x110
  CHECK(std::to_integer<int>(bytes[1]) == 1);
  CHECK(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, 272) == json);
  std::int64_t c_back = 0;
  std::memcpy(&c_back, bytes.data() + 280, 8);
  CHECK(c_back == -7);
}

TEST_CASE("every dtype round-trips bit for bit, scalars and empty tensors included") {
  hookfuse_test::TempDir tmp("safetensors");
  const std::vector<float> f32 = {
      1.5f, -0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
      3.0f, -2.0f};
  const std::vector<double> f64 = {3.141592653589793, -1e300};
  const std::vector<std::int32_t> i32 = {std::numeric_limits<std::int32_t>::min(), 0, 7};
  const std::int64_t step = 1234567890123;
  const std::vector<std::uint64_t> u64 = {std::numeric_limits<std::uint64_t>::max()};
  const std::vector<std::uint32_t> u32 = {4000000000u, 1u};
  const std::vector<std::int16_t> i16 = {-32768, 32767};
  const std::vector<std::uint16_t> u16 = {65535};
  const std::vector<std::int8_t> i8 = {-128, 127, 0};
  const std::vector<std::uint8_t> u8 = {0, 255};
  const bool flags[] = {true, false, true};
  const std::vector<float> none;
  const unsigned char half_bits[] = {0x00, 0x3c, 0x00, 0xc0};  // F16 1.0, -2.0
  const unsigned char bf16_bits[] = {0x80, 0x3f};              // BF16 1.0
  const unsigned char f8_bits[] = {0x38, 0xb8, 0x7f};
  const std::vector<st::TensorRef> tensors = {
      st::tensor_ref("dense/kernel", {2, 3}, std::span(f32)),
      st::tensor_ref("f64", {2}, std::span(f64)),
      st::tensor_ref("i32", {3, 1}, std::span(i32)),
      st::tensor_ref("global_step", {}, std::span(&step, 1)),
      st::tensor_ref("u64", {1}, std::span(u64)),
      st::tensor_ref("u32", {2}, std::span(u32)),
      st::tensor_ref("i16", {2}, std::span(i16)),
      st::tensor_ref("u16", {1, 1, 1}, std::span(u16)),
      st::tensor_ref("i8", {3}, std::span(i8)),
      st::tensor_ref("u8", {2}, std::span(u8)),
      st::tensor_ref("flags", {3}, std::span(flags)),
      st::tensor_ref("empty", {0, 5}, std::span(none)),
      st::tensor_ref("empty_vector", {0}, std::span(none)),
      {"half", st::Dtype::F16, {2}, std::as_bytes(std::span(half_bits))},
      {"bf16", st::Dtype::BF16, {}, std::as_bytes(std::span(bf16_bits))},
      {"f8", st::Dtype::F8_E4M3, {3}, std::as_bytes(std::span(f8_bits))},
  };
  const fs::path file = tmp.path / "all.safetensors";
  st::save_file(file, tensors, {{"format", "np"}, {"note", "quote \" and \\ and \n"}});
  const auto f = st::SafetensorsFile::open(file);
  CHECK(f.metadata() == st::Metadata{{"format", "np"}, {"note", "quote \" and \\ and \n"}});
  CHECK(f.tensors().size() == tensors.size());
  for (const st::TensorRef& t : tensors) {
    INFO(t.name);
    const st::TensorInfo& info = f.info(t.name);
    CHECK(info.dtype == t.dtype);
    CHECK(info.shape == t.shape);
    std::vector<std::byte> raw(info.num_bytes());
    f.read_bytes(t.name, raw);
    CHECK(raw == std::vector<std::byte>(t.data.begin(), t.data.end()));
  }
  CHECK(f.info("global_step").shape.empty());
  CHECK(f.info("global_step").num_elements() == 1);
  CHECK(f.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{step});
  CHECK(f.get_tensor<float>("empty").empty());
  CHECK(f.info("empty").num_elements() == 0);
  CHECK(f.get_tensor<double>("f64") == f64);
  CHECK(f.get_tensor<std::uint64_t>("u64") == u64);
  CHECK(f.get_tensor<std::int8_t>("i8") == i8);
  bool flags_back[3] = {};
  f.read("flags", std::span(flags_back));
  CHECK((flags_back[0] && !flags_back[1] && flags_back[2]));
  const std::vector<float> back = f.get_tensor<float>("dense/kernel");
  REQUIRE(back.size() == f32.size());
  CHECK(std::memcmp(back.data(), f32.data(), 4 * f32.size()) == 0);  // -0.0 and denormals kept
}

TEST_CASE("reading checks names, dtypes and element counts") {
  hookfuse_test::TempDir tmp("safetensors");
  const std::int64_t step = 5;
  const fs::path file = tmp.path / "s.safetensors";
  st::save_file(file, {st::tensor_ref("global_step", {}, std::span(&step, 1))});
  const auto f = st::SafetensorsFile::open(file);
  CHECK(error_of<NotFoundError>([&] { (void)f.info("w"); }) == file.string() + ": no tensor \"w\"");
  CHECK(error_of<hookfuse::ValueError>([&] { (void)f.get_tensor<float>("global_step"); }) ==
        file.string() + ": tensor \"global_step\" is I64, read as F32");
  std::vector<std::int64_t> two(2);
  CHECK(error_of<hookfuse::ValueError>([&] { f.read("global_step", std::span(two)); }) ==
        file.string() + ": tensor \"global_step\" of shape [] has 1 elements, the buffer 2");
  CHECK(error_of<NotFoundError>([&] { (void)st::SafetensorsFile::open(tmp.path / "nope"); }) ==
        (tmp.path / "nope").string() + ": no such safetensors file");
}

TEST_CASE("the writer rejects inconsistent tensors, naming them") {
  const std::vector<float> three = {1, 2, 3};
  auto err = [](const std::vector<st::TensorRef>& t) {
    return error_of<hookfuse::ValueError>([&] { (void)st::serialize(t); });
  };
  CHECK(err({st::tensor_ref("w", {2, 2}, std::span(three))}) ==
        "safetensors: tensor \"w\": shape [2, 2] of F32 needs 16 bytes, the data has 12");
  CHECK(err({st::tensor_ref("w", {1ull << 32, 1ull << 32}, std::span(three))}) ==
        "safetensors: tensor \"w\": shape [4294967296, 4294967296] of F32 needs more than 2^64 "
        "bytes, the data has 12");
  CHECK(err({st::tensor_ref("w", {3}, std::span(three)),
             st::tensor_ref("w", {3}, std::span(three))}) ==
        "safetensors: tensor \"w\" given twice");
  CHECK(err({st::tensor_ref("__metadata__", {3}, std::span(three))}) ==
        "safetensors: a tensor cannot be named \"__metadata__\"");
  CHECK(err({st::tensor_ref("\xff", {3}, std::span(three))}) ==
        "safetensors: tensor name is not valid UTF-8");
}

TEST_CASE("hostile files are DataLossErrors naming the file, tensor and field") {
  hookfuse_test::TempDir tmp("safetensors");
  const fs::path p = tmp.path / "bad.safetensors";
  auto err = [&] { return error_of<DataLossError>([&] { (void)st::SafetensorsFile::open(p); }); };
  const std::string at = p.string() + ": ";
  const std::vector<unsigned char> eight(8, 0);

  {  // truncated before the length
    std::ofstream(p, std::ios::binary) << "abc";
    CHECK(err() == at + "truncated: 3 bytes, a safetensors file starts with an 8-byte header "
                        "length (HeaderTooSmall)");
  }
  write_raw(p, 100, "{}");
  CHECK(err() ==
        at + "header length 100 runs past the end of the file (10 bytes) (InvalidHeaderLength)");
  write_raw(p, std::numeric_limits<std::uint64_t>::max(), "{}");
  CHECK(err() == at + "header length 18446744073709551615 exceeds the limit of 100000000 bytes "
                      "(HeaderTooLarge)");
  write_raw(p, 100'000'001, "{}");
  CHECK(err() ==
        at + "header length 100000001 exceeds the limit of 100000000 bytes (HeaderTooLarge)");
  write_raw(p, "{\"a\":");
  CHECK(err().starts_with(at + "header: invalid JSON: [json.exception.parse_error.101]"));
  write_raw(p, 8, std::string("{}\0\0\0\0\0\0", 8));  // padding other than whitespace
  CHECK(err() == at + "header: invalid JSON: a NUL byte at header offset 2");
  write_raw(p, "{\"\xff\":{}}");
  CHECK(err().starts_with(at + "header: invalid JSON: "));  // not UTF-8
  write_raw(p, "");
  CHECK(err().starts_with(at + "header: invalid JSON: "));
  write_raw(p, "[1,2]   ");
  CHECK(err() == at + "header: the header is an array, expected a JSON object");
  write_raw(p, "{\"w\":[]}");
  CHECK(err() ==
        at + "header: tensor \"w\" is an array, expected an object {dtype, shape, data_offsets}");
  write_raw(p, "{\"__metadata__\":{\"k\":1}}");
  CHECK(err() == at + "header: \"__metadata__\": value of \"k\" is a number, expected a string");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[2]}}");
  CHECK(err() == at + "header: tensor \"w\": field \"data_offsets\" is missing");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}");
  CHECK(err() == at + "header: tensor \"w\": field \"dtype\" appears twice");
  write_raw(p,
            "{\"w\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]},"
            "\"w\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[1,2]}}");
  CHECK(err() == at + "header: tensor \"w\" appears twice");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}");
  CHECK(err() == at + "header: tensor \"w\": field \"shape\" holds a negative number, expected "
                      "non-negative integers");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}");
  CHECK(err() == at + "header: tensor \"w\": field \"shape\" holds the number 2.0 (not a "
                      "non-negative integer within 64 bits), expected non-negative integers");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4,8]}}");
  CHECK(err() == at + "header: tensor \"w\": field \"data_offsets\" has more than 2 values, "
                      "expected [begin, end]");
  write_raw(p, "{\"w\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", {0});
  CHECK(
      err().starts_with(at + "tensor \"w\": field \"dtype\": unsupported or unknown dtype \"F4\""));
  // Offsets and sizes.
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", eight);
  CHECK(err() == at + "tensor \"w\": field \"data_offsets\": [0, 8] spans 8 bytes, shape [3] of "
                      "F32 needs 12 (TensorInvalidInfo)");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", eight);
  CHECK(err() == at + "tensor \"w\": field \"data_offsets\": begin 8 > end 0 (InvalidOffset)");
  write_raw(p,
            "{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}",
            eight);
  CHECK(err() == at +
                     "tensor \"w\": field \"shape\": [4294967296, 4294967296] overflows 64 bits in "
                     "bytes (ValidationOverflow)");
  write_raw(p,
            "{\"w\":{\"dtype\":\"U8\",\"shape\":[18446744073709551615],"
            "\"data_offsets\":[0,18446744073709551615]}}",
            eight);
  CHECK(err() == at + "the tensors cover 18446744073709551615 bytes of data, the file has 8 after "
                      "the header (MetadataIncompleteBuffer)");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", eight);
  CHECK(err() == at + "the tensors cover 16 bytes of data, the file has 8 after the header "
                      "(MetadataIncompleteBuffer)");
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", eight);
  CHECK(err() == at + "tensor \"w\": field \"data_offsets\": begins at 4, expected 0 (the first "
                      "tensor must start at 0) (InvalidOffset)");
  write_raw(p,
            "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
            std::vector<unsigned char>(12));
  CHECK(err() == at + "tensor \"b\": field \"data_offsets\": begins at 4, expected 8 (it overlaps "
                      "tensor \"a\") (InvalidOffset)");
  write_raw(p,
            "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
            "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
            std::vector<unsigned char>(12));
  CHECK(err() == at + "tensor \"b\": field \"data_offsets\": begins at 8, expected 4 (a gap after "
                      "tensor \"a\") (InvalidOffset)");
  write_raw(p,
            "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
            "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
            std::vector<unsigned char>(4));
  CHECK(err().find("it overlaps tensor") != std::string::npos);
  // A directory is not a file.
  CHECK(error_of<hookfuse::io::IoError>([&] { (void)st::SafetensorsFile::open(tmp.path); }) ==
        tmp.path.string() + ": is a directory, not a regular file");
}

TEST_CASE("readers accept what the reference accepts: unknown fields, any order, null metadata") {
  hookfuse_test::TempDir tmp("safetensors");
  const fs::path p = tmp.path / "ok.safetensors";
  write_raw(p,
            "{ \"b\" : {\"data_offsets\":[4,6],\"extra\":{\"x\":[1,[2]]},\"shape\":[1],"
            "\"dtype\":\"I16\",\"also\":null},\n \"__metadata__\": null,"
            "\"a\":{\"shape\":[],\"dtype\":\"I32\",\"data_offsets\":[0,4]}}",
            {1, 0, 0, 0, 0xff, 0x7f});
  const auto f = st::SafetensorsFile::open(p);
  CHECK(f.metadata().empty());
  CHECK(f.keys() == std::vector<std::string>{"a", "b"});
  CHECK(f.tensors()[0].name == "a");  // data-offset order
  CHECK(f.get_tensor<std::int32_t>("a") == std::vector<std::int32_t>{1});
  CHECK(f.get_tensor<std::int16_t>("b") == std::vector<std::int16_t>{32767});
}

TEST_CASE("a BOOL byte other than 0 or 1 and a file truncated after open are data loss") {
  hookfuse_test::TempDir tmp("safetensors");
  const fs::path p = tmp.path / "b.safetensors";
  write_raw(p, "{\"f\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}", {1, 2});
  const auto f = st::SafetensorsFile::open(p);
  bool out[2] = {};
  CHECK(error_of<DataLossError>([&] { f.read("f", std::span(out)); }) ==
        p.string() + ": tensor \"f\": BOOL element 1 is 2, expected 0 or 1");
  const std::vector<float> v = {1, 2, 3, 4};
  const fs::path q = tmp.path / "t.safetensors";
  st::save_file(q, {st::tensor_ref("v", {4}, std::span(v))});
  const auto g = st::SafetensorsFile::open(q);
  fs::resize_file(q, fs::file_size(q) - 4);
  CHECK(error_of<DataLossError>([&] {
          (void)g.get_tensor<float>("v");
        }).find("tensor \"v\": truncated") != std::string::npos);
}

TEST_CASE("save_file into a missing directory is an IoError naming the path") {
  hookfuse_test::TempDir tmp("safetensors");
  const fs::path p = tmp.path / "missing" / "m.safetensors";
  const std::vector<float> v = {1};
  CHECK(error_of<hookfuse::io::IoError>([&] {
          st::save_file(p, {st::tensor_ref("v", {1}, std::span(v))});
        }).find(p.string()) != std::string::npos);
}

TEST_CASE("mutated files open and read cleanly or fail with DataLossError, never out of bounds") {
  // Deterministic mutations of a valid file (byte flips, header-length edits, truncations):
  // each must be read completely or rejected with DataLossError. Under HOOKFUSE_SANITIZE this
  // is the out-of-bounds check; in every build it proves no other exception type escapes.
  hookfuse_test::TempDir tmp("safetensors");
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const std::int64_t step = 9;
  const std::vector<std::byte> good = st::serialize(
      {st::tensor_ref("w", {2, 3}, w), st::tensor_ref("global_step", {}, std::span(&step, 1))},
      {{"framework", "np"}});
  std::mt19937 rng(12345);
  const fs::path p = tmp.path / "m.safetensors";
  int opened = 0, rejected = 0;
  for (int round = 0; round < 600; ++round) {
    std::vector<std::byte> bytes = good;
    const int kind = round % 3;
    if (kind == 0) {  // flip 1-3 random bytes
      for (int k = 0; k < 1 + round % 3; ++k)
        bytes[rng() % bytes.size()] ^= static_cast<std::byte>(1u << (rng() % 8));
    } else if (kind == 1) {  // truncate
      bytes.resize(rng() % bytes.size());
    } else {  // change the header length
      const std::uint64_t n = rng() % 2 ? rng() % 300 : (std::uint64_t{rng()} << 32 | rng());
      for (int i = 0; i < 8; ++i)
        bytes[static_cast<std::size_t>(i)] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
    }
    {
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
    }
    try {
      const auto f = st::SafetensorsFile::open(p);
      for (const st::TensorInfo& t : f.tensors()) {
        std::vector<std::byte> raw(t.num_bytes());
        f.read_bytes(t.name, raw);
      }
      ++opened;
    } catch (const DataLossError&) {
      ++rejected;
    }
  }
  CHECK(opened + rejected == 600);
  CHECK(rejected > 300);
}
