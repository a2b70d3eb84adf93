// mpidsm: a global address space for MPI programs over UCX.
#pragma once

#include "mpidsm/config.hpp"
#include "mpidsm/error.hpp"
#include "mpidsm/messaging.hpp"
#include "mpidsm/pgas.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/transport.hpp"
#include "mpidsm/version.hpp"
