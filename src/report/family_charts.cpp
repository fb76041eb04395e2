#include "family_charts.h"

namespace iolab::report {

const std::vector<const FamilyChart*>& family_charts() {
  static const std::vector<const FamilyChart*> all{&kQueueDepthCurve, &kMemoryCurve};
  return all;
}

}  // namespace iolab::report
