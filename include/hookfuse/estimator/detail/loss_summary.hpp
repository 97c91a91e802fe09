// hookfuse/estimator/detail/loss_summary.hpp: the loss as the Estimator trains and evaluates
// it: named "loss" when the model_fn left it unnamed, and summarised as TensorFlow's Estimator
// does (summary.scalar('loss', loss)).
#pragma once

#include <type_traits>
#include <utility>

#include "hookfuse/autodiff/expr.hpp"
#include "hookfuse/autodiff/summary.hpp"
#include "hookfuse/optim/optimizer.hpp"

namespace hookfuse::detail {

/// A model's loss as a named tensor: the name given, or "loss".
template <class E>
auto named_loss(E e) {
  if constexpr (requires { E::name; })
    return e;
  else
    return Named<"loss", E>{std::move(e)};
}

/// TF adds summary.scalar('loss', loss) when the model has no summary named "loss"; so does
/// this, wrapping the train op's loss.
template <class TrainOpT>
auto with_loss_summary(TrainOpT op) {
  using E = std::remove_cvref_t<decltype(op.loss)>;
  if constexpr (requires { typename E::summarized_type; }) {
    return op;
  } else {
    auto named = named_loss(std::move(op.loss));
    using N = decltype(named);
    auto wrapped = summary::Summary<summary::Kind::scalar, "loss", N>{std::move(named)};
    using W = decltype(wrapped);
    using Opt = std::remove_cvref_t<decltype(op.optimizer)>;
    return TrainOp<W, Opt>{std::move(wrapped), std::move(op.optimizer), op.global_step,
                           op.global_step_increment};
  }
}

}  // namespace hookfuse::detail
