// hookfuse/estimator/mode_keys.hpp: ModeKeys, the three modes a model_fn is called in
// (tf.estimator.ModeKeys).
#pragma once

namespace hookfuse {

/// What an Estimator call builds the model for.
enum class Mode { train, eval, predict };

/// One mode as a type of its own: a model_fn receives ModeKey<Mode::train> in train(), and so
/// on, so each mode builds its own model type. Converts to Mode in constant expressions:
/// `if constexpr (mode == ModeKeys::TRAIN)` inside a generic model_fn.
template <Mode M>
struct ModeKey {
  static constexpr Mode value = M;
  constexpr operator Mode() const noexcept { return M; }
};

/// tf.estimator.ModeKeys: TRAIN, EVAL and PREDICT.
struct ModeKeys {
  static constexpr ModeKey<Mode::train> TRAIN{};
  static constexpr ModeKey<Mode::eval> EVAL{};
  static constexpr ModeKey<Mode::predict> PREDICT{};
};

namespace detail {
template <class T>
inline constexpr bool is_mode_key_v = false;
template <Mode M>
inline constexpr bool is_mode_key_v<ModeKey<M>> = true;
/// "TRAIN", "EVAL" or "PREDICT", as TensorFlow spells the mode.
constexpr const char* mode_name(Mode m) {
  switch (m) {
    case Mode::train:
      return "TRAIN";
    case Mode::eval:
      return "EVAL";
    case Mode::predict:
      return "PREDICT";
  }
  return "?";
}
}  // namespace detail

}  // namespace hookfuse
