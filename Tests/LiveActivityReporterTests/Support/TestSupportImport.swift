// The helpers every test target shares (Tests/TestSupport), visible in each file of this one.
@_exported import TestSupport
