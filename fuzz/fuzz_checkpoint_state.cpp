// fuzz/fuzz_checkpoint_state.cpp: the input is a `checkpoint` state file (text-format
// CheckpointState). Parses it in memory (io::parse_checkpoint_state: the text-format scanner,
// strings with escapes, numbers, repeated fields), then through the directory functions that
// read it from disk (io::get_checkpoint_state, io::latest_checkpoint: size limit, the listed
// checkpoints' presence).
// Documented errors: io::DataLossError, io::NotFoundError, io::IoError.
#include <cstddef>
#include <cstdint>
#include <hookfuse/io/checkpoint_state.hpp>
#include <string_view>

#include "fuzz_util.hpp"

namespace io = hookfuse::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)io::parse_checkpoint_state(text, "fuzz-input");
  } catch (const io::DataLossError&) {
  }
  const auto& dir = hookfuse_fuzz::work_dir();
  hookfuse_fuzz::write_file(dir / io::kCheckpointStateFilename, text);
  try {
    (void)io::latest_checkpoint(dir);
  } catch (const io::DataLossError&) {
  } catch (const io::NotFoundError&) {
  } catch (const io::IoError&) {
  }
  return 0;
}
