// tests/kill/driver_util.hpp: what the kill drivers (kill_driver, campaign_driver) read of a
// child: the step its state file names, and its output.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <hookfuse/io/checkpoint_state.hpp>
#include <string>

namespace hookfuse_test {

/// The global step in the state file's model_checkpoint_path ("...-120"), or -1.
inline std::int64_t state_step(const std::filesystem::path& dir) {
  try {
    const auto state = hookfuse::io::get_checkpoint_state(dir);
    if (!state) return -1;
    const std::string& p = state->model_checkpoint_path;
    return std::stoll(p.substr(p.rfind('-') + 1));
  } catch (...) {
    return -1;
  }
}

/// Everything readable from `fd` until end of file.
inline std::string read_all(int fd) {
  std::string out;
  char buf[256];
  for (ssize_t k; (k = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(k));
  return out;
}

}  // namespace hookfuse_test
