# Finds UCX (ucp, uct, ucs) through its pkg-config file and exports UCX::ucx.
# Debian's libucx-dev ships ucx.pc; a hand-built UCX can be pointed at with
# PKG_CONFIG_PATH or UCX_ROOT.
find_package(PkgConfig REQUIRED)
if(DEFINED UCX_ROOT)
  set(ENV{PKG_CONFIG_PATH} "${UCX_ROOT}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
endif()
pkg_check_modules(PC_UCX QUIET IMPORTED_TARGET ucx)
if(PC_UCX_FOUND)
  set(UCX_VERSION ${PC_UCX_VERSION})
  if(NOT TARGET UCX::ucx)
    add_library(UCX::ucx INTERFACE IMPORTED)
    target_link_libraries(UCX::ucx INTERFACE PkgConfig::PC_UCX)
  endif()
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(UCX REQUIRED_VARS PC_UCX_FOUND VERSION_VAR UCX_VERSION)
