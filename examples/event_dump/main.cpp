// examples/event_dump: prints the events of TensorBoard event files (TensorBoard's
// `tensorboard --inspect`, TF's `summary_iterator`), or their scalars as CSV for plotting.
//
//   event_dump <event file or log dir>...          one line per event / summary value
//   event_dump --csv <event file or log dir>...    tag,step,wall_time,value for every scalar
//
// A log directory stands for its event files (names containing "tfevents"), in name order. A
// truncated last record (a writer still running, or killed) is reported on stderr and ends that
// file; a corrupt record is an error naming the file and the record (exit status 1).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <hookfuse/io/event_reader.hpp>
#include <string>
#include <vector>

#include "../cli_checks.hpp"

namespace io = hookfuse::io;

namespace {

const char* kind_name(io::SummaryValue::Kind k) {
  switch (k) {
    case io::SummaryValue::Kind::simple_value:
      return "simple_value";
    case io::SummaryValue::Kind::tensor:
      return "tensor";
    case io::SummaryValue::Kind::histo:
      return "histo";
    case io::SummaryValue::Kind::other:
      return "other";
    case io::SummaryValue::Kind::none:
      break;
  }
  return "none";
}

void print_event(const io::Event& e) {
  const std::string head = fmt::format("step {} wall_time {:.6f}", e.step, e.wall_time);
  switch (e.what) {
    case io::Event::What::file_version:
      fmt::print("{} file_version \"{}\"\n", head, e.file_version);
      return;
    case io::Event::What::session_log:
      fmt::print("{} session_log status {}{}\n", head, static_cast<int>(e.session_log.status),
                 e.session_log.checkpoint_path.empty()
                     ? std::string()
                     : " checkpoint_path \"" + e.session_log.checkpoint_path + "\"");
      return;
    case io::Event::What::summary:
      for (const io::SummaryValue& v : e.summary.value) {
        std::string what;
        if (const auto x = v.scalar()) {
          what = fmt::format("{}", *x);
        } else if (v.kind == io::SummaryValue::Kind::histo) {
          what = fmt::format("num {} min {} max {} sum {} ({} buckets)", v.histo.num, v.histo.min,
                             v.histo.max, v.histo.sum, v.histo.bucket.size());
        } else if (v.kind == io::SummaryValue::Kind::tensor) {
          what = fmt::format("dtype {} rank {}", v.tensor.dtype, v.tensor.shape.size());
        }
        const std::string plugin = v.metadata && !v.metadata->plugin_name.empty()
                                       ? " [" + v.metadata->plugin_name + "]"
                                       : std::string();
        fmt::print("{} {} {}{} {}\n", head, v.tag, kind_name(v.kind), plugin, what);
      }
      return;
    default:
      fmt::print("{} (event not decoded)\n", head);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"Prints the events of TensorBoard event files"};
  std::vector<std::string> inputs;
  bool csv = false;
  app.add_option("inputs", inputs, "event files or log directories")->required();
  app.add_flag("--csv", csv, "print the scalars only, as tag,step,wall_time,value");
  if (const auto status = example_cli::parse(app, argc, argv, "event_dump")) return *status;

  std::vector<std::filesystem::path> files;
  for (const std::filesystem::path in : inputs) {
    if (std::filesystem::is_directory(in)) {
      const auto found = io::event_files(in);
      if (found.empty()) fmt::print(stderr, "{}: no event files\n", in.string());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(in);
    }
  }
  if (csv) fmt::print("tag,step,wall_time,value\n");
  for (const auto& file : files) {
    if (!csv) fmt::print("# {}\n", file.string());
    for (const io::Event& e : io::read_events(file)) {
      if (!csv) {
        print_event(e);
        continue;
      }
      for (const io::SummaryValue& v : e.summary.value) {
        if (const auto x = v.scalar()) {
          fmt::print("{},{},{:.6f},{}\n", v.tag, e.step, e.wall_time, *x);
        }
      }
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "event_dump: %s\n", e.what());
  return 1;
}
