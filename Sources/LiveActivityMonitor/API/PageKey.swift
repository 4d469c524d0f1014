/// What phone order needs of a live activity, with its state: a search copies these out under
/// the state lock and chooses its page from them outside it (`ReadHandlers.searched`).
struct PageKey {
    var order: PhoneOrderKey
    var state: ActivityState

    init(_ r: ActivityRecord, state: ActivityState) {
        order = PhoneOrderKey(r)
        self.state = state
    }

    var activityID: CompactID { order.activityID }

    static func phoneOrder(_ a: PageKey, _ b: PageKey) -> Bool {
        PhoneOrderKey.ordered(a.order, b.order)
    }
}
