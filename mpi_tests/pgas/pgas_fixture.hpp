// A fixture whose tests share one Runtime on MPI_COMM_WORLD and one Pgas on
// it, created once per test suite (both are collective, and not what the
// PGAS tests test).
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "mpi_test_support.hpp"
#include "mpidsm/pgas.hpp"

namespace mpidsm::testing {

class WorldPgasTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    runtime_ = std::make_unique<Runtime>(MPI_COMM_WORLD);
    pgas_ = std::make_unique<Pgas>(*runtime_);
  }
  static void TearDownTestSuite() {
    pgas_.reset();
    runtime_.reset();
  }
  static inline std::unique_ptr<Runtime> runtime_;
  static inline std::unique_ptr<Pgas> pgas_;
};

}  // namespace mpidsm::testing
