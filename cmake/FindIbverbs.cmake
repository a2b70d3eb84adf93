# Finds rdma-core's libibverbs (libibverbs-dev) and exports Ibverbs::ibverbs.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PC_IBVERBS QUIET IMPORTED_TARGET libibverbs)
if(PC_IBVERBS_FOUND AND NOT TARGET Ibverbs::ibverbs)
  add_library(Ibverbs::ibverbs INTERFACE IMPORTED)
  target_link_libraries(Ibverbs::ibverbs INTERFACE PkgConfig::PC_IBVERBS)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Ibverbs REQUIRED_VARS PC_IBVERBS_FOUND
                                  VERSION_VAR PC_IBVERBS_VERSION)
