// One Dsm over MPI_COMM_WORLD for a whole test suite.
#pragma once

#include <memory>

#include "mpi_test_support.hpp"
#include "mpidsm/dsm.hpp"

namespace mpidsm::testing {

class DsmTest : public WorldRuntimeTest<> {
 protected:
  static void SetUpTestSuite() {
    WorldRuntimeTest::SetUpTestSuite();
    dsm_ = std::make_unique<Dsm>(*runtime_);
  }
  static void TearDownTestSuite() {
    dsm_.reset();
    WorldRuntimeTest::TearDownTestSuite();
  }
  static inline std::unique_ptr<Dsm> dsm_;
};

}  // namespace mpidsm::testing
