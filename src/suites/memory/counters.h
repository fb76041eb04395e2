// The counters that say why a read or write past memory runs as it does
// (issue 24 item 5), per byte delivered: major faults and kernel CPU per
// MiB, bytes the process and the device read (or the device wrote) per
// byte, and TLB shootdowns per second from a per-second series. The memory
// suite's records and the decision table's larger-than-memory cell carry
// them alike.
#pragma once

#include <nlohmann/json.hpp>

#include "iolab/results/record.h"

namespace iolab::suites::memory {

// Adds extra "major_faults_per_mib", "sys_s_per_mib",
// "storage_read_bytes_per_byte" and "device_read_bytes_per_byte" (reads) or
// "device_write_bytes_per_byte" (writes), and "tlb_shootdowns_per_s" when
// `series` (extra.per_second's form; may be empty) has them. Nothing for a
// record that moved no bytes.
void add_counters(results::Result& r, const nlohmann::json& series = nlohmann::json::array());

}  // namespace iolab::suites::memory
