/// `?limit=`, the one grammar of every page size the API takes (the list, an activity's or a
/// booking's events, triage, channels): decimal digits only, from 1 to the route's most. Only
/// the default and the most differ by route (DESIGN.md section 6).
struct PageLimit {
    let defaultValue: Int
    let most: Int

    /// The page size `query` asks for, or the default when it asks for none.
    func parse(_ query: [String: String]) throws(APIError) -> Int {
        guard let text = query["limit"] else { return defaultValue }
        // Int() alone would also read a sign ("+5", "-0"): a size is written with digits only.
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let n = Int(text), (1...most).contains(n) else {
            throw .badRequest("limit must be an integer from 1 to \(most)")
        }
        return n
    }
}
