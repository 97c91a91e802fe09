// tests/kill/kill_child.cpp: the process the crash test kills. Usage: kill_child DIR MAX_TO_KEEP
//
// Like a training process under MonitoredTrainingSession with a save every step: restores the
// latest checkpoint of DIR if there is one (and exits 3 if its values are not the
// deterministic state of its global step), saves again at the restored step (as
// CheckpointSaverHook does at session creation), then forever: step + 1, new state, save.
// Exits 0 when its parent goes away (no orphan writing forever), 2 on any error.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <hookfuse/io/saver.hpp>
#include <string>

#include "kill_model.hpp"

namespace {
struct Options {
  int max_to_keep = 3;
  double keep_checkpoint_every_n_hours = 10000.0;
};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kill_child DIR MAX_TO_KEEP\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const pid_t parent = ::getppid();
  try {
    hookfuse::io::Saver saver(Options{.max_to_keep = std::atoi(argv[2])});
    hookfuse_test::KillModel model;
    std::int64_t step = 0;
    if (saver.restore_latest(model.vars(), dir.string())) {
      step = model.global_step;
      const std::string diff = hookfuse_test::detail::compare(
          model.as_expected(), hookfuse_test::KillModel::expected_at(step));
      if (!diff.empty()) {
        std::fprintf(stderr, "kill_child: restored step %lld: %s\n", static_cast<long long>(step),
                     diff.c_str());
        return 3;
      }
    }
    const std::string save_path = (dir / "model.ckpt").string();
    for (;; ++step) {
      if (::getppid() != parent) return 0;
      model.set(step);
      const auto vars = model.vars();
      saver.save(vars, save_path, step);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kill_child: %s\n", e.what());
    return 2;
  }
}
