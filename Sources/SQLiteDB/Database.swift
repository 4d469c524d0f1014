// Filled in by the SQLiteDB work.
import CSQLite3
