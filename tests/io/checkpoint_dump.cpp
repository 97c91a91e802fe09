// tests/io/checkpoint_dump.cpp: prints what hookfuse's checkpoint readers read back from a
// checkpoint directory or prefix, for the example tests' shell checks (examples/tests.cmake).
//
//   checkpoint_dump <dir>     the state file (io::get_checkpoint_state), one line per field
//                             with the file names of its paths, then one line per checkpoint
//                             it lists (each opened with io::CheckpointReader)
//   checkpoint_dump <prefix>  that one checkpoint's line
//
// A checkpoint's line: "checkpoint <file name> global_step <N> tensors <name>,<name>,...".
// Exit 1 with one line on stderr when anything cannot be read.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <hookfuse/io/checkpoint_reader.hpp>
#include <hookfuse/io/checkpoint_state.hpp>
#include <optional>
#include <string>

namespace io = hookfuse::io;
namespace fs = std::filesystem;

namespace {

void print_checkpoint(const fs::path& prefix) {
  const io::CheckpointReader reader(prefix);
  std::string names;
  for (const std::string& key : reader.keys()) names += (names.empty() ? "" : ",") + key;
  std::printf("checkpoint %s global_step %lld tensors %s\n", prefix.filename().c_str(),
              static_cast<long long>(reader.get_tensor<std::int64_t>("global_step").at(0)),
              names.c_str());
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <checkpoint dir or prefix>\n", argv[0]);
    return 2;
  }
  const fs::path in(argv[1]);
  if (!fs::is_directory(in)) {
    print_checkpoint(in);
    return 0;
  }
  const std::optional<io::CheckpointState> state = io::get_checkpoint_state(in);
  if (!state) {
    std::fprintf(stderr, "checkpoint_dump: %s has no checkpoint state file\n", in.c_str());
    return 1;
  }
  std::printf("model_checkpoint_path %s\n",
              fs::path(state->model_checkpoint_path).filename().c_str());
  for (const std::string& p : state->all_model_checkpoint_paths)
    std::printf("all_model_checkpoint_paths %s\n", fs::path(p).filename().c_str());
  for (const std::string& p : state->all_model_checkpoint_paths) print_checkpoint(p);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "checkpoint_dump: %s\n", e.what());
  return 1;
}
