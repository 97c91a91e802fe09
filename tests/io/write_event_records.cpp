// tests/io/write_event_records.cpp: writes an event file with hookfuse's SummaryWriter, then
// stores each record's payload as <out>/record_<i>.pb beside <out>/record_<i>.expect, the
// lines protoc --decode_raw must print for it (tests/io/protoc_decode_raw.sh checks them).
//
//   write_event_records <out dir>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <hookfuse/io/event_reader.hpp>
#include <hookfuse/io/summary_writer.hpp>
#include <hookfuse/io/tfrecord.hpp>
#include <string>
#include <vector>

namespace io = hookfuse::io;

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <out dir>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::remove_all(out);
  const std::vector<float> weights{-1.0f, 0.0f, 0.5f, 0.5f, 2.0f};
  std::filesystem::path file;
  {
    io::SummaryWriter writer(out / "logs");
    writer.add_session_log(io::SessionLog::START, 1);
    writer.add_scalar("loss", 0.5, 1);  // tensor form
    io::Summary legacy{{io::scalar_value("accuracy", 0.75, io::ScalarForm::simple_value)}};
    writer.add_summary(legacy, 101);
    writer.add_histogram("dense/kernel", weights, 201);
    writer.close();
    file = writer.path();
  }
  // What protoc --decode_raw prints for each record, computed by hand from the protos: field
  // numbers, the strings, the step varints, 0.75f = 0x3f400000 as a fixed32.
  const std::vector<std::vector<std::string>> expect{
      {"3: \"brain.Event:2\""},
      {"2: 1", "7 {", "1: 1"},
      {"2: 1", "5 {", "1: \"loss\"", "1: \"scalars\""},
      {"2: 101", "5 {", "1: \"accuracy\"", "2: 0x3f400000"},
      {"2: 201", "5 {", "1: \"dense/kernel\"", "3: 0x4014000000000000"}};
  const auto records = io::read_records(file);
  if (records.size() != expect.size()) {
    std::fprintf(stderr, "%s: %zu records, expected %zu\n", file.c_str(), records.size(),
                 expect.size());
    return 1;
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::string stem = (out / ("record_" + std::to_string(i))).string();
    std::ofstream pb(stem + ".pb", std::ios::binary);
    pb.write(records[i].data(), static_cast<std::streamsize>(records[i].size()));
    std::ofstream ex(stem + ".expect");
    for (const auto& line : expect[i]) ex << line << '\n';
    if (!pb || !ex) {
      std::fprintf(stderr, "%s: cannot write\n", stem.c_str());
      return 1;
    }
  }
  std::printf("%s: %zu records\n", file.c_str(), records.size());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "write_event_records: %s\n", e.what());
  return 1;
}
