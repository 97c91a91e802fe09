// Event files: the reader on the two fixtures written by TensorFlow and PyTorch
// (fixtures/tf/README.md gives their tags, steps and values), SummaryWriter reproducing
// TensorFlow's file byte for byte, TF's default histogram buckets computed by hand, the file
// name, flushing on TF's max_queue / flush_secs, the writer cache, a writer killed mid-run.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <csignal>
#include <hookfuse/clock.hpp>
#include <hookfuse/errors.hpp>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/histogram.hpp>
#include <hookfuse/io/summary_writer.hpp>
#include <hookfuse/io/summary_writer_cache.hpp>
#include <regex>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "io_test_support.hpp"

namespace io = hookfuse::io;
using hookfuse_test::CapturingLogger;
using hookfuse_test::error_of;
using hookfuse_test::file_bytes;
using hookfuse_test::ScratchDir;
using hookfuse_test::write_bytes;
using Kind = io::SummaryValue::Kind;

namespace {

/// The options of a writer driven by `clock`.
io::SummaryWriterOptions with_clock(hookfuse::FakeClock& clock) {
  io::SummaryWriterOptions o;
  o.clock = clock;
  return o;
}

/// Payload bytes of record `i` of an event file's bytes.
std::vector<std::string> payloads(const std::string& bytes) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos + 12 <= bytes.size()) {
    std::uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(bytes[pos + i]);
    out.push_back(bytes.substr(pos + 12, len));
    pos += 16 + len;
  }
  return out;
}

}  // namespace

TEST_CASE("read_events decodes TF 2's scalar fixture: my_metric = 0.5 * step, steps 0..99") {
  HF_REQUIRE_EVENT_FIXTURE(path, "events_tf2_scalar");
  CapturingLogger log;
  const auto events = io::read_events(path, log);
  CHECK(log.lines.empty());
  REQUIRE(events.size() == 101);
  CHECK(events[0].what == io::Event::What::file_version);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[0].wall_time == 1585499054.0);
  CHECK(events[0].step == 0);
  for (int s = 0; s < 100; ++s) {
    const io::Event& e = events[static_cast<std::size_t>(s + 1)];
    INFO("step " << s);
    CHECK(e.step == s);
    CHECK(e.wall_time > 1585499054.133);
    CHECK(e.wall_time < 1585499054.157);
    REQUIRE(e.what == io::Event::What::summary);
    REQUIRE(e.summary.value.size() == 1);
    const io::SummaryValue& v = e.summary.value[0];
    CHECK(v.tag == "my_metric");
    CHECK(v.kind == Kind::tensor);
    CHECK(v.tensor.dtype == io::TensorProto::DT_FLOAT);
    CHECK(v.tensor.has_shape);
    CHECK(v.tensor.shape.empty());
    CHECK(v.tensor.tensor_content.size() == 4);
    CHECK(v.scalar() == 0.5 * s);
    REQUIRE(v.metadata.has_value());
    CHECK(v.metadata->plugin_name == "scalars");
    CHECK(v.metadata->plugin_content.empty());
    CHECK(v.metadata->data_class == 0);
  }
}

TEST_CASE("read_events decodes the legacy simple_value fixture: 100 values, sum 148.84195...") {
  HF_REQUIRE_EVENT_FIXTURE(path, "events_legacy_simple_value");
  const auto events = io::read_events(path);
  REQUIRE(events.size() == 101);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[0].wall_time == Approx(1622543341.75773).epsilon(1e-15));
  std::vector<double> values;
  double sum = 0.0, lo = 10.0, hi = -10.0;
  for (std::size_t i = 1; i < events.size(); ++i) {
    const io::Event& e = events[i];
    INFO("record " << i);
    CHECK(e.step == 5 * static_cast<std::int64_t>(i - 1));
    REQUIRE(e.summary.value.size() == 1);
    const io::SummaryValue& v = e.summary.value[0];
    CHECK(v.tag == "strict/foo");
    CHECK(v.kind == Kind::simple_value);
    CHECK_FALSE(v.metadata.has_value());
    const double x = *v.scalar();
    values.push_back(x);
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  REQUIRE(values.size() == 100);
  CHECK(values[0] == 1.4962565898895264);
  CHECK(values[1] == 1.7682218551635742);
  CHECK(values[2] == 1.088477373123169);
  CHECK(values[99] == 1.212090253829956);
  CHECK(std::abs(sum - 148.84195291996002) < 1e-9);
  CHECK(lo == 1.0012359619140625);
  CHECK(hi == 1.9970664978027344);
}

TEST_CASE("SummaryWriter reproduces TF 2's events_tf2_scalar byte for byte") {
  HF_REQUIRE_EVENT_FIXTURE(fixture, "events_tf2_scalar");
  const auto tf_events = io::read_events(fixture);
  REQUIRE(tf_events.size() == 101);
  ScratchDir dir;
  // The writer opens its file at the fixture's first wall time (whole seconds, as TF's
  // EventsWriter stamps the file_version event), then writes each scalar with TF's wall time.
  hookfuse::FakeClock clock{tf_events[0].wall_time};
  io::SummaryWriter writer(dir.path() / "run", with_clock(clock));
  for (std::int64_t step = 0; step < 100; ++step) {
    writer.add_scalar("my_metric", 0.5 * static_cast<double>(step), step,
                      tf_events[static_cast<std::size_t>(step) + 1].wall_time);
  }
  writer.close();
  const std::string ours = file_bytes(writer.path());
  const std::string theirs = file_bytes(fixture);
  CHECK(ours.size() == 6738);
  CHECK(ours == theirs);
  // Only the name differs: host, process id and counter are this machine's.
  const std::string name = writer.path().filename().string();
  CHECK(name.rfind("events.out.tfevents.1585499054.", 0) == 0);
}

TEST_CASE("SummaryWriter with ScalarForm::simple_value writes the legacy fixture's records") {
  HF_REQUIRE_EVENT_FIXTURE(fixture, "events_legacy_simple_value");
  const auto theirs = payloads(file_bytes(fixture));
  const auto events = io::read_events(fixture);
  REQUIRE(theirs.size() == 101);
  ScratchDir dir;
  hookfuse::FakeClock clock{events[0].wall_time};
  auto options = with_clock(clock);
  options.scalar_form = io::ScalarForm::simple_value;
  io::SummaryWriter writer(dir.path(), options);
  for (std::size_t i = 1; i < events.size(); ++i) {
    writer.add_scalar("strict/foo", *events[i].summary.value[0].scalar(), events[i].step,
                      events[i].wall_time);
  }
  writer.close();
  const auto ours = payloads(file_bytes(writer.path()));
  REQUIRE(ours.size() == 101);
  for (std::size_t i = 1; i < ours.size(); ++i) {
    INFO("record " << i);
    CHECK(ours[i] == theirs[i]);
  }
  // Record 0 differs in one field only: PyTorch stamps the file_version event with the
  // fractional time.time() (1622543341.75773); TensorFlow, and this writer, with whole seconds.
  const io::Event first = io::parse_event(ours[0]);
  CHECK(first.wall_time == 1622543341.0);
  io::Event tf_first = events[0];
  tf_first.wall_time = 1622543341.0;
  CHECK(io::serialize_event(tf_first) == ours[0]);
}

TEST_CASE("event file name: events.out.tfevents.<10-digit seconds>.<host>.<pid>.<n>.v2") {
  ScratchDir dir;
  hookfuse::FakeClock clock{987654321.75};  // 9 digits: zero-padded to 10
  io::SummaryWriter a(dir.path(), with_clock(clock));
  io::SummaryWriter b(dir.path(), with_clock(clock));
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  const std::regex pattern(R"(events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)\.v2)");
  std::smatch ma, mb;
  const std::string na = a.path().filename().string(), nb = b.path().filename().string();
  REQUIRE(std::regex_match(na, ma, pattern));
  REQUIRE(std::regex_match(nb, mb, pattern));
  CHECK(ma[1] == "0987654321");
  CHECK(ma[2] == std::string(host));
  CHECK(ma[3] == std::to_string(::getpid()));
  CHECK(std::stoll(mb[4]) == std::stoll(ma[4]) + 1);  // a process-wide counter
  CHECK(a.path().parent_path() == dir.path());
  // TF 2's own file matches the same pattern.
  CHECK(std::regex_match(
      std::string("events.out.tfevents.1585499054.Jaakkos-Mac-mini.local.11684.5.v2"), pattern));
  // The first record: file_version with the whole seconds.
  a.close();
  const auto events = io::read_events(a.path());
  REQUIRE(events.size() == 1);
  CHECK(events[0].wall_time == 987654321.0);
  CHECK(events[0].file_version == "brain.Event:2");
}

TEST_CASE("TF's default histogram bucket limits, computed by hand") {
  const auto& limits = io::default_histogram_bucket_limits();
  // Positive edges 1e-12 * 1.1^k below 1e20: k <= log(1e32) / log(1.1) = 773.1, so 774 of
  // them, then DBL_MAX; the negatives mirror them; 0 between: 2 * 775 + 1.
  REQUIRE(limits.size() == 1551);
  CHECK(limits[0] == -DBL_MAX);
  CHECK(limits[774] == -1e-12);
  CHECK(limits[775] == 0.0);
  CHECK(limits[776] == 1e-12);
  CHECK(limits[777] == 1e-12 * 1.1);
  CHECK(limits[778] == 1e-12 * 1.1 * 1.1);
  CHECK(limits[1550] == DBL_MAX);
  CHECK(limits[1549] < 1e20);
  CHECK(limits[1549] * 1.1 >= 1e20);
  for (int k : {10, 100, 283, 500, 773}) {
    INFO("k = " << k);
    CHECK(limits[static_cast<std::size_t>(776 + k)] ==
          Approx(1e-12 * std::pow(1.1, k)).epsilon(1e-12));
  }
  for (std::size_t i = 0; i < 775; ++i) CHECK(limits[i] == -limits[1550 - i]);
  CHECK(std::is_sorted(limits.begin(), limits.end()));
}

TEST_CASE("histogram of a small input: counts, collapsed empty runs, moments") {
  const std::vector<double> values{-1.0, 0.0, 0.5, 0.5, 2.0};
  const io::HistogramProto h = io::make_histogram("w", std::span<const double>(values));
  CHECK(h.min == -1.0);
  CHECK(h.max == 2.0);
  CHECK(h.num == 5.0);
  CHECK(h.sum == 2.0);
  CHECK(h.sum_squares == 5.5);
  // A value goes to the first bucket whose right edge exceeds it. By hand, with edges
  // e(k) = 1e-12 * 1.1^k: -1.0 lies in [-e(290), -e(289)) = [-1.0088, -0.9171); 0.0 in
  // [0, e(0)); 0.5 in [e(282), e(283)) = [0.4714, 0.5186); 2.0 in [e(297), e(298)) =
  // [1.9660, 2.1626). Each run of empty buckets becomes one empty bucket at the run's end.
  auto e = [](int k) { return 1e-12 * std::pow(1.1, k); };
  const std::vector<double> limit{-e(290), -e(289), 0.0,    e(0),   e(282),
                                  e(283),  e(297),  e(298), DBL_MAX};
  const std::vector<double> count{0, 1, 0, 1, 0, 2, 0, 1, 0};
  REQUIRE(h.bucket_limit.size() == limit.size());
  REQUIRE(h.bucket.size() == count.size());
  for (std::size_t i = 0; i < limit.size(); ++i) {
    INFO("bucket " << i);
    CHECK(h.bucket_limit[i] == Approx(limit[i]).epsilon(1e-12));
    CHECK(h.bucket[i] == count[i]);
  }
  // No values: TF writes min DBL_MAX, max -DBL_MAX and the one bucket (DBL_MAX, 0).
  const io::HistogramProto empty = io::make_histogram("w", std::span<const double>());
  CHECK(empty.min == DBL_MAX);
  CHECK(empty.max == -DBL_MAX);
  CHECK(empty.bucket_limit == std::vector<double>{DBL_MAX});
  CHECK(empty.bucket == std::vector<double>{0.0});
  // NaN is refused, as TF's HistogramSummary op does.
  const std::vector<float> bad{1.0f, std::nanf("")};
  CHECK(error_of<hookfuse::ValueError>([&] {
          (void)io::make_histogram("layer/w", std::span<const float>(bad));
        }) == "Nan in summary histogram for: layer/w");
}

TEST_CASE("SummaryWriter: histograms, session logs and events read back") {
  ScratchDir dir;
  hookfuse::FakeClock clock{1700000000.5};
  io::SummaryWriter writer(dir.path(), with_clock(clock));
  const std::vector<float> w{-1.0f, 0.0f, 0.5f, 0.5f, 2.0f};
  writer.add_session_log(io::SessionLog::START, 7);
  writer.add_histogram("dense/kernel", w, 8);
  clock.advance(1.25);
  writer.add_scalar("loss", 0.25, 9);
  io::Summary merged{
      {io::scalar_value("a", 1.0), io::scalar_value("b", 2.0, io::ScalarForm::simple_value)}};
  writer.add_summary(merged, 10, 1700000100.0);
  writer.close();
  const auto events = io::read_events(writer.path());
  REQUIRE(events.size() == 5);
  CHECK(events[1].what == io::Event::What::session_log);
  CHECK(events[1].session_log.status == io::SessionLog::START);
  CHECK(events[1].step == 7);
  CHECK(events[1].wall_time == 1700000000.5);
  // Event{wall_time, step=7, session_log{status=START}}: ... 10 07 3a 02 08 01.
  const std::string start_bytes = io::serialize_event(events[1]);
  CHECK(start_bytes.substr(9) == std::string("\x10\x07\x3a\x02\x08\x01", 6));
  REQUIRE(events[2].summary.value.size() == 1);
  const io::SummaryValue& h = events[2].summary.value[0];
  CHECK(h.tag == "dense/kernel");
  CHECK(h.kind == Kind::histo);
  CHECK_FALSE(h.metadata.has_value());  // tf.compat.v1.summary.histogram writes none
  CHECK(h.histo.num == 5.0);
  CHECK(h.histo.bucket == std::vector<double>{0, 1, 0, 1, 0, 2, 0, 1, 0});
  CHECK(events[3].wall_time == 1700000001.75);
  CHECK(events[3].summary.value[0].scalar() == 0.25);
  REQUIRE(events[4].summary.value.size() == 2);
  CHECK(events[4].wall_time == 1700000100.0);
  CHECK(events[4].summary.value[0].kind == Kind::tensor);
  CHECK(events[4].summary.value[1].kind == Kind::simple_value);
  CHECK(events[4].summary.value[1].scalar() == 2.0);
}

TEST_CASE("SummaryWriter flushes after max_queue events or flush_secs seconds, as TF") {
  ScratchDir dir;
  hookfuse::FakeClock clock{1000.0};
  io::SummaryWriter writer(dir.path(), with_clock(clock));
  const auto size = [&] { return std::filesystem::file_size(writer.path()); };
  CHECK(size() == 40);  // the file_version record is flushed at once
  // One tensor scalar "x" at step s > 0: Event{09 D, 10 s, 2a 1e {0a 1c {0a 01 'x', 42 ..,
  // 4a ..}}} = 9 + 2 + 32 = 43 bytes, 59 framed.
  writer.add_scalar("x", 1.0, 1);
  clock.advance(120.0);  // exactly flush_secs: not yet (TF flushes when more have passed)
  writer.add_scalar("x", 2.0, 2);
  CHECK(size() == 40);
  clock.advance(0.5);
  writer.add_scalar("x", 3.0, 3);
  CHECK(size() == 40 + 3 * 59);
  // max_queue = 10: the 11th pending event flushes.
  for (int i = 0; i < 10; ++i) writer.add_scalar("x", 1.0, 4 + i);
  CHECK(size() == 40 + 3 * 59);
  writer.add_scalar("x", 1.0, 14);
  CHECK(size() == 40 + 14 * 59);
  writer.add_scalar("x", 1.0, 15);
  writer.flush();
  CHECK(size() == 40 + 15 * 59);
}

TEST_CASE("SummaryWriter: closed writers drop events, reopen starts a new file") {
  ScratchDir dir;
  hookfuse::FakeClock clock{1000.0};
  io::SummaryWriter writer(dir.path(), with_clock(clock));
  writer.add_scalar("x", 1.0, 1);
  writer.close();
  CHECK(writer.closed());
  const auto first = writer.path();
  writer.add_scalar("x", 2.0, 2);  // a warning, nothing written
  CHECK(io::read_events(first).size() == 2);
  writer.reopen();
  CHECK_FALSE(writer.closed());
  CHECK(writer.path() != first);
  writer.add_scalar("x", 3.0, 3);
  writer.close();
  CHECK(io::event_files(dir.path()).size() == 2);
  CHECK(io::read_events(writer.path()).size() == 2);
}

TEST_CASE("SummaryWriter: an unwritable log directory is an IoError naming it") {
  ScratchDir dir;
  write_bytes(dir / "file", "not a directory");
  const auto logdir = dir / "file" / "run";
  const std::string what = error_of<io::IoError>([&] { io::SummaryWriter w(logdir); });
  CHECK(what.find(logdir.string() + ": cannot create the log directory") != std::string::npos);
  CHECK(error_of<hookfuse::ValueError>([&] { io::SummaryWriter w(""); }).find("logdir is empty") !=
        std::string::npos);
}

TEST_CASE("SummaryWriterCache: one writer per directory, whatever its spelling") {
  ScratchDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  {
    const auto a = io::SummaryWriterCache::get("d");
    const auto b = io::SummaryWriterCache::get("d/");
    const auto c = io::SummaryWriterCache::get("./d");
    const auto d = io::SummaryWriterCache::get(dir.path() / "x" / ".." / "d");
    const auto other = io::SummaryWriterCache::get("e");
    CHECK(a.get() == b.get());
    CHECK(a.get() == c.get());
    CHECK(a.get() == d.get());
    CHECK(a.get() != other.get());
    // A copy of the handle shares the writer: one file in d.
    auto copy = a;
    copy->add_scalar("x", 1.0, 1);
    a->add_scalar("x", 2.0, 2);
    copy->flush();
    const auto files = io::event_files(dir.path() / "d");
    REQUIRE(files.size() == 1);
    CHECK(io::read_events(files[0]).size() == 3);
    io::SummaryWriterCache::clear();
    CHECK(a->closed());
    CHECK(io::SummaryWriterCache::get("d").get() != a.get());  // a new writer after clear()
    io::SummaryWriterCache::clear();
  }
  std::filesystem::current_path(cwd);
}

TEST_CASE("a writer killed mid-run leaves a file read to its last complete record") {
  ScratchDir dir;
  const auto logdir = dir / "killed";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child writes 5 scalars and flushes, buffers 3 more, then is killed.
    io::SummaryWriter writer(logdir);
    for (int s = 1; s <= 5; ++s) writer.add_scalar("loss", 1.0 / s, s);
    writer.flush();
    for (int s = 6; s <= 8; ++s) writer.add_scalar("loss", 1.0 / s, s);
    ::raise(SIGKILL);
    ::_exit(3);  // not reached
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  const auto files = io::event_files(logdir);
  REQUIRE(files.size() == 1);
  CapturingLogger log;
  const auto events = io::read_events(files[0], log);
  CHECK(log.lines.empty());
  REQUIRE(events.size() == 6);  // file_version and the 5 flushed scalars
  CHECK(events[5].step == 5);
  // Cut inside the last record (as a kill during the write itself leaves it): the reader
  // returns the records before it and warns.
  const std::string bytes = file_bytes(files[0]);
  const auto cut = dir / "cut";
  write_bytes(cut, std::string_view(bytes).substr(0, bytes.size() - 20));
  const auto partial = io::read_events(cut, log);
  CHECK(partial.size() == 5);
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0].first == hookfuse::Severity::warning);
  CHECK(log.lines[0].second.find("record 5") != std::string::npos);
}

TEST_CASE("read_events: a corrupt record is a DataLossError naming the file and record") {
  HF_REQUIRE_EVENT_FIXTURE(fixture, "events_tf2_scalar");
  ScratchDir dir;
  std::string bytes = file_bytes(fixture);
  bytes[40 + 12 + 20] = static_cast<char>(bytes[40 + 12 + 20] ^ 0x04);  // record 1's payload
  const auto path = dir / "events.out.tfevents.corrupt";
  write_bytes(path, bytes);
  const std::string what = error_of<io::DataLossError>([&] { (void)io::read_events(path); });
  CHECK(what.find(path.string() +
                  ": record 1 at byte offset 40: payload of 49 bytes fails its CRC") !=
        std::string::npos);
  // Bytes with valid CRCs that are not an Event: the decoder names the field.
  const auto garbage = dir / "garbage";
  {
    io::RecordWriter w(garbage);
    w.write(std::string("\x08\x01", 2));  // field 1 (wall_time, a double) as a varint
  }
  CHECK(error_of<io::DataLossError>([&] { (void)io::read_events(garbage); })
            .find("record 0 at byte offset 0: Event.wall_time (field 1): wire type varint, "
                  "expected 64-bit") != std::string::npos);
  // A varint cut off (field 2, step): protozero's error, naming the record and the message.
  const auto cut = dir / "cut_varint";
  {
    io::RecordWriter w(cut);
    w.write(std::string("\x10\x80", 2));
  }
  CHECK(error_of<io::DataLossError>([&] { (void)io::read_events(cut); })
            .starts_with(cut.string() + ": record 0 at byte offset 0: Event: malformed Event "
                                        "protobuf ("));
}

TEST_CASE("serialize_event: proto3 defaults left out, negative steps as 10-byte varints") {
  io::Event e;
  e.what = io::Event::What::file_version;  // empty, but a oneof member is always written
  CHECK(io::serialize_event(e) == std::string("\x1a\x00", 2));
  e.step = -1;
  CHECK(io::serialize_event(e) ==
        std::string("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x1a\x00", 13));
  CHECK(io::parse_event(io::serialize_event(e)).step == -1);
  e.what = io::Event::What::summary;  // an empty Summary: 2a 00
  e.step = 0;
  e.wall_time = -0.0;  // proto3 compares bits: -0.0 is written
  CHECK(io::serialize_event(e) == std::string("\x09\0\0\0\0\0\0\0\x80\x2a\x00", 11));
}

TEST_CASE("parse_event reads the other scalar encodings TensorBoard accepts") {
  // Event{summary{value{tag "s", tensor{...}}}}, the tensor spelled three ways by hand.
  auto event_with_tensor = [](const std::string& tensor) {
    const std::string value =
        std::string("\x0a\x01s\x42", 4) + static_cast<char>(tensor.size()) + tensor;
    const std::string summary = "\x0a" + std::string(1, static_cast<char>(value.size())) + value;
    return "\x2a" + std::string(1, static_cast<char>(summary.size())) + summary;
  };
  // DT_FLOAT with one unpacked float_val (2d) 1.5f = 00 00 c0 3f.
  const std::string unpacked("\x08\x01\x12\x00\x2d\x00\x00\xc0\x3f", 9);
  // DT_FLOAT with a packed float_val (2a 04).
  const std::string packed("\x08\x01\x2a\x04\x00\x00\xc0\x3f", 8);
  // DT_DOUBLE with 8 bytes of tensor_content, 1.5 = 00 .. 00 f8 3f.
  const std::string dbl("\x08\x02\x22\x08\x00\x00\x00\x00\x00\x00\xf8\x3f", 12);
  for (const std::string& t : {unpacked, packed, dbl}) {
    const io::Event e = io::parse_event(event_with_tensor(t));
    REQUIRE(e.summary.value.size() == 1);
    CHECK(e.summary.value[0].tag == "s");
    CHECK(e.summary.value[0].scalar() == 1.5);
  }
  // A [2] tensor is not a scalar.
  const std::string vec("\x08\x01\x12\x04\x12\x02\x08\x02\x22\x08\0\0\xc0\x3f\0\0\xc0\x3f", 18);
  const io::Event v = io::parse_event(event_with_tensor(vec));
  CHECK(v.summary.value[0].tensor.shape == std::vector<std::int64_t>{2});
  CHECK_FALSE(v.summary.value[0].scalar().has_value());
}
