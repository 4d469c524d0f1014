// Filled in by the JSON work.
