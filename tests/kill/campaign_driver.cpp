// tests/kill/campaign_driver.cpp: the kill campaign (scripts/kill-campaign.sh) and the directory
// check of the fault injection (scripts/fault-injection.sh).
//
//   campaign_driver run CHILD DIR PHASE_FILE N [SEED]
//   campaign_driver check DIR
//
// run: N times, starts CHILD (campaign_child DIR PHASE_FILE 0: training, a checkpoint and an
// event per step) on DIR and kills it with SIGKILL at an instant drawn from four kinds:
//   - start-up: 0-10 ms after the start (restore, clean-up of the last kill, save at creation);
//   - save: once a save of a step 1-3 beyond the last checkpoint has started (the shared page of
//     campaign_phase.hpp says so; polled without sleeping), after 0 to 1.2 times the child's
//     last save duration;
//   - event: once an event write of such a step has started, at once (three times in four) or
//     after 1-20 us;
//   - any: once the state file names a step 1-3 beyond the last checkpoint, after 0-10 ms.
// After each kill it records where the kill landed (the child's phase; for a save, a state-file
// temporary left means the state-file write, a bundle temporary the bundle write) and checks:
//   checkpoint: the state file's latest checkpoint loads, every CRC checks, its weights are bit
//     for bit those of an uninterrupted run at its step, a new Saver restores it, every other
//     .index opens (checkpoint_check.hpp);
//   events: every event file reads to its last complete record (a cut final record is allowed,
//     a CRC or decoding error is not), its scalar steps consecutive;
//   resume: the restarted child's first line names the step the previous check found ("fresh 0"
//     before any checkpoint), never 0 or another step;
//   temporaries: that line reports no temporary file left once its session exists.
// Then one clean run (LAST_STEP = last step + 3, exit 0) whose directory must hold that step,
// no temporary and no unlisted checkpoint. Prints failures as they happen and a summary; exit 0
// when every check passed, 1 otherwise, 2 on a harness error.
//
// check: checks DIR as after a kill (checkpoint, events, and no temporary file) and prints
// "check: ok latest_step <s> event_files <f> events <e> truncated <t> temporaries <n>" (exit 0)
// or "check: FAILED <kind>: <why>" (exit 1).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <hookfuse/io/checkpoint_state.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "campaign_phase.hpp"
#include "checkpoint_check.hpp"
#include "driver_util.hpp"
#include "kill_model.hpp"

namespace fs = std::filesystem;
using hookfuse_test::Phase;
using hookfuse_test::read_all;
using hookfuse_test::state_step;

namespace {

struct Temporaries {
  int state = 0;   // checkpoint.tmp-*
  int bundle = 0;  // *.tempstate*, *_temp
  int orphan = 0;  // a data file without its index
  int total() const { return state + bundle + orphan; }
};

Temporaries temporaries(const fs::path& dir) {
  Temporaries t;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) {
      ++t.state;
    } else if (name.find(".tempstate") != std::string::npos || name.ends_with("_temp")) {
      ++t.bundle;
    } else if (const auto d = name.rfind(".data-");
               d != std::string::npos && !fs::exists(dir / (name.substr(0, d) + ".index"))) {
      ++t.orphan;
    }
  }
  return t;
}

struct CountingLogger {
  int warnings = 0;
  void log(hookfuse::Severity s, std::string_view) {
    if (s != hookfuse::Severity::info) ++warnings;
  }
};

struct EventCheck {
  bool ok = true;
  std::string message;
  int files = 0, events = 0, truncated = 0;
};

/// Every event file of `dir` read to its last complete record; scalar steps consecutive.
EventCheck check_events(const fs::path& dir) {
  EventCheck r;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.path().filename().string().starts_with("events.out.tfevents.")) continue;
    ++r.files;
    try {
      CountingLogger logger;
      const auto events = hookfuse::io::read_events(e.path(), logger);
      r.truncated += logger.warnings > 0 ? 1 : 0;
      std::int64_t prev = -1;
      for (const auto& ev : events) {
        ++r.events;
        if (ev.what != hookfuse::io::Event::What::summary || ev.summary.value.empty()) continue;
        if (prev >= 0 && ev.step != prev + 1) {
          r.ok = false;
          r.message = e.path().string() + ": scalar at step " + std::to_string(ev.step) +
                      " after step " + std::to_string(prev);
          return r;
        }
        prev = ev.step;
      }
    } catch (const std::exception& ex) {
      r.ok = false;
      r.message = ex.what();
      return r;
    }
  }
  return r;
}

hookfuse_test::CheckResult check_checkpoints(const fs::path& dir,
                                             hookfuse_test::ReferenceTraining& reference) {
  return hookfuse_test::check_checkpoint_dir(
      dir, [&](std::int64_t step) { return reference.at(step); },
      [](hookfuse::io::Saver& saver, const fs::path& d) {
        hookfuse_test::KillTrainer fresh;
        const auto vars = fresh.variables();
        auto restored =
            saver.restore_latest(hookfuse::VariableList(vars.data(), vars.size()), d.string());
        return std::make_pair(restored, fresh.state());
      });
}

int unlisted_checkpoints(const fs::path& dir) {
  int unlisted = 0;
  const auto state = hookfuse::io::get_checkpoint_state(dir);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (!p.ends_with(".index") || !state) continue;
    const fs::path prefix = fs::path(p.substr(0, p.size() - 6)).lexically_normal();
    bool listed = false;
    for (const auto& q : state->all_model_checkpoint_paths)
      listed = listed || fs::path(q).lexically_normal() == prefix;
    if (!listed) ++unlisted;
  }
  return unlisted;
}

int check_main(const fs::path& dir) {
  hookfuse_test::ReferenceTraining reference;
  const auto r = check_checkpoints(dir, reference);
  if (!r.ok) {
    std::printf("check: FAILED checkpoint: %s\n", r.message.c_str());
    return 1;
  }
  const auto ev = check_events(dir);
  if (!ev.ok) {
    std::printf("check: FAILED events: %s\n", ev.message.c_str());
    return 1;
  }
  const Temporaries t = temporaries(dir);
  if (t.total() != 0) {
    std::printf("check: FAILED temporaries: %d left (state file %d, bundle %d, orphan data %d)\n",
                t.total(), t.state, t.bundle, t.orphan);
    return 1;
  }
  std::printf("check: ok latest_step %lld event_files %d events %d truncated %d temporaries 0\n",
              static_cast<long long>(r.step), ev.files, ev.events, ev.truncated);
  return 0;
}

struct Child {
  pid_t pid = -1;
  int out = -1;
};

Child start_child(const std::string& child, const fs::path& dir, const char* phase_file,
                  const std::string& last_step) {
  int p[2];
  if (::pipe(p) != 0) {
    std::perror("pipe");
    std::exit(2);
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(2);
  }
  if (pid == 0) {
    ::dup2(p[1], STDOUT_FILENO);
    ::close(p[0]);
    ::close(p[1]);
    ::execl(child.c_str(), child.c_str(), dir.c_str(), phase_file, last_step.c_str(),
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  ::close(p[1]);
  return {pid, p[0]};
}

enum class Mode { startup, save, event, any };
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::startup:
      return "start-up";
    case Mode::save:
      return "save";
    case Mode::event:
      return "event";
    case Mode::any:
      return "any";
  }
  return "?";
}

int run_main(const std::string& child, const fs::path& dir, const char* phase_file, int n,
             unsigned seed) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  hookfuse_test::SharedPhase* page = hookfuse_test::map_phase(phase_file);
  if (page == nullptr) {
    std::fprintf(stderr, "cannot map %s\n", phase_file);
    return 2;
  }
  std::mt19937 rng(seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  hookfuse_test::ReferenceTraining reference;
  std::map<std::string, int> landed, by_mode, failures;
  int temporaries_left = 0, resumes_checked = 0, truncated_event_files = 0,
      kills_cutting_events = 0;
  std::int64_t last_step = -1, first_step = -1;
  auto fail = [&](int i, const std::string& kind, const std::string& why) {
    std::printf("kill %d: FAILED %s: %s\n", i, kind.c_str(), why.c_str());
    ++failures[kind];
  };
  auto check_first_line = [&](int i, const std::string& said) {
    if (said.empty()) return;  // killed before the session existed
    const std::string line = said.substr(0, said.find('\n'));
    const std::string want = last_step < 0 ? "fresh 0" : "restored " + std::to_string(last_step);
    if (!line.starts_with(want + " temporaries ")) {
      fail(i, "resume", "the restarted child said '" + line + "', expected '" + want + " ...'");
      return;
    }
    ++resumes_checked;
    if (line != want + " temporaries 0")
      fail(i, "temporaries", "after the restart's session creation: '" + line + "'");
  };

  for (int i = 0; i < n; ++i) {
    page->set(Phase::none, -1);
    const auto r = uniform(0, 99);
    const Mode mode = r < 15   ? Mode::startup
                      : r < 55 ? Mode::save
                      : r < 70 ? Mode::event
                               : Mode::any;
    ++by_mode[mode_name(mode)];
    const Child c = start_child(child, dir, phase_file, "0");
    const std::int64_t target = last_step + uniform(1, 3);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    // Polls the page; `spin` without sleeping, to catch a phase of a few microseconds.
    auto wait_until = [&](auto ready, bool spin) {
      for (long polls = 0; !ready(); ++polls) {
        if (spin && polls % 4096 != 0) continue;
        int status = 0;
        if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
          std::fprintf(stderr, "kill %d: the child ended by itself (status %d)\n", i, status);
          std::exit(2);
        }
        if (std::chrono::steady_clock::now() > deadline) {
          std::fprintf(stderr, "kill %d: no step %lld within 120 s\n", i,
                       static_cast<long long>(target));
          ::kill(c.pid, SIGKILL);
          std::exit(2);
        }
        if (!spin) std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    };
    std::int64_t delay_us = 0;
    switch (mode) {
      case Mode::startup:
        delay_us = uniform(0, 10000);
        break;
      case Mode::save:
        wait_until([&] { return page->get() == Phase::save && page->step.load() >= target; }, true);
        delay_us = uniform(0, page->save_ns.load() * 12 / 10000);
        break;
      case Mode::event:
        wait_until([&] { return page->get() == Phase::event && page->step.load() >= target; },
                   true);
        delay_us = uniform(0, 3) == 0 ? uniform(1, 20) : 0;
        break;
      case Mode::any:
        wait_until([&] { return state_step(dir) >= target; }, false);
        delay_us = uniform(0, 10000);
        break;
    }
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    ::kill(c.pid, SIGKILL);
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    const Phase at = page->get();
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
      fail(i, "child status", "not killed but ended with status " + std::to_string(status));
    const std::string said = read_all(c.out);
    ::close(c.out);
    check_first_line(i, said);

    const Temporaries t = temporaries(dir);
    if (t.total() > 0) ++temporaries_left;
    std::string where = hookfuse_test::phase_name(at);
    if (at == Phase::save) {
      where = t.state > 0    ? "save: state-file write"
              : t.bundle > 0 ? "save: bundle write"
                             : "save: between files (rename, fsync, retention)";
    }
    ++landed[where];

    const auto ev = check_events(dir);
    if (!ev.ok) fail(i, "events", ev.message);
    if (ev.truncated > truncated_event_files) ++kills_cutting_events;
    truncated_event_files = ev.truncated;
    const auto cr = check_checkpoints(dir, reference);
    if (!cr.ok) {
      // The first instants may come before any checkpoint exists: not a failure.
      if (last_step < 0 && !hookfuse::io::latest_checkpoint(dir) && !fs::exists(dir / "checkpoint"))
        continue;
      fail(i, "checkpoint", cr.message);
      continue;
    }
    if (cr.step < last_step)
      fail(i, "checkpoint",
           "latest step went back from " + std::to_string(last_step) + " to " +
               std::to_string(cr.step));
    if (first_step < 0) first_step = cr.step;
    last_step = cr.step;
  }

  // A clean restart: runs three steps past the last checkpoint and exits by itself.
  const std::int64_t clean_to = last_step + 3;
  {
    page->set(Phase::none, -1);
    const Child c = start_child(child, dir, phase_file, std::to_string(clean_to));
    const std::string said = read_all(c.out);  // until the child closes stdout (exit)
    ::close(c.out);
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    check_first_line(n, said);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      fail(n, "clean run", "exit status " + std::to_string(status));
    } else {
      const auto cr = check_checkpoints(dir, reference);
      if (!cr.ok)
        fail(n, "checkpoint", cr.message);
      else if (cr.step != clean_to)
        fail(n, "clean run",
             "latest checkpoint " + std::to_string(cr.step) + ", expected " +
                 std::to_string(clean_to));
      const auto ev = check_events(dir);
      if (!ev.ok) fail(n, "events", ev.message);
      const Temporaries t = temporaries(dir);
      if (t.total() != 0)
        fail(n, "temporaries", std::to_string(t.total()) + " left after the clean run");
      if (const int u = unlisted_checkpoints(dir); u != 0)
        fail(n, "unlisted", std::to_string(u) + " complete checkpoints not in the state file");
    }
  }

  int total_failures = 0;
  for (const auto& [k, v] : failures) total_failures += v;
  std::printf("kill-campaign: %d kills (seed %u), %d failed checks\n", n, seed, total_failures);
  std::printf("  timing asked:");
  for (const auto& [k, v] : by_mode) std::printf(" %s %d;", k.c_str(), v);
  std::printf("\n  landed:");
  for (const auto& [k, v] : landed) std::printf(" %s %d;", k.c_str(), v);
  std::printf(
      "\n  kills that left temporaries %d; restarts that reported their resume step %d "
      "(each the latest checkpoint's, none with a temporary left); kills that cut an "
      "event file mid-record %d\n",
      temporaries_left, resumes_checked, kills_cutting_events);
  std::printf("  latest checkpoint went from step %lld to %lld, then the clean run to %lld\n",
              static_cast<long long>(first_step), static_cast<long long>(clean_to - 3),
              static_cast<long long>(clean_to));
  std::printf("  failures by kind:");
  if (failures.empty()) std::printf(" none");
  for (const auto& [k, v] : failures) std::printf(" %s %d;", k.c_str(), v);
  std::printf("\n");
  return total_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "check" && argc == 3) return check_main(argv[2]);
  if (cmd == "run" && (argc == 6 || argc == 7)) {
    const unsigned seed = argc == 7 ? static_cast<unsigned>(std::strtoul(argv[6], nullptr, 10))
                                    : std::random_device{}();
    return run_main(argv[2], argv[3], argv[4], std::atoi(argv[5]), seed);
  }
  std::fprintf(stderr,
               "usage: campaign_driver run CHILD DIR PHASE_FILE N [SEED]\n"
               "       campaign_driver check DIR\n");
  return 2;
}
