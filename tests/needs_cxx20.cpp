// Compiled with -std=c++17 by the test `needs_cxx20`, which expects mpidsm's
// own message rather than the compiler's first complaint about C++20 code.
#include "mpidsm/mpidsm.hpp"
