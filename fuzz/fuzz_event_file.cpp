// fuzz/fuzz_event_file.cpp: the input is a TensorBoard event file (TFRecord framing of Event
// protos). Reads it with io::read_events (record lengths and CRCs, a truncated last record,
// Event and Summary decoding: scalars, tensors, histograms, images, session logs).
// Documented errors: io::DataLossError, io::NotFoundError, io::IoError.
#include <cstddef>
#include <cstdint>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/logging.hpp>

#include "fuzz_util.hpp"

namespace io = hookfuse::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = hookfuse_fuzz::work_dir() / "events.out.tfevents.1.fuzz";
  hookfuse_fuzz::write_file(path, data, size);
  hookfuse::NullLogger logger;
  try {
    (void)io::read_events(path, logger);
  } catch (const io::DataLossError&) {
  } catch (const io::NotFoundError&) {
  } catch (const io::IoError&) {
  }
  return 0;
}
