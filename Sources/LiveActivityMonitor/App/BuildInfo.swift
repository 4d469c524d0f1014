import Foundation

/// The `revision` label of `liveactivity_build_info`: `LAM_REVISION` when the deployment sets it
/// (SwiftPM has no build-time stamping without plugins we cannot fetch), else "unknown".
enum BuildInfo {
    static let revision: String = {
        let value = ProcessInfo.processInfo.environment["LAM_REVISION"] ?? ""
        let safe = value.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
        return !value.isEmpty && value.count <= 64 && safe ? value : "unknown"
    }()
}
