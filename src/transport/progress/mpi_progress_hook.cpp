#include "mpi_progress_hook.hpp"

#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>

#include <array>
#include <atomic>
#include <mutex>

#include "progress_control.hpp"

namespace mpidsm::detail {
namespace {

// Open MPI's progress-callback registry (opal/runtime/opal_progress.h).
using ProgressCallback = int (*)();
using RegisterCallback = int (*)(ProgressCallback);

// One callback serves every runtime of the process: Open MPI's takes no
// argument. A slot's users count the calls inside its transport, so the
// hook's destructor can wait until none is.
struct Slot {
  std::atomic<Transport*> transport{nullptr};
  std::atomic<int> users{0};
};
std::array<Slot, 16> slots;
std::mutex registry_mutex;  // registration and slot claims (never on the progress path)
int registered_slots = 0;   // guarded by registry_mutex

int drive_all() {
  int events = 0;
  for (Slot& slot : slots) {
    if (slot.transport.load(std::memory_order_relaxed) == nullptr) continue;
    slot.users.fetch_add(1, std::memory_order_seq_cst);
    // Read after counting in: a destructor that cleared it first waits for us.
    if (Transport* t = slot.transport.load(std::memory_order_seq_cst))
      if (ProgressControl(*t).progress_from_mpi()) ++events;
    slot.users.fetch_sub(1, std::memory_order_release);
  }
  return events;
}

RegisterCallback open_mpi_function(const char* name) {
  return reinterpret_cast<RegisterCallback>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

MpiProgressHook::MpiProgressHook(Transport& transport) {
  RegisterCallback register_callback = open_mpi_function("opal_progress_register");
  if (!register_callback || !open_mpi_function("opal_progress_unregister")) return;
  std::lock_guard<std::mutex> guard(registry_mutex);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].transport.load() != nullptr) continue;
    if (registered_slots == 0 && register_callback(drive_all) != 0 /* OPAL_SUCCESS */) return;
    ++registered_slots;
    slots[i].transport.store(&transport, std::memory_order_seq_cst);
    slot_ = i;
    return;
  }
}

MpiProgressHook::~MpiProgressHook() {
  if (!active()) return;
  std::lock_guard<std::mutex> guard(registry_mutex);
  Slot& slot = slots[slot_];
  slot.transport.store(nullptr, std::memory_order_seq_cst);
  while (slot.users.load(std::memory_order_acquire) != 0) sched_yield();
  if (--registered_slots != 0) return;
  // After MPI_Finalize, Open MPI's registry is gone, and with it the callback.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) open_mpi_function("opal_progress_unregister")(drive_all);
}

}  // namespace mpidsm::detail
