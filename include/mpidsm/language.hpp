// mpidsm's C++ headers need C++20 (concepts, std::span, std::atomic_ref).
// Every public C++ header includes this first, so an older standard gets
// this message before the compiler trips over the first of those.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "mpidsm needs C++20: compile with -std=c++20 (or use the C API, mpidsm/mpidsm.h)"
#endif
