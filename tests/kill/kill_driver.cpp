// tests/kill/kill_driver.cpp: the crash test. Usage: kill_driver CHILD DIR N [SEED]
//
// N times: starts CHILD (kill_child DIR 3: real training under MonitoredTrainingSession, a save
// every step) on the same directory, lets it run for a random while, kills it with SIGKILL, and
// checks the directory (checkpoint_check.hpp: the latest checkpoint is complete, every CRC
// checks, its weights are bit for bit those of an uninterrupted run after its global step
// (ReferenceTraining), a restart restores it). Each child's first line says which step its
// session restored: it must be the step of the checkpoint the previous check found ("fresh 0"
// only before any checkpoint), so training resumes from there. Three kinds of instants, chosen at
// random: after the child has written 1 to 3 new checkpoints plus a random 0-10 ms (mid-save most
// of the time), or 0-10 ms after it starts (during its restore and the re-save of the restored
// step). Prints one line per failed check and a summary (at the end, at most one complete
// checkpoint may be unlisted: the last kill's, written but not yet named by the state file); exits
// 0 when every check passed, 1 otherwise, 2 on a usage or harness error. Times are only waited for,
// never asserted.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <hookfuse/io/checkpoint_state.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "checkpoint_check.hpp"
#include "driver_util.hpp"
#include "kill_model.hpp"

namespace fs = std::filesystem;
using hookfuse_test::read_all;
using hookfuse_test::state_step;

namespace {

int count_temporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tempstate") != std::string::npos || name.starts_with("checkpoint.tmp-")) ++n;
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: kill_driver CHILD DIR N [SEED]\n");
    return 2;
  }
  const std::string child = argv[1];
  const fs::path dir = argv[2];
  const int n = std::atoi(argv[3]);
  const unsigned seed = argc == 5 ? static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10))
                                  : std::random_device{}();
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 rng(seed);

  int failures = 0, mid_write = 0, at_start = 0, resumes_checked = 0;
  std::int64_t last_step = -1, first_step = -1;
  hookfuse_test::ReferenceTraining reference;
  for (int i = 0; i < n; ++i) {
    int out[2];
    if (::pipe(out) != 0) {
      std::perror("pipe");
      return 2;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      return 2;
    }
    if (pid == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      ::execl(child.c_str(), child.c_str(), dir.c_str(), "3", static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    ::close(out[1]);
    const bool early = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
    if (early) {
      ++at_start;
    } else {
      const std::int64_t target = last_step + std::uniform_int_distribution<int>(1, 3)(rng);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (state_step(dir) < target) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
          std::fprintf(stderr, "kill %d: the child ended by itself (status %d) before step %lld\n",
                       i, status, static_cast<long long>(target));
          return 2;
        }
        if (std::chrono::steady_clock::now() > deadline) {
          std::fprintf(stderr, "kill %d: no checkpoint %lld within 120 s\n", i,
                       static_cast<long long>(target));
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
          ::close(out[0]);
          return 2;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 10000)(rng)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
      std::printf("kill %d: the child was not killed but ended with status %d\n", i, status);
      ++failures;
    }
    // The child's first line: the step its session restored (nothing if killed before).
    const std::string said = read_all(out[0]);
    ::close(out[0]);
    if (!said.empty()) {
      const std::string line = said.substr(0, said.find('\n'));
      const std::string want = last_step < 0 ? "fresh 0" : "restored " + std::to_string(last_step);
      if (line != want) {
        std::printf("kill %d: FAILED: the restarted child said '%s', expected '%s'\n", i,
                    line.c_str(), want.c_str());
        ++failures;
      } else {
        ++resumes_checked;
      }
    }
    if (count_temporaries(dir) > 0) ++mid_write;
    const auto r = hookfuse_test::check_checkpoint_dir(
        dir, [&](std::int64_t step) { return reference.at(step); },
        [](hookfuse::io::Saver& saver, const fs::path& d) {
          hookfuse_test::KillTrainer fresh;
          const auto vars = fresh.variables();
          auto restored =
              saver.restore_latest(hookfuse::VariableList(vars.data(), vars.size()), d.string());
          return std::make_pair(restored, fresh.state());
        });
    if (!r.ok) {
      // The very first instants may come before any checkpoint exists: not a failure.
      if (last_step < 0 && early && !hookfuse::io::latest_checkpoint(dir) &&
          !fs::exists(dir / "checkpoint"))
        continue;
      std::printf("kill %d: FAILED: %s\n", i, r.message.c_str());
      ++failures;
      continue;
    }
    if (first_step < 0) first_step = r.step;
    last_step = r.step;
  }
  // Checkpoints on disk that the state file no longer lists: a kill between a save's state
  // write and its deletion of the checkpoint retention dropped (TensorFlow leaves them too).
  int unlisted = 0, files = 0;
  const auto state = hookfuse::io::get_checkpoint_state(dir);
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    const std::string p = e.path().string();
    if (!p.ends_with(".index") || !state) continue;
    const fs::path prefix = fs::path(p.substr(0, p.size() - 6)).lexically_normal();
    bool listed = false;
    for (const auto& q : state->all_model_checkpoint_paths)
      listed = listed || fs::path(q).lexically_normal() == prefix;
    if (!listed) ++unlisted;
  }
  std::printf(
      "kill-test: %d kills, %d failed checks; %d kills left temporaries (killed mid-write), %d "
      "during start-up/restore; %d restarts reported the step they resumed from, each the "
      "latest checkpoint's; latest step went from %lld to %lld; %d files in the directory at "
      "the end, %d complete checkpoints unlisted; seed %u\n",
      n, failures, mid_write, at_start, resumes_checked, static_cast<long long>(first_step),
      static_cast<long long>(last_step), files, unlisted, seed);
  // At most the last kill's own checkpoint (written, not yet listed) may be unlisted: every
  // earlier one was listed again when a restart saved that step anew.
  if (unlisted > 1) {
    std::printf("FAILED: %d complete checkpoints on disk are not in the state file\n", unlisted);
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
