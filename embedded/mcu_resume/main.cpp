// embedded/mcu_resume: a checkpoint on the device (no heap, no file system) survives a reset.
//
// The 4 -> 8 ReLU -> 3 classifier of embedded/mcu_train, trained with Momentum (so the
// checkpoint holds the optimizer's slots as well as the weights), three times in one program:
//
//   1. from step 0 to N; its checkpoint goes to `flash` (a static byte array standing in for a
//      flash sector; hookfuse/hooks/device_checkpoint.hpp, layout in docs/embedded.md);
//   2. a reset: a fresh session whose weights start from another seed. One byte of `flash` is
//      flipped and the restore must be refused with crc_mismatch, leaving the model untouched;
//      the byte is put back, the restore must succeed at step N, and training continues to 2N;
//      its final checkpoint goes to `flash`;
//   3. uninterrupted from step 0 to 2N: its weights, slots and step must equal those in `flash`
//      bit for bit (verify_checkpoint_in_buffer compares without a second buffer).
//
// The batch of a step is a function of the global step, so the resumed run reads the same data
// as the uninterrupted one. Prints the results, then "mcu_resume: PASS" (exit status 0) or
// "mcu_resume: FAIL" (1). Built for the MPS2 AN386 (Cortex-M4F, semihosting), for QEMU's riscv
// virt board (rv32imac, rv32imafc; UART) and for the host (stdout), like mcu_train, with its
// platform layer (embedded/common/platform.hpp).
#include <cstddef>
#include <cstdint>
#include <hookfuse/hookfuse.hpp>
#include <hookfuse/hooks/device_checkpoint.hpp>
#include <span>
#include <string_view>

#include "../common/platform.hpp"

namespace hf = hookfuse;

namespace {

constexpr int kFeatures = 4, kHidden = 8, kClasses = 3;
constexpr int kBatch = 8, kExamples = 96, kBatches = kExamples / kBatch;
constexpr std::int64_t kHalf = 150;  // N: save at N, resume to 2N
constexpr std::size_t kCheckpointBytes = 800;
constexpr std::size_t kFlippedByte = 400;  // inside the first slot's values

struct DataSet {
  float x[kExamples * kFeatures];
  std::int32_t y[kExamples];
};
constexpr DataSet make_data_set() {  // mcu_train's data set
  DataSet d{};
  std::uint32_t state = 20261129u;
  auto uniform = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  };
  constexpr float centres[kClasses][kFeatures] = {
      {2.0f, 0.0f, 0.0f, 0.5f}, {0.0f, 2.0f, 0.0f, 0.5f}, {0.0f, 0.0f, 2.0f, 0.5f}};
  for (int i = 0; i < kExamples; ++i) {
    const int c = i % kClasses;
    d.y[i] = c;
    for (int j = 0; j < kFeatures; ++j) {
      const float noise = uniform() + uniform() + uniform() + uniform() - 2.0f;
      d.x[i * kFeatures + j] = centres[c][j] + 0.6f * noise;
    }
  }
  return d;
}
constexpr DataSet data_set = make_data_set();

// The batch of a step: global_step mod 12, so it survives a reset with the step.
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
    graph.template feed<"x">(&data_set.x[batch * kBatch * kFeatures], kBatch, kFeatures);
    graph.template feed<"labels">(&data_set.y[batch * kBatch], kBatch, 1);
  }
};

struct SmallUniform {  // uniform in [-0.5, 0.5) from a 32-bit LCG
  std::uint32_t seed;
  template <class M>
  void operator()(M& m) const {
    std::uint32_t state = seed;
    for (hf::Index i = 0; i < m.rows(); ++i)
      for (hf::Index j = 0; j < m.cols(); ++j) {
        state = state * 1664525u + 1013904223u;
        m(i, j) = static_cast<float>(state >> 8) * (1.0f / 16777216.0f) - 0.5f;
      }
  }
};

// Static: the "flash sector".
alignas(8) std::byte flash[kCheckpointBytes];

void print_line(std::string_view name, std::string_view value) {
  platform::print(name);
  platform::print(": ");
  platform::print(value);
  platform::print("\n");
}
void print_number(std::string_view name, double v) {
  char text[24];
  char* out = text;
  hf::detail::append_g(out, text + sizeof text, v);
  print_line(name, std::string_view(text, static_cast<std::size_t>(out - text)));
}

// CRC32C of every value the session would checkpoint: shows that a refused restore wrote none.
template <class Session>
std::uint32_t state_crc(Session& session) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const hf::CheckpointVariable& v : session.variables()) {
    const std::size_t bytes =
        static_cast<std::size_t>(v.num_elements()) *
        (v.dtype == hf::DType::float32 || v.dtype == hf::DType::int32 ? 4 : 8);
    crc = hf::io::detail::crc32c_update(crc, static_cast<const std::byte*>(v.data), bytes);
  }
  return crc;
}

enum class Run { first_half, resumed, uninterrupted };

/// One run of the model; returns false on any failed check (printed).
[[gnu::noinline]] bool train(Run run) {
  const std::uint32_t seed = run == Run::resumed ? 4242u : 7u;  // a reset: other weights
  hf::StopAtStepHook::Options stop_at;  // set by field: GCC 12 sees {.last_step = v} as unset
  stop_at.last_step = run == Run::first_half ? kHalf : 2 * kHalf;
  hf::Placeholder<"x", float, kFeatures, kBatch> x;
  hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;
  hf::nn::Dense<"hidden", float, kFeatures, kHidden> hidden(SmallUniform{seed});
  hf::nn::Dense<"logits", float, kHidden, kClasses> output(SmallUniform{seed + 1000u});
  auto loss =
      hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, output(hf::relu(hidden(x)))));
  hf::GlobalStep global_step;
  auto train_op = hf::MomentumOptimizer(0.05, 0.9).minimize(loss, global_step);
  hf::MonitoredTrainingSession session(
      train_op, StepInput{&global_step},
      hf::hooks(hf::StopAtStepHook(stop_at), hf::NanTensorHook<"loss", hf::NullLogger>()));

  if (run == Run::resumed) {
    // A damaged sector: refused, nothing written.
    const std::uint32_t before = state_crc(session);
    flash[kFlippedByte] ^= std::byte{0x40};
    const auto bad = hf::restore_checkpoint_from_buffer(session, flash);
    flash[kFlippedByte] ^= std::byte{0x40};
    print_line("corrupt_restore", hf::io::name(bad.error));
    if (bad.error != hf::io::BufferCheckpointError::crc_mismatch || state_crc(session) != before ||
        session.global_step() != 0) {
      print_line("FAIL", "a corrupted buffer was not refused, or the model changed");
      return false;
    }
    const auto good = hf::restore_checkpoint_from_buffer(session, flash);
    print_line("restore", hf::io::name(good.error));
    print_number("restored_step", static_cast<double>(session.global_step()));
    if (!good || session.global_step() != kHalf) {
      print_line("FAIL", good.tensor.empty() ? "restore failed" : good.tensor);
      return false;
    }
  }
  while (!session.should_stop()) session.run();

  if (run == Run::uninterrupted) {  // compare with the resumed run's checkpoint, bit for bit
    const auto same = hf::verify_checkpoint_in_buffer(session, flash);
    print_line("resumed_equals_uninterrupted", same ? "bit for bit" : hf::io::name(same.error));
    if (!same) print_line("differs", same.tensor);
    return static_cast<bool>(same);
  }
  const auto saved = hf::save_checkpoint_to_buffer(session, flash);
  if (!saved) {
    print_line("save", hf::io::name(saved.error));
    return false;
  }
  if (run == Run::first_half) {
    print_number("checkpoint_bytes", static_cast<double>(saved.size));
    print_number("saved_step", static_cast<double>(session.global_step()));
  } else {
    print_number("final_step", static_cast<double>(session.global_step()));
  }
  return true;
}

}  // namespace

int main() {
  const bool ok = train(Run::first_half) && train(Run::resumed) && train(Run::uninterrupted);
#ifdef EMBEDDED_BARE_METAL
  print_number("stack_used_bytes", static_cast<double>(hookfuse_stack_high_water()));
#endif
  platform::print(ok ? "mcu_resume: PASS\n" : "mcu_resume: FAIL\n");
  return ok ? 0 : 1;
}
