/// Bytes that never change once made, in one heap block with a 4-byte count: 20 bytes before
/// them where an array's header takes 32, so a ride's 18 bytes of priority-10 minutes take a
/// 48-byte block of the allocator's, not a 64-byte one (`Priority10Minutes`). None: no block.
/// Sendable unchecked: `ManagedBuffer` cannot be, but a block is never written after `init`
/// fills it, so threads may share it.
struct PackedBytes: Hashable, @unchecked Sendable {
    private final class Block: ManagedBuffer<Int32, UInt8> {}

    private var block: Block?

    init() {}

    /// `count` bytes, each written by `fill`.
    init(count: Int, fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        guard count > 0 else { return }
        let made = unsafeDowncast(Block.create(minimumCapacity: count) { _ in Int32(count) }, to: Block.self)
        made.withUnsafeMutablePointerToElements { fill(UnsafeMutableBufferPointer(start: $0, count: count)) }
        block = made
    }

    var count: Int { block.map { Int($0.header) } ?? 0 }

    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard let block else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return block.withUnsafeMutablePointers { count, bytes in body(UnsafeBufferPointer(start: bytes, count: Int(count.pointee))) }
    }

    static func == (a: PackedBytes, b: PackedBytes) -> Bool {
        a.block === b.block || a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.elementsEqual(y) } }
    }

    func hash(into hasher: inout Hasher) {
        withUnsafeBufferPointer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
