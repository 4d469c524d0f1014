import Foundation

/// A small parser for `--flag value`, `--flag=value` and boolean `--flag`, where every flag can
/// also come from an environment variable (flags win), and `--` ends the options. No outside
/// packages can be fetched, so no swift-argument-parser.
struct ArgumentParser {
    struct Option {
        let name: String
        let environment: String?
        let valueName: String?     // nil = boolean flag
        let help: String
    }

    let command: String
    let usage: String
    let summary: String
    let options: [Option]

    struct Parsed {
        var values: [String: String] = [:]
        var positionals: [String] = []
        var helpRequested = false
        /// Option name → the environment variable its value came from (no flag overrode it).
        var fromEnvironment: [String: String] = [:]

        /// Where a value came from, for error messages: `--port`, or `LAM_PORT (--port)`.
        func source(_ name: String) -> String {
            fromEnvironment[name].map { "\($0) (--\(name))" } ?? "--\(name)"
        }
    }

    func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Parsed {
        var parsed = Parsed()
        for option in options {
            if let env = option.environment, let value = environment[env], !value.isEmpty {
                parsed.values[option.name] = value
                parsed.fromEnvironment[option.name] = env
            }
        }
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--" {
                // The usual end of options: a booking id or file name may itself start with a dash.
                parsed.positionals += arguments[i...]
                break
            }
            if argument == "--help" || argument == "-h" {
                parsed.helpRequested = true
                continue
            }
            guard argument.hasPrefix("--") else {
                parsed.positionals.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option --\(name) for '\(command)'")
            }
            parsed.fromEnvironment[name] = nil
            if option.valueName == nil {
                guard inline == nil || inline == "true" || inline == "false" else {
                    throw UsageError("--\(name) takes no value")
                }
                parsed.values[name] = inline ?? "true"
            } else if let inline {
                parsed.values[name] = inline
            } else {
                // The next argument naming an option of this command is that option: the value was left out.
                guard i < arguments.count, !namesOption(arguments[i]) else {
                    throw UsageError("--\(name) needs a value (\(option.valueName!))")
                }
                parsed.values[name] = arguments[i]
                i += 1
            }
        }
        return parsed
    }

    /// Whether `argument` is `--help` or one of this command's options (`--name` or `--name=…`).
    private func namesOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("--") else { return false }
        let name = argument.dropFirst(2).prefix { $0 != "=" }
        return name == "help" || options.contains { $0.name == name }
    }

    var helpText: String {
        var lines = ["Usage: live-activity-monitor \(usage)", "", summary]
        if !options.isEmpty {
            lines += ["", "Options:"]
            for o in options {
                let flag = "--\(o.name)" + (o.valueName.map { " \($0)" } ?? "")
                var line = "  " + flag.padding(toLength: max(flag.count + 2, 34), withPad: " ", startingAt: 0) + o.help
                if let env = o.environment { line += " [env: \(env)]" }
                lines.append(line)
            }
        }
        lines.append("  " + "--help".padding(toLength: 34, withPad: " ", startingAt: 0) + "Show this help.")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A mistake on the command line: printed with where to find help, exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
