import Testing
@testable import SQLiteDB

@Test func placeholderSQLiteDB() {}
