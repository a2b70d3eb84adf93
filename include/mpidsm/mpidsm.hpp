// mpidsm: a global address space for MPI programs over UCX. Includes every
// public C++ header (the C API is mpidsm/mpidsm.h).
#pragma once

#include "mpidsm/language.hpp"

#include "mpidsm/coherence.hpp"
#include "mpidsm/config.hpp"
#include "mpidsm/dsm.hpp"
#include "mpidsm/error.hpp"
#include "mpidsm/info.hpp"
#include "mpidsm/messaging.hpp"
#include "mpidsm/pgas.hpp"
#include "mpidsm/placement.hpp"
#include "mpidsm/runtime.hpp"
#include "mpidsm/team.hpp"
#include "mpidsm/transport.hpp"
#include "mpidsm/version.hpp"
