// catch_main.cpp: the Catch2 main() shared by every tests/test_*.cpp executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
