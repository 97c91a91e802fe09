// bench/compile/torch_step.cpp: compile-time benchmark (c) of bench/compile_time.sh: the step of
// session_step.cpp against LibTorch (torch::nn::Linear 784 -> 256 ReLU -> 10, cross-entropy,
// accuracy, torch::optim::SGD, the hooks' work as in hand_step.cpp). Compiled only where LibTorch
// is installed (the script looks for torch/torch.h, or LIBTORCH=<prefix>); without it this file
// compiles to an empty program.
#if __has_include(<torch/torch.h>)
#include <torch/torch.h>
#include <cmath>
#include <cstdint>
#include <cstdio>

struct MlpImpl : torch::nn::Module {
  torch::nn::Linear hidden{nullptr}, output{nullptr};
  MlpImpl() {
    hidden = register_module("dense", torch::nn::Linear(784, 256));
    output = register_module("logits", torch::nn::Linear(256, 10));
  }
  torch::Tensor forward(const torch::Tensor& x) { return output(torch::relu(hidden(x))); }
};
TORCH_MODULE(Mlp);

int main() {
  static float pixels[32 * 784];
  static std::int64_t classes[32];
  Mlp model;
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  const auto x = torch::from_blob(pixels, {32, 784});
  const auto y = torch::from_blob(classes, {32}, torch::kLong);
  std::int64_t global_step = 0;
  if (global_step < 1000) {
    sgd.zero_grad();
    const auto logits = model->forward(x);
    const auto loss = torch::nn::functional::cross_entropy(logits, y);
    loss.backward();
    sgd.step();
    ++global_step;
    const float value = loss.item<float>();
    const float accuracy = logits.argmax(1).eq(y).to(torch::kFloat).mean().item<float>();
    if (std::isnan(value)) return 1;
    if ((global_step - 1) % 100 == 0)
      std::printf("loss = %g, accuracy = %g\n", static_cast<double>(value),
                  static_cast<double>(accuracy));
  }
  std::printf("global_step: %lld\n", static_cast<long long>(global_step));
  return 0;
}
#else
int main() { return 0; }
#endif
