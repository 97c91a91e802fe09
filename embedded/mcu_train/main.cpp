// embedded/mcu_train: trains a 4 -> 8 ReLU -> 3 classifier on a microcontroller (Cortex-M4F)
// with a MonitoredTrainingSession and hooks, with no heap, no exceptions and no OS.
//
// The model has compile-time sizes throughout (batch 8), so every buffer of the bound graph is
// a fixed-size Eigen matrix inside the session object, on main's stack. The data set is 96
// points around three class centres in R^4, generated at compile time by a seeded LCG (it lives
// in flash). Hooks: StopAtStepHook (600 steps), NanTensorHook, a LoggingTensorHook (every 100
// runs and at the end) writing through the semihosting logger, and a user hook recording the
// first and last loss. At the end the program evaluates the training accuracy and exits with
// status 0 only if the loss fell from above 1.0 to below 0.1 and the accuracy is at least 0.95.
//
// Built three ways: for the MPS2 AN386 board (MCU_TRAIN_BARE_METAL; embedded/CMakeLists.txt,
// run under qemu-system-arm -semihosting), for QEMU's riscv virt board (the same, with the
// riscv toolchain; output on the UART) and for the host, where the same code logs to stdout
// (the host build's ctest runs it too).
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <hookfuse/hookfuse.hpp>

namespace hf = hookfuse;

#if defined(MCU_TRAIN_BARE_METAL) && defined(__riscv)
#include "virt.hpp"

namespace platform {  // QEMU's riscv virt board: UART, mtime, test finisher
using Logger = riscv_virt::Logger;
using Clock = riscv_virt::MtimeClock;
inline void print(std::string_view text) { riscv_virt::write(text); }
[[noreturn]] inline void exit(int status) { riscv_virt::exit(status); }
}  // namespace platform
#elif defined(MCU_TRAIN_BARE_METAL)
#include "semihosting.hpp"

namespace platform {  // Cortex-M4F: semihosting, SysTick
using Logger = semihosting::Logger;
using Clock = cortex_m::SysTickClock;
inline void print(std::string_view text) { semihosting::write(text); }
[[noreturn]] inline void exit(int status) { semihosting::exit(status); }
}  // namespace platform
#endif

#ifdef MCU_TRAIN_BARE_METAL
// Every hookfuse error ends here in a build without exceptions.
[[noreturn]] void hookfuse::error_handler(std::string_view what) {
  platform::print("FATAL:hookfuse:");
  platform::print(what);
  platform::print("\n");
  platform::exit(2);
}
#else
#include <cstdio>
#include <cstdlib>

namespace platform {
struct Logger {  // the semihosting logger's format, on stdout
  void log(hf::Severity s, std::string_view line) const {
    std::printf("%s:hookfuse:%.*s\n", hf::severity_name(s), static_cast<int>(line.size()),
                line.data());
  }
};
using Clock = hf::SteadyClock;
inline void print(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
}
}  // namespace platform

#ifdef HOOKFUSE_NO_EXCEPTIONS
[[noreturn]] void hookfuse::error_handler(std::string_view what) {
  std::fprintf(stderr, "FATAL:hookfuse:%.*s\n", static_cast<int>(what.size()), what.data());
  std::exit(2);
}
#endif
#endif

namespace {

constexpr int kFeatures = 4, kHidden = 8, kClasses = 3;
constexpr int kBatch = 8, kExamples = 96, kBatches = kExamples / kBatch;
constexpr std::int64_t kSteps = 600;

// --- the data set, computed by the compiler ---------------------------------------------------
struct DataSet {
  float x[kExamples * kFeatures];
  std::int32_t y[kExamples];
};

constexpr DataSet make_data_set() {
  DataSet d{};
  std::uint32_t state = 20261129u;
  auto uniform = [&state] {  // [0, 1), Numerical Recipes LCG, top 24 bits
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  };
  constexpr float centres[kClasses][kFeatures] = {
      {2.0f, 0.0f, 0.0f, 0.5f}, {0.0f, 2.0f, 0.0f, 0.5f}, {0.0f, 0.0f, 2.0f, 0.5f}};
  for (int i = 0; i < kExamples; ++i) {
    const int c = i % kClasses;  // classes interleaved: every batch holds all three
    d.y[i] = c;
    for (int j = 0; j < kFeatures; ++j) {
      // Irwin-Hall: the sum of four uniforms is near-normal, standard deviation 0.577.
      const float noise = uniform() + uniform() + uniform() + uniform() - 2.0f;
      d.x[i * kFeatures + j] = centres[c][j] + 0.6f * noise;
    }
  }
  return d;
}

constexpr DataSet data_set = make_data_set();

// The input: the 12 batches of 8 in order, forever (StopAtStepHook ends training).
struct BatchInput {
  int batch = -1;
  bool next() {
    batch = (batch + 1) % kBatches;
    return true;
  }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    graph.template feed<"x">(&data_set.x[batch * kBatch * kFeatures], kBatch, kFeatures);
    graph.template feed<"labels">(&data_set.y[batch * kBatch], kBatch, 1);
  }
};

// Glorot-uniform initializer from a 32-bit LCG: 4 bytes of state where std::mt19937_64 (behind
// hf::nn::glorot_uniform) keeps 2.5 KB on the stack. Any callable on the matrix is an
// initializer.
struct SmallGlorotUniform {
  std::uint32_t seed;
  template <class M>
  void operator()(M& m) const {
    std::uint32_t state = seed;
    const float limit = std::sqrt(6.0f / static_cast<float>(m.rows() + m.cols()));
    for (hf::Index i = 0; i < m.rows(); ++i)
      for (hf::Index j = 0; j < m.cols(); ++j) {
        state = state * 1664525u + 1013904223u;
        const float u = static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
        m(i, j) = (2.0f * u - 1.0f) * limit;
      }
  }
};

// A user hook: records the loss of the first and the last run.
struct LossRecord {
  hf::host_float first = -1, last = -1;
  std::int64_t runs = 0;
};
struct RecordLossHook {
  LossRecord* record;
  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"loss">& values) {
    const hf::host_float loss = values.get<"loss">().item();
    if (record->runs++ == 0) record->first = loss;
    record->last = loss;
  }
};

#ifdef MCU_TRAIN_HEAP_HOOK
// The deliberately broken variant (target mcu_train_heap_hook): a hook that keeps every loss in
// a std::vector. On the board this must fail to link ("undefined reference to `__wrap__Znwj'").
}  // namespace
#include <vector>
namespace {
struct HeapHook {
  std::vector<float> losses;
  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"loss">& values) {
    losses.push_back(static_cast<float>(values.get<"loss">().item()));
  }
};
#define MCU_TRAIN_EXTRA_HOOKS , HeapHook {}
#else
#define MCU_TRAIN_EXTRA_HOOKS
#endif

// "<name>: <v>\n", v as printf's %g (a host_float: double on the host, float on the board) or
// an integer.
template <class T>
void print_value(std::string_view name, T v) {
  char line[48];
  char* out = line;
  hf::detail::append_text(out, line + sizeof line, name);
  hf::detail::append_text(out, line + sizeof line, ": ");
  if constexpr (std::is_integral_v<T>)
    hf::detail::append_int(out, line + sizeof line, v);
  else
    hf::detail::append_g(out, line + sizeof line, v);
  hf::detail::append_text(out, line + sizeof line, "\n");
  platform::print(std::string_view(line, static_cast<std::size_t>(out - line)));
}

}  // namespace

int main() {
  hf::Placeholder<"x", float, kFeatures, kBatch> x;            // [8, 4]
  hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;  // [8]
  hf::nn::Dense<"hidden", float, kFeatures, kHidden> hidden(SmallGlorotUniform{7});
  hf::nn::Dense<"logits", float, kHidden, kClasses> output(SmallGlorotUniform{1007});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));

  hf::GlobalStep global_step;
  auto train_op = hf::GradientDescentOptimizer(0.1).minimize(loss, global_step);

  using LogPolicies = hf::LoggingPolicies<platform::Clock, platform::Logger>;
  LossRecord record;
  hf::MonitoredTrainingSession session(
      train_op, BatchInput{},
      hf::hooks(hf::StopAtStepHook({.last_step = kSteps}),
                hf::NanTensorHook<"loss", platform::Logger>(),
                hf::BasicLoggingTensorHook<LogPolicies, "global_step", "loss">(
                    {.every_n_iter = 100, .at_end = true}),
                RecordLossHook{&record} MCU_TRAIN_EXTRA_HOOKS),
      accuracy);
  while (!session.should_stop()) session.run();
  session.close();

  // Training accuracy: every batch once through the trained model.
  auto& graph = session.graph();
  hf::host_float correct = 0;
  for (int b = 0; b < kBatches; ++b) {
    graph.feed<"x">(&data_set.x[b * kBatch * kFeatures], kBatch, kFeatures);
    graph.feed<"labels">(&data_set.y[b * kBatch], kBatch, 1);
    graph.forward();
    correct += static_cast<hf::host_float>(graph.compute<"accuracy">()(0, 0)) * kBatch;
  }
  const hf::host_float train_accuracy = correct / kExamples;

  print_value("first_loss", record.first);
  print_value("last_loss", record.last);
  print_value("train_accuracy", train_accuracy);
#ifdef MCU_TRAIN_BARE_METAL
  print_value("stack_used_bytes", static_cast<std::int64_t>(hookfuse_stack_high_water()));
#endif
  const bool ok = record.first > hf::host_float(1.0) && record.last < hf::host_float(0.1) &&
                  train_accuracy >= hf::host_float(0.95);
  platform::print(ok ? "mcu_train: PASS\n" : "mcu_train: FAIL\n");
  return ok ? 0 : 1;
}
