print("benchmarks: not yet written")
