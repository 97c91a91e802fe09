// hookfuse/clock.hpp: the clock policy used by timers and hooks (steady clock by default).
#pragma once

#include <chrono>
#include <concepts>

namespace hookfuse {

/// A clock returns the current time in seconds from an arbitrary fixed origin, as a number that
/// converts to double: the timers keep it as host_float (double; float in embedded builds,
/// where a clock returning float keeps double arithmetic out of the program).
template <class C>
concept Clock = requires(C& c) {
  { c.now() } -> std::convertible_to<double>;
};

/// Default clock: std::chrono::steady_clock, in seconds.
struct SteadyClock {
  double now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock the test advances by hand (no sleeps). Copies share nothing: pass it by reference
/// through `ClockRef` when several hooks must see the same time.
struct FakeClock {
  double seconds = 0.0;
  double now() const { return seconds; }
  void advance(double s) { seconds += s; }
};

/// Refers to a clock owned elsewhere, so that one fake clock drives every hook.
template <Clock C>
struct ClockRef {
  C* clock;
  double now() const { return clock->now(); }
};

}  // namespace hookfuse
