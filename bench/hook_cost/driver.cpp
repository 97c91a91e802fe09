// bench/hook_cost/driver.cpp: runs N training steps of the batch-32 Fashion-MNIST session of
// bench/hook_session.hpp with one hook variant, for instruction counts under valgrind
// (bench/hook_cost.sh builds and runs it; not a Google Benchmark binary).
//
//     driver <variant> <steps>
//
// variant: none | checkpoint_saver | summary_saver | summary_saver_every_step |
//          step_counter_output_dir | profiler | profiler_every_step. The session, its first run and its close are the same for
// every N, so the count difference between two N is the cost of the steps alone.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "../hook_session.hpp"

using namespace hookfuse_bench;

namespace {

template <Extra E>
int run(long steps) {
  const ScratchDir dir("/tmp");
  double checksum = 0;
  with_extra_hook_session<E>(RandomBatch(32), dir.path().string(), [&](auto& session) {
    session.run();  // the session's first run (hooks that write at a session's start do so here)
    for (long i = 0; i < steps; ++i) session.run();
    checksum = session.template run<"loss">()->template get<"loss">().item();
  });
  std::printf("%s %ld steps: loss %.6f\n", extra_name(E), steps, checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <variant> <steps>\n", argv[0]);
    return 2;
  }
  const std::string_view v = argv[1];
  const long steps = std::strtol(argv[2], nullptr, 10);
  if (v == "none") return run<Extra::none>(steps);
  if (v == "checkpoint_saver") return run<Extra::checkpoint_saver>(steps);
  if (v == "summary_saver") return run<Extra::summary_saver>(steps);
  if (v == "summary_saver_every_step") return run<Extra::summary_saver_every_step>(steps);
  if (v == "step_counter_output_dir") return run<Extra::step_counter_output_dir>(steps);
  if (v == "profiler") return run<Extra::profiler>(steps);
  if (v == "profiler_every_step") return run<Extra::profiler_every_step>(steps);
  std::fprintf(stderr, "driver: unknown variant '%s'\n", argv[1]);
  return 2;
}
