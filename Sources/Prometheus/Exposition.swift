// Filled in by the Prometheus work.
