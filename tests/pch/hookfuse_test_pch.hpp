// tests/pch/hookfuse_test_pch.hpp: what every unit test parses first, compiled once into a
// precompiled header (tests/CMakeLists.txt, HOOKFUSE_TEST_PCH). The tests still include what they
// use; this only saves parsing Catch2 and the umbrella header (~3.5 s of CPU) in each of them.
// No `#pragma once` (this is the main file of the PCH compile) and no `#pragma GCC
// system_header`: warnings in hookfuse's templates instantiated by a test must still be errors.
#include <catch2/catch.hpp>
#include <hookfuse/hookfuse.hpp>
