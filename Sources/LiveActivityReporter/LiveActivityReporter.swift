// The reporter library (issue 7).
