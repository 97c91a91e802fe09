// Tensor bundles (TensorFlow V2 checkpoints): round trips bit for bit, TensorFlow's exact bytes,
// and the real TensorFlow checkpoints of fixtures/tf with their documented contents
// (fixtures/tf/README.md, fixtures/FORMATS.md section 4).
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <hookfuse/io/tensor_bundle.hpp>
#include <limits>
#include <map>
#include <memory>
#include <protozero/pbf_reader.hpp>
#include <string>
#include <vector>

#include "bundle_test_util.hpp"
#include "error_of.hpp"

namespace io = hookfuse::io;
using hookfuse_test::read_bytes;
using hookfuse_test::TempDir;
using hookfuse_test::tf_fixture;

namespace {

/// Key -> value of a .index file, decoded by LevelDB itself (independent of BundleReader).
std::map<std::string, std::string> index_table(const std::filesystem::path& index) {
  leveldb::Env* env = leveldb::Env::Default();
  leveldb::RandomAccessFile* raw = nullptr;
  REQUIRE(env->NewRandomAccessFile(index.string(), &raw).ok());
  std::unique_ptr<leveldb::RandomAccessFile> file(raw);
  leveldb::Table* t = nullptr;
  leveldb::Options o;
  REQUIRE(leveldb::Table::Open(o, file.get(), std::filesystem::file_size(index), &t).ok());
  std::unique_ptr<leveldb::Table> table(t);
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(leveldb::ReadOptions()));
  std::map<std::string, std::string> m;
  for (it->SeekToFirst(); it->Valid(); it->Next()) m[it->key().ToString()] = it->value().ToString();
  REQUIRE(it->status().ok());
  return m;
}

std::string bytes_of(std::initializer_list<unsigned> b) {
  std::string s;
  for (unsigned v : b) s.push_back(static_cast<char>(v));
  return s;
}

std::string le32(std::uint32_t v) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &v, 4);
  return s;
}

template <class T>
std::vector<unsigned char> raw(const std::vector<T>& v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace

TEST_CASE("every dtype and rank round-trips bit for bit, data in add order") {
  TempDir dir;
  const auto prefix = dir / "model.ckpt-7";

  const float fnan = std::bit_cast<float>(0x7fc01234u);  // a NaN with a payload
  const std::vector<float> f = {0.0f,
                                -0.0f,
                                1.5f,
                                -3.25f,
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                fnan,
                                std::numeric_limits<float>::denorm_min(),
                                std::numeric_limits<float>::max(),
                                0.1f,
                                2.0f,
                                7.0f};
  const std::vector<double> d = {
      -0.0, 1e-310, std::bit_cast<double>(0x7ff8000000000abcull), 3.141592653589793, -1e300, 6.0};
  const std::vector<std::int32_t> i32 = {std::numeric_limits<std::int32_t>::min(), -1, 0, 1,
                                         std::numeric_limits<std::int32_t>::max()};
  const std::vector<std::int64_t> i64 = {std::numeric_limits<std::int64_t>::min(), -1,
                                         std::int64_t{1} << 40,
                                         std::numeric_limits<std::int64_t>::max()};
  const std::array<std::int64_t, 1> step{123456789012345};
  const std::vector<float> none;

  io::BundleWriter w(prefix);
  w.add("z/matrix", {3, 4}, f);    // rank 2
  w.add("d/vector", {6}, d);       // rank 1
  w.add("global_step", {}, step);  // rank 0
  w.add("i32", {5}, i32);
  w.add("i64", {2, 2}, i64);
  w.add("a/empty", {0}, none);  // empty tensors
  w.add("a/empty_3x0", {3, 0}, std::span<const double>());
  w.finish();

  // The data file is the raw bytes in add() order, nothing else.
  std::vector<unsigned char> expected_data;
  for (const auto& part : {raw(f), raw(d), raw(std::vector<std::int64_t>(step.begin(), step.end())),
                           raw(i32), raw(i64)}) {
    expected_data.insert(expected_data.end(), part.begin(), part.end());
  }
  CHECK(read_bytes(io::data_filename(prefix)) == expected_data);
  CHECK(dir.files() ==
        std::vector<std::string>{"model.ckpt-7.data-00000-of-00001", "model.ckpt-7.index"});

  const io::CheckpointReader r(prefix);
  CHECK(r.keys() == std::vector<std::string>{"a/empty", "a/empty_3x0", "d/vector", "global_step",
                                             "i32", "i64", "z/matrix"});
  const auto shapes = r.get_variable_to_shape_map();
  CHECK(shapes.at("z/matrix") == io::TensorShape{3, 4});
  CHECK(shapes.at("d/vector") == io::TensorShape{6});
  CHECK(shapes.at("global_step").dims() == 0);
  CHECK(shapes.at("a/empty_3x0") == io::TensorShape{3, 0});
  const auto dtypes = r.get_variable_to_dtype_map();
  CHECK(dtypes.at("z/matrix") == io::DataType::DT_FLOAT);
  CHECK(dtypes.at("d/vector") == io::DataType::DT_DOUBLE);
  CHECK(dtypes.at("i32") == io::DataType::DT_INT32);
  CHECK(dtypes.at("global_step") == io::DataType::DT_INT64);
  CHECK(dtypes.at("a/empty_3x0") == io::DataType::DT_DOUBLE);

  CHECK(raw(r.get_tensor<float>("z/matrix")) == raw(f));
  CHECK(raw(r.get_tensor<double>("d/vector")) == raw(d));
  CHECK(r.get_tensor<std::int32_t>("i32") == i32);
  CHECK(r.get_tensor<std::int64_t>("i64") == i64);
  CHECK(r.get_tensor<std::int64_t>("global_step") == std::vector<std::int64_t>{123456789012345});
  CHECK(r.get_tensor<float>("a/empty").empty());
  CHECK(r.get_tensor<double>("a/empty_3x0").empty());

  std::array<float, 12> buffer{};
  r.get_tensor("z/matrix", std::span<float>(buffer));
  CHECK(std::memcmp(buffer.data(), f.data(), sizeof buffer) == 0);

  // Offsets follow add order: the matrix first, then the 6 doubles, then the int64 scalar.
  CHECK(r.bundle().entry("z/matrix").offset == 0);
  CHECK(r.bundle().entry("d/vector").offset == 48);
  CHECK(r.bundle().entry("global_step").offset == 96);
  CHECK(r.bundle().entry("global_step").size == 8);
  CHECK(r.bundle().entry("a/empty").size == 0);

  const auto listed = io::list_variables(prefix);
  REQUIRE(listed.size() == 7);
  CHECK(listed.front().first == "a/empty");
  CHECK(listed.back() == std::pair<std::string, io::TensorShape>{"z/matrix", {3, 4}});
}

TEST_CASE("index values are TensorFlow's proto3 bytes, defaults omitted") {
  TempDir dir;
  const auto prefix = dir / "p";
  io::BundleWriter w(prefix);
  const std::array<float, 1> a{0.5f}, b{3.0f};
  w.add("a", {}, a);
  w.add("b", {}, b);
  w.add("e", {3, 0}, std::span<const float>());
  const std::vector<std::int64_t> two = {1, 2};
  std::vector<float> pad(47, 1.0f);  // moves the next tensor to offset 200
  w.add("pad", {47}, pad);
  w.add("n", {2}, two);
  std::vector<float> m(25, 0.25f);
  w.add("m", {5, 5}, m);
  w.finish();

  const auto t = index_table(io::meta_filename(prefix));
  // Header: num_shards 1, endianness LITTLE omitted, version{producer 1}.
  CHECK(t.at("") == bytes_of({0x08, 0x01, 0x1a, 0x02, 0x08, 0x01}));
  // a = 0.5f at offset 0: the offset is omitted; masked CRC 0x1f273806 (FORMATS.md section 4.3).
  CHECK(t.at("a") == bytes_of({0x08, 0x01, 0x12, 0x00, 0x28, 0x04, 0x35, 0x06, 0x38, 0x27, 0x1f}));
  // b = 3.0f at offset 4: FORMATS.md's example entry 08 01 12 00 20 04 28 04 35 ef d6 82 c3.
  CHECK(t.at("b") ==
        bytes_of({0x08, 0x01, 0x12, 0x00, 0x20, 0x04, 0x28, 0x04, 0x35, 0xef, 0xd6, 0x82, 0xc3}));
  // [3,0] at offset 8: the 0-sized dimension is an empty Dim, the size (0) is omitted, the CRC
  // of no bytes is mask(0) = 0xa282ead8.
  CHECK(t.at("e") == bytes_of({0x08, 0x01, 0x12, 0x06, 0x12, 0x02, 0x08, 0x03, 0x12, 0x00, 0x20,
                               0x08, 0x35, 0xd8, 0xea, 0x82, 0xa2}));
  // int64 [2] at offset 8 + 188 = 196: a two-byte varint offset (c4 01), size 16.
  const std::array<std::int64_t, 2> n{1, 2};
  const std::uint32_t crc_n = io::masked_crc32c(n.data(), 16);
  CHECK(t.at("n") == bytes_of({0x08, 0x09, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x20, 0xc4, 0x01,
                               0x28, 0x10, 0x35}) +
                         le32(crc_n));
  // [5,5] float: FORMATS.md's 08 01 12 08 12 02 08 05 12 02 08 05 ... 28 64 35 <crc>.
  const std::uint32_t crc_m = io::masked_crc32c(m.data(), 100);
  CHECK(t.at("m") == bytes_of({0x08, 0x01, 0x12, 0x08, 0x12, 0x02, 0x08, 0x05, 0x12, 0x02, 0x08,
                               0x05, 0x20, 0xd4, 0x01, 0x28, 0x64, 0x35}) +
                         le32(crc_m));
}

TEST_CASE("the writer reproduces TensorFlow's half_plus_three checkpoint byte for byte") {
  const auto fixture = tf_fixture("ckpt_tf1_half_plus_three/variables");
  TempDir dir;
  const auto prefix = dir / "variables";
  io::BundleWriter w(prefix);
  const std::array<float, 1> a{0.5f}, b{3.0f}, c{3.0f};
  w.add("a", {}, a);
  w.add("b", {}, b);
  w.add("c", {}, c);
  w.finish();
  CHECK(read_bytes(io::meta_filename(prefix)) == read_bytes(io::meta_filename(fixture)));
  CHECK(read_bytes(io::data_filename(prefix)) == read_bytes(io::data_filename(fixture)));
  CHECK(read_bytes(io::meta_filename(prefix)).size() == 151);
}

TEST_CASE("a bundle whose index spans several 256 KiB blocks reads back") {
  TempDir dir;
  const auto prefix = dir / "many";
  io::BundleWriter w(prefix);
  constexpr int kTensors = 12000;  // ~30 bytes of index each: 2 blocks at least
  for (int i = 0; i < kTensors; ++i) {
    const std::array<std::int32_t, 1> v{i};
    w.add("layer_" + std::to_string(i) + "/a_rather_long_variable_name", {}, v);
  }
  w.finish();
  CHECK(std::filesystem::file_size(io::meta_filename(prefix)) > 2 * 262144);
  const io::BundleReader r(prefix);
  REQUIRE(r.entries().size() == kTensors);
  for (int i : {0, 1, 4999, 9999, 11999}) {
    CHECK(r.lookup<std::int32_t>("layer_" + std::to_string(i) + "/a_rather_long_variable_name") ==
          std::vector<std::int32_t>{i});
  }
}

TEST_CASE("TF1 half_plus_three: a=0.5, b=3.0, c=3.0, float scalars") {
  const io::CheckpointReader r(tf_fixture("ckpt_tf1_half_plus_three/variables"));
  CHECK(r.keys() == std::vector<std::string>{"a", "b", "c"});
  CHECK(r.get_tensor<float>("a") == std::vector<float>{0.5f});
  CHECK(r.get_tensor<float>("b") == std::vector<float>{3.0f});
  CHECK(r.get_tensor<float>("c") == std::vector<float>{3.0f});
  CHECK(r.get_variable_to_shape_map().at("a").dims() == 0);
  CHECK(r.bundle().entry("a").crc32c == 0x1f273806u);
  CHECK(r.bundle().entry("c").offset == 8);
}

TEST_CASE("TF1 half_plus_two with a snappy-compressed index block") {
  const auto prefix = tf_fixture("ckpt_tf1_half_plus_two_snappy/variables");
  const io::CheckpointReader r(prefix);
  CHECK(r.keys() == std::vector<std::string>{"a", "a2", "b", "c", "c2"});
  CHECK(r.get_tensor<float>("a") == std::vector<float>{0.5f});
  CHECK(r.get_tensor<float>("a2") == std::vector<float>{0.5f});
  CHECK(r.get_tensor<float>("b") == std::vector<float>{2.0f});
  CHECK(r.get_tensor<float>("c") == std::vector<float>{3.0f});
  CHECK(r.get_tensor<float>("c2") == std::vector<float>{3.0f});
  CHECK(r.bundle().entry("c2").offset == 16);
}

TEST_CASE("TF2 object-based regression checkpoint: floats, an int64 and the object graph") {
  const io::CheckpointReader r(tf_fixture("ckpt_tf2_regression/variables"));
  CHECK(r.keys().size() == 7);
  CHECK(r.keys().front() == "_CHECKPOINTABLE_OBJECT_GRAPH");  // '_' sorts before lowercase
  CHECK(r.get_tensor<float>("w/.ATTRIBUTES/VARIABLE_VALUE") == std::vector<float>{0.204297543f});
  CHECK(r.get_tensor<float>("b/.ATTRIBUTES/VARIABLE_VALUE") == std::vector<float>{0.0f});
  CHECK(r.get_variable_to_shape_map().at("w/.ATTRIBUTES/VARIABLE_VALUE") == io::TensorShape{1});
  const std::string iter = "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE";
  CHECK(r.get_variable_to_dtype_map().at(iter) == io::DataType::DT_INT64);
  CHECK(r.get_variable_to_shape_map().at(iter).dims() == 0);
  CHECK(r.get_tensor<std::int64_t>(iter) == std::vector<std::int64_t>{0});
  CHECK(r.get_tensor<float>("optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE") ==
        std::vector<float>{0.5f});
  CHECK(r.get_tensor<float>("optimizer/momentum/.ATTRIBUTES/VARIABLE_VALUE") ==
        std::vector<float>{0.0f});
  CHECK(r.get_tensor<float>("optimizer/decay/.ATTRIBUTES/VARIABLE_VALUE") ==
        std::vector<float>{0.0f});

  // The DT_STRING scalar: listed, and readable as TensorFlow's string layout (537 bytes: a
  // varint length 531, the 4-byte length checksum, 531 bytes of TrackableObjectGraph).
  const std::string graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH";
  CHECK(r.get_variable_to_dtype_map().at(graph_key) == io::DataType::DT_STRING);
  CHECK(r.bundle().entry(graph_key).size == 537);
  CHECK(r.bundle().lookup_bytes(graph_key).size() == 537);
  const auto strings = r.bundle().lookup_strings(graph_key);
  REQUIRE(strings.size() == 1);
  REQUIRE(strings[0].size() == 531);
  int nodes = 0;  // TrackableObjectGraph.nodes = field 1
  protozero::pbf_reader graph(strings[0]);
  while (graph.next(1)) {
    ++nodes;
    graph.skip();
  }
  CHECK(nodes == 9);
  // Reading it as numbers is a clear error, not a crash.
  const auto msg =
      hookfuse_test::error_of<hookfuse::ValueError>([&] { (void)r.get_tensor<float>(graph_key); });
  CHECK_THAT(msg, Catch::Contains("_CHECKPOINTABLE_OBJECT_GRAPH") && Catch::Contains("DT_STRING") &&
                      Catch::Contains("DT_FLOAT"));
}

TEST_CASE("TF1 Saver houseprices checkpoint: 34 tensors in three restart runs") {
  const auto prefix = tf_fixture("ckpt_tf1_saver_houseprices/model.ckpt");
  const io::CheckpointReader r(prefix);
  const auto shapes = r.get_variable_to_shape_map();
  CHECK(shapes.size() == 34);
  CHECK(shapes.at("Variable") == io::TensorShape{8, 100});
  CHECK(shapes.at("Variable_1") == io::TensorShape{100});
  CHECK(shapes.at("Variable_2") == io::TensorShape{100, 5});
  CHECK(shapes.at("Variable_4/Adam_1") == io::TensorShape{5, 5});
  CHECK(shapes.at("Variable_6") == io::TensorShape{5, 10});
  CHECK(shapes.at("Variable_8") == io::TensorShape{10, 1});
  CHECK(shapes.at("Variable_9") == io::TensorShape{1});
  CHECK(shapes.at("beta1_power").dims() == 0);

  const auto v = r.get_tensor<float>("Variable");
  REQUIRE(v.size() == 800);
  CHECK(v[0] == -0.702847898f);
  CHECK(v[1] == 0.751050413f);
  CHECK(v[2] == 0.993626893f);
  CHECK(v[3] == -0.0823677182f);
  double sum = 0;
  for (float x : v) sum += x;
  CHECK(sum == Approx(10.6796021).margin(1e-5));
  CHECK(r.bundle().entry("Variable").crc32c == 0x23c5ff3eu);
  CHECK(r.get_tensor<float>("Variable_10") == std::vector<float>{0.0f});
  CHECK(r.get_tensor<float>("Variable_11") == std::vector<float>{1.0f});
  CHECK(r.get_tensor<float>("beta1_power") == std::vector<float>{0.0f});
  CHECK(r.get_tensor<float>("beta2_power") == std::vector<float>{4.16217225e-18f});

  // Every tensor's CRC checks.
  for (const auto& e : r.bundle().entries()) CHECK_NOTHROW(r.get_tensor<float>(e.key));

  // tf.train.list_variables: bytewise order, uppercase before lowercase.
  const auto listed = io::list_variables(prefix);
  REQUIRE(listed.size() == 34);
  CHECK(listed[0].first == "Variable");
  CHECK(listed[1].first == "Variable/Adam");
  CHECK(listed[2].first == "Variable/Adam_1");
  CHECK(listed[3].first == "Variable_1");
  CHECK(listed[32].first == "beta1_power");
  CHECK(listed[33].first == "beta2_power");
}

TEST_CASE("lookups with the wrong key, dtype or buffer size name what was expected") {
  TempDir dir;
  const auto prefix = dir / "ck";
  io::BundleWriter w(prefix);
  const std::vector<float> kernel(6, 1.0f);
  w.add("dense/kernel", {2, 3}, kernel);
  w.finish();
  const io::CheckpointReader r(prefix);
  using hookfuse_test::error_of;

  auto msg = error_of<io::NotFoundError>([&] { (void)r.get_tensor<float>("dense/bias"); });
  CHECK_THAT(msg, Catch::Contains("dense/bias") && Catch::Contains(prefix.string() + ".index"));
  CHECK_FALSE(r.has_tensor("dense/bias"));
  CHECK(r.has_tensor("dense/kernel"));

  msg = error_of<hookfuse::ValueError>([&] { (void)r.get_tensor<double>("dense/kernel"); });
  CHECK_THAT(msg, Catch::Contains("dense/kernel") && Catch::Contains("DT_FLOAT") &&
                      Catch::Contains("DT_DOUBLE"));

  std::array<float, 5> small{};
  msg = error_of<hookfuse::ValueError>(
      [&] { r.get_tensor("dense/kernel", std::span<float>(small)); });
  CHECK_THAT(
      msg, Catch::Contains("[2,3]") && Catch::Contains("6 elements") && Catch::Contains("holds 5"));
}

TEST_CASE("the writer refuses empty and duplicate keys and data not matching the shape") {
  TempDir dir;
  const auto prefix = dir / "ck";
  io::BundleWriter w(prefix);
  const std::vector<float> three(3, 1.0f);
  using hookfuse_test::error_of;
  CHECK_THAT(error_of<hookfuse::ValueError>([&] { w.add("", {3}, three); }),
             Catch::Contains("empty tensor key"));
  w.add("w", {3}, three);
  CHECK_THAT(error_of<hookfuse::ValueError>([&] { w.add("w", {3}, three); }),
             Catch::Contains("duplicate tensor key 'w'"));
  CHECK_THAT(error_of<hookfuse::ValueError>([&] {
               w.add("v", {2, 2}, three);
             }),
             Catch::Contains("'v'") && Catch::Contains("[2,2]") && Catch::Contains("needs 4") &&
                 Catch::Contains("got 3"));
  CHECK_THAT(error_of<hookfuse::ValueError>([&] {
               w.add("u", {-1, 3}, three);
             }),
             Catch::Contains("'u'") && Catch::Contains("[-1,3]"));
  // The refused tensors wrote nothing: the bundle holds w alone, at offset 0.
  w.finish();
  CHECK(std::filesystem::file_size(io::data_filename(prefix)) == 12);
  CHECK(io::CheckpointReader(prefix).keys() == std::vector<std::string>{"w"});
  CHECK_THAT(error_of<hookfuse::RuntimeError>([&] { w.add("x", {3}, three); }),
             Catch::Contains("after finish()"));
  CHECK_THROWS_AS(w.finish(), hookfuse::RuntimeError);
}

TEST_CASE("a bundle without tensors is a header and an empty data file") {
  TempDir dir;
  const auto prefix = dir / "empty";
  io::BundleWriter(prefix).finish();
  CHECK(std::filesystem::file_size(io::data_filename(prefix)) == 0);
  const auto t = index_table(io::meta_filename(prefix));
  REQUIRE(t.size() == 1);
  CHECK(t.at("") == bytes_of({0x08, 0x01, 0x1a, 0x02, 0x08, 0x01}));
  CHECK(io::CheckpointReader(prefix).keys().empty());
}

TEST_CASE("data types: TensorFlow's enum values, sizes and names") {
  CHECK(static_cast<int>(io::DataType::DT_FLOAT) == 1);
  CHECK(static_cast<int>(io::DataType::DT_DOUBLE) == 2);
  CHECK(static_cast<int>(io::DataType::DT_INT32) == 3);
  CHECK(static_cast<int>(io::DataType::DT_STRING) == 7);
  CHECK(static_cast<int>(io::DataType::DT_INT64) == 9);
  STATIC_REQUIRE(io::data_type_of<std::int64_t> == io::DataType::DT_INT64);
  STATIC_REQUIRE(io::data_type_size(io::DataType::DT_DOUBLE) == 8);
  CHECK(io::describe_data_type(static_cast<io::DataType>(19)) == "unsupported dtype 19 (DT_HALF)");
  CHECK(io::describe_data_type(static_cast<io::DataType>(77)) == "unsupported dtype 77");
  CHECK(io::TensorShape{784, 256}.num_elements() == 200704);
  CHECK(io::TensorShape{}.num_elements() == 1);
  CHECK(io::TensorShape{3, 0}.num_elements() == 0);
  CHECK(io::TensorShape{784, 256}.debug_string() == "[784,256]");
  CHECK_THROWS_AS((io::TensorShape{std::int64_t{1} << 40, std::int64_t{1} << 40}.num_elements()),
                  hookfuse::ValueError);
}
