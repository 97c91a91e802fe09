// tests/test_timer.cpp: SecondOrStepTimer against tf.compat.v1.train.SecondOrStepTimer.
//
// Time comes from a FakeClock advanced by hand: no sleeps, exact numbers.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>

#include "hookfuse/clock.hpp"
#include "hookfuse/hooks/timer.hpp"

using hookfuse::ClockRef;
using hookfuse::FakeClock;
using hookfuse::SecondOrStepTimer;
using Timer = SecondOrStepTimer<ClockRef<FakeClock>>;

static_assert(hookfuse::Clock<FakeClock>);
static_assert(hookfuse::Clock<ClockRef<FakeClock>>);
static_assert(hookfuse::Clock<hookfuse::SteadyClock>);

TEST_CASE("SecondOrStepTimer: exactly one interval, else std::invalid_argument", "[timer]") {
  FakeClock clock;
  const ClockRef<FakeClock> ref{&clock};
  CHECK_THROWS_AS(Timer(std::nullopt, std::nullopt, ref), std::invalid_argument);
  CHECK_THROWS_AS(Timer(1.0, std::int64_t{10}, ref), std::invalid_argument);
  CHECK_THROWS_WITH(Timer(std::nullopt, std::nullopt, ref),
                    Catch::Contains("either every_secs or every_steps"));
  CHECK_THROWS_WITH(Timer(1.0, std::int64_t{10}, ref), Catch::Contains("both"));
  CHECK_NOTHROW(Timer(1.0, std::nullopt, ref));
  CHECK_NOTHROW(Timer(std::nullopt, std::int64_t{10}, ref));
}

TEST_CASE("SecondOrStepTimer: fires the first time it is asked, whatever the step", "[timer]") {
  FakeClock clock;
  SECTION("every_steps") {
    Timer timer(std::nullopt, std::int64_t{10}, ClockRef<FakeClock>{&clock});
    CHECK_FALSE(timer.last_triggered_step().has_value());
    CHECK(timer.should_trigger_for_step(0));
    CHECK(timer.should_trigger_for_step(1234));
  }
  SECTION("every_secs") {
    Timer timer(5.0, std::nullopt, ClockRef<FakeClock>{&clock});
    CHECK(timer.should_trigger_for_step(7));
  }
}

TEST_CASE("SecondOrStepTimer: every_steps", "[timer]") {
  FakeClock clock;
  Timer timer(std::nullopt, std::int64_t{10}, ClockRef<FakeClock>{&clock});

  // The first trigger has no previous one: both elapsed values are empty.
  REQUIRE(timer.should_trigger_for_step(1));
  const auto first = timer.update_last_triggered_step(1);
  CHECK_FALSE(first.secs.has_value());
  CHECK_FALSE(first.steps.has_value());
  CHECK(timer.last_triggered_step() == std::optional<std::int64_t>(1));

  // Never twice for the same step, even with all the time in the world.
  clock.advance(1e6);
  CHECK_FALSE(timer.should_trigger_for_step(1));

  // Steps 2..10 are fewer than 10 steps after 1; time does not matter with every_steps.
  for (std::int64_t step = 2; step <= 10; ++step) CHECK_FALSE(timer.should_trigger_for_step(step));
  CHECK(timer.should_trigger_for_step(11));
  CHECK(timer.should_trigger_for_step(25));  // more than 10 steps later also fires

  clock.advance(2.5);
  const auto second = timer.update_last_triggered_step(11);
  REQUIRE(second.secs.has_value());
  REQUIRE(second.steps.has_value());
  CHECK(*second.secs == 1e6 + 2.5);
  CHECK(*second.steps == 10);
  CHECK_FALSE(timer.should_trigger_for_step(11));
  CHECK_FALSE(timer.should_trigger_for_step(20));
  CHECK(timer.should_trigger_for_step(21));
}

TEST_CASE("SecondOrStepTimer: every_secs", "[timer]") {
  FakeClock clock;
  clock.seconds = 100.0;
  Timer timer(5.0, std::nullopt, ClockRef<FakeClock>{&clock});

  REQUIRE(timer.should_trigger_for_step(0));
  timer.update_last_triggered_step(0);

  // Steps do not matter with every_secs, only the clock.
  CHECK_FALSE(timer.should_trigger_for_step(1));
  CHECK_FALSE(timer.should_trigger_for_step(1000));
  clock.advance(4.75);
  CHECK_FALSE(timer.should_trigger_for_step(1000));
  clock.advance(0.25);  // exactly every_secs later: fires (TensorFlow compares with >=)
  CHECK(timer.should_trigger_for_step(1000));
  // ... but never for the step it last fired at.
  CHECK_FALSE(timer.should_trigger_for_step(0));

  const auto e = timer.update_last_triggered_step(3);
  REQUIRE(e.secs.has_value());
  CHECK(*e.secs == 5.0);
  CHECK(*e.steps == 3);

  clock.advance(4.0);
  CHECK_FALSE(timer.should_trigger_for_step(4));
  clock.advance(1.5);
  CHECK(timer.should_trigger_for_step(4));
  CHECK_FALSE(timer.should_trigger_for_step(3));
}

TEST_CASE("SecondOrStepTimer: reset forgets the last trigger", "[timer]") {
  FakeClock clock;
  Timer timer(std::nullopt, std::int64_t{10}, ClockRef<FakeClock>{&clock});
  timer.update_last_triggered_step(5);
  CHECK_FALSE(timer.should_trigger_for_step(5));
  CHECK_FALSE(timer.should_trigger_for_step(6));
  timer.reset();
  CHECK_FALSE(timer.last_triggered_step().has_value());
  CHECK(timer.should_trigger_for_step(5));
  CHECK(timer.should_trigger_for_step(6));
  const auto e = timer.update_last_triggered_step(6);
  CHECK_FALSE(e.secs.has_value());  // a first trigger again
  CHECK_FALSE(e.steps.has_value());
}

TEST_CASE("SecondOrStepTimer: a FakeClock copy does not follow the original", "[timer]") {
  // Documented: copies share nothing; ClockRef is how several users see one clock.
  FakeClock clock;
  SecondOrStepTimer<FakeClock> by_value(1.0, std::nullopt, clock);
  Timer by_ref(1.0, std::nullopt, ClockRef<FakeClock>{&clock});
  by_value.update_last_triggered_step(0);
  by_ref.update_last_triggered_step(0);
  clock.advance(10.0);
  CHECK_FALSE(by_value.should_trigger_for_step(1));
  CHECK(by_ref.should_trigger_for_step(1));
}

TEST_CASE("SecondOrStepTimer: exact near the int64 limit, no overflow", "[timer]") {
  // Python's integers do not overflow, so TensorFlow's `step >= last + every_steps` is exact;
  // a trigger due past INT64_MAX never comes. Expected values by hand, from that formula.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  FakeClock clock;
  const ClockRef<FakeClock> ref{&clock};

  SECTION("a step near the limit: the next trigger is past it") {
    Timer timer(std::nullopt, std::int64_t{10}, ref);
    timer.update_last_triggered_step(kMax - 5);  // next: kMax + 5
    CHECK_FALSE(timer.should_trigger_for_step(kMax - 5));
    CHECK_FALSE(timer.should_trigger_for_step(kMax - 1));
    CHECK_FALSE(timer.should_trigger_for_step(kMax));
  }
  SECTION("the next trigger exactly at INT64_MAX") {
    Timer timer(std::nullopt, std::int64_t{10}, ref);
    timer.update_last_triggered_step(kMax - 10);
    CHECK_FALSE(timer.should_trigger_for_step(kMax - 1));
    CHECK(timer.should_trigger_for_step(kMax));
    const auto e = timer.update_last_triggered_step(kMax);
    REQUIRE(e.steps.has_value());
    CHECK(*e.steps == 10);
    CHECK_FALSE(timer.should_trigger_for_step(kMax));  // kMax + 10 never comes
  }
  SECTION("every_steps = INT64_MAX") {
    Timer timer(std::nullopt, kMax, ref);
    timer.update_last_triggered_step(0);  // next: exactly kMax
    CHECK_FALSE(timer.should_trigger_for_step(1));
    CHECK_FALSE(timer.should_trigger_for_step(kMax - 1));
    CHECK(timer.should_trigger_for_step(kMax));
    timer.update_last_triggered_step(1);  // next: kMax + 1
    CHECK_FALSE(timer.should_trigger_for_step(2));
    CHECK_FALSE(timer.should_trigger_for_step(kMax));
    timer.reset();  // forgets the unreachable trigger too
    CHECK(timer.should_trigger_for_step(kMax));
    CHECK(timer.should_trigger_for_step(2));
  }
  SECTION("elapsed steps over the whole range") {
    Timer timer(std::nullopt, kMax, ref);
    timer.update_last_triggered_step(0);
    const auto whole = timer.update_last_triggered_step(kMax);
    REQUIRE(whole.steps.has_value());
    CHECK(*whole.steps == kMax);
    // From INT64_MIN to INT64_MAX is 2^64 - 1 steps: clamped to INT64_MAX, not wrapped.
    timer.reset();
    timer.update_last_triggered_step(kMin);
    const auto clamped = timer.update_last_triggered_step(kMax);
    REQUIRE(clamped.steps.has_value());
    CHECK(*clamped.steps == kMax);
    // And back down: -(2^64 - 1), clamped to INT64_MIN.
    const auto down = timer.update_last_triggered_step(kMin);
    REQUIRE(down.steps.has_value());
    CHECK(*down.steps == kMin);
  }
  SECTION("a negative every_steps near INT64_MIN: every other step fires, as in TensorFlow") {
    Timer timer(std::nullopt, kMin, ref);
    timer.update_last_triggered_step(-1);  // -1 + INT64_MIN = -2^63 - 1 < every int64 step
    CHECK(timer.should_trigger_for_step(kMin));
    CHECK(timer.should_trigger_for_step(0));
    CHECK_FALSE(timer.should_trigger_for_step(-1));  // never twice for one step
  }
}
