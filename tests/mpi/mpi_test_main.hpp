// tests/mpi/mpi_test_main.hpp: the main() of an MPI test program, included by its one source
// file after `#define CATCH_CONFIG_RUNNER` and <catch2/catch.hpp>: MPI_Init and MPI_Finalize
// through MpiEnvironment, MPI_COMM_WORLD in mpi_test::g_comm for the test cases, Catch2's
// session, and on every rank the worst rank's result as the exit status, so that mpirun's status
// shows a failure on any rank.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include <hookfuse/distributed/communicator.hpp>

namespace mpi_test {
inline hookfuse::distributed::Communicator* g_comm = nullptr;  // MPI_COMM_WORLD, set by main()
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
