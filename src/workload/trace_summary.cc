#include <algorithm>

#include "trace_layout.h"

namespace flashdir::sim::detail {

void summarise(Trace& trace) {
  trace.reads = trace.writes = trace.read_bytes = trace.write_bytes = 0;
  trace.footprint_bytes = 0;
  for (const IoRequest& request : trace.requests) {
    if (request.is_read()) {
      ++trace.reads;
      trace.read_bytes += request.size_bytes;
    } else {
      ++trace.writes;
      trace.write_bytes += request.size_bytes;
    }
    trace.footprint_bytes = std::max(trace.footprint_bytes, request.end_bytes());
  }
  trace.duration_ns = trace.requests.empty() ? 0 : trace.requests.back().arrival_ns;
}

}  // namespace flashdir::sim::detail
