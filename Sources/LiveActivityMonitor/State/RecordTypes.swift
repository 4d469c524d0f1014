import Prometheus

/// The attributes types of the records met in one pass over them, numbered in the order first
/// met: a record's `TypeAndApp` block is told apart by its address, read in place (no retain,
/// no hashing: once interned, records share a handful of blocks), and a new block's type is
/// looked up once. Start-up's passes over a million records (the gauges, the phone order, the
/// label counts) spent most of their time making and hashing each record's type (session 26).
struct RecordTypes {
    /// By number.
    private(set) var types: [ExactString] = []
    private var numbers: [ExactString: Int] = [:]
    private var blocks: [(address: UInt, number: Int)] = []

    /// The number of the type of the record at `i` (the next number when it is new).
    mutating func number(of records: UnsafeBufferPointer<ActivityRecord>, _ i: Int) -> Int {
        let address = Self.blockAddress(records, i)
        if let known = blocks.first(where: { $0.address == address }) { return known.number }
        let type = ExactString(records[i].attributesType)
        let number: Int
        if let known = numbers[type] {
            number = known
        } else {
            number = types.count
            types.append(type)
            numbers[type] = number
        }
        // Free text beyond a handful of blocks: each such record's type looked up.
        if blocks.count < Self.blocksTold { blocks.append((address, number)) }
        return number
    }

    /// The address of the `TypeAndApp` block of the record at `i`, read in place (no retain).
    static func blockAddress(_ records: UnsafeBufferPointer<ActivityRecord>, _ i: Int) -> UInt {
        UnsafeRawPointer(records.baseAddress! + i).load(fromByteOffset: typeAndAppOffset, as: UInt.self)
    }

    private static let typeAndAppOffset = MemoryLayout<ActivityRecord>.offset(of: \.typeAndApp)!
    /// How many blocks a pass tells apart by address: types and apps are a handful; free text
    /// beyond this many is looked up record by record.
    static let blocksTold = 16
}
