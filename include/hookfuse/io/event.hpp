// hookfuse/io/event.hpp: tensorflow.Event (tensorflow/core/util/event.proto), the record of a
// TensorBoard event file, and its protobuf encoding (serialize_event) and decoding
// (parse_event).
//
//   Event { double wall_time = 1; int64 step = 2;
//           oneof what { string file_version = 3; bytes graph_def = 4; Summary summary = 5;
//                        LogMessage log_message = 6; SessionLog session_log = 7;
//                        TaggedRunMetadata tagged_run_metadata = 8; bytes meta_graph_def = 9; } }
#pragma once

#include <cstdint>
#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <string_view>

#include "hookfuse/config.hpp"
#include "hookfuse/errors.hpp"
#include "hookfuse/io/detail/summary_codec.hpp"
#include "hookfuse/io/errors.hpp"
#include "hookfuse/io/summary_proto.hpp"

namespace hookfuse::io {

/// The first event of every event file: Event{wall_time, file_version = "brain.Event:2"}.
inline constexpr std::string_view kEventFileVersion = "brain.Event:2";

/// tensorflow.SessionLog: status (1), checkpoint_path (2), msg (3). TensorFlow writes
/// SessionLog(status=START) when a session starts (SummarySaverHook), so that TensorBoard hides
/// the events of an earlier run past the restart step.
struct SessionLog {
  enum SessionStatus : std::int32_t { STATUS_UNSPECIFIED = 0, START = 1, STOP = 2, CHECKPOINT = 3 };
  SessionStatus status = STATUS_UNSPECIFIED;
  std::string checkpoint_path;
  std::string msg;
};

/// tensorflow.Event. `what` says which member of the oneof is set; graph_def, log_message,
/// tagged_run_metadata and meta_graph_def are recognised when read but not decoded.
struct Event {
  enum class What {
    none,
    file_version,
    graph_def,
    summary,
    log_message,
    session_log,
    tagged_run_metadata,
    meta_graph_def
  };

  double wall_time = 0.0;  // seconds since the Unix epoch
  std::int64_t step = 0;   // the global step
  What what = What::none;
  std::string file_version;
  Summary summary;
  SessionLog session_log;
};

/// The largest serialized Event that protobuf readers accept: 2 GiB - 1 bytes (INT_MAX, the
/// default total_bytes_limit of protobuf's CodedInputStream; Python's SerializeToString refuses
/// larger messages with "exceeds maximum protobuf size of 2GB"), so TensorBoard cannot load a
/// larger record.
inline constexpr std::uint64_t kMaxEventBytes = 2147483647;

/// Throws hookfuse::ValueError unless an Event of `serialized_bytes` bytes is within
/// kMaxEventBytes; the message names `event`'s summary tags (or its kind when it has none),
/// its step, the size and the limit.
template <class = void>
void check_event_size(std::uint64_t serialized_bytes, const Event& event) {
  if (serialized_bytes <= kMaxEventBytes) return;
  std::string what;
  for (const SummaryValue& v : event.summary.value) {
    what += (what.empty() ? "tag '" : ", tag '") + v.tag + "'";
  }
  if (what.empty()) what = "the event (no summary tag)";
  ::hookfuse::detail::fail<::hookfuse::ValueError>(
      "event of " + what + " at step " + std::to_string(event.step) + " serializes to " +
      std::to_string(serialized_bytes) + " bytes, above protobuf's limit of " +
      std::to_string(kMaxEventBytes) + " bytes (2 GiB - 1) that TensorBoard can read; not written");
}

/// The protobuf bytes of `event` as TensorFlow serializes it: fields in ascending number,
/// wall_time left out when 0.0 and step when 0 (proto3 defaults), the oneof member named by
/// `event.what` always written (graph_def and the other undecoded members are written empty).
template <class = void>
[[nodiscard]] std::string serialize_event(const Event& event) {
  std::string out;
  protozero::pbf_writer w(out);
  detail::proto::put_double(w, 1, event.wall_time);
  if (event.step != 0) w.add_int64(2, event.step);
  switch (event.what) {
    case Event::What::none:
      break;
    case Event::What::file_version:
      w.add_string(3, event.file_version.data(), event.file_version.size());
      break;
    case Event::What::graph_def:
      w.add_bytes(4, "", 0);
      break;
    case Event::What::summary:
      w.add_message(5, detail::proto::encode(event.summary));
      break;
    case Event::What::log_message:
      w.add_message(6, "", 0);
      break;
    case Event::What::session_log: {
      std::string log;
      protozero::pbf_writer lw(log);
      if (event.session_log.status != SessionLog::STATUS_UNSPECIFIED) {
        lw.add_enum(1, event.session_log.status);
      }
      detail::proto::put_string(lw, 2, event.session_log.checkpoint_path);
      detail::proto::put_string(lw, 3, event.session_log.msg);
      w.add_message(7, log);
      break;
    }
    case Event::What::tagged_run_metadata:
      w.add_message(8, "", 0);
      break;
    case Event::What::meta_graph_def:
      w.add_bytes(9, "", 0);
      break;
  }
  return out;
}

/// Decodes the protobuf bytes of one Event. Throws DataLossError starting with `where` (e.g.
/// "<file>: record 3 at byte offset 120") when the bytes are not a well-formed Event: a length
/// past the end, a bad varint, a known field with the wrong wire type, histogram buckets and
/// limits of different lengths. Unknown fields are skipped, as protobuf does.
template <class = void>
[[nodiscard]] Event parse_event(std::string_view bytes, const std::string& where = "Event") {
  using detail::proto::expect_wire;
  using protozero::pbf_wire_type;
  Event e;
  const std::string self = where + ": Event";
  try {
    protozero::pbf_reader r(bytes.data(), bytes.size());
    while (r.next()) {
      switch (r.tag()) {
        case 1:
          expect_wire(r, pbf_wire_type::fixed64, self, "wall_time");
          e.wall_time = r.get_double();
          break;
        case 2:
          expect_wire(r, pbf_wire_type::varint, self, "step");
          e.step = r.get_int64();
          break;
        case 3:
          expect_wire(r, pbf_wire_type::length_delimited, self, "file_version");
          e.what = Event::What::file_version;
          e.file_version = r.get_string();
          break;
        case 5:
          expect_wire(r, pbf_wire_type::length_delimited, self, "summary");
          e.what = Event::What::summary;
          e.summary = detail::proto::decode_summary(r.get_message(), self + ".summary");
          break;
        case 7: {
          expect_wire(r, pbf_wire_type::length_delimited, self, "session_log");
          e.what = Event::What::session_log;
          e.session_log = SessionLog{};
          protozero::pbf_reader log = r.get_message();
          while (log.next()) {
            switch (log.tag()) {
              case 1:
                expect_wire(log, pbf_wire_type::varint, self + ".session_log", "status");
                e.session_log.status = static_cast<SessionLog::SessionStatus>(log.get_enum());
                break;
              case 2:
                expect_wire(log, pbf_wire_type::length_delimited, self + ".session_log",
                            "checkpoint_path");
                e.session_log.checkpoint_path = log.get_string();
                break;
              case 3:
                expect_wire(log, pbf_wire_type::length_delimited, self + ".session_log", "msg");
                e.session_log.msg = log.get_string();
                break;
              default:
                log.skip();
            }
          }
          break;
        }
        case 4:
        case 6:
        case 8:
        case 9: {
          static constexpr Event::What kinds[] = {
              Event::What::graph_def,           Event::What::summary,
              Event::What::log_message,         Event::What::session_log,
              Event::What::tagged_run_metadata, Event::What::meta_graph_def};
          expect_wire(r, pbf_wire_type::length_delimited, self, "what");
          e.what = kinds[r.tag() - 4];
          r.skip();
          break;
        }
        default:
          r.skip();
      }
    }
  } catch (const protozero::exception& ex) {
    hookfuse::detail::fail<DataLossError>(self + ": malformed Event protobuf (" + ex.what() +
                                          "), expected a serialized tensorflow.Event");
  }
  return e;
}

}  // namespace hookfuse::io
