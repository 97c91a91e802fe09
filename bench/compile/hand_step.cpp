// bench/compile/hand_step.cpp: compile-time benchmark (b) of bench/compile_time.sh: the step of
// session_step.cpp written by hand with Eigen, without hookfuse: forward (784 -> 256 ReLU -> 10),
// sparse softmax cross-entropy and accuracy, backward, the SGD update with gradients in buffers,
// and the four hooks' work kept trivial (a step counter, stop at a step, a NaN check on the loss,
// a log line with printf every 100 steps). One step on a static batch of 32 zero pixels.
// -DHOOKFUSE_BENCH_FORWARD_ONLY leaves out the backward pass and the update (bench/README.md,
// "Compile time"). Not a CMake target; bench/compile_time.sh compiles it (-c). It also links and runs:
//   c++ -std=c++20 -O3 -DNDEBUG -isystem /usr/include/eigen3 bench/compile/hand_step.cpp
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr Eigen::Index kBatch = 32, kIn = 784, kHidden = 256, kOut = 10;

float pixels[kBatch * kIn];     // [32, 784], zero
std::int32_t classes[kBatch];   // [32], class 0

struct Mlp {
  RowMatrix w1 = RowMatrix::Random(kIn, kHidden) * 0.08f, w2 = RowMatrix::Random(kHidden, kOut) * 0.15f;
  Eigen::RowVectorXf b1 = Eigen::RowVectorXf::Zero(kHidden), b2 = Eigen::RowVectorXf::Zero(kOut);
  RowMatrix gw1{kIn, kHidden}, gw2{kHidden, kOut};
  Eigen::RowVectorXf gb1{kHidden}, gb2{kOut};
  RowMatrix h{kBatch, kHidden}, z{kBatch, kOut}, dz{kBatch, kOut}, dh{kBatch, kHidden};

  /// One SGD step on x [batch, 784] and labels [batch]; returns the mean loss, sets accuracy.
  float step(const Eigen::Map<const RowMatrix>& x, const std::int32_t* y, float lr,
             float& accuracy) {
    const Eigen::Index batch = x.rows();
    h.noalias() = x * w1;
    h.rowwise() += b1;
    h = h.cwiseMax(0.f);
    z.noalias() = h * w2;
    z.rowwise() += b2;
    float loss = 0, hits = 0;
    const float inv_b = 1.f / static_cast<float>(batch);
    for (Eigen::Index i = 0; i < batch; ++i) {
      Eigen::Index arg = 0;
      const float m = z.row(i).maxCoeff(&arg);
      hits += arg == y[i] ? 1.f : 0.f;
      dz.row(i) = (z.row(i).array() - m).exp().matrix();
      const float s = dz.row(i).sum();
      loss += m + std::log(s) - z(i, y[i]);
      dz.row(i) /= s * static_cast<float>(batch);
      dz(i, y[i]) -= inv_b;
    }
#ifndef HOOKFUSE_BENCH_FORWARD_ONLY  // graph_stages.cpp's stage 3 by hand: forward pass only
    dh.noalias() = dz * w2.transpose();
    dh = (h.array() > 0.f).select(dh, 0.f);
    gw2.noalias() = h.transpose() * dz;
    gb2 = dz.colwise().sum();
    gw1.noalias() = x.transpose() * dh;
    gb1 = dh.colwise().sum();
    w1.noalias() -= lr * gw1;
    b1.noalias() -= lr * gb1;
    w2.noalias() -= lr * gw2;
    b2.noalias() -= lr * gb2;
#else
    (void)lr;
#endif
    accuracy = hits * inv_b;
    return loss * inv_b;
  }
};

}  // namespace

int main() {
  Mlp model;
  std::int64_t global_step = 0;
  const std::int64_t last_step = 1000;
  const Eigen::Map<const RowMatrix> x(pixels, kBatch, kIn);
  if (global_step < last_step) {  // the StopAtStepHook's check
    float accuracy = 0;
    const float loss = model.step(x, classes, 0.1f, accuracy);
    ++global_step;
    if (std::isnan(loss)) {  // the NanTensorHook's check
      std::fprintf(stderr, "NaN loss during training.\n");
      return 1;
    }
    if ((global_step - 1) % 100 == 0)  // the LoggingTensorHook's and StepCounterHook's lines
      std::printf("loss = %g, accuracy = %g (step %lld)\n", static_cast<double>(loss),
                  static_cast<double>(accuracy), static_cast<long long>(global_step));
  }
  std::printf("global_step: %lld\n", static_cast<long long>(global_step));
  return 0;
}
