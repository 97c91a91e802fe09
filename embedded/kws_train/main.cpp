// embedded/kws_train: trains a keyword-spotting-sized MLP on a microcontroller (Cortex-M4F, RV32)
// with a MonitoredTrainingSession and hooks, with no heap, no exceptions and no OS.
//
// The model: 10 frames x 13 MFCC-like coefficients = 130 inputs -> 25 ReLU -> 4 classes (3,379
// float parameters, the size of small on-device keyword-spotting MLPs), sparse softmax
// cross-entropy, Momentum (learning rate 0.02, momentum 0.9: one slot per variable), batch 8,
// 300 steps. Every size is a compile-time constant, so the whole training state is fixed-size
// Eigen matrices inside the session object, on main's stack.
//
// The data are generated on the device while it trains, from fixed seeds (no files, nothing in
// flash but the code): four "keywords", each a smooth time-frequency template (Gaussian ridges
// across the coefficients whose centres move over the frames: rising, falling, two steady
// ridges, a rise and fall), and every example one of them shifted in time by -2 to +2 frames
// (zeros shifted in) and in frequency by -3 to +3 coefficients (any fraction: a speaker's
// pitch), scaled by 0.6 to 1.4, tilted across the coefficients by up to +-0.4, with noise of
// standard deviation 0.35 on every coefficient. The shifts make it more than linear: a 130 -> 4
// softmax regression trained the same way reaches about 0.87 test accuracy, this MLP about
// 0.95. Every training batch is new (seed kTrainSeed); the test set is 256 held-out examples
// from another seed (kTestSeed), 64 of each class.
//
// Hooks: StopAtStepHook (300 steps), NanTensorHook, a LoggingTensorHook (every 50 runs and at the
// end) writing through the platform logger, and a user hook recording the first and last loss.
// At the end the program prints the test accuracy, the parameter and optimizer-state bytes (from
// the session's checkpoint-variable views) and, on a board, the stack high-water mark; it exits
// with status 0 only if the loss fell from above 1.0 and the test accuracy is at least 0.9.
//
// Built like embedded/mcu_train, with its platform layer (embedded/common/platform.hpp): for
// the MPS2 AN386 board (EMBEDDED_BARE_METAL; output through semihosting), for QEMU's riscv
// virt board (UART, mtime, test finisher) and for the host (stdout; the host build's ctest runs
// it).
#include <cmath>
#include <cstdint>
#include <string_view>

#include <hookfuse/hookfuse.hpp>

#include "../common/platform.hpp"

namespace hf = hookfuse;

namespace {

constexpr int kFrames = 10, kCoefficients = 13, kInputs = kFrames * kCoefficients;  // 130
constexpr int kHidden = 25, kClasses = 4;
constexpr int kBatch = 8, kTestExamples = 256, kTestBatches = kTestExamples / kBatch;
constexpr std::int64_t kSteps = 300;
constexpr std::uint32_t kTrainSeed = 20261206u, kTestSeed = 4242u;
constexpr double kMinTestAccuracy = 0.9;

// --- the data generator ------------------------------------------------------------------------
// Centre (in coefficients) of class c's ridge at frame t; class 2 has a second ridge at 10.
float ridge_centre(int c, int t) {
  const float s = static_cast<float>(t) / (kFrames - 1);  // 0 .. 1 over the word
  switch (c) {
    case 0: return 2.0f + 8.0f * s;                           // rising
    case 1: return 10.0f - 8.0f * s;                          // falling
    case 2: return 3.0f;                                      // steady (with a ridge at 10)
    default: return 3.0f + 7.0f * std::sin(3.14159265f * s);  // rise and fall
  }
}

// Keyword c's template at frame t and coefficient position k (not necessarily whole): Gaussian
// ridges across the coefficients, width 1.5, height 1.
float keyword_template(int c, int t, float k) {
  const auto ridge = [k](float centre) {
    const float d = (k - centre) / 1.5f;
    return std::exp(-0.5f * d * d);
  };
  return ridge(ridge_centre(c, t)) + (c == 2 ? ridge(10.0f) : 0.0f);
}

// Examples from a seeded 32-bit LCG (Numerical Recipes constants), the same on every target.
struct Generator {
  std::uint32_t state;
  float uniform() {  // [0, 1), top 24 bits
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  }
  float noise() {  // Irwin-Hall: near-normal, standard deviation 0.6 * 0.577 = 0.35
    return 0.6f * (uniform() + uniform() + uniform() + uniform() - 2.0f);
  }
  // One example of class c into x[130] (frame-major: x[t * 13 + k]).
  void example(int c, float* x) {
    const int shift = static_cast<int>(uniform() * 5.0f) - 2;  // -2 .. 2 frames
    const float pitch = 6.0f * uniform() - 3.0f;               // -3 .. 3 coefficients
    const float amplitude = 0.6f + 0.8f * uniform();
    const float tilt = 0.8f * uniform() - 0.4f;
    for (int t = 0; t < kFrames; ++t)
      for (int k = 0; k < kCoefficients; ++k) {
        const int source = t - shift;
        const float clean =
            source >= 0 && source < kFrames
                ? amplitude * keyword_template(c, source, static_cast<float>(k) - pitch)
                : 0.0f;
        x[t * kCoefficients + k] =
            clean + tilt * static_cast<float>(k - kCoefficients / 2) / 6.0f + noise();
      }
  }
  // A batch of kBatch examples, classes in turn (every batch holds each class twice).
  void batch(float* x, std::int32_t* y) {
    for (int i = 0; i < kBatch; ++i) {
      y[i] = i % kClasses;
      example(y[i], &x[i * kInputs]);
    }
  }
};

// The batch the graph's placeholders point at (4 KB + 32 bytes).
float batch_x[kBatch * kInputs];
std::int32_t batch_y[kBatch];

template <class Graph>
void feed_batch(Graph& graph) {
  graph.template feed<"x">(batch_x, kBatch, kInputs);
  graph.template feed<"labels">(batch_y, kBatch, 1);
}

// The input: a new batch of the training stream on every next(), forever (StopAtStepHook ends
// training).
struct KeywordInput {
  Generator generator{kTrainSeed};
  bool next() {
    generator.batch(batch_x, batch_y);
    return true;
  }
  hf::Index batch_size() const { return kBatch; }
  template <class Graph>
  void feed(Graph& graph) {
    feed_batch(graph);
  }
};

// Glorot-uniform initializer from a 32-bit LCG (4 bytes of state; see embedded/mcu_train).
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
  double first = -1.0, last = -1.0;
  std::int64_t runs = 0;
};
struct RecordLossHook {
  LossRecord* record;
  hf::SessionRunArgs<"loss"> before_run(hf::SessionRunContext&) { return {}; }
  void after_run(hf::SessionRunContext&, const hf::SessionRunValues<"loss">& values) {
    const double loss = values.get<"loss">().item();
    if (record->runs++ == 0) record->first = loss;
    record->last = loss;
  }
};

// Bytes of the tensors a list of checkpoint-variable views describes.
template <class List>
double tensor_bytes(const List& variables) {
  double bytes = 0.0;
  for (const hf::CheckpointVariable& v : variables) {
    const double size = v.dtype == hf::DType::float64 || v.dtype == hf::DType::int64 ? 8.0 : 4.0;
    bytes += size * static_cast<double>(v.num_elements());
  }
  return bytes;
}

}  // namespace

int main() {
  hf::Placeholder<"x", float, kInputs, kBatch> x;              // [8, 130]
  hf::Placeholder<"labels", std::int32_t, 1, kBatch> labels;  // [8]
  hf::nn::Dense<"hidden", float, kInputs, kHidden> hidden(SmallGlorotUniform{7});
  hf::nn::Dense<"logits", float, kHidden, kClasses> output(SmallGlorotUniform{1007});
  auto logits = hf::named<"logits">(output(hf::relu(hidden(x))));
  auto loss = hf::named<"loss">(hf::sparse_softmax_cross_entropy(labels, logits));
  auto accuracy = hf::named<"accuracy">(hf::accuracy(labels, logits));

  hf::GlobalStep global_step;
  auto train_op = hf::MomentumOptimizer(0.02, 0.9).minimize(loss, global_step);

  using LogPolicies = hf::LoggingPolicies<platform::Clock, platform::Logger>;
  LossRecord record;
  hf::MonitoredTrainingSession session(
      train_op, KeywordInput{},
      hf::hooks(hf::StopAtStepHook({.last_step = kSteps}),
                hf::NanTensorHook<"loss", platform::Logger>(),
                hf::BasicLoggingTensorHook<LogPolicies, "global_step", "loss">(
                    {.every_n_iter = 50, .at_end = true}),
                RecordLossHook{&record}),
      accuracy);
  while (!session.should_stop()) session.run();
  session.close();

  // Test accuracy: the held-out examples through the trained model, a batch at a time.
  auto& graph = session.graph();
  Generator test{kTestSeed};
  double correct = 0.0;
  for (int b = 0; b < kTestBatches; ++b) {
    test.batch(batch_x, batch_y);
    feed_batch(graph);
    graph.forward();
    correct += static_cast<double>(graph.compute<"accuracy">()(0, 0)) * kBatch;
  }
  const double test_accuracy = correct / kTestExamples;

  platform::print_value("first_loss", record.first);
  platform::print_value("last_loss", record.last);
  platform::print_value("test_accuracy", test_accuracy);
  platform::print_value("parameter_bytes", tensor_bytes(hf::graph_variables(graph)));
  platform::print_value("optimizer_state_bytes",
                        tensor_bytes(session.optimizer_slots().checkpoint_variables()));
#ifdef EMBEDDED_BARE_METAL
  platform::print_value("stack_used_bytes", static_cast<double>(hookfuse_stack_high_water()));
#endif
  const bool ok = record.first > 1.0 && test_accuracy >= kMinTestAccuracy;
  platform::print(ok ? "kws_train: PASS\n" : "kws_train: FAIL\n");
  return ok ? 0 : 1;
}
