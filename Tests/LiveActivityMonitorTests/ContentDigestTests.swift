import JSON
import Testing
@testable import LiveActivityMonitor

/// A content's digest is stored with its activity (delivery evidence) and compared with digests
/// made by other processes and versions: these values must never change, however it is computed.
@Suite struct ContentDigestTests {
    /// Made by the digest as stored since it was written (f160a09); reading it faster must give the same.
    static let pinned: [(text: String, digest: UInt64)] = [
        (#"{}"#, 13_776_466_725_532_482_969),
        (#"{"driverName":"Ana","rating":"4.9","progress":0.4}"#, 12_729_591_919_523_283_672),
        (#"{"z":1,"é":2,"a":[true,false,null,"x",{"b":-0,"a":7e0}],"":"ü😀"}"#, 2_015_782_152_726_409_540),
        (#"{"eta":{"minutes":12,"stops":[{"name":"Gare du Nord"},{"name":"Châtelet"}]},"tip":null}"#, 10_194_713_779_054_595_712),
    ]

    @Test func digestsStayWhatTheyWere() throws {
        for (text, digest) in Self.pinned {
            let made = ContentDigest.of(JSONText(try JSONParser.parse(text)))
            #expect(made == digest, "\(text): \(made.map(String.init) ?? "nil")")
        }
    }

    /// Key order and the spelling of a number do not change a digest; a value, a key or a kind does.
    @Test func equalContentsDigestAlike() throws {
        func digest(_ text: String) throws -> UInt64 { ContentDigest.of(try JSONParser.parse(text)) }
        #expect(try digest(#"{"a":1,"b":"x"}"#) == digest(#"{"b":"x","a":1.0}"#))
        #expect(try digest(#"{"a":0}"#) == digest(#"{"a":-0}"#))
        #expect(try digest(#"{"a":1}"#) != digest(#"{"a":"1"}"#))
        #expect(try digest(#"{"a":1}"#) != digest(#"{"b":1}"#))
        #expect(try digest(#"{"ab":"c"}"#) != digest(#"{"a":"bc"}"#))
        #expect(try digest(#"{"é":1}"#) != digest(#"{"e\u0301":1}"#))
    }
}
