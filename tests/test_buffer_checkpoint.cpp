// Tests of the checkpoint in a byte buffer (io/buffer_checkpoint.hpp, hooks/device_checkpoint.hpp):
// the documented byte layout, a round trip, every single-byte flip refused, truncated and
// too-small buffers, a model of another shape refused naming the tensor, and a run resumed at
// step N from the buffer equal bit for bit at 2N to a run never interrupted.
#include <algorithm>
#include <array>
#include <cmath>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/io/buffer_checkpoint.hpp>
#include <hookfuse/io/crc32c.hpp>
#include <span>
#include <vector>

namespace hf = hookfuse;
using hf::io::BufferCheckpointError;

namespace {

std::uint32_t le32(const std::byte* p) {
  return std::to_integer<std::uint32_t>(p[0]) | std::to_integer<std::uint32_t>(p[1]) << 8 |
         std::to_integer<std::uint32_t>(p[2]) << 16 | std::to_integer<std::uint32_t>(p[3]) << 24;
}

// --- the model: 4 -> 8 ReLU -> 3, batch 8, embedded/mcu_resume's ---------------------------
constexpr int kFeatures = 4, kHidden = 8, kClasses = 3, kBatch = 8, kBatches = 12;

struct DataSet {
  std::array<float, kBatches * kBatch * kFeatures> x{};
  std::array<std::int32_t, kBatches * kBatch> y{};
};
DataSet make_data() {
  DataSet d;
  std::uint32_t s = 12345u;
  for (std::size_t i = 0; i < d.y.size(); ++i) {
    const int c = static_cast<int>(i % kClasses);
    d.y[i] = c;
    for (std::size_t j = 0; j < kFeatures; ++j) {
      s = s * 1664525u + 1013904223u;
      const float noise = static_cast<float>(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
      d.x[i * kFeatures + j] = (static_cast<int>(j) == c ? 2.0f : 0.0f) + noise;
    }
  }
  return d;
}
const DataSet data = make_data();

// The batch of a step is a function of the global step, so a resumed run reads what the
// uninterrupted one reads at the same step.
struct StepInput {
  const hf::GlobalStep* step;
  int batch = 0;
  bool next() {
    batch = static_cast<int>(step->value % kBatches);
    return true;
  }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(&data.x[static_cast<std::size_t>(batch * kBatch * kFeatures)], kBatch,
                             kFeatures);
    graph.template feed<"labels">(&data.y[static_cast<std::size_t>(batch * kBatch)], kBatch, 1);
  }
};

struct Lcg {  // a small uniform initializer; `seed` decides the initial weights
  std::uint32_t seed;
  template <class M>
  void operator()(M& m) const {
    std::uint32_t s = seed;
    for (hf::Index i = 0; i < m.rows(); ++i)
      for (hf::Index j = 0; j < m.cols(); ++j) {
        s = s * 1664525u + 1013904223u;
        m(i, j) = static_cast<float>(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
      }
  }
};

/// Trains a fresh model (initial weights from `seed`) with `optimizer` until the global step is
/// `last_step`, first restoring from `restore` when it is not empty; returns the final
/// checkpoint's bytes (every variable, slot and the step, bit for bit).
template <int Hidden = kHidden, class Opt>
std::vector<std::byte> train(const Opt& optimizer, std::uint32_t seed, std::int64_t last_step,
                             std::span<const std::byte> restore = {}) {
  hf::Placeholder<"x", float, kFeatures, kBatch> x;
  hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;
  hf::nn::Dense<"hidden", float, kFeatures, Hidden> hidden(Lcg{seed});
  hf::nn::Dense<"logits", float, Hidden, kClasses> output(Lcg{seed + 1000});
  auto loss =
      hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, output(hf::relu(hidden(x)))));
  hf::GlobalStep step;
  hf::MonitoredTrainingSession session(optimizer.minimize(loss, step), StepInput{&step},
                                       hf::hooks(hf::StopAtStepHook({.last_step = last_step})));
  if (!restore.empty()) {
    const auto r = hf::restore_checkpoint_from_buffer(session, restore);
    REQUIRE(r.error == BufferCheckpointError::ok);
    REQUIRE(session.global_step() == r.global_step);
  }
  while (!session.should_stop()) session.run();
  std::vector<std::byte> out(2048);
  const auto saved = hf::save_checkpoint_to_buffer(session, out);
  REQUIRE(saved.error == BufferCheckpointError::ok);
  out.resize(saved.size);
  return out;
}

// A bare variable list: W [2, 3] float32 and global_step.
struct SmallModel {
  std::array<float, 6> w{1, 2, 3, 4, 5, 6};
  std::int64_t step = 42;
  std::array<hf::CheckpointVariable, 2> vars() {
    hf::VariableShape s;
    s.rank = 2;
    s.dim_sizes = {2, 3, 0, 0};
    return {hf::CheckpointVariable{"w", hf::DType::float32, s, w.data()},
            hf::CheckpointVariable{"global_step", hf::DType::int64, {}, &step}};
  }
};

}  // namespace

TEST_CASE("buffer checkpoint CRC32C is the Castagnoli check value") {
  const char* s = "123456789";
  CHECK(hf::io::detail::crc32c_bitwise(reinterpret_cast<const std::byte*>(s), 9) == 0xE3069283u);
}

TEST_CASE("buffer checkpoint bytes follow the documented layout") {
  SmallModel m;
  const auto vars = m.vars();
  std::array<std::byte, 80> buf{};
  const auto r = hf::save_checkpoint_to_buffer(hf::VariableList(vars), buf);
  REQUIRE(r.error == BufferCheckpointError::ok);
  // Header 24, record 4 + 2 dims x 4 + name 1 + 6 floats x 4 = 37, CRC 4.
  REQUIRE(r.size == 65);
  CHECK(std::memcmp(buf.data(), "HFCK", 4) == 0);
  CHECK(buf[4] == std::byte{1});
  CHECK(buf[5] == std::byte{0});
  CHECK(le32(&buf[8]) == 42u);
  CHECK(le32(&buf[12]) == 0u);
  CHECK(le32(&buf[16]) == 1u);     // one record: global_step is in the header
  CHECK(le32(&buf[20]) == 37u);    // payload bytes
  CHECK(buf[24] == std::byte{1});  // name length 1
  CHECK(buf[25] == std::byte{0});
  CHECK(buf[26] == std::byte{1});  // DT_FLOAT
  CHECK(buf[27] == std::byte{2});  // rank
  CHECK(le32(&buf[28]) == 2u);
  CHECK(le32(&buf[32]) == 3u);
  CHECK(buf[36] == std::byte{'w'});
  CHECK(le32(&buf[37]) == 0x3F800000u);  // 1.0f
  CHECK(le32(&buf[57]) == 0x40C00000u);  // 6.0f
  CHECK(le32(&buf[61]) == hf::io::crc32c(buf.data(), 61));
  CHECK(buf[65] == std::byte{0});  // nothing written past the checkpoint
}

TEST_CASE("buffer checkpoint round trip restores values and the step") {
  SmallModel m;
  const auto vars = m.vars();
  std::array<std::byte, 128> buf{};
  const auto saved = hf::save_checkpoint_to_buffer(hf::VariableList(vars), buf);
  REQUIRE(saved);
  CHECK(hf::buffer_checkpoint_size(hf::VariableList(vars)) == saved.size);
  m.w = {};
  m.step = 0;
  const auto r = hf::restore_checkpoint_from_buffer(hf::VariableList(vars), buf);
  REQUIRE(r.error == BufferCheckpointError::ok);
  CHECK(r.global_step == 42);
  CHECK(m.step == 42);
  CHECK(m.w == std::array<float, 6>{1, 2, 3, 4, 5, 6});
  CHECK(hf::io::read_buffer_checkpoint_step(buf).global_step == 42);
}

TEST_CASE("verify compares a buffer checkpoint with the model bit for bit") {
  SmallModel m;
  const auto vars = m.vars();
  std::array<std::byte, 65> buf{};
  REQUIRE(hf::save_checkpoint_to_buffer(hf::VariableList(vars), buf));
  CHECK(hf::verify_checkpoint_in_buffer(hf::VariableList(vars), buf).error ==
        BufferCheckpointError::ok);
  m.w[4] = std::nextafter(5.0f, 6.0f);  // one ulp off
  auto r = hf::verify_checkpoint_in_buffer(hf::VariableList(vars), buf);
  CHECK(r.error == BufferCheckpointError::value_mismatch);
  CHECK(r.tensor == "w");
  CHECK(m.w[4] != 5.0f);  // verify writes nothing
  m.w[4] = 5.0f;
  m.step = 43;
  r = hf::verify_checkpoint_in_buffer(hf::VariableList(vars), buf);
  CHECK(r.error == BufferCheckpointError::value_mismatch);
  CHECK(r.tensor == "global_step");
  buf[40] ^= std::byte{1};
  CHECK(hf::verify_checkpoint_in_buffer(hf::VariableList(vars), buf).error ==
        BufferCheckpointError::crc_mismatch);
}

TEST_CASE("every single-byte flip of a buffer checkpoint is refused, variables untouched") {
  SmallModel m;
  const auto vars = m.vars();
  std::array<std::byte, 65> buf{};
  REQUIRE(hf::save_checkpoint_to_buffer(hf::VariableList(vars), buf).size == buf.size());
  m.w = {9, 9, 9, 9, 9, 9};
  m.step = 7;
  for (std::size_t pos = 0; pos < buf.size(); ++pos) {
    for (const unsigned mask : {0x01u, 0x80u, 0xFFu}) {
      auto bad = buf;
      bad[pos] ^= static_cast<std::byte>(mask);
      // What the layout says a flip at pos must give: the magic, the version, the payload
      // count (too long for the buffer: truncated), or else the CRC.
      BufferCheckpointError want = BufferCheckpointError::crc_mismatch;
      if (pos < 4)
        want = BufferCheckpointError::bad_magic;
      else if (pos < 6)
        want = BufferCheckpointError::bad_version;
      else if (pos >= 20 && pos < 24 && 24 + le32(&bad[20]) + 4 > bad.size())
        want = BufferCheckpointError::truncated;
      INFO("byte " << pos << " xor " << mask);
      const auto r = hf::restore_checkpoint_from_buffer(hf::VariableList(vars), bad);
      CHECK(r.error == want);
      CHECK(m.w == std::array<float, 6>{9, 9, 9, 9, 9, 9});
      CHECK(m.step == 7);
    }
  }
}

TEST_CASE("truncated buffer and too-small destination are refused") {
  SmallModel m;
  const auto vars = m.vars();
  std::array<std::byte, 65> buf{};
  for (std::size_t n = 0; n < 65; ++n) {
    INFO("destination of " << n << " bytes");
    std::vector<std::byte> small(n, std::byte{0x5A});
    const auto r = hf::save_checkpoint_to_buffer(hf::VariableList(vars), small);
    CHECK(r.error == BufferCheckpointError::too_small);
    CHECK(
        std::all_of(small.begin(), small.end(), [](std::byte b) { return b == std::byte{0x5A}; }));
  }
  REQUIRE(hf::save_checkpoint_to_buffer(hf::VariableList(vars), buf));
  m.w = {};
  for (std::size_t n = 0; n < 65; ++n) {
    INFO("first " << n << " bytes");
    const auto r =
        hf::restore_checkpoint_from_buffer(hf::VariableList(vars), std::span(buf).first(n));
    CHECK(r.error == BufferCheckpointError::truncated);
  }
  CHECK(m.w == std::array<float, 6>{});
  std::array<std::byte, 65> zeros{};
  CHECK(hf::restore_checkpoint_from_buffer(hf::VariableList(vars), zeros).error ==
        BufferCheckpointError::bad_magic);
}

TEST_CASE("a model of another shape, dtype or variables is refused naming the tensor") {
  const hf::MomentumOptimizer momentum(0.1, 0.9);
  const auto saved = train(momentum, 1, 5);
  SECTION("another shape") {
    hf::Placeholder<"x", float, kFeatures, kBatch> x;
    hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;
    hf::nn::Dense<"hidden", float, kFeatures, kHidden + 1> hidden(Lcg{3});
    hf::nn::Dense<"logits", float, kHidden + 1, kClasses> output(Lcg{4});
    auto loss =
        hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, output(hf::relu(hidden(x)))));
    hf::GlobalStep step;
    hf::MonitoredTrainingSession s(momentum.minimize(loss, step), StepInput{&step}, hf::hooks());
    const auto before = s.variables();
    const float w00 = static_cast<const float*>(before[0].data)[0];
    const auto r = hf::restore_checkpoint_from_buffer(s, saved);
    CHECK(r.error == BufferCheckpointError::shape_mismatch);
    CHECK(r.tensor == "hidden/kernel");
    CHECK(static_cast<const float*>(before[0].data)[0] == w00);
    CHECK(s.global_step() == 0);
  }
  SECTION("no slots: an unexpected tensor") {
    hf::Placeholder<"x", float, kFeatures, kBatch> x;
    hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;
    hf::nn::Dense<"hidden", float, kFeatures, kHidden> hidden(Lcg{3});
    hf::nn::Dense<"logits", float, kHidden, kClasses> output(Lcg{4});
    auto loss =
        hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, output(hf::relu(hidden(x)))));
    hf::GlobalStep step;
    hf::MonitoredTrainingSession s(hf::GradientDescentOptimizer(0.1).minimize(loss, step),
                                   StepInput{&step}, hf::hooks());
    const auto r = hf::restore_checkpoint_from_buffer(s, saved);
    CHECK(r.error == BufferCheckpointError::unexpected_tensor);
    CHECK(r.tensor == "hidden/kernel/Momentum");
    CHECK(s.global_step() == 0);
  }
  SECTION("a missing tensor and another dtype") {
    SmallModel m;
    auto vars = m.vars();
    std::array<std::byte, 128> buf{};
    REQUIRE(hf::save_checkpoint_to_buffer(hf::VariableList(vars).first(1), buf));
    std::array<float, 6> v{};
    std::array<hf::CheckpointVariable, 2> more = {vars[0], vars[0]};
    more[1].name = "v";
    more[1].data = v.data();
    auto r = hf::restore_checkpoint_from_buffer(hf::VariableList(more), buf);
    CHECK(r.error == BufferCheckpointError::missing_tensor);
    CHECK(r.tensor == "v");
    more[1].optional = true;
    CHECK(hf::restore_checkpoint_from_buffer(hf::VariableList(more), buf).error ==
          BufferCheckpointError::ok);
    vars[0].dtype = hf::DType::int32;
    r = hf::restore_checkpoint_from_buffer(hf::VariableList(vars), buf);
    CHECK(r.error == BufferCheckpointError::dtype_mismatch);
    CHECK(r.tensor == "w");
  }
}

TEST_CASE("save at N, restore into a fresh session, train to 2N equals an uninterrupted run") {
  static constexpr std::int64_t n = 37;
  auto check = [](const auto& optimizer) {
    const auto whole = train(optimizer, 1, 2 * n);
    const auto first = train(optimizer, 1, n);
    // Fresh initial weights (another seed): only the restore can make the runs agree.
    const auto resumed = train(optimizer, 99, 2 * n, first);
    CHECK(hf::io::read_buffer_checkpoint_step(first).global_step == n);
    CHECK(hf::io::read_buffer_checkpoint_step(resumed).global_step == 2 * n);
    REQUIRE(resumed.size() == whole.size());
    CHECK(std::memcmp(resumed.data(), whole.data(), whole.size()) == 0);
    // Without the restore the run differs (the check above is not vacuous).
    CHECK(train(optimizer, 99, 2 * n) != whole);
  };
  SECTION("Momentum") { check(hf::MomentumOptimizer(0.1, 0.9)); }
  SECTION("Adam") { check(hf::AdamOptimizer(0.01)); }
}

TEST_CASE("a bare graph saves to and restores from a buffer") {
  hf::Placeholder<"x", float, kFeatures, kBatch> x;
  hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;
  hf::nn::Dense<"hidden", float, kFeatures, kHidden> hidden(Lcg{3});
  hf::nn::Dense<"logits", float, kHidden, kClasses> output(Lcg{4});
  auto loss =
      hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, output(hf::relu(hidden(x)))));
  auto graph = hf::bind(kBatch, loss);
  hf::GlobalStep step;
  step.value = 11;
  std::array<std::byte, 512> buf{};
  REQUIRE(hf::save_checkpoint_to_buffer(graph, step, buf));
  const auto vars = hf::graph_variables(graph);
  float* w = static_cast<float*>(vars[0].data);
  const float w0 = w[0];
  w[0] = 123.0f;
  step.value = 0;
  const auto r = hf::restore_checkpoint_from_buffer(graph, step, buf);
  REQUIRE(r.error == BufferCheckpointError::ok);
  CHECK(w[0] == w0);
  CHECK(step.value == 11);
}
