// tests/kill/kill_child.cpp: the process the crash test kills. Usage: kill_child DIR MAX_TO_KEEP
//
// Real training (kill_model.hpp: a small network, deterministic data) under
// MonitoredTrainingSession with SessionOptions{.checkpoint_dir = DIR, .save_checkpoint_steps = 1,
// .max_to_keep = MAX_TO_KEEP} and the default saver (io::Saver): the session restores the latest
// checkpoint of DIR at creation, its CheckpointSaverHook saves at creation and after every step.
// Its first line of output, once the session exists, is "restored <step>" (a checkpoint was
// restored, global_step is <step>) or "fresh 0"; the driver checks it against the checkpoint it
// found. Then it trains until its parent goes away (exit 0: no orphan writing forever); 2 on
// any error.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <hookfuse/hookfuse.hpp>
#include <string>

#include "kill_model.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kill_child DIR MAX_TO_KEEP\n");
    return 2;
  }
  const pid_t parent = ::getppid();
  try {
    namespace hf = hookfuse;
    hookfuse_test::KillModel model;
    hf::MonitoredTrainingSession session(
        model.train_op(), hookfuse_test::KillInput{&model.global_step},
        hf::SessionOptions<hf::io::Saver, hf::SteadyClock, hf::NullLogger>{
            .checkpoint_dir = argv[1],
            .save_checkpoint_steps = 1,
            .max_to_keep = std::atoi(argv[2])},
        hf::hooks());
    std::printf("%s %lld\n", session.restored_from_checkpoint() ? "restored" : "fresh",
                static_cast<long long>(session.global_step()));
    std::fflush(stdout);
    while (::getppid() == parent) session.run();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kill_child: %s\n", e.what());
    return 2;
  }
}
