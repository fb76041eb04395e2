// The chart bundles, embedded into the binary at build time with .incbin so
// that a report written anywhere (build tree, installed binary, another
// machine) opens offline. IOLAB_NODE_MODULES is set by src/report/CMakeLists.txt,
// whose custom command runs `npm ci` first (package-lock.json pins the versions).
#include <string_view>
#include <vector>

#include "iolab/report/html.h"

#ifndef IOLAB_NODE_MODULES
#error "IOLAB_NODE_MODULES must name the node_modules directory holding vega, vega-lite and vega-embed"
#endif

#define IOLAB_EMBED(symbol, file)                           \
  __asm__(".section .rodata." #symbol ",\"a\",@progbits\n" \
          ".balign 16\n"                                     \
          ".global " #symbol "_begin\n"                      \
          ".hidden " #symbol "_begin\n" #symbol "_begin:\n"  \
          ".incbin \"" IOLAB_NODE_MODULES "/" file "\"\n"    \
          ".global " #symbol "_end\n"                        \
          ".hidden " #symbol "_end\n" #symbol "_end:\n"      \
          ".byte 0\n"                                        \
          ".previous\n")

IOLAB_EMBED(iolab_bundle_vega, "vega/build/vega.min.js");
IOLAB_EMBED(iolab_bundle_vega_lite, "vega-lite/build/vega-lite.min.js");
IOLAB_EMBED(iolab_bundle_vega_embed, "vega-embed/build/vega-embed.min.js");

extern "C" {
extern const char iolab_bundle_vega_begin[], iolab_bundle_vega_end[];
extern const char iolab_bundle_vega_lite_begin[], iolab_bundle_vega_lite_end[];
extern const char iolab_bundle_vega_embed_begin[], iolab_bundle_vega_embed_end[];
}

namespace iolab::report {

std::vector<ChartBundle> chart_bundles() {
  auto text = [](const char* b, const char* e) { return std::string_view(b, static_cast<std::size_t>(e - b)); };
  // Load order matters: vega-lite and vega-embed find vega (and vega-lite) as globals.
  return {{"vega", text(iolab_bundle_vega_begin, iolab_bundle_vega_end)},
          {"vega-lite", text(iolab_bundle_vega_lite_begin, iolab_bundle_vega_lite_end)},
          {"vega-embed", text(iolab_bundle_vega_embed_begin, iolab_bundle_vega_embed_end)}};
}

}  // namespace iolab::report
