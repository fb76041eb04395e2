#include "counters.h"

namespace iolab::suites::memory {

void add_counters(results::Result& r, const nlohmann::json& series) {
  if (r.bytes == 0) return;
  const double bytes = static_cast<double>(r.bytes), mib = bytes / (1024.0 * 1024.0);
  r.extra["major_faults_per_mib"] = static_cast<double>(r.major_faults) / mib;
  r.extra["sys_s_per_mib"] = r.sys_s / mib;
  if (r.op == results::Op::Read) {
    r.extra["storage_read_bytes_per_byte"] = static_cast<double>(r.storage_read_bytes) / bytes;
    if (r.device_read_bytes) r.extra["device_read_bytes_per_byte"] = static_cast<double>(*r.device_read_bytes) / bytes;
  } else if (r.device_write_bytes) {
    r.extra["device_write_bytes_per_byte"] = static_cast<double>(*r.device_write_bytes) / bytes;
  }
  double seconds = 0, tlb = 0;
  bool have_tlb = false;
  for (const auto& e : series) {
    seconds += e.value("seconds", 0.0);
    if (e.contains("tlb_shootdowns") && e["tlb_shootdowns"].is_number()) {
      tlb += e["tlb_shootdowns"].get<double>();
      have_tlb = true;
    }
  }
  if (have_tlb && seconds > 0) r.extra["tlb_shootdowns_per_s"] = tlb / seconds;
}

}  // namespace iolab::suites::memory
