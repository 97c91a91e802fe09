// tests/mpi/mpi_test_main.hpp: the main() of an MPI test program, included by its one source
// file after `#define CATCH_CONFIG_RUNNER` and <catch2/catch.hpp>: MPI_Init and MPI_Finalize
// through MpiEnvironment, MPI_COMM_WORLD in mpi_test::g_comm for the test cases, Catch2's
// session, and on every rank the worst rank's result as the exit status, so that mpirun's status
// shows a failure on any rank. Also SharedDir, a temporary directory every rank sees.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>

#include <hookfuse/distributed/communicator.hpp>

namespace mpi_test {
inline hookfuse::distributed::Communicator* g_comm = nullptr;  // MPI_COMM_WORLD, set by main()

/// A fresh directory made by rank 0, its path on every rank (one file system: ranks on one
/// machine). Removed by rank 0 when the last rank is done with it.
struct SharedDir {
  std::filesystem::path path;
  SharedDir() {
    std::array<char, 256> name{};
    if (g_comm->rank() == 0) {
      std::string t = (std::filesystem::temp_directory_path() / "hookfuse-mpi-XXXXXX").string();
      REQUIRE(t.size() < name.size());
      REQUIRE(::mkdtemp(t.data()) != nullptr);
      t.copy(name.data(), t.size());
    }
    g_comm->broadcast_bytes(name.data(), name.size(), 0);
    path = std::filesystem::path(name.data());
  }
  ~SharedDir() {
    g_comm->barrier();
    std::error_code ec;
    if (g_comm->rank() == 0) std::filesystem::remove_all(path, ec);
  }
};
}  // namespace mpi_test

int main(int argc, char** argv) {
  hookfuse::distributed::MpiEnvironment mpi(argc, argv);
  int result = 0;
  {
    hookfuse::distributed::Communicator comm;
    mpi_test::g_comm = &comm;
    result = Catch::Session().run(argc, argv);
    std::array<std::int64_t, 1> worst = {result};
    comm.allreduce_max(std::span<std::int64_t>(worst));
    result = static_cast<int>(worst[0]);
    mpi_test::g_comm = nullptr;
  }
  return result;
}
