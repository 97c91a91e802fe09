// expect: ContiguousRange<R>.*std::__cxx11::list<float
// BundleWriter::add copies a tensor's elements from one block of memory: a std::list is not
// a contiguous range, and the diagnostic names the constraint and the type.
// Control: tests/compile_ok/bundle_writer_add_list.cpp (a std::vector instead).
#include <hookfuse/hookfuse.hpp>

#include <list>

int main() {
  hookfuse::io::BundleWriter writer("model.ckpt");
  const std::list<float> values{1.0f, 2.0f, 3.0f};
  writer.add("w", {3}, values);
}
