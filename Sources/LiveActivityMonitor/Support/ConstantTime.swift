/// Comparison whose duration does not depend on where the inputs differ, for secrets.
public enum ConstantTime {
    /// Whether `given` (what a client sent) equals `secret`. The loop runs over `given` only:
    /// one over the longer input ran as long as the secret for every shorter guess, so timing
    /// guesses of growing length showed where the secret ends. Neither string is copied.
    public static func equals(_ given: String, _ secret: String) -> Bool {
        var given = given, secret = secret
        return given.withUTF8 { x in
            secret.withUTF8 { y in
                guard !y.isEmpty else { return x.isEmpty }
                var difference: UInt8 = x.count == y.count ? 0 : 1
                for i in 0..<x.count {
                    difference |= x[i] ^ y[i % y.count]
                }
                return difference == 0
            }
        }
    }
}
