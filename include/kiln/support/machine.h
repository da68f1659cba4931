// What this machine offers a job: the cores this process may run on and the memory available
// now (for kiln doctor's build advice and the compiler's code-generation threads).
#ifndef KILN_SUPPORT_MACHINE_H_
#define KILN_SUPPORT_MACHINE_H_

#include <cstdint>

namespace kiln {

// The CPUs in this process's affinity mask (taskset, cgroups), else the hardware threads; >= 1.
int usable_cores();
// MemAvailable of /proc/meminfo in MB; 0 when unknown.
int64_t available_memory_mb();

}  // namespace kiln

#endif  // KILN_SUPPORT_MACHINE_H_
