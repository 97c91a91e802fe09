// hookfuse/optim/learning_rate_ref.hpp: LearningRateRef, a reference to an optimizer's learning
// rate that does not name the optimizer's type (what schedule hooks hold).
#pragma once

#include <stdexcept>

#include "hookfuse/config.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse {

/// Reads and sets the learning rate of an optimizer owned elsewhere (the session's), through
/// two plain function pointers and the optimizer's address: no virtual call, no std::function,
/// no heap. Empty until bound; get() or set() on an empty reference throws std::logic_error.
class LearningRateRef {
 public:
  LearningRateRef() = default;
  /// Refers to `optimizer`, which must outlive every use of this reference.
  template <Optimizer O>
  explicit LearningRateRef(O& optimizer)
      : optimizer_(&optimizer),
        get_([](const void* o) {
          return static_cast<double>(static_cast<const O*>(o)->learning_rate());
        }),
        set_([](void* o, double lr) { static_cast<O*>(o)->set_learning_rate(lr); }) {}

  bool bound() const { return optimizer_ != nullptr; }
  double get() const {
    if (optimizer_ == nullptr) unbound();
    return get_(optimizer_);
  }
  void set(double learning_rate) const {
    if (optimizer_ == nullptr) unbound();
    set_(optimizer_, learning_rate);
  }

 private:
  [[noreturn]] static void unbound() {
    detail::fail<std::logic_error>(
        "LearningRateRef: no optimizer (a schedule hook reaches the optimizer in "
        "after_create_session; was the hook used outside a MonitoredTrainingSession?)");
  }

  void* optimizer_ = nullptr;
  double (*get_)(const void*) = nullptr;
  void (*set_)(void*, double) = nullptr;
};

}  // namespace hookfuse
