// tests/kill/checkpoint_check.hpp: what the crash test checks in a checkpoint directory after
// a writer was killed, reusable with any writer (the toy child here, later real training):
//
//   1. latest_checkpoint(dir) names a checkpoint (the state file names a prefix whose .index
//      and data file exist; it throws otherwise);
//   2. every tensor of it reads back with its CRC32C checked, and the set of names, dtypes,
//      shapes and values is exactly what the writer's deterministic state at that
//      checkpoint's global_step is (`expected(step)`);
//   3. every other `*.index` in the directory opens too and its tensors' CRCs check (an index
//      never names a missing or partial data file);
//   4. a new Saver's restore_latest into fresh variables returns that prefix (a restart
//      continues from that step), with the same values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/checkpoint_state.hpp>
#include <hookfuse/io/saver.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hookfuse_test {

/// One tensor a checkpoint must hold: dtype, TensorFlow shape, raw little-endian bytes.
struct ExpectedTensor {
  hookfuse::io::DataType dtype{};
  hookfuse::io::TensorShape shape;
  std::vector<std::byte> bytes;
};

/// name -> tensor, the writer's whole state at a global step.
using ExpectedCheckpoint = std::map<std::string, ExpectedTensor>;

struct CheckResult {
  bool ok = false;
  std::string message;     // why not, when !ok
  std::string prefix;      // the latest checkpoint
  std::int64_t step = -1;  // its global_step
};

namespace detail {

/// Reads every tensor of `prefix` (CRC checked): its bytes by name. Throws on any damage.
inline std::map<std::string, ExpectedTensor> read_everything(const std::filesystem::path& prefix) {
  const hookfuse::io::BundleReader reader(prefix);
  std::map<std::string, ExpectedTensor> out;
  for (const auto& e : reader.entries())
    out[e.key] = ExpectedTensor{e.dtype, e.shape, reader.lookup_bytes(e.key)};
  return out;
}

inline std::string compare(const std::map<std::string, ExpectedTensor>& got,
                           const ExpectedCheckpoint& want) {
  for (const auto& [name, t] : want) {
    const auto it = got.find(name);
    if (it == got.end()) return "tensor '" + name + "' missing";
    if (it->second.dtype != t.dtype || it->second.shape != t.shape)
      return "tensor '" + name + "' has another dtype or shape (" +
             it->second.shape.debug_string() + " vs " + t.shape.debug_string() + ")";
    if (it->second.bytes != t.bytes) return "tensor '" + name + "' has other values";
  }
  if (got.size() != want.size()) return "the checkpoint holds extra tensors";
  return {};
}

}  // namespace detail

/// Checks `dir` as the file comment says. `expected(step)` gives the writer's state at a step;
/// `restore_into(saver, dir)` restores a fresh copy of the writer's variables with
/// saver.restore_latest and returns {prefix restored, state read back} (nullopt prefix: none).
inline CheckResult check_checkpoint_dir(
    const std::filesystem::path& dir,
    const std::function<ExpectedCheckpoint(std::int64_t)>& expected,
    const std::function<std::pair<std::optional<std::string>, ExpectedCheckpoint>(
        hookfuse::io::Saver&, const std::filesystem::path&)>& restore_into) {
  CheckResult r;
  try {
    const auto latest = hookfuse::io::latest_checkpoint(dir);
    if (!latest) {
      r.message = "latest_checkpoint names no complete checkpoint";
      return r;
    }
    r.prefix = latest->string();
    const auto got = detail::read_everything(*latest);
    const auto gs = got.find("global_step");
    if (gs == got.end() || gs->second.bytes.size() != sizeof(std::int64_t)) {
      r.message = r.prefix + ": no int64 global_step";
      return r;
    }
    std::memcpy(&r.step, gs->second.bytes.data(), sizeof r.step);
    if (!r.prefix.ends_with("-" + std::to_string(r.step))) {
      r.message = r.prefix + ": global_step " + std::to_string(r.step) + " does not match the name";
      return r;
    }
    const ExpectedCheckpoint want = expected(r.step);
    if (const std::string diff = detail::compare(got, want); !diff.empty()) {
      r.message = r.prefix + ": " + diff;
      return r;
    }
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
      const std::string name = f.path().filename().string();
      if (!name.ends_with(".index")) continue;
      const std::string other = f.path().string().substr(0, f.path().string().size() - 6);
      (void)detail::read_everything(other);
    }
    hookfuse::io::Saver saver;
    const auto [restored, state] = restore_into(saver, dir);
    if (!restored || std::filesystem::path(*restored) != *latest) {
      r.message =
          "restore_latest returned " + restored.value_or("nothing") + ", expected " + r.prefix;
      return r;
    }
    if (const std::string diff = detail::compare(state, want); !diff.empty()) {
      r.message = "restored variables: " + diff;
      return r;
    }
    r.ok = true;
  } catch (const std::exception& e) {
    r.message = std::string("exception: ") + e.what();
  }
  return r;
}

}  // namespace hookfuse_test
