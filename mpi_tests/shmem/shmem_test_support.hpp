// The OpenSHMEM conformance suite's support: the library started after MPI
// (the mixed start: the gtest main has called MPI_Init) for the whole run,
// and the values the tests move, distinct per PE and index and exact in
// every standard type (at most 100, so char and float hold them).
#pragma once

#include <gtest/gtest.h>
#include <shmem.h>

#include <complex>
#include <cstddef>
#include <cstdint>

namespace shmem_test {

template <class T>
T value(int pe, std::size_t i) {
  return static_cast<T>((pe * 31 + static_cast<int>(i) * 7) % 100 + 1);
}

inline int me() {
  return shmem_my_pe();
}
inline int npes() {
  return shmem_n_pes();
}
inline int right() {
  return (me() + 1) % npes();
}
inline int left() {
  return (me() + npes() - 1) % npes();
}

// shmem_calloc of `count` T, freed at scope exit (collective both ways).
template <class T>
class Symmetric {
 public:
  explicit Symmetric(std::size_t count)
      : data_(static_cast<T*>(shmem_calloc(count, sizeof(T)))), count_(count) {}
  ~Symmetric() { shmem_free(data_); }
  Symmetric(const Symmetric&) = delete;
  Symmetric& operator=(const Symmetric&) = delete;
  T* get() const { return data_; }
  T& operator[](std::size_t i) const { return data_[i]; }
  std::size_t size() const { return count_; }

 private:
  T* data_;
  std::size_t count_;
};

}  // namespace shmem_test
